"""Benchmark servers over streamable HTTP: start one, learn its URL, keep its output drained."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from tests.fakes.processes import stop_process

__all__ = ["http_process"]

REPO = Path(__file__).resolve().parents[1]


def _drain(stream: IO[str], tail: deque[str]) -> None:
    for line in stream:
        tail.append(line)


@contextlib.contextmanager
def http_process(
    command: list[str], env: dict[str, str], ours: bool, cwd: Path = REPO
) -> Iterator[tuple[str, int]]:
    """Start a server with ``--http`` in ``cwd``; yields its MCP URL and pid.

    ``ours``: ``metaagent serve`` (it announces its URL on stderr); else
    ``bench/_bare_model_server.py`` (it prints its port on stdout).
    """
    process = subprocess.Popen(
        command,
        cwd=str(cwd),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    try:
        if ours:
            url = ""
            for line in process.stderr:
                if "serving MCP over streamable HTTP at " in line:
                    url = line.rsplit(" ", 1)[1].strip()
                    break
            assert url, "metaagent serve --http did not announce its URL"
        else:
            url = f"http://127.0.0.1:{int(process.stdout.readline())}/mcp"
        tail: deque[str] = deque(maxlen=40)
        for stream in (process.stdout, process.stderr):
            threading.Thread(target=_drain, args=(stream, tail), daemon=True).start()
        try:
            yield url, process.pid
        except BaseException:
            sys.stderr.write(f"{command[1:4]} exit {process.poll()}, its last lines:\n")
            sys.stderr.writelines(tail)
            raise
    finally:
        stop_process(process)
