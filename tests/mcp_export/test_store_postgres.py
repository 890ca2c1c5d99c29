"""The history store in a real PostgreSQL: where a location leads, what a broken database says
(never its password), schema versions, many instances on one database, writers of other hosts.

The behaviour both backends share is tested on both by the other history tests
(``store_location``); these are what only a database on a server has.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

import anyio
import psycopg
import pytest

from mcp_export.errors import HistoryError
from mcp_export.history.store import HistoryStore, default_history_path, open_store
from mcp_export.server.history import CallRecord, HistoryAccess
from tests.fakes.ports import refused_origin

if TYPE_CHECKING:
    from tests.fakes.postgres import PostgresCluster

pytest_plugins = ["tests.fakes.postgres"]

REPO = Path(__file__).resolve().parents[2]


def _schema(url: str) -> str:
    return url.rsplit("search_path%3D", 1)[1]


def test_a_location_chooses_the_backend(tmp_path: Path, metaagent_home: Path) -> None:
    with open_store() as default:
        assert default.path == default_history_path() == metaagent_home / "history.sqlite3"
        assert not default.shared
    with open_store(f"sqlite:///{tmp_path}/a.sqlite3") as by_url:
        assert by_url.path == tmp_path / "a.sqlite3"
    with open_store(str(tmp_path / "b.sqlite3")) as by_path:
        assert by_path.path == tmp_path / "b.sqlite3"
    with pytest.raises(HistoryError, match="scheme 'mysql', which is not a history store"):
        open_store("mysql://u:p@h/db")
    with pytest.raises(HistoryError, match="names no file"):
        open_store("sqlite://")


def test_a_postgresql_store_is_shared_and_named_without_its_password(
    postgres_cluster: PostgresCluster, postgres_url: str
) -> None:
    with open_store(postgres_url.replace("postgresql://", "postgres://")) as store:
        assert store.shared and store.path is None
        assert (
            store.location == f"postgresql://metaagent@127.0.0.1:{postgres_cluster.port}/metaagent"
        )
        assert postgres_cluster.password not in repr(vars(store))


def test_a_wrong_password_says_what_to_check_and_not_the_password(
    postgres_cluster: PostgresCluster,
) -> None:
    wrong = "Not-The-Password-42"
    with pytest.raises(HistoryError) as caught:
        open_store(postgres_cluster.url(password=wrong))
    text = str(caught.value)
    assert "password authentication failed" in text and "check the user name and password" in text
    assert f"127.0.0.1:{postgres_cluster.port}/metaagent" in text
    assert wrong not in text and postgres_cluster.password not in text
    assert caught.value.__cause__ is None or wrong not in str(caught.value.__cause__)


def test_a_password_from_pgpassword_is_used_and_never_shown(
    postgres_cluster: PostgresCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGPASSWORD", postgres_cluster.password)
    bare = postgres_cluster.url().replace(f":{quote(postgres_cluster.password, safe='')}@", "@")
    # A process of its own: this one has remembered the password from other stores' URLs.
    script = textwrap.dedent(
        f"""
        import os
        from mcp_export.history.store import open_store
        from mcp_export.redact import redact
        with open_store({bare!r}) as store:
            store.ping()
        print(redact("said " + os.environ["PGPASSWORD"] + " once"))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "said [redacted] once"


def test_a_missing_database_says_to_create_it(postgres_cluster: PostgresCluster) -> None:
    with pytest.raises(HistoryError, match="create the database") as caught:
        open_store(postgres_cluster.url(database="nowhere"))
    assert "/nowhere" in str(caught.value) and postgres_cluster.password not in str(caught.value)


def test_an_unreachable_server_says_to_check_host_and_port() -> None:
    with refused_origin() as origin, pytest.raises(HistoryError) as caught:
        port = origin.rsplit(":", 1)[1]
        open_store(f"postgresql://someone:Secret-Word-1234@127.0.0.1:{port}/db")
    text = str(caught.value)
    assert f"postgresql://someone@127.0.0.1:{port}/db" in text
    assert "check that PostgreSQL runs there" in text and "Secret-Word-1234" not in text


def test_serve_can_check_its_store_at_start_up(postgres_cluster: PostgresCluster) -> None:
    access = HistoryAccess(postgres_cluster.url(database="nowhere"))
    with pytest.raises(HistoryError, match="nowhere"):
        access.open_now()
    assert HistoryAccess(None).open_now() is None


def test_a_newer_schema_is_refused_with_advice(
    postgres_cluster: PostgresCluster, postgres_url: str
) -> None:
    open_store(postgres_url).close()
    with postgres_cluster.admin("metaagent") as admin:
        admin.execute(f"UPDATE {_schema(postgres_url)}.history_schema SET version = 99")
    with pytest.raises(HistoryError, match="schema version 99, newer than this program knows"):
        open_store(postgres_url)


