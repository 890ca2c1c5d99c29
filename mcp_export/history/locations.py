"""Where a history store is: the default SQLite file, a path, ``sqlite:///…`` or ``postgresql://…``.

:func:`open_database` turns a store location into the backend that opens it (``history/db.py``
for a file, ``history/postgres.py`` for a server, imported only when one is named);
``open_store`` in ``history/store.py`` builds the store on it.
"""

from __future__ import annotations

import re
from pathlib import Path

from mcp_export.errors import HistoryError
from mcp_export.history.backend import Database
from mcp_export.history.db import HistoryDatabase
from mcp_export.paths import data_dir

__all__ = ["default_history_path", "open_database"]

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*)://")


def default_history_path() -> Path:
    """``history.sqlite3`` in the data directory (``$METAAGENT_HOME`` or the platform's)."""
    return data_dir() / "history.sqlite3"


def open_database(location: str | Path | None) -> Database:
    """The database at a store location (see ``open_store``), opened, set up and migrated.

    Raises:
        HistoryError: the location names no store, or the database cannot be opened; the
            message says what is wrong and what to write instead.
    """
    if location is None:
        return HistoryDatabase(default_history_path())
    if isinstance(location, Path):
        return HistoryDatabase(location)
    if location.lower().startswith(("postgresql://", "postgres://")):
        from mcp_export.history.postgres import PostgresDatabase  # psycopg: only when asked for

        return PostgresDatabase(location)
    if location.startswith("sqlite://"):
        rest = location.removeprefix("sqlite://")
        if not rest.startswith("/") or rest == "/":
            raise HistoryError(
                f"the store location {location!r} names no file: write sqlite:///relative/path "
                "or sqlite:////absolute/path"
            )
        return HistoryDatabase(Path(rest[1:]))
    scheme = _SCHEME.match(location)
    if scheme is not None:
        raise HistoryError(
            f"the store location has the scheme {scheme[1]!r}, which is not a history store: give "
            "a file path, sqlite:///path or postgresql://user:password@host:port/dbname"
        )
    return HistoryDatabase(Path(location).expanduser())
