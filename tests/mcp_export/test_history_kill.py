"""``kill -9`` of a served server and of a write-behind store: what the history keeps.

A real ``metaagent serve`` subprocess with calls in flight against a model that never answers
them, killed with SIGKILL; then a store opens the same SQLite file, as the next start of any
program would. ``bench/history_kill9.py`` repeats the served case 20 times and reports figures.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mcp_export.history.store import INTERRUPTED, HistoryStore
from tests.fakes._script import Reply, RequestBody, hang, text
from tests.fakes.mcp_clients import REPO, write_agent
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.served_process import ServedProcess

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")

IN_FLIGHT = 32
QUICK = 8


def _slow_or_quick(body: RequestBody) -> Reply:
    # The destination names the kind of call: "slow-…" never gets an answer.
    return hang() if "slow-" in body.last_user_text else text(f"done: {body.last_user_text}")


def _counts(path: Path) -> dict[str, int]:
    raw = sqlite3.connect(path)
    try:
        rows = raw.execute(
            "SELECT status, error = ?, count(*) FROM runs GROUP BY 1, 2", (INTERRUPTED,)
        ).fetchall()
        counts = {"integrity_ok": int(raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok")}
        counts["pending_messages"] = raw.execute(
            "SELECT count(*) FROM messages WHERE status = 'pending'"
        ).fetchone()[0]
    finally:
        raw.close()
    for status, interrupted, count in rows:
        key = "interrupted" if interrupted else status
        counts[key] = counts.get(key, 0) + count
    return counts


def test_kill_9_of_the_server_with_calls_in_flight_keeps_every_recorded_run(
    tmp_path: Path, metaagent_home: Path
) -> None:
    with FakeOpenAIServer(responder=_slow_or_quick) as model:
        agent = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
        answered: list[str] = []
        for round_ in range(3):
            requests_before = len(model.model_requests)
            with ServedProcess(agent, env=env, stderr=tmp_path / "serve.log") as served:
                served.initialize()
                slow = [
                    served.call("book_flight", {"destination": f"slow-{round_}-{n}"})
                    for n in range(IN_FLIGHT)
                ]
                quick = [
                    served.call("book_flight", {"destination": f"quick-{round_}-{n}"})
                    for n in range(QUICK)
                ]
                assert served.wait_for(quick, timeout=60), (tmp_path / "serve.log").read_text()
                # Every slow call has asked the model: its run row was written before that.
                assert model.wait_for_requests(requests_before + IN_FLIGHT + QUICK, timeout=60)
                served.kill()
                replies = served.replies()
            assert not any(request in replies for request in slow)
            answered += [replies[q]["result"]["content"][0]["text"] for q in quick]

            # The next start of any program that opens the history.
            with HistoryStore() as store:
                assert store.stale_marked >= IN_FLIGHT
                runs = store.runs(limit=10_000)
            assert store.path is not None
            counts = _counts(store.path)
            assert counts == {
                "integrity_ok": 1,
                "pending_messages": 0,
                "complete": QUICK * (round_ + 1),
                "interrupted": IN_FLIGHT * (round_ + 1),
            }, counts
            # The answers the client saw are the ones recorded.
            assert sorted(r.answer or "" for r in runs if r.status == "complete") == sorted(
                answered
            )
            assert {r.arguments["destination"][:5] for r in runs if r.status == "error"} == {
                "slow-"
            }


_KILLED_WRITER = """
    import os, signal, sys
    from pathlib import Path
    from mcp_export.history.store import HistoryStore
    store = HistoryStore(Path(sys.argv[1]), write_behind=True)
    for n in range(200):
        thread, run = store.start_call(
            thread_id=None, agent_path="/a.agent.yaml", agent_name="A", title=f"call {n}",
            kind="served", tool_name="book", arguments={"n": n}, filled_prompt=f"Book {n}",
            caller="test",
        )
        store.add_message(thread, "user", f"Book {n}")
        if n % 2 == 0:
            store.add_message(thread, "assistant", f"Booked {n}")
            store.finish_run(run, answer=f"Booked {n}")
        else:
            store.add_message(thread, "assistant", "", status="pending")
    os.kill(os.getpid(), signal.SIGKILL)  # no close, no exit handlers: what a crash leaves
"""


def test_the_writes_a_killed_process_made_are_applied_by_the_next_open(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    killed = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_KILLED_WRITER), str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    with HistoryStore(path) as store:
        runs = store.runs(limit=1000)
        threads = store.threads(limit=1000)
        messages = [store.messages(t.id) for t in threads]
        assert len(runs) == 200 and len(threads) == 200
        finished = {r.arguments["n"]: r for r in runs if r.status == "complete"}
        assert sorted(finished) == list(range(0, 200, 2))
        assert all(finished[n].answer == f"Booked {n}" for n in finished)
        assert {r.error for r in runs if r.status != "complete"} == {INTERRUPTED}
        assert all(len(m) == 2 for m in messages)
        assert {m[1].status for m in messages} == {"complete", "error"}
        # The log of the killed process was applied once, and deleted.
        assert store.replayed.applied > 0
    with HistoryStore(path) as again:
        assert again.replayed.applied == 0
        assert len(again.runs(limit=1000)) == 200


def test_a_log_line_cut_off_by_a_crash_is_skipped_and_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "h.sqlite3"
    killed = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_KILLED_WRITER), str(path)],
        cwd=REPO,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL
    (log,) = (tmp_path / "h.sqlite3-writes").iterdir()
    with log.open("ab") as torn:  # a power cut in the middle of an append
        torn.write(b'["runs", 1, {"status": "compl')
    with caplog.at_level("WARNING"), HistoryStore(path) as store:
        assert len(store.runs(limit=1000)) == 200
        assert len(store.replayed.skipped) == 1
    assert "cut off" in caplog.text
    assert not any((tmp_path / "h.sqlite3-writes").iterdir())
