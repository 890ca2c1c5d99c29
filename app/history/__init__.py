"""The history view: rows from the history store, filters and transcripts."""
