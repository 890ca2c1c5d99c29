"""Where Meta Agent Studio keeps its data: one directory for the studio and the served server.

``$METAAGENT_HOME`` when set (tests and portable set-ups use it), else the platform's user data
directory (``~/.local/share/metaagent-studio`` on Linux, ``$XDG_DATA_HOME/metaagent-studio`` when
that is set). The history database, studio settings, recovery copies and remembered test values
all live here, so ``metaagent serve`` and the studio see the same history.

Earlier builds of the studio kept its own settings, recovery copies and remembered test values in
a second folder (``…/metaagent``). The first time a process asks for the default folder, that old
folder's files are moved into the one folder (a file already there is kept, and the old copy is
kept beside it under ``<name>.from-metaagent``), the old folder is removed when it is empty, and
one notice is logged on stderr (:func:`data_dir_notice` gives it to the studio).
"""

from __future__ import annotations

import filecmp
import logging
import os
import shutil
import threading
from pathlib import Path

import platformdirs

__all__ = ["APP_DIR_NAME", "LEGACY_DIR_NAME", "data_dir", "data_dir_notice"]

APP_DIR_NAME = "metaagent-studio"
LEGACY_DIR_NAME = "metaagent"
_KEPT_SUFFIX = f".from-{LEGACY_DIR_NAME}"

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_merged = False
_notice: str | None = None


def data_dir() -> Path:
    """The data directory (not created here; an old second folder is merged into it once)."""
    home = os.environ.get("METAAGENT_HOME")
    if home:
        return Path(home).expanduser()
    folder = platformdirs.user_data_path(APP_DIR_NAME, appauthor=False)
    _merge_legacy_once(folder)
    return folder


def data_dir_notice() -> str | None:
    """What the merge of the old folder did in this process, for a person to read; else None."""
    return _notice


def _merge_legacy_once(folder: Path) -> None:
    global _merged, _notice
    if _merged:
        return
    with _lock:
        if _merged:
            return
        _merged = True
        legacy = platformdirs.user_data_path(LEGACY_DIR_NAME, appauthor=False)
        if legacy == folder or not legacy.is_dir():
            return
        try:
            moved, kept = _merge(legacy, folder)
        except OSError as exc:
            _notice = (
                f"could not move the old data folder {legacy} into {folder} ({exc}); "
                "move its files there by hand"
            )
            logger.warning("%s", _notice)
            return
        _notice = f"moved {moved} file(s) from the old data folder {legacy} into {folder}"
        if kept:
            _notice += f"; {kept} that existed in both were kept with the suffix {_KEPT_SUFFIX}"

        logger.warning("%s", _notice)


def _merge(legacy: Path, folder: Path) -> tuple[int, int]:
    """Move every file of ``legacy`` into ``folder``; returns (moved, kept beside a newer one)."""
    moved = kept = 0
    for source in sorted(legacy.rglob("*")):
        if source.is_dir() or (source.is_symlink() and not source.exists()):
            continue
        target = folder / source.relative_to(legacy)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            if filecmp.cmp(source, target, shallow=False):
                source.unlink()
                continue
            target = target.with_name(target.name + _KEPT_SUFFIX)
            kept += 1
        shutil.move(source, target)
        moved += 1
    # Deepest first, so each folder is empty when its turn comes; one that is not stays.
    for directory in sorted((p for p in legacy.rglob("*") if p.is_dir()), reverse=True):
        if not any(directory.iterdir()):
            directory.rmdir()
    if not any(legacy.iterdir()):
        legacy.rmdir()
    return moved, kept
