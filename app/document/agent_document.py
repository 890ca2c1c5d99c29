# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""An open agent: the one ``Agent`` model, its file, its undo stack and its dirty state.

Views never keep copies of the agent: they read ``document.agent`` and re-read on
:attr:`AgentDocument.changed`. Every edit goes through the document as an undoable command:

- :meth:`AgentDocument.set_field` sets one value by path, e.g. ``("settings", "temperature")``,
  ``("metadata", "tools", 2, "description")``, ``("mcp_servers", "time")``. Edits with the same
  ``merge_id`` on the same path merge into one command, so typing is undone as a whole.
- :meth:`AgentDocument.insert_item`, :meth:`remove_item`, :meth:`move_item` edit lists and dicts
  (add/remove/move a tool, add/remove a server).
- :meth:`AgentDocument.push` takes any other ``QUndoCommand``; :meth:`macro` groups several edits.

An edit the agent model refuses (pydantic ``validate_assignment``, model validators such as unique
tool names) leaves the model and the undo stack unchanged and is reported through
:mod:`app.errors`; the edit methods return False then.

Edits keep object identity: only the containers on the edited path are copied, so a view may track
a ``ToolDefinition`` by identity across edits, undo and redo (but a :meth:`reload` replaces all).
"""

from __future__ import annotations

import hashlib
import os
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, ValidationError
from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from app.document.plain_files import regular_file_bytes
from app.errors import reporter
from schema_types.agent import Agent

__all__ = [
    "AgentDocument",
    "DiskStamp",
    "EditCommand",
    "FieldPath",
    "blank_agent",
    "merge_id_for",
    "validation_message",
]

FieldPath = tuple[str | int, ...]

_MISSING: Any = object()


@dataclass(frozen=True)
class DiskStamp:
    """What a file looked like when it was loaded or saved (to detect changes by others)."""

    mtime_ns: int
    size: int
    sha256: str

    @classmethod
    def of(cls, path: Path) -> DiskStamp | None:
        """The stamp of ``path`` now, or None when it is not a regular file of an agent's size
        (missing, unreadable, a named pipe put in its place, too large); never blocks."""
        found = regular_file_bytes(path)
        if found is None:
            return None
        info, content = found
        return cls(info.st_mtime_ns, info.st_size, hashlib.sha256(content).hexdigest())


def merge_id_for(path: FieldPath) -> int:
    """A stable merge id for typing into the field at ``path`` (same path, same id)."""
    return zlib.crc32(repr(tuple(path)).encode()) & 0x3FFFFFFF


def validation_message(exc: Exception) -> str:
    """A one-line, person-readable form of a pydantic error (or any exception)."""
    if isinstance(exc, ValidationError):
        parts: list[str] = []
        for error in exc.errors():
            message = str(error.get("msg", ""))
            message = message.removeprefix("Value error, ")
            where = ".".join(str(p) for p in error.get("loc", ()))
            parts.append(f"{where}: {message}" if where else message)
        return "; ".join(parts) or str(exc)
    return str(exc)


def _raw_get(model: BaseModel, name: str) -> Any:
    if name in type(model).model_fields:
        return model.__dict__[name]
    extra = model.__pydantic_extra__ or {}
    return extra.get(name, _MISSING)


def _raw_set(model: BaseModel, name: str, value: Any) -> None:
    """Set without validation (undo/redo restore states that were already validated)."""
    if name in type(model).model_fields:
        model.__dict__[name] = value
        return
    extra = model.__pydantic_extra__
    if extra is None:
        extra = {}
        object.__setattr__(model, "__pydantic_extra__", extra)
    if value is _MISSING:
        extra.pop(name, None)
    else:
        extra[name] = value


_FieldsSets = list[tuple[BaseModel, frozenset[str]]]


def _snapshot(models: list[BaseModel]) -> _FieldsSets:
    return [(m, frozenset(m.model_fields_set)) for m in models]


def _restore(snapshot: _FieldsSets) -> None:
    for model, fields_set in snapshot:
        object.__setattr__(model, "__pydantic_fields_set__", set(fields_set))


@dataclass
class _Change:
    """One applied change of one model field (the deepest model on the path)."""

    model: BaseModel
    name: str
    old: Any
    new: Any
    before: _FieldsSets
    after: _FieldsSets

    def undo(self) -> None:
        _raw_set(self.model, self.name, self.old)
        _restore(self.before)

    def redo(self) -> None:
        _raw_set(self.model, self.name, self.new)
        _restore(self.after)


class EditCommand(QUndoCommand):
    """An undoable change made through the document (already applied when pushed)."""

    def __init__(
        self,
        document: AgentDocument,
        change: _Change,
        path: FieldPath,
        text: str,
        merge_id: int = -1,
    ) -> None:
        super().__init__(text)
        self._document = document
        self._change = change
        self.path = path
        self._merge_id = merge_id
        self._applied = True
        self.sealed = False

    def id(self) -> int:
        return self._merge_id

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, EditCommand) or other.path != self.path or self.sealed:
            return False
        if other._change.model is not self._change.model or other._change.name != self._change.name:
            return False
        self._change.new = other._change.new
        self._change.after = other._change.after
        if self._change.new == self._change.old:
            # Typed back to where it was: restore "unset" too, so the file does not gain a key.
            _restore(self._change.before)
            self.setObsolete(True)
        return True

    def redo(self) -> None:
        if self._applied:
            self._applied = False
        else:
            self._change.redo()
        self._document.changed.emit()

    def undo(self) -> None:
        self._change.undo()
        self._document.changed.emit()


class _Notifying(QUndoCommand):
    """Wraps a command pushed from outside so the document emits changed after it."""

    def __init__(self, document: AgentDocument, inner: QUndoCommand) -> None:
        super().__init__(inner.text())
        self._document = document
        self.inner = inner

    def id(self) -> int:
        return self.inner.id()

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, _Notifying) or not self.inner.mergeWith(other.inner):
            return False
        self.setText(self.inner.text())
        self.setObsolete(self.inner.isObsolete())
        return True

    def redo(self) -> None:
        self.inner.redo()
        self._document.changed.emit()

    def undo(self) -> None:
        self.inner.undo()
        self._document.changed.emit()


def _copy_container(value: Any) -> Any:
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return list(value)
    raise TypeError(f"cannot edit inside a {type(value).__name__}")


class AgentDocument(QObject):
    """One open agent file (or a new agent not saved yet).

    Attributes:
        agent: the agent model, the one truth every view reads.
        path: the file, or None for a new agent.
        undo_stack: the agent's undo history.
        disk_stamp: the file as it was at load/save, to detect changes made by others.
    """

    changed = Signal()
    dirty_changed = Signal(bool)
    path_changed = Signal()

    def __init__(
        self,
        agent: Agent | None = None,
        path: Path | None = None,
        parent: QObject | None = None,
        *,
        disk_stamp: DiskStamp | None = _MISSING,
    ) -> None:
        """An open agent.

        Args:
            agent: the agent (a blank one when None).
            path: its file, or None for an agent not saved yet.
            parent: the owning QObject.
            disk_stamp: the file as it was read (taken now from ``path`` when not given).
        """
        super().__init__(parent)
        self.agent: Agent = agent if agent is not None else blank_agent()
        self.path: Path | None = path
        self.undo_stack = QUndoStack(self)
        if disk_stamp is _MISSING:
            disk_stamp = DiskStamp.of(path) if path else None
        self.disk_stamp: DiskStamp | None = disk_stamp
        self._forced_dirty = False
        self._was_dirty = False
        self.undo_stack.cleanChanged.connect(self._on_clean_changed)

    # -- files -----------------------------------------------------------------------------

    @classmethod
    def load(cls, path: Path, parent: QObject | None = None) -> AgentDocument:
        """Open ``path``. Raises ``AgentFileError`` when it cannot be read.

        Tools whose parameters schema is unsound do not stop it: the window checks them after
        it is shown (``check_tool_schemas_soon``) and says what to fix.
        """
        from schema_types.files.agent_file import load_agent

        path = Path(path).resolve()
        return cls(load_agent(path, check_schemas=False), path, parent)

    def save(self, path: Path | None = None) -> None:
        """Write the agent atomically to ``path`` (default: its own file) and mark it clean.

        Raises:
            ValueError: no path given for a new agent.
            OSError / SchemaError: the file could not be written.
        """
        from schema_types.files.agent_file import save_agent

        target = Path(path).resolve() if path is not None else self.path
        if target is None:
            raise ValueError("this agent has no file yet: use Save As")
        save_agent(self.agent, target)
        self.disk_stamp = DiskStamp.of(target)
        moved = target != self.path
        self.path = target
        self._forced_dirty = False
        self.undo_stack.setClean()
        self._emit_dirty()
        if moved:
            self.path_changed.emit()

    def changed_on_disk(self) -> bool:
        """Whether the file differs from what was loaded or last saved (edited by someone else)."""
        if self.path is None or self.disk_stamp is None:
            return False
        try:
            info = self.path.stat()
        except OSError:
            return True
        if (info.st_mtime_ns, info.st_size) == (self.disk_stamp.mtime_ns, self.disk_stamp.size):
            return False
        now = DiskStamp.of(self.path)
        return now is None or now.sha256 != self.disk_stamp.sha256

    def reload(self) -> None:
        """Replace the agent by the file's content; the undo history is dropped."""
        from schema_types.files.agent_file import load_agent

        if self.path is None:
            raise ValueError("this agent has no file to reload from")
        agent = load_agent(self.path, check_schemas=False)
        self.replace_agent(agent, dirty=False)
        self.disk_stamp = DiskStamp.of(self.path)

    def replace_agent(self, agent: Agent, *, dirty: bool) -> None:
        """Swap in another agent (reload, recovery restore); clears the undo history."""
        self.agent = agent
        self.undo_stack.clear()
        self._forced_dirty = dirty
        self._emit_dirty()
        self.changed.emit()

    def display_name(self) -> str:
        """The file name, or the agent's name for an agent not saved yet."""
        if self.path is not None:
            return self.path.name
        return self.agent.metadata.name or "Untitled agent"

    @property
    def base_dir(self) -> Path:
        """Where relative paths in the agent (server commands, cwd) are resolved."""
        return self.path.parent if self.path is not None else Path.cwd()

    # -- dirty state -----------------------------------------------------------------------

    def is_dirty(self) -> bool:
        """Whether there are changes not saved to the file."""
        return self._forced_dirty or not self.undo_stack.isClean()

    def mark_dirty(self) -> None:
        """Count the document as changed without an edit (a restored recovery copy)."""
        self._forced_dirty = True
        self._emit_dirty()

    def _on_clean_changed(self, _clean: bool) -> None:
        self._emit_dirty()

    def _emit_dirty(self) -> None:
        dirty = self.is_dirty()
        if dirty != self._was_dirty:
            self._was_dirty = dirty
            self.dirty_changed.emit(dirty)

    # -- reading ---------------------------------------------------------------------------

    def get(self, path: FieldPath) -> Any:
        """The value at ``path`` (attribute names for models, keys for dicts, indexes for lists)."""
        value: Any = self.agent
        for key in path:
            value = getattr(value, str(key)) if isinstance(value, BaseModel) else value[key]
        return value

    # -- editing ---------------------------------------------------------------------------

    def set_field(self, path: FieldPath, value: Any, *, text: str, merge_id: int = -1) -> bool:
        """Set the value at ``path`` as one undoable command.

        Args:
            path: attribute/key/index path from the agent, e.g. ``("settings", "temperature")``.
            value: the new value (validated by the agent model).
            text: the undo command's text ("Edit temperature").
            merge_id: commands with the same id (not -1) on the same path merge (typing).

        Returns:
            True when applied (or nothing to change); False when the model refused the value —
            the refusal is reported through the error reporter and nothing changes.
        """
        if not path:
            raise ValueError("set_field needs a path")
        try:
            if self.get(path) == value:
                return True
        except (AttributeError, KeyError, IndexError, TypeError):
            pass

        def put(container: Any, key: str | int) -> None:
            container[key] = value

        return self._edit(path, put, text=text, merge_id=merge_id, leaf_value=value)

    def insert_item(self, path: FieldPath, value: Any, *, text: str) -> bool:
        """Insert ``value`` into a list at ``path[-1]`` (an index), or a dict under a new key."""

        def insert(container: Any, key: str | int) -> None:
            if isinstance(container, list):
                container.insert(int(key), value)
            elif key in container:
                raise ValueError(f"{key!r} exists already")
            else:
                container[key] = value

        return self._edit(path, insert, text=text)

    def remove_item(self, path: FieldPath, *, text: str) -> bool:
        """Remove the list item or dict entry at ``path``."""

        def remove(container: Any, key: str | int) -> None:
            del container[key]

        return self._edit(path, remove, text=text)

    def move_item(self, path: FieldPath, to_index: int, *, text: str) -> bool:
        """Move the list item at ``path`` to ``to_index`` (its index after the move)."""

        def move(container: Any, key: str | int) -> None:
            item = container.pop(int(key))
            container.insert(to_index, item)

        return self._edit(path, move, text=text)

    def rename_key(self, path: FieldPath, new_key: str, *, text: str) -> bool:
        """Rename the dict entry at ``path`` keeping its position (e.g. an MCP server)."""

        def rename(container: Any, key: str | int) -> None:
            if new_key in container and new_key != key:
                raise ValueError(f"{new_key!r} exists already")
            items = [(new_key if k == key else k, v) for k, v in container.items()]
            container.clear()
            container.update(items)

        return self._edit(path, rename, text=text)

    def replace_agent_part(self, path: FieldPath, value: Any, *, text: str) -> bool:
        """Replace a whole part (a tool, a server, the parameters dict) as one command."""
        return self.set_field(path, value, text=text)

    def push(self, command: QUndoCommand) -> None:
        """Push any other undoable command (it is run now); views get :attr:`changed` after its
        redo and undo. Its ``id``/``mergeWith`` work as usual."""
        if isinstance(command, EditCommand):
            self.undo_stack.push(command)
        else:
            self.undo_stack.push(_Notifying(self, command))

    def seal(self) -> None:
        """End the current typing run: the next edit of the same field is a new undo step.

        Field views call it when editing finishes (focus leaves, Enter)."""
        index = self.undo_stack.index()
        command = self.undo_stack.command(index - 1) if index > 0 else None
        if isinstance(command, EditCommand):
            command.sealed = True

    @contextmanager
    def macro(self, text: str) -> Iterator[None]:
        """Group the edits made inside the ``with`` block into one undo step."""
        self.undo_stack.beginMacro(text)
        try:
            yield
        finally:
            self.undo_stack.endMacro()

    def validate_field(self, path: FieldPath, value: Any) -> str | None:
        """Why ``value`` would be refused at ``path`` (None when it is fine); changes nothing."""

        def put(container: Any, key: str | int) -> None:
            container[key] = value

        try:
            change = self._apply(path, put, leaf_value=value)
        except (ValidationError, ValueError, TypeError, KeyError, IndexError) as exc:
            return validation_message(exc)
        change.undo()
        return None

    def _edit(
        self,
        path: FieldPath,
        op: Callable[[Any, str | int], None],
        *,
        text: str,
        merge_id: int = -1,
        leaf_value: Any = _MISSING,
    ) -> bool:
        try:
            change = self._apply(path, op, leaf_value=leaf_value)
        except (ValidationError, ValueError, TypeError, KeyError, IndexError) as exc:
            reporter().warning(f"{text}: not changed — {validation_message(exc)}")
            return False
        self.undo_stack.push(EditCommand(self, change, path, text, merge_id))
        return True

    def _apply(
        self, path: FieldPath, op: Callable[[Any, str | int], None], *, leaf_value: Any
    ) -> _Change:
        """Apply ``op`` at ``path`` and validate; on failure restore everything and raise."""
        # Walk the path, remembering each model and the field it was left by.
        chain: list[tuple[BaseModel, str, int]] = []  # (model, field name, position in path)
        value: Any = self.agent
        for position, key in enumerate(path[:-1]):
            if isinstance(value, BaseModel):
                chain.append((value, str(key), position))
                value = getattr(value, str(key))
            else:
                value = value[key]
        last = path[-1]
        if isinstance(value, BaseModel):
            model, name, sub = value, str(last), cast(FieldPath, ())
        else:
            model, name, start = chain[-1]
            chain.pop()
            sub = path[start + 1 :]
        ancestors = [m for m, _, _ in chain]
        before = _snapshot([model, *ancestors])
        old = _raw_get(model, name)
        if sub:
            new = _copy_container(old)
            container = new
            for key in sub[:-1]:
                inner = _copy_container(container[key])
                container[key] = inner
                container = inner
            op(container, sub[-1])
        elif leaf_value is not _MISSING:
            new = leaf_value
        else:
            raise TypeError(f"{name!r} is not a list or a dict")
        try:
            setattr(model, name, new)
            # Model validators of the ancestors (unique tool names…) see the change too; the
            # re-assignment also marks the ancestors "set", so a file dump keeps the edit.
            for ancestor, field_name, _ in reversed(chain):
                setattr(ancestor, field_name, getattr(ancestor, field_name))
        except (ValidationError, ValueError, TypeError):
            _raw_set(model, name, old)
            _restore(before)
            raise
        return _Change(
            model, name, old, _raw_get(model, name), before, _snapshot([model, *ancestors])
        )


def blank_agent() -> Agent:
    """A new agent with the keys a person expects to see in its file."""
    return Agent.model_validate(
        {
            "metadata": {
                "name": "Untitled agent",
                "version": "1.0.0",
                "description": "",
                "mode": "tools",
                "tools": [],
            },
            "settings": {"maxChatTurns": 10, "toolPermission": "tool"},
            "systemPrompt": "",
        }
    )


def file_fingerprint(path: Path) -> str:
    """A short stable id for a path (used to name recovery copies)."""
    return hashlib.sha1(os.fsencode(str(path))).hexdigest()[:12]
