"""Reading the studio's own small files without ever waiting on one.

A path the studio reads on the GUI thread (the stamp of an open agent's file, a recovery copy and
its notes) may have been replaced by something that is not a file: a named pipe blocks a reader
until someone writes to it, ``/dev/zero`` never ends. :func:`regular_file_bytes` opens without
waiting, looks before it reads, and reads at most one byte past its limit. Agent files themselves
are read by ``schema_types`` (``load_agent``), which applies the same rule and says why it refused.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from schema_types.limits import MAX_FILE_BYTES

__all__ = ["regular_file_bytes"]

# Opening a named pipe without O_NONBLOCK waits for a writer; a regular file reads the same.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def regular_file_bytes(
    path: Path, limit: int = MAX_FILE_BYTES
) -> tuple[os.stat_result, bytes] | None:
    """The status and bytes of ``path`` when it is a regular file of at most ``limit`` bytes.

    Returns:
        ``(status, content)``, or None for anything else: missing, unreadable, not a regular
        file, or larger than ``limit`` (also when it grows past it while read).
    """
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return (info, b"".join(chunks)) if size <= limit else None
