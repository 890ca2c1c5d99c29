"""Process helpers for the benchmarks: the open-files limit, child processes, CPU time (/proc)."""

from __future__ import annotations

import os
import resource
from pathlib import Path

__all__ = ["children", "cpu_seconds", "raise_file_limit"]

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
