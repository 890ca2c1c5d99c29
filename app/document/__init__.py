"""Open agents: the document and its undo stack, Qt item models, recovery, loading."""
