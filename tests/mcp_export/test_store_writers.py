"""Pending rows of writers that are gone, on a shared PostgreSQL store: told by the database.

A real ``metaagent serve`` process on a store in the session's cluster, with calls in flight
against a fake model that answers when the test lets it. A writer is gone when none of its
database sessions is alive (``pg_stat_activity``): a process killed with SIGKILL, whichever host
it ran on. A live process whose connections were cut (``pg_terminate_backend``) registers its
new sessions when it reconnects, and a row marked in between takes its real end when that comes.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
import pytest

from mcp_export.history.pg_schema import PG_SCHEMA_VERSION
from mcp_export.history.store import INTERRUPTED, open_store
from tests.fakes._script import Reply, RequestBody, text
from tests.fakes.mcp_clients import write_agent
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.pg_rows import poll_until, runs_by_destination
from tests.fakes.served_process import ServedProcess

if TYPE_CHECKING:
    from tests.fakes.postgres import PostgresCluster

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
pytest_plugins = ["tests.fakes.postgres"]

WITHIN = 30.0
"""Seconds any one wait of these tests may take (a busy 2-core machine)."""


def _schema(url: str) -> str:
    return url.rsplit("search_path%3D", 1)[1]


def _sessions(cluster: PostgresCluster, *, pid: int | None = None, of: int | None = None) -> int:
    """How many sessions the cluster has with backend ``pid``, or of the process ``of``."""
    where, value = ("pid", pid) if of is None else ("application_name", f"metaagent-{of}")
    with cluster.admin() as admin:
        found = admin.execute(
            f"SELECT count(*) FROM pg_stat_activity WHERE {where} = %s", (value,)
        ).fetchone()
    return int(str(found[0])) if found else 0


class _Gate:
    """A model whose "slow-…" calls answer once :meth:`open` is called; the others at once."""

    def __init__(self) -> None:
        self.opened = threading.Event()

    def __call__(self, body: RequestBody) -> Reply:
        if "slow-" in body.last_user_text:
            self.opened.wait(WITHIN)
        return text(f"done: {body.last_user_text}")

    def open(self) -> None:
        self.opened.set()


@contextmanager
def _served(tmp_path: Path, url: str) -> Iterator[tuple[ServedProcess, _Gate]]:
    gate = _Gate()
    with FakeOpenAIServer(responder=gate) as model:
        agent = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
        env["METAAGENT_HOME"] = str(tmp_path / "home")
        try:
            with ServedProcess(
                agent, "--store", url, env=env, stderr=tmp_path / "serve.log"
            ) as served:
                served.initialize()
                yield served, gate
        finally:
            gate.open()


def test_a_call_of_an_instance_killed_on_another_host_is_marked_interrupted(
    tmp_path: Path, postgres_cluster: PostgresCluster, postgres_url: str
) -> None:
    with _served(tmp_path, postgres_url) as (served, _gate):
        served.call("book_flight", {"destination": "slow-Oslo"})
        poll_until(
            lambda: runs_by_destination(postgres_url).get("slow-Oslo") == ("pending", None),
            "run pending",
        )
        served.kill()
        poll_until(lambda: _sessions(postgres_cluster, of=served.pid) == 0, "its sessions end")
    with postgres_cluster.admin("metaagent") as admin:  # as a replaced pod's rows are
        for table in ("threads", "messages", "runs", "history_writers"):
            admin.execute(f"UPDATE {_schema(postgres_url)}.{table} SET writer_host = 'pod-gone'")

    with open_store(postgres_url) as store:
        assert store.stale_marked >= 1
    assert runs_by_destination(postgres_url) == {"slow-Oslo": ("error", INTERRUPTED)}
    with psycopg.connect(postgres_url) as raw:
        assert raw.execute("SELECT count(*) FROM history_writers").fetchone() == (1,)  # the open's
        assert raw.execute("SELECT count(*) FROM messages WHERE status = 'pending'").fetchone() == (
            0,
        )


def test_a_live_instance_whose_connections_are_cut_keeps_and_finishes_its_calls(
    tmp_path: Path, postgres_cluster: PostgresCluster, postgres_url: str
) -> None:
    with _served(tmp_path, postgres_url) as (served, gate):
        early = served.call("book_flight", {"destination": "slow-A"})
        poll_until(
            lambda: runs_by_destination(postgres_url).get("slow-A") == ("pending", None),
            "run A pending",
        )
        with postgres_cluster.admin() as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = %s",
                (f"metaagent-{served.pid}",),
            )
        poll_until(lambda: _sessions(postgres_cluster, of=served.pid) == 0, "its sessions end")
        # Before it connects again, nothing alive speaks for it: its row is marked.
        with open_store(postgres_url) as store:
            assert store.stale_marked >= 1
        assert runs_by_destination(postgres_url)["slow-A"] == ("error", INTERRUPTED)

        quick = served.call("book_flight", {"destination": "quick-B"})  # it connects again
        assert served.wait_for([quick], WITHIN), (tmp_path / "serve.log").read_text()
        late = served.call("book_flight", {"destination": "slow-C"})
        poll_until(
            lambda: runs_by_destination(postgres_url).get("slow-C") == ("pending", None),
            "run C pending",
        )
        with open_store(postgres_url) as store:
            assert store.stale_marked == 0
        assert runs_by_destination(postgres_url)["slow-C"] == ("pending", None)

        gate.open()
        assert served.wait_for([early, late], WITHIN), (tmp_path / "serve.log").read_text()
        assert not any(
            reply.get("result", {}).get("isError") for reply in served.replies().values()
        )
        poll_until(
            lambda: (
                {status for status, _error in runs_by_destination(postgres_url).values()}
                == {"complete"}
            ),
            "every run complete",
        )
    assert runs_by_destination(postgres_url) == {
        "slow-A": ("complete", None),
        "quick-B": ("complete", None),
        "slow-C": ("complete", None),
    }
    with psycopg.connect(postgres_url) as raw:
        assert (
            raw.execute(
                "SELECT status, error, answer_ms IS NOT NULL FROM messages "
                "WHERE role = 'assistant' ORDER BY id"
            ).fetchall()
            == [("complete", None, True)] * 3
        )
        assert raw.execute("SELECT DISTINCT status FROM threads").fetchall() == [("complete",)]


def test_a_session_the_store_role_cannot_see_counts_as_alive(
    postgres_cluster: PostgresCluster, postgres_url: str
) -> None:
    open_store(postgres_url).close()
    other = postgres_cluster.admin()  # a superuser's session: a plain role sees its pid only
    try:
        found = other.execute(
            "SELECT pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()"
        ).fetchone()
        assert found is not None
        pid, started = int(str(found[0])), found[1]
        with psycopg.connect(postgres_url, autocommit=True) as raw:
            seen = raw.execute(
                "SELECT backend_start FROM pg_stat_activity WHERE pid = %s", (pid,)
            ).fetchall()
            assert seen == [(None,)]
            raw.execute(
                "INSERT INTO history_writers VALUES (%s, %s, 'pod-x', 7, 's')", (pid, started)
            )
            raw.execute(
                "INSERT INTO threads (id, agent_name, title, kind, created_at, updated_at, "
                "writer_pid, writer_start, writer_host) VALUES ('t', 'A', 't', 'served', 1, 1, "
                "7, 's', 'pod-x')"
            )
            raw.execute(
                "INSERT INTO runs (thread_id, tool_name, arguments, filled_prompt, caller, status, "
                "started_at, writer_pid, writer_start, writer_host) VALUES ('t', 'book', "
                """'{"destination": "X"}', '', 'c', 'pending', 1, 7, 's', 'pod-x')"""
            )
        with open_store(postgres_url) as store:
            assert store.stale_marked == 0
    finally:
        other.close()
    poll_until(lambda: _sessions(postgres_cluster, pid=pid) == 0, "the session ends")
    with open_store(postgres_url) as store:
        assert store.stale_marked == 1
    assert runs_by_destination(postgres_url) == {"X": ("error", INTERRUPTED)}


def test_a_schema_3_database_is_upgraded_in_place(
    postgres_cluster: PostgresCluster, postgres_url: str
) -> None:
    with open_store(postgres_url) as store:
        thread = store.create_thread(agent_path="/a", agent_name="A", title="t", kind="served")
        run = store.start_run(
            thread_id=thread, tool_name="t", arguments={}, filled_prompt="p", caller="c"
        )
    schema = _schema(postgres_url)
    with postgres_cluster.admin("metaagent") as admin:  # the schema as version 3 left it
        admin.execute(f"SET search_path = {schema}")
        admin.execute("DROP TABLE history_writers")
        admin.execute("DROP TRIGGER after_interruption ON messages")
        admin.execute("DROP TRIGGER after_interruption ON runs")
        admin.execute("DROP FUNCTION history_finish_wins()")
        admin.execute("UPDATE history_schema SET version = 3")
        admin.execute("UPDATE runs SET writer_pid = 2147483000")  # a writer of this host, ended

    with open_store(postgres_url) as store:
        assert store.stale_marked == 1  # rows of before: the pid checked on this host
        assert [r.status for r in store.runs()] == ["error"]
        store.finish_run(run, answer="late but real")
        assert [(r.status, r.error) for r in store.runs()] == [("complete", None)]
    with psycopg.connect(postgres_url) as raw:
        assert raw.execute("SELECT version FROM history_schema").fetchall() == [
            (PG_SCHEMA_VERSION,)
        ]
        assert raw.execute("SELECT count(*) FROM history_writers").fetchone() == (1,)
