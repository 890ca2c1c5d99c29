"""A throwaway PostgreSQL cluster for the tests, and store locations in it.

One cluster per test session (Debian's PostgreSQL 15 binaries; ``initdb`` in a temporary folder,
``pg_ctl start`` on a free loopback port, stopped and deleted at the end of the session even when
tests fail). Each test gets a fresh schema of its own, named in its store URL's ``search_path``,
so tests start empty, run in any order and cost a few milliseconds to set up.

Stores connect over TCP as the role ``metaagent`` with a password (``scram-sha-256``), so the
password travels in every store URL of the tests and its absence from every message is checked
on the real path. The superuser connects through the cluster's socket (trusted) to make schemas.

``initdb`` refuses to run as root (sessions and CI do): as root, the cluster is made and run as
the ``postgres`` user (Debian's package creates it), the folder handed to that user.

A test that stops the server must not use the session's: ``own_postgres_cluster`` gives it one
of its own, which :meth:`PostgresCluster.halt` and :meth:`PostgresCluster.resume` stop and start.

Use it as a plugin: ``pytest_plugins = ["tests.fakes.postgres"]`` in a test module gives the
fixtures ``postgres_cluster`` (session), ``own_postgres_cluster`` (a test's own),
``postgres_url`` (a fresh schema) and ``store_location`` (parametrized: an SQLite file, then a
PostgreSQL schema).
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest

__all__ = [
    "BIN",
    "PostgresCluster",
    "own_postgres_cluster",
    "postgres_cluster",
    "postgres_url",
    "store_location",
]

BIN = Path("/usr/lib/postgresql/15/bin")
ROLE = "metaagent"
DATABASE = "metaagent"
_TIMEOUT = 60


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class PostgresCluster:
    """A PostgreSQL cluster in a temporary folder, running until :meth:`stop`.

    Raises:
        RuntimeError: the binaries are missing, or the cluster did not start (with its log).
    """

    def __init__(self) -> None:
        if not (BIN / "initdb").exists():
            raise RuntimeError(
                f"PostgreSQL 15 is not installed ({BIN} is missing): install Debian's "
                "postgresql package (make setup does)"
            )
        self.root = Path(tempfile.mkdtemp(prefix="metaagent-pg-"))
        self.data = self.root / "data"
        self.password = secrets.token_urlsafe(18)
        self._as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self._as_user:
            shutil.chown(self.root, "postgres")
        self.port = 0
        try:
            self._run(
                BIN / "initdb",
                "-D",
                self.data,
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
            )
            self._start()
            with self.admin() as admin:
                admin.execute(f"CREATE ROLE {ROLE} LOGIN PASSWORD '{self.password}'")
                admin.execute(f"CREATE DATABASE {DATABASE} OWNER {ROLE}")
        except BaseException:
            self.stop()
            raise

    def _run(self, *command: str | Path) -> None:
        done = subprocess.run(
            [*self._as_user, *map(str, command)],
            capture_output=True,
            text=True,
            timeout=_TIMEOUT,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{command[0]} failed: {done.stdout}{done.stderr}")

    def _start(self, port: int | None = None) -> None:
        last: RuntimeError | None = None
        for _attempt in range(1 if port else 3):  # a port taken since the probe: another
            self.port = port or _free_port()
            options = (
                f"-k {self.root} -p {self.port} -h 127.0.0.1 "
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
            )
            try:
                self._run(
                    BIN / "pg_ctl",
                    "-D",
                    self.data,
                    "-o",
                    options,
                    "-l",
                    self.root / "log",
                    "-w",
                    "-t",
                    str(_TIMEOUT),
                    "start",
                )
                return
            except RuntimeError as exc:
                last = exc
        log = (
            (self.root / "log").read_text(errors="replace") if (self.root / "log").exists() else ""
        )
        raise RuntimeError(f"PostgreSQL did not start: {last}\n{log}")

    def admin(self, database: str = "postgres") -> psycopg.Connection[tuple[object, ...]]:
        """A superuser connection through the socket (autocommit)."""
        return psycopg.connect(
            host=str(self.root), port=self.port, user="postgres", dbname=database, autocommit=True
        )

    def url(self, *, password: str | None = None, database: str = DATABASE, **options: str) -> str:
        """``postgresql://metaagent:PASSWORD@127.0.0.1:PORT/DATABASE`` (the real password unless
        another is given), with libpq ``options`` such as a ``search_path``."""
        secret = quote(self.password if password is None else password, safe="")
        url = f"postgresql://{ROLE}:{secret}@127.0.0.1:{self.port}/{database}"
        if options:
            settings = " ".join(f"-c{key}={value}" for key, value in options.items())
            url += "?options=" + quote(settings, safe="")
        return url

    def fresh_store(self) -> str:
        """The URL of a new, empty schema of its own."""
        schema = f"t_{secrets.token_hex(6)}"
        with self.admin(DATABASE) as admin:
            admin.execute(f"CREATE SCHEMA {schema} AUTHORIZATION {ROLE}")
        return self.url(search_path=schema)

    def halt(self) -> None:
        """Stop the server as an administrator's restart does (``pg_ctl stop -m fast``: its
        clients are told and disconnected), keeping the data folder and the port for
        :meth:`resume`."""
        self._run(BIN / "pg_ctl", "-D", self.data, "-m", "fast", "-w", "-t", str(_TIMEOUT), "stop")

    def resume(self) -> None:
        """Start the server again on the same port and data folder after :meth:`halt`."""
        self._start(self.port)

    def stop(self) -> None:
        """Stop the cluster at once and delete its folder (idempotent)."""
        if self.port and (self.data / "postmaster.pid").exists():
            stop = ["-D", str(self.data), "-m", "immediate", "-w", "-t", str(_TIMEOUT), "stop"]
            subprocess.run(
                [*self._as_user, str(BIN / "pg_ctl"), *stop],
                capture_output=True,
                timeout=_TIMEOUT + 10,
                check=False,
            )
        shutil.rmtree(self.root, ignore_errors=True)


def _running_cluster() -> Iterator[PostgresCluster]:
    """A new cluster, stopped (and its folder deleted) once the caller is done with it."""
    cluster = PostgresCluster()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """The session's PostgreSQL cluster (started on first use, stopped at the end)."""
    yield from _running_cluster()


@pytest.fixture
def own_postgres_cluster() -> Iterator[PostgresCluster]:
    """A cluster of the test's own, which it may halt and resume (stopped at its end)."""
    yield from _running_cluster()


@pytest.fixture
def postgres_url(postgres_cluster: PostgresCluster) -> str:
    """A store URL (with its password) of a fresh schema."""
    return postgres_cluster.fresh_store()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store location of each backend: an SQLite file, a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        return str(tmp_path / "h.sqlite3")
    url: str = request.getfixturevalue("postgres_url")
    return url
