"""The history store (SQLite): schema, rows, the write-behind writer and its log."""
