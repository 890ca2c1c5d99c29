"""Recovery copies: unsaved changes survive a crash.

While a document is dirty, :class:`Autosaver` writes its agent every few seconds to
``METAAGENT_HOME/recovery/<key>.agent.yaml`` with a ``<key>.json`` beside it (the original file,
the agent name, the writing process, the time). A clean save or a deliberate close removes the
copy. On the next start :meth:`RecoveryStore.pending` lists the copies whose process is gone; the
main window offers to restore them, discard them, or show the difference to the file on disk.
"""

from __future__ import annotations

import difflib
import json
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, QTimer

from app.document.agent_document import AgentDocument
from app.document.plain_files import regular_file_bytes
from app.errors import reporter
from app.settings_store import metaagent_home

__all__ = ["AUTOSAVE_SECONDS", "Autosaver", "RecoveryEntry", "RecoveryStore"]

AUTOSAVE_SECONDS = 5.0
_META_LIMIT = 64 * 1024  # a copy's notes: a few lines of JSON


@dataclass(frozen=True)
class RecoveryEntry:
    """One recovery copy left behind.

    Attributes:
        key: the copy's id (file stem).
        copy: the recovered agent file.
        original: the file the agent was opened from, or None for an agent never saved.
        name: the agent's name at autosave time.
        saved_at: when the copy was written (seconds since the epoch).
        pid: the process that wrote it.
    """

    key: str
    copy: Path
    original: Path | None
    name: str
    saved_at: float
    pid: int

    def label(self) -> str:
        """One line for a person: which agent, from which file, when."""
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.saved_at))
        where = str(self.original) if self.original else "never saved"
        return f"{self.name} ({where}), autosaved {when}"

    def diff(self) -> str:
        """A unified diff from the file on disk (or nothing) to the recovery copy."""
        recovered = _lines(self.copy)
        original = _lines(self.original) if self.original is not None else []
        before = str(self.original) if self.original else "(not saved)"
        text = "".join(difflib.unified_diff(original, recovered, before, "recovery copy"))
        return text or "The recovery copy is identical to the file on disk."


def _lines(path: Path) -> list[str]:
    """The lines of a text file, none when it is not a regular file one can read (a file put
    in place of the original may be a named pipe: reading it would wait for ever)."""
    found = regular_file_bytes(path)
    if found is None:
        return []
    return found[1].decode("utf-8", errors="replace").splitlines(keepends=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


class RecoveryStore:
    """The recovery directory."""

    def __init__(self, home: Path | None = None) -> None:
        self.directory = (home or metaagent_home()) / "recovery"

    def write(self, key: str, document: AgentDocument) -> Path:
        """Write ``document``'s agent as the recovery copy ``key`` (atomically)."""
        from schema_types.files.agent_file import dump_agent_yaml

        self.directory.mkdir(parents=True, exist_ok=True)
        copy = self.directory / f"{key}.agent.yaml"
        meta = {
            "original": str(document.path) if document.path else None,
            "name": document.agent.metadata.name,
            "savedAt": time.time(),
            "pid": os.getpid(),
        }
        _write_text(copy, dump_agent_yaml(document.agent))
        _write_text(self.directory / f"{key}.json", json.dumps(meta, indent=2))
        return copy

    def remove(self, key: str) -> None:
        """Delete the recovery copy ``key`` (if any)."""
        for suffix in (".agent.yaml", ".json"):
            try:
                (self.directory / f"{key}{suffix}").unlink()
            except FileNotFoundError:
                pass

    def entries(self) -> list[RecoveryEntry]:
        """Every recovery copy, newest first."""
        entries: list[RecoveryEntry] = []
        if not self.directory.is_dir():
            return entries
        for meta_path in self.directory.glob("*.json"):
            key = meta_path.stem
            copy = self.directory / f"{key}.agent.yaml"
            found = regular_file_bytes(meta_path, _META_LIMIT)
            if found is None:
                continue
            try:
                meta = json.loads(found[1])
                original = meta.get("original")
                entry = RecoveryEntry(
                    key=key,
                    copy=copy,
                    original=Path(original) if original else None,
                    name=str(meta.get("name") or "Untitled agent"),
                    saved_at=float(meta.get("savedAt") or 0.0),
                    pid=int(meta.get("pid") or 0),
                )
            except (OSError, ValueError, TypeError, AttributeError):
                continue
            if copy.is_file():
                entries.append(entry)
        return sorted(entries, key=lambda e: e.saved_at, reverse=True)

    def pending(self) -> list[RecoveryEntry]:
        """Copies left by processes that are gone (a crash): the ones to offer."""
        return [e for e in self.entries() if not _alive(e.pid)]


def _write_text(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


class Autosaver(QObject):
    """Writes a recovery copy of each dirty document every :data:`AUTOSAVE_SECONDS`."""

    def __init__(
        self,
        store: RecoveryStore | None = None,
        *,
        interval_seconds: float = AUTOSAVE_SECONDS,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.store = store or RecoveryStore()
        self._keys: dict[AgentDocument, str] = {}
        self._written: dict[AgentDocument, int] = {}
        self._generation: dict[AgentDocument, int] = {}
        self.timer = QTimer(self)
        self.timer.setInterval(int(interval_seconds * 1000))
        self.timer.timeout.connect(self.save_all)
        self.timer.start()

    def track(self, document: AgentDocument) -> None:
        """Autosave ``document`` from now on."""
        self._keys[document] = uuid.uuid4().hex
        self._generation[document] = 0
        # A recovery copy holds the whole agent: any change at all makes it out of date.
        document.changed_at.connect(lambda _path: self._on_changed(document))
        document.dirty_changed.connect(lambda dirty: self._on_dirty_changed(document, dirty))

    def forget(self, document: AgentDocument) -> None:
        """Stop autosaving ``document`` and remove its copy (closed on purpose)."""
        key = self._keys.pop(document, None)
        self._written.pop(document, None)
        self._generation.pop(document, None)
        if key is not None:
            self.store.remove(key)

    def key(self, document: AgentDocument) -> str | None:
        """The recovery key of ``document``."""
        return self._keys.get(document)

    def save_all(self) -> None:
        """Write a copy of every dirty document that changed since its last copy."""
        for document, key in list(self._keys.items()):
            if not document.is_dirty():
                continue
            stamp = self._generation.get(document, 0)
            copy_exists = (self.store.directory / f"{key}.json").exists()
            if self._written.get(document) == stamp and copy_exists:
                continue
            try:
                self.store.write(key, document)
            except Exception as exc:  # a failing autosave must be seen, but not stop editing
                reporter().warning(f"Could not write the recovery copy: {exc}")
                continue
            self._written[document] = stamp

    def _on_changed(self, document: AgentDocument) -> None:
        if document in self._generation:
            self._generation[document] += 1

    def _on_dirty_changed(self, document: AgentDocument, dirty: bool) -> None:
        key = self._keys.get(document)
        if key is not None and not dirty:
            self.store.remove(key)
            self._written.pop(document, None)
