"""The studio's side of authoring with a model: drafting a tool from a sentence."""
