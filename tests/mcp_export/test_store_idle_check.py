"""A background writer with nothing to write still checks a shared store for writers that are gone.

On PostgreSQL, an instance with no traffic of its own marks the pending rows of an instance that
died (a real ``metaagent serve`` process killed with SIGKILL, its rows made to look like another
host's) within the writer's check interval, set small through ``WriteBehind(check_every=…)``.
An SQLite file's writer never checks: its ended writers are marked by the next store that opens.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
import pytest

from mcp_export.history.locations import open_database
from mcp_export.history.postgres import PostgresDatabase
from mcp_export.history.store import INTERRUPTED, open_store, process_start_marker
from mcp_export.history.writer import WriteBehind
from tests.fakes._script import Reply, RequestBody, text
from tests.fakes.mcp_clients import write_agent
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.pg_rows import poll_until, runs_by_destination
from tests.fakes.served_process import ServedProcess

if TYPE_CHECKING:
    from mcp_export.history.backend import Database
    from tests.fakes.postgres import PostgresCluster

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
pytest_plugins = ["tests.fakes.postgres"]

WITHIN = 30.0
"""Seconds any one wait of these tests may take (a busy 2-core machine)."""
CHECK_EVERY = 0.2
"""The idle writers' check interval in these tests."""


def _sessions(cluster: PostgresCluster, of: int) -> int:
    """How many sessions of the process ``of`` the cluster has."""
    with cluster.admin() as admin:
        found = admin.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s",
            (f"metaagent-{of}",),
        ).fetchone()
    return int(str(found[0])) if found else 0


@contextmanager
def _idle_writer(database: Database) -> Iterator[WriteBehind]:
    """A writer of this process over ``database`` that is given nothing to write."""
    pid = os.getpid()
    writer = WriteBehind(database, pid, process_start_marker(pid), check_every=CHECK_EVERY)
    try:
        yield writer
    finally:
        writer.close()
        database.close()


@contextmanager
def _served(tmp_path: Path, url: str) -> Iterator[ServedProcess]:
    """A served instance on the store ``url`` whose model answers once the block ends."""
    opened = threading.Event()

    def respond(body: RequestBody) -> Reply:
        opened.wait(WITHIN)
        return text(f"done: {body.last_user_text}")

    with FakeOpenAIServer(responder=respond) as model:
        agent = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
        env["METAAGENT_HOME"] = str(tmp_path / "home")
        try:
            with ServedProcess(
                agent, "--store", url, env=env, stderr=tmp_path / "serve.log"
            ) as served:
                served.initialize()
                yield served
        finally:
            opened.set()


def test_an_idle_instance_marks_the_calls_of_an_instance_that_died_on_another_host(
    tmp_path: Path, postgres_cluster: PostgresCluster, postgres_url: str
) -> None:
    schema = postgres_url.rsplit("search_path%3D", 1)[1]
    with _idle_writer(PostgresDatabase(postgres_url)) as idle:
        with _served(tmp_path, postgres_url) as served:
            served.call("book_flight", {"destination": "Oslo"})
            poll_until(
                lambda: runs_by_destination(postgres_url).get("Oslo") == ("pending", None),
                "run pending",
            )
            with postgres_cluster.admin("metaagent") as admin:  # as a replaced pod's rows are
                for table in ("threads", "messages", "runs", "history_writers"):
                    admin.execute(
                        f"UPDATE {schema}.{table} SET writer_host = 'pod-gone' "
                        "WHERE writer_pid = %s",
                        (served.pid,),
                    )
            time.sleep(3 * CHECK_EVERY)  # checks that find its sessions alive leave it alone
            assert runs_by_destination(postgres_url) == {"Oslo": ("pending", None)}
            served.kill()

        poll_until(
            lambda: runs_by_destination(postgres_url) == {"Oslo": ("error", INTERRUPTED)},
            "the idle writer marks the run of the instance that died",
        )
        assert _sessions(postgres_cluster, of=served.pid) == 0
        assert idle.unreachable is None
    with psycopg.connect(postgres_url) as raw:
        assert raw.execute(
            "SELECT status, error FROM messages WHERE role = 'assistant'"
        ).fetchall() == [("error", INTERRUPTED)]
        assert raw.execute(  # the dead instance's sessions are forgotten
            "SELECT count(*) FROM history_writers WHERE writer_host = 'pod-gone'"
        ).fetchone() == (0,)
    with open_store(postgres_url) as store:
        assert store.stale_marked == 0  # nothing left for the next instance to open


def test_an_sqlite_writer_leaves_ended_writers_to_the_next_open(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    with open_store(path) as store:
        thread = store.create_thread(agent_path="/a", agent_name="A", title="t", kind="served")
        store.start_run(
            thread_id=thread, tool_name="t", arguments={}, filled_prompt="p", caller="c"
        )
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    assert ended.wait(WITHIN) == 0
    raw = sqlite3.connect(path)
    try:
        with raw:  # the run as a process that has ended left it
            raw.execute("UPDATE runs SET writer_pid = ?", (ended.pid,))
    finally:
        raw.close()

    with _idle_writer(open_database(path)):
        time.sleep(5 * CHECK_EVERY)  # a shared store's writer would have checked by now
        with open_store(path) as store:
            assert store.stale_marked == 1  # still pending for the open to mark
            assert [run.status for run in store.runs()] == ["error"]


def test_a_check_interval_that_is_not_positive_is_refused(postgres_url: str) -> None:
    database = PostgresDatabase(postgres_url)
    try:
        with pytest.raises(ValueError, match="check_every must be a positive number"):
            WriteBehind(database, os.getpid(), None, check_every=0)
    finally:
        database.close()
