"""What a served (write-behind) history store keeps in memory: little at its open, and nothing
more per call once its writes are applied. Measured with ``tracemalloc`` (Python's own count of
the blocks it allocates, not the process's resident size), on real SQLite files."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_export.history.store import HistoryStore
from tests.mcp_export.test_history_write_behind import record_call


@pytest.fixture
def traced() -> Iterator[None]:
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()


def _held() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def _calls(store: HistoryStore, first: int, count: int) -> None:
    for index in range(first, first + count):
        _thread, run, pending = record_call(store, index)
        store.update_message(pending, content="done", status="complete", tokens_in=3)
        store.finish_run(run, answer="done", duration_ms=1.0)
    store.flush()


@pytest.mark.usefixtures("traced")
def test_opening_a_served_store_holds_its_reserved_row_ids_as_ranges_not_as_numbers(
    tmp_path: Path,
) -> None:
    before = _held()
    store = HistoryStore(tmp_path / "h.sqlite3", write_behind=True)
    try:
        opened = _held() - before
        ids = {store.add_message(record_call(store, 0)[0], "user", "more") for _ in range(3)}
    finally:
        store.close()
    # Two blocks of 65 536 ids for each of three tables, as numbers, were 7.5 MB.
    assert opened < 1 << 20, f"{opened} bytes held after the open"
    assert len(ids) == 3


@pytest.mark.usefixtures("traced")
def test_a_served_store_holds_no_more_after_thousands_of_calls_than_after_hundreds(
    tmp_path: Path,
) -> None:
    with HistoryStore(tmp_path / "h.sqlite3", write_behind=True) as store:
        _calls(store, 0, 500)
        early = _held()
        _calls(store, 500, 2500)
        late = _held()
    # Per call that would be 2500 × growth: under 40 bytes a call, i.e. nothing kept per call.
    assert late - early < 100_000, f"{late - early} bytes more after 2500 more calls"