def test_instances_that_start_together_create_the_tables_once(postgres_url: str) -> None:
    errors: list[BaseException] = []
    start = threading.Barrier(4, timeout=30)

    def open_one() -> None:
        try:
            start.wait()
            open_store(postgres_url, write_behind=True).close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []


def test_a_write_behind_batch_skips_a_write_whose_thread_is_gone_and_keeps_the_rest(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    with open_store(postgres_url) as other, open_store(postgres_url, write_behind=True) as store:
        doomed = store.create_thread(agent_path="/a", agent_name="A", title="t", kind="chat")
        kept = store.create_thread(agent_path="/a", agent_name="A", title="k", kind="chat")
        store.flush()
        other.delete_thread(doomed)
        with caplog.at_level(logging.WARNING):
            store.add_message(doomed, "user", "lost")
            store.add_message(kept, "user", "one")
            store.add_message(kept, "user", "two")
            store.flush()
        assert [m.content for m in store.messages(kept)] == ["one", "two"]
        assert store.messages(doomed) == []
    assert "a write was skipped" in caplog.text


def test_a_write_made_on_one_instance_is_read_on_another_once_settled(postgres_url: str) -> None:
    settled = threading.Event()
    with (
        open_store(postgres_url, write_behind=True) as first,
        open_store(postgres_url, write_behind=True) as second,
    ):
        thread = first.create_thread(agent_path="/a", agent_name="A", title="t", kind="served")
        first.add_message(thread, "user", "question")
        first.add_message(thread, "assistant", "answer")
        assert first.on_settled(settled.set)
        assert settled.wait(10)
        assert [m.content for m in second.messages(thread)] == ["question", "answer"]
        assert not first.on_settled(settled.set)  # nothing new to wait for


@pytest.mark.anyio
async def test_a_call_record_settles_before_the_answer_goes_out(postgres_url: str) -> None:
    access = HistoryAccess(postgres_url)
    try:
        store = access.open_now()
        assert store is not None
        thread = store.create_thread(agent_path="/a", agent_name="A", title="t", kind="served")
        store.add_message(thread, "assistant", "answered")
        with anyio.fail_after(10):
            await CallRecord(access, thread, None).settled()
        with psycopg.connect(postgres_url) as raw:
            found = raw.execute("SELECT content FROM messages").fetchall()
        assert found == [("answered",)]
    finally:
        access.close()


def test_pending_rows_of_an_ended_writer_of_this_host_are_marked_and_another_hosts_are_left(
    postgres_url: str,
) -> None:
    crashed = subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                """
                import os, sys
                from mcp_export.history.store import open_store
                store = open_store(sys.argv[1])
                thread = store.create_thread(agent_path="/a", agent_name="A", title="t",
                                             kind="served")
                store.add_message(thread, "assistant", "", status="pending")
                print(thread, flush=True)
                os._exit(0)  # gone without finishing
                """
            ),
            postgres_url,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    thread = crashed.stdout.strip()
    with psycopg.connect(postgres_url, autocommit=True) as raw:
        raw.execute(
            "INSERT INTO messages (thread_id, role, content, status, created_at, updated_at, "
            "writer_pid, writer_start, writer_host) "
            "VALUES (%s, 'assistant', '', 'pending', 1, 1, 1, 'x', 'another-host')",
            (thread,),
        )
    with open_store(postgres_url) as store:
        assert store.stale_marked == 1
        statuses = [(m.status, m.error is not None) for m in store.messages(thread)]
    assert sorted(statuses) == [("error", True), ("pending", False)]


def test_a_store_that_breaks_while_serving_logs_without_the_password(
    postgres_cluster: PostgresCluster, postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = HistoryStore(postgres_url, write_behind=True)
    try:
        store.flush()
        with postgres_cluster.admin("metaagent") as admin:
            admin.execute(f"DROP SCHEMA {_schema(postgres_url)} CASCADE")
        with caplog.at_level(logging.WARNING):
            store.create_thread(agent_path="/a", agent_name="A", title="t", kind="chat")
            store.flush()
    finally:
        store.close()
    assert "calls are no longer recorded" in caplog.text
    assert f"127.0.0.1:{postgres_cluster.port}/metaagent" in caplog.text
    assert postgres_cluster.password not in caplog.text


def test_readiness_names_a_store_that_does_not_answer_and_not_its_password(
    postgres_cluster: PostgresCluster, postgres_url: str
) -> None:
    reachable = HistoryAccess(postgres_url)
    missing = HistoryAccess(postgres_cluster.url(database="nowhere"))
    try:
        assert reachable.problem() is None
        problem = missing.problem()
        assert problem is not None and "/nowhere" in problem
        assert postgres_cluster.password not in problem
        assert HistoryAccess(False).problem() is None
    finally:
        reachable.close()
        missing.close()
