"""The history store (an SQLite file, or PostgreSQL shared by many instances): schema, rows, the
write-behind writer and its log."""
