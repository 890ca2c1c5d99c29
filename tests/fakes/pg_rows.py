"""Reading a PostgreSQL store from a test: poll until another process's doing shows, and the runs.

Kept out of ``tests/fakes/postgres.py``, which test modules load as a plugin: importing a plugin
module before pytest registers it leaves its asserts unrewritten.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import psycopg

__all__ = ["poll_until", "runs_by_destination"]


def poll_until(check: Callable[[], object], what: str, within: float = 30.0) -> None:
    """Poll ``check()`` until it is true (another process's doing: nothing to wait on), for at
    most ``within`` seconds; fails the test saying ``what`` did not happen."""
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, f"not within {within:g} s: {what}"
        time.sleep(0.05)


def runs_by_destination(url: str) -> dict[str, tuple[str, str | None]]:
    """The status and error of each run in the store at ``url``, by its ``destination``."""
    with psycopg.connect(url) as raw:
        rows = raw.execute("SELECT arguments, status, error FROM runs").fetchall()
    return {
        json.loads(arguments)["destination"]: (status, error) for arguments, status, error in rows
    }
