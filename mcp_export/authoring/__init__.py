"""The model helps author: drafting a tool, growing its cases, improving it from failures."""
