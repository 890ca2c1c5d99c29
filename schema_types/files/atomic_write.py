"""Replacing a file in one step: a temporary file beside it, fsynced, renamed over it.

A crash or a full disk mid-write leaves the old file as it was and no temporary file behind; the
directory is fsynced after the rename so the rename itself survives a power cut. Agent files and
MCP client configs are both written this way.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["write_atomically"]


def write_atomically(
    target: Path,
    content: bytes,
    *,
    mode: int | None = None,
    replace: Callable[[str, str], None] = os.replace,
) -> None:
    """Write ``content`` to ``target`` through a temporary file in the same directory.

    Args:
        target: the file to create or replace (its directory must exist).
        content: the whole new content.
        mode: permission bits for the file; by default those of the file being replaced (a
            private config stays private), or for a new file the usual ones under the umask.
        replace: the rename step; tests pass a failing one to simulate a crash.

    Raises:
        OSError: the temporary file cannot be written or renamed; ``target`` is unchanged.
    """
    if mode is None:
        mode = _existing_mode(target)
    if mode is None:
        mode = 0o666 & ~_umask()
    directory = target.parent
    handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed below, kept on success
        dir=directory, prefix=f".{target.name}.", suffix=".tmp", delete=False
    )
    temp = handle.name
    try:
        with handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)
        replace(temp, str(target))
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    _fsync_directory(directory)


def _existing_mode(target: Path) -> int | None:
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        return None


def _umask() -> int:
    # Linux reports the umask without changing it; elsewhere os.umask can only be read by
    # setting it, which races with other threads creating files, so that is the fallback.
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_directory(directory: Path) -> None:
    # Makes the rename itself durable; Windows cannot open a directory (nor needs to), and the
    # new content is already in place, so failing here is not an error.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
