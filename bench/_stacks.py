"""Rank py-spy's collapsed stacks (``py-spy record --format raw``): where the samples went.

Run: ``python bench/_stacks.py FILE [--top 40] [--calls N] [--focus TEXT] [--keep-idle]``. Prints
the samples' share by thread, by package of the innermost frame (self time), then the functions
with the most samples under them (inclusive, each function counted once a stack), and with
``--calls`` the same in milliseconds per call (samples ÷ rate ÷ calls; ``--rate`` as recorded).
``--focus`` keeps only stacks with a frame containing TEXT.

Samples whose innermost frame is a wait (the event loop's ``select``, a ``Condition.wait``) are
dropped unless ``--keep-idle``: py-spy's non-blocking mode can take a thread parked in a wait for
a running one. So are, with ``--no-syscalls``, samples in a transport's ``write`` (a socket send
or a pipe write): a thread that wakes its peer there is often preempted by it and counted as
running (``perf record -e cpu-clock`` measures the kernel's share instead).

"By owner" charges each sample to the innermost frame of this repository's code on its stack
(with everything it called: the SQLite statement a history module runs is the history's), and a
stack without one to the package of its innermost frame.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

_IDLE = ("EpollSelector.select (", "Condition.wait (", "Event.wait (", "Lock.acquire (")
_SYSCALL = ("_SelectorSocketTransport.write (", "_UnixWritePipeTransport.write (")
_OURS = ("mcp_export/", "schema_types/", "bench/")
_FRAME = re.compile(r"^(?P<function>.*) \((?P<file>[^:()]*)(?::(?P<line>\d+))?\)$")


def _package(path: str) -> str:
    if "site-packages/" in path:
        rest = path.split("site-packages/", 1)[1]
        return rest.split("/", 1)[0].removesuffix(".py")
    for root in ("mcp_export", "schema_types", "app", "bench", "tests"):
        if f"/{root}/" in path:
            tail = path.split(f"/{root}/", 1)[1]
            return f"{root}/{tail.split('/', 1)[0].removesuffix('.py')}"
    match = re.search(r"/python3\.\d+/(?P<module>[^/]+)", path)
    if match:
        return "stdlib/" + match["module"].removesuffix(".py")
    return path or "?"


def _short(frame: str) -> str:
    match = _FRAME.match(frame)
    if match is None:
        return frame
    file = match["file"]
    for marker in ("site-packages/", "/work/main/"):
        if marker in file:
            file = file.split(marker, 1)[1]
    file = re.sub(r"^.*/python3\.\d+/", "", file)
    return f"{match['function']} ({file})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--calls", type=int)
    parser.add_argument("--rate", type=int, default=500)
    parser.add_argument("--focus")
    parser.add_argument("--keep-idle", action="store_true")
    parser.add_argument("--no-syscalls", action="store_true")
    args = parser.parse_args()

    stacks: Counter[tuple[str, ...]] = Counter()
    threads: Counter[str] = Counter()
    idle = 0
    for line in args.file.read_text().splitlines():
        head, _, count = line.rpartition(" ")
        if not head:
            continue
        parts = head.split(";")
        frames = tuple(f for f in parts if not f.startswith(("thread (", "process ")))
        if frames and not args.keep_idle and frames[-1].startswith(_IDLE):
            idle += int(count)
            continue
        if frames and args.no_syscalls and frames[-1].startswith(_SYSCALL):
            idle += int(count)
            continue
        if args.focus and not any(args.focus in f for f in frames):
            continue
        stacks[frames] += int(count)
        thread = next((p for p in parts if p.startswith("thread (")), "?")
        threads[re.sub(r"^thread \(\d+\): ", "", thread).strip()] += int(count)
    total = sum(stacks.values())

    def figure(samples: int) -> str:
        share = f"{samples / total * 100:5.1f} %"
        if args.calls:
            return f"{share} {samples / args.rate / args.calls * 1000:7.3f} ms/call"
        return share

    calls = f", {args.calls} calls" if args.calls else ""
    print(f"{total} samples{calls}; {idle} dropped (idle, or in a syscall with --no-syscalls)")
    print("\nby thread")
    for name, count in threads.most_common():
        print(f"  {figure(count)}  {name}")
    packages: Counter[str] = Counter()
    owners: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    for frames, count in stacks.items():
        if frames:
            leaf = _FRAME.match(frames[-1])
            packages[_package(leaf["file"] if leaf else "")] += count
            owner = next((f for f in reversed(frames) if any(o in f for o in _OURS)), None)
            if owner is None:
                owners[_package(leaf["file"] if leaf else "")] += count
            else:
                owners[_short(owner)] += count
        for name in {_short(f) for f in frames}:
            inclusive[name] += count
    print("\nself time by package of the innermost frame")
    for name, count in packages.most_common(args.top):
        print(f"  {figure(count)}  {name}")
    print("\nby owner (innermost frame of this repository's code)")
    for name, count in owners.most_common(args.top):
        print(f"  {figure(count)}  {name}")
    print("\ninclusive, by function")
    for name, count in inclusive.most_common(args.top):
        print(f"  {figure(count)}  {name}")


if __name__ == "__main__":
    main()
