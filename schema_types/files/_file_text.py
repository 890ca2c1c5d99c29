"""Reading an agent file's text: regular files only, at most :data:`MAX_FILE_BYTES`, UTF-8.

A path can name things that are not files of text: a named pipe blocks the reader until someone
writes to it, ``/dev/zero`` never ends, a device or a socket is not text at all. So the file is
opened without blocking, looked at (``fstat``) before a byte is read, and read up to one byte past
the size limit, which also catches a file that grows while it is read. Everything refused becomes
an :class:`AgentFileError` that says what the path is and what to give instead.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from schema_types.errors import AgentFileError
from schema_types.limits import MAX_FILE_BYTES

__all__ = ["read_agent_text"]

# O_NONBLOCK keeps open() of a named pipe with no writer from waiting for one; a regular file
# reads the same with it. Windows has neither named pipes of this kind nor the flag.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
_LIMIT_WORDS = f"{MAX_FILE_BYTES // (1024 * 1024)} MB"
_CHUNK = 1024 * 1024
_AGENT_FILE_ADVICE = "save the agent as a *.agent.yaml file and give that file's path"

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def read_agent_text(path: Path, *, advice: str = _AGENT_FILE_ADVICE) -> str:
    """The text of one file of an agent (an agent file, or a tsagent directory's files).

    Args:
        path: the file; a symlink is followed.
        advice: what to do when the path is not a regular file, for the message.

    Returns:
        The text, decoded as UTF-8 (a byte-order mark is dropped).

    Raises:
        AgentFileError: the path is missing, unreadable, not a regular file, larger than
            :data:`MAX_FILE_BYTES`, or not UTF-8 (located at the first bad byte).
    """
    raw = _read_bytes(path, advice)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line_start = raw.rfind(b"\n", 0, exc.start) + 1
        line = raw.count(b"\n", 0, exc.start) + 1
        # Columns count characters, as an editor shows them, not bytes.
        column = len(raw[line_start : exc.start].decode("utf-8", errors="replace")) + 1
        raise AgentFileError(
            str(path),
            f"the file is not UTF-8 text (byte 0x{raw[exc.start]:02x} cannot be decoded); "
            "agent files are UTF-8",
            line=line,
            column=column,
        ) from exc


def _read_bytes(path: Path, advice: str) -> bytes:
    # Looked at before it is opened (opening a socket fails, a pipe may block), and again once
    # open, in case the path was replaced in between.
    try:
        _refuse_other_kinds(path, os.stat(path).st_mode, advice)
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError as exc:
        raise AgentFileError(str(path), "no such file") from exc
    except IsADirectoryError as exc:  # Windows
        raise AgentFileError(str(path), _not_a_file("a directory", advice)) from exc
    except OSError as exc:
        raise AgentFileError(str(path), f"cannot read the file: {exc.strerror or exc}") from exc
    try:
        info = os.fstat(fd)
        _refuse_other_kinds(path, info.st_mode, advice)
        if info.st_size > MAX_FILE_BYTES:
            raise AgentFileError(str(path), _too_large(info.st_size))
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_FILE_BYTES:  # one byte past the limit tells a file that grew
            chunk = os.read(fd, min(_CHUNK, MAX_FILE_BYTES + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise AgentFileError(str(path), f"cannot read the file: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    if size > MAX_FILE_BYTES:
        raise AgentFileError(str(path), _too_large(None))
    return b"".join(chunks)


def _refuse_other_kinds(path: Path, mode: int, advice: str) -> None:
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "of another kind")
        raise AgentFileError(str(path), _not_a_file(kind, advice))


def _not_a_file(kind: str, advice: str) -> str:
    return f"is {kind}, not a regular file: {advice}"


def _too_large(size: int | None) -> str:
    found = f" ({size} bytes)" if size is not None else " (it grew while it was read)"
    return (
        f"the file is larger than the {_LIMIT_WORDS} an agent file may hold{found}: check that "
        "this is the agent file you meant"
    )
