"""One request at a time to a server, across the processes of one user.

llama-cpp-python's server serves one request at a time: a request that arrives while it answers
another ends that answer. A queue in one process (``HTTPEndpoint.request_slot``) keeps that
process's requests apart; ``one_process_at_a_time`` keeps the requests of every process apart
(three ``metaagent call`` at once, the studio and a served agent): a file lock per base URL in
the user's runtime directory (``$XDG_RUNTIME_DIR/metaagent/locks/endpoint-<hash>.lock``, else
the temporary directory's ``metaagent-<uid>/locks``: the data directory is for what a person
keeps, and ``--no-history`` writes nothing there), held from sending a request to the end of
its answer, with the holder's process id beside it (``.owner``) for the message of a wait that
ran out. The wait polls, so cancelling the waiting task (a session's time budget) ends it at
once; it is bounded by ``wait`` seconds.

The same lock guards asking a server what it is (``providers._server_identity``): to
llama-cpp-python a model list is a request too, and it would cut off another process's answer.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
from filelock import FileLock, Timeout

from mcp_export.errors import ProviderError

__all__ = ["LOCK_WAIT", "EndpointBusy", "lock_path", "one_process_at_a_time"]

LOCK_WAIT = 15 * 60.0
"""Seconds a request waits at most for another process's request to a server that serves one at
a time (a small model on a CPU may take minutes per answer)."""

_POLL_SECONDS = 0.05
_MAX_POLL_SECONDS = 0.5


class EndpointBusy(ProviderError):
    """Another process held a one-at-a-time server for longer than a request waits."""


def lock_path(base_url: str) -> Path:
    """The lock file of ``base_url`` (its hash names it: a URL may hold what a file name may
    not, or a secret)."""
    digest = hashlib.sha256(base_url.rstrip("/").encode()).hexdigest()[:24]
    return _locks_dir() / f"endpoint-{digest}.lock"


def _locks_dir() -> Path:
    """Where the endpoint locks of this user live: shared by all their processes, runtime only."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_dir():
        return Path(runtime) / "metaagent" / "locks"
    user = getattr(os, "getuid", lambda: "user")()
    return Path(tempfile.gettempdir()) / f"metaagent-{user}" / "locks"


@contextlib.asynccontextmanager
async def one_process_at_a_time(base_url: str, named: str, *, wait: float) -> AsyncIterator[None]:
    """Hold ``base_url``'s lock inside the block; wait (polling) while another process holds it.

    Args:
        base_url: the endpoint.
        named: the endpoint as messages name it.
        wait: seconds to wait at most.

    Raises:
        EndpointBusy: another process held it for ``wait`` seconds.
    """
    path = lock_path(base_url)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path), thread_local=False)
    owner = path.with_suffix(".owner")
    deadline = time.monotonic() + wait
    pause = _POLL_SECONDS
    while True:
        try:
            lock.acquire(blocking=False)
        except Timeout:
            if time.monotonic() >= deadline:
                raise EndpointBusy(_busy_message(named, owner, wait)) from None
            await anyio.sleep(pause)
            pause = min(pause * 1.5, _MAX_POLL_SECONDS)
            continue
        break
    try:
        with contextlib.suppress(OSError):  # the name of the holder, for messages only
            owner.write_text(f"{os.getpid()} {' '.join(sys.argv[:3])}"[:300], encoding="utf-8")
        yield
    finally:
        lock.release()


def _busy_message(named: str, owner: Path, wait: float) -> str:
    try:
        holder = owner.read_text(encoding="utf-8").strip()
    except OSError:
        holder = ""
    pid, _, command = holder.partition(" ")
    who = f"process {pid} ({command})" if pid and command else "another process"
    return (
        f"{named} serves one request at a time, and {who} kept it busy for {wait:g} s while "
        "this request waited in line; try again when it is done, or stop it"
    )
