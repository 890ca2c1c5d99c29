"""No resolved secret reaches the history's files: the database, its WAL, the write logs.

A provider that echoes the ``Authorization`` header into its error body puts the key into the
texts a session records; every write of the store redacts before anything touches a file.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from mcp_export.history.store import HistoryStore
from mcp_export.redact import REDACTED, remember_secret

BEARER = "sk-proj-" + "Q7x" * 12


def _files_holding(directory: Path, needle: bytes) -> list[str]:
    return [
        str(path.relative_to(directory))
        for path in sorted(directory.rglob("*"))
        if path.is_file() and needle in path.read_bytes()
    ]


def _record_everything(store: HistoryStore, secret: str) -> tuple[str, int]:
    echoed = f"Incorrect API key provided: Bearer {BEARER}; key {secret}"
    thread, run = store.start_call(
        thread_id=None,
        agent_path="/agents/a.agent.yaml",
        agent_name="A",
        title=f"book: with {secret}",
        kind="served",
        tool_name="book",
        arguments={"note": secret, "nested": [{"token": f"Bearer {BEARER}"}]},
        filled_prompt=f"Book it. My key is {secret}",
        caller="client",
    )
    store.add_message(thread, "user", f"use {secret}")
    pending = store.add_message(thread, "assistant", "", status="pending")
    store.update_message(
        pending,
        content=f"calling with {secret}",
        status="complete",
        tool_calls=[{"id": "c1", "name": "pay", "arguments": {"key": secret}}],
    )
    store.add_message(thread, "tool", echoed, tool_call_id="c1", name="pay", is_error=True)
    failed = store.add_message(thread, "assistant", "", status="pending")
    store.update_message(failed, status="error", error=echoed)
    store.finish_run(run, answer=f"answer naming {secret}", error=echoed)
    return thread, run


@pytest.mark.parametrize("write_behind", [False, True], ids=["inline", "write-behind"])
def test_a_remembered_secret_and_bearer_tokens_never_reach_the_files(
    tmp_path: Path, write_behind: bool
) -> None:
    secret = f"env-secret-{uuid.uuid4().hex}"
    remember_secret(secret)
    store = HistoryStore(tmp_path / "h.sqlite3", write_behind=write_behind)
    thread, _run = _record_everything(store, secret)
    store.flush()
    # While the store is open (the WAL and any write log hold the latest pages and lines) …
    assert (tmp_path / "h.sqlite3-wal").exists()
    assert _files_holding(tmp_path, secret.encode()) == []
    assert _files_holding(tmp_path, BEARER.encode()) == []
    [run] = store.runs()
    messages = store.messages(thread)
    record = store.thread(thread)
    store.close()
    # … and after it closed.
    assert _files_holding(tmp_path, secret.encode()) == []
    assert _files_holding(tmp_path, BEARER.encode()) == []
    # What was recorded is still readable, with the secrets replaced.
    assert run.filled_prompt == f"Book it. My key is {REDACTED}"
    assert run.arguments == {"note": REDACTED, "nested": [{"token": f"Bearer {REDACTED}"}]}
    assert run.error == f"Incorrect API key provided: Bearer {REDACTED}; key {REDACTED}"
    assert [m.content for m in messages][:2] == [f"use {REDACTED}", f"calling with {REDACTED}"]
    assert messages[1].tool_calls == [{"id": "c1", "name": "pay", "arguments": {"key": REDACTED}}]
    assert messages[3].error == run.error
    assert record is not None and record.title == f"book: with {REDACTED}"
