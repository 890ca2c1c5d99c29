"""The Versions view: a tool's versions, their figures, and the difference between two."""
