"""The chat session: the model/tool loop, its events, its outcome and its record."""
