"""``metaagent serve`` with parts of the serving path switched off, to price each part.

Run: ``python bench/_patched_serve.py PATCHES serve AGENT…`` where PATCHES is ``-`` (none) or
patch names joined by ``+``. ``bench/server_call_cpu.py --variants`` starts servers this way and
compares their CPU per call with the unpatched server's, in the same run. The patches stand in for
changes to the runtime, to measure what each would save; they are never a way to serve. They are
applied in the order given.

- ``no-log``: history writes are not appended to the write log (no ``os.write`` per write, no
  ``ftruncate`` once the queue drains);
- ``no-redact``: history values are stored without passing ``redact``/``redact_json``;
- ``no-sqlite``: the writer thread takes the writes off its queue and drops them (no
  transaction, no rows), keeping its bookkeeping (the log emptied, readers woken);
- ``no-triggers``: the triggers that keep each thread's summary and each answer's time
  (``history/figures.py``) are dropped once the store is open (three ``UPDATE threads`` and one
  ``UPDATE messages`` a call fewer): what keeping the summaries costs the writer;
- ``grouped``: the writer thread applies a batch as one ``executemany`` per table and column set
  (the inserts first, threads before runs before messages, then the updates in their order)
  instead of one ``execute`` per write, with SQL strings built once per group;
- ``no-screen``: over HTTP, the SDK's app is served without ``MessageScreen`` (no body read
  ahead of the SDK, no screen of the message, no session check);
- ``cprofile``: not a change but a measurement: the main thread runs under ``cProfile`` and
  its stats are dumped at exit to the file named by ``BENCH_CPROFILE`` (compare two runs with
  ``pstats``: the deterministic profile counts each function's calls, which sampling cannot);
- ``tracemalloc``: not a change but a measurement: ``tracemalloc`` traces allocations (25 frames)
  from the start, and each ``SIGUSR1`` writes a snapshot to ``BENCH_TRACEMALLOC/N.snap`` (N counts
  from 1; ``bench/server_memory.py --tracemalloc DIR`` sends them and diffs the last two);
- ``gc-off``: the garbage collector disabled (what collecting costs at all); ``gc-young``: the
  young generation collected every 20 000 objects; ``gc-big``: every 50 000, the older ones less
  often too; ``gc-freeze``: the serving stack imported and frozen out of collections first. The
  server now does ``gc-freeze`` and ``gc-young`` itself (``server/collector.py``): on top of it
  these measure the rest;
- ``no-history-thread``: the writes are dropped before the queue and the log (``WriteBehind._put``
  does nothing): what is left is the main thread's own history bookkeeping (ids, ``Write``
  objects, cleaning, the store's calls).
"""

from __future__ import annotations

import runpy
import sys
from collections.abc import Callable
from typing import Any


def _no_log() -> None:
    from mcp_export.history.write_log import WriteLog

    def append(self: WriteLog, line: bytes) -> int:
        self.size += len(line)
        return self.size

    def empty(self: WriteLog) -> None:
        self.size = 0

    WriteLog.append = append  # type: ignore[method-assign]
    WriteLog.empty = empty  # type: ignore[method-assign]


def _no_redact() -> None:
    from mcp_export.history import rows

    def same(value: Any) -> Any:
        return value

    setattr(rows, "redact", same)  # noqa: B010
    setattr(rows, "redact_json", same)  # noqa: B010


def _count_applied(writer: Any, writes: list[Any]) -> None:
    """The writer's bookkeeping once ``writes`` are in the database, as ``WriteBehind._apply``
    keeps it: counted done, the log emptied when the queue is, readers and waiters let go."""
    with writer._settled:
        writer._done += len(writes)
        writer._applied = writes[-1][1]
        writer._applied_count += sum(1 for _write, size in writes if size)
        if writer._queued == 0 and writer._log is not None:
            writer._log.empty()
            writer._applied = writer._applied_count = writer._logged_count = 0
        writer._settled.notify_all()
    writer._call_back()


def _no_sqlite() -> None:
    from mcp_export.history.writer import WriteBehind

    def apply(self: Any, writes: list[Any]) -> None:
        _count_applied(self, writes)

    WriteBehind._apply = apply  # type: ignore[method-assign]


def _no_triggers() -> None:
    from mcp_export.history.db import HistoryDatabase

    original = HistoryDatabase.__init__

    def init(self: HistoryDatabase, path: Any) -> None:
        original(self, path)
        with self.connection("drop triggers") as conn:
            triggers = conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
            for (name,) in triggers.fetchall():
                conn.execute(f"DROP TRIGGER {name}")

    HistoryDatabase.__init__ = init  # type: ignore[method-assign]


