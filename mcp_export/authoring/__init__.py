"""The model helps author: a change proposed from a tool's failed cases, checked before it is
offered (``improve``)."""
