"""Process helpers for the benchmarks: the open-files limit, child processes, CPU time (/proc)."""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

__all__ = [
    "PERF_RATE",
    "children",
    "cpu_seconds",
    "raise_file_limit",
    "sampled",
    "thread_seconds",
    "wall",
]

PERF_RATE = 999
"""perf's samples a second (``perf report`` in ms: samples × 1000 / PERF_RATE)."""
_TICKS = os.sysconf("SC_CLK_TCK")


def raise_file_limit() -> int:
    """Raise this process's soft limit on open files to its hard limit (children inherit it);
    returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of ``pid`` so far (all its threads), from ``/proc/PID/stat``."""
    raw = Path(f"/proc/{pid}/stat").read_text()
    fields = raw[raw.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def thread_seconds(pid: int) -> dict[str, float]:
    """User plus system CPU time of ``pid``'s threads so far: ``main`` (the thread whose id is the
    process's) and ``other threads`` (the rest, summed; Python does not name its threads in
    ``/proc`` before 3.14). Threads that ended are in neither."""
    found = {"main": 0.0, "other threads": 0.0}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            raw = (task / "stat").read_text()
        except OSError:
            continue
        fields = raw[raw.rindex(")") + 2 :].split()
        name = "main" if task.name == str(pid) else "other threads"
        found[name] += (int(fields[11]) + int(fields[12])) / _TICKS
    return found


def children(parent: int | None = None) -> dict[int, str]:
    """The live child processes of ``parent`` (default: this process): pid → command line."""
    parent = os.getpid() if parent is None else parent
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "stat").read_text()
            ppid = int(raw[raw.rindex(")") + 2 :].split()[1])
            if ppid == parent:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                found[int(entry.name)] = command.strip()
        except (OSError, ValueError):
            continue
    return found


@contextlib.asynccontextmanager
async def sampled(pid: int, prefix: Path, rate: int = 500) -> AsyncIterator[None]:
    """Sample process ``pid`` while the block runs: py-spy's Python stacks (non-blocking, of the
    thread holding the interpreter lock only: without ``--gil`` a thread waiting for the lock is
    sampled as running; collapsed: ``PREFIX.pyspy``; rank them with ``bench/_stacks.py``) and,
    where ``perf`` is installed, its on-CPU time with native frames (``perf record -e
    cpu-clock``: ``PREFIX.perf``). py-spy is no dependency: ``.venv/bin/pip install py-spy``."""
    import anyio

    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    commands = [
        [
            *(spy, "record", "--pid", str(pid), "--rate", str(rate), "--nonblocking", "--gil"),
            *("--threads", "--format", "raw", "-o", f"{prefix}.pyspy"),
        ]
    ]
    if shutil.which("perf"):
        commands.append(
            [
                *("perf", "record", "-e", "cpu-clock", "-F", str(PERF_RATE), "-g"),
                *("-p", str(pid), "-o", f"{prefix}.perf"),
            ]
        )
    recorders = [
        await anyio.open_process(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for command in commands
    ]
    try:
        await anyio.sleep(1.0)  # both attached
        yield
    finally:
        for recorder in recorders:
            recorder.send_signal(signal.SIGINT)
            await recorder.wait()


def wall(command: list[str], timeout: float) -> float:
    """The wall time of running ``command`` to its end; a failed run raises with its stderr."""
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{command} failed: {done.stderr.strip()[:500]}")
    return elapsed