def _grouped() -> None:
    from mcp_export.history.writer import WriteBehind

    order = {"threads": 0, "runs": 1, "messages": 2}

    def apply(self: Any, writes: list[Any]) -> None:
        groups: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
        for write, _size in writes:
            columns = tuple(write.values)
            if write.row is None:
                key: tuple[Any, ...] = (0, order.get(write.table, 3), write.table, columns)
                groups.setdefault(key, []).append(tuple(write.values.values()))
            else:
                key = (1, 0, write.table, columns)
                groups.setdefault(key, []).append((*write.values.values(), write.row))

        def body(conn: Any) -> None:
            for (update, _rank, table, columns), rows in sorted(
                groups.items(), key=lambda item: item[0][:2]
            ):
                if update:
                    assignments = ", ".join(f"{c} = ?" for c in columns)
                    sql = f"UPDATE {table} SET {assignments} WHERE id = ?"
                else:
                    keep = " ON CONFLICT (id) DO NOTHING" if "id" in columns else ""
                    marks = ", ".join("?" * len(columns))
                    sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks}){keep}"
                conn.executemany(sql, rows)

        self._reserve_spare_ids()
        self._retrying(lambda: self._db.transaction("write", body))
        _count_applied(self, writes)

    WriteBehind._apply = apply  # type: ignore[method-assign]


def _no_history_thread() -> None:
    from mcp_export.history.writer import WriteBehind

    def put(self: Any, write: Any) -> None:
        pass

    WriteBehind._put = put  # type: ignore[method-assign]


def _no_screen() -> None:
    from mcp_export.server import http

    def unscreened(app: Any, max_body: int = 0, **_: Any) -> Any:
        return app

    setattr(http, "MessageScreen", unscreened)  # noqa: B010


def _cprofile() -> None:
    import atexit
    import cProfile
    import os
    import time

    # The main thread's CPU time, not the wall clock: a profile of where CPU goes, not of the
    # waits (a blocked ``send`` or ``epoll`` would otherwise dominate it).
    profile = cProfile.Profile(time.thread_time)
    atexit.register(lambda: profile.dump_stats(os.environ["BENCH_CPROFILE"]))
    profile.enable()


def _tracemalloc() -> None:
    import os
    import signal
    import tracemalloc
    from pathlib import Path

    directory = Path(os.environ["BENCH_TRACEMALLOC"])
    taken = [0]

    def snapshot(signum: int, frame: Any) -> None:
        import gc

        gc.collect()
        taken[0] += 1
        tracemalloc.take_snapshot().dump(str(directory / f"{taken[0]}.snap"))
        (directory / f"{taken[0]}.done").touch()

    tracemalloc.start(25)
    signal.signal(signal.SIGUSR1, snapshot)


def _gc_off() -> None:
    import gc

    gc.disable()


def _gc_young() -> None:
    import gc

    gc.set_threshold(20_000, 10, 10)


def _gc_freeze() -> None:
    import gc
    import importlib

    for name in (
        "mcp_export.cli._serve",
        "mcp_export.server.call",
        "mcp_export.server.ops",
        "mcp_export.session.chat",
        "mcp_export.providers.openai_provider",
        "mcp_export.history.store",
        "uvicorn",
        "starlette.applications",
    ):
        importlib.import_module(name)
    gc.collect()
    gc.freeze()


def _gc_big() -> None:
    import gc

    gc.set_threshold(50_000, 20, 20)


PATCHES: dict[str, Callable[[], None]] = {
    "gc-big": _gc_big,
    "gc-freeze": _gc_freeze,
    "gc-off": _gc_off,
    "gc-young": _gc_young,
    "no-log": _no_log,
    "no-redact": _no_redact,
    "no-sqlite": _no_sqlite,
    "no-triggers": _no_triggers,
    "grouped": _grouped,
    "no-history-thread": _no_history_thread,
    "no-screen": _no_screen,
    "cprofile": _cprofile,
    "tracemalloc": _tracemalloc,
}


def main() -> None:
    names = [] if sys.argv[1] == "-" else sys.argv[1].split("+")
    for name in names:
        PATCHES[name]()
    sys.argv = ["metaagent", *sys.argv[2:]]
    runpy.run_module("mcp_export", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
