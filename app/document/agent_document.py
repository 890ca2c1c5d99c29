# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""An open agent: the one ``Agent`` model, its file, its undo stack and its dirty state.

Views never keep copies of the agent: they read ``document.agent`` and re-read the part they show
when :attr:`AgentDocument.changed_at` names a path that touches it (:func:`touches`). Every edit
goes through the document as an undoable command:

- :meth:`AgentDocument.set_field` sets one value by path, e.g. ``("settings", "temperature")``,
  ``("metadata", "tools", 2, "description")``, ``("mcp_servers", "time")``. Edits with the same
  ``merge_id`` on the same path merge into one command, so typing is undone as a whole.
  :meth:`AgentDocument.unset_field` puts a model field back to its default and out of the file.
- :meth:`AgentDocument.insert_item`, :meth:`remove_item`, :meth:`move_item` and
  :meth:`rename_key` edit lists and dicts (add/remove/move a tool, add/remove a server);
  :meth:`macro` groups several edits into one undo step.

An edit the agent model refuses (pydantic ``validate_assignment``, model validators such as unique
tool names) leaves the model and the undo stack unchanged and is reported through
:mod:`app.errors`; the edit methods return False then.

The agent is never changed in place. An edit builds a new agent: the models and containers on the
edited path are copied (``model_copy``, then a validated assignment of the changed child), every
other object is shared with the agent before. Each command keeps the agent before and after it,
so undo and redo put back exactly those objects, fields-set and unknown keys included: a save
after an undo writes what it wrote before. Since an object is never changed once it is in an
agent, a view may follow a ``ToolDefinition`` by identity through changes of the tools list (an
object still there is unchanged); an edit inside a tool replaces that tool's object, and its
notice names the tool's index.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    "touches",
    "validation_message",
]

FieldPath = tuple[str | int, ...]

# (the parent on the edited path, the last key) → the new parent; never changes its input.
_Op = Callable[[Any, str | int], Any]

_MISSING: Any = object()
_REFUSED = (ValidationError, ValueError, TypeError, KeyError, IndexError, AttributeError)


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


def touches(changed: FieldPath, watched: FieldPath) -> bool:
    """Whether a change notice for ``changed`` may change the value at ``watched``: one path
    is the other or lies inside it (a new tools list may hold a new tool 2, a new tool 2 is a
    new tools list)."""
    common = min(len(changed), len(watched))
    return changed[:common] == watched[:common]


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


def same_value(a: Any, b: Any) -> bool:
    """Equal, dict key order included (a reorder is a real edit: files keep key order)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(same_value, a, b))
    return bool(a == b)


def _value_at(root: Any, path: FieldPath) -> Any:
    value = root
    for key in path:
        if isinstance(value, BaseModel):
            value = getattr(value, str(key), _MISSING)
        elif isinstance(value, dict | list):
            try:
                value = value[key]  # type: ignore[index]
            except (KeyError, IndexError, TypeError):
                return _MISSING
        else:
            return _MISSING
        if value is _MISSING:
            return _MISSING
    return value


def _copy_container(value: Any) -> Any:
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return list(value)
    raise TypeError(f"cannot edit inside a {type(value).__name__}")


def _with_child(parent: Any, key: str | int, child: Any) -> Any:
    """A copy of ``parent`` whose ``key`` holds ``child``; a model copy validates the assignment,
    so its own rules (unique tool names…) see the change and the field counts as set."""
    if isinstance(parent, BaseModel):
        copy = parent.model_copy()
        setattr(copy, str(key), child)
        return copy
    copy = _copy_container(parent)
    copy[key] = child
    return copy


def _rebuilt(value: Any, path: FieldPath, op: _Op) -> Any:
    """``value`` with ``op`` applied at ``path``: new objects along the path, the rest shared."""
    key = path[0]
    if len(path) == 1:
        return op(value, key)
    child = getattr(value, str(key)) if isinstance(value, BaseModel) else value[key]
    return _with_child(value, key, _rebuilt(child, path[1:], op))


def _in_container(change: Callable[[Any, str | int], None]) -> _Op:
    """An op that runs ``change`` on a copy of the list or dict at the end of the path."""

    def op(parent: Any, key: str | int) -> Any:
        if isinstance(parent, BaseModel):
            raise TypeError(f"{key!r} is not a list or a dict")
        copy = _copy_container(parent)
        change(copy, key)
        return copy

    return op


def _unset(parent: Any, key: str | int) -> Any:
    """A copy of the model ``parent`` with field ``key`` at its default and not set."""
    if not isinstance(parent, BaseModel):
        raise TypeError(f"{key!r} is not a model field")
    name, kind = str(key), type(parent)
    values = {field: getattr(parent, field) for field in kind.model_fields if field != name}
    return kind.model_construct(
        parent.model_fields_set - {name}, **values, **(parent.model_extra or {})
    )


class EditCommand(QUndoCommand):
    """One undoable change made through the document: the agent before and after it."""

    def __init__(
        self,
        document: AgentDocument,
        before: Agent,
        after: Agent,
        path: FieldPath,
        text: str,
        merge_id: int = -1,
    ) -> None:
        super().__init__(text)
        self._document = document
        self._before = before
        self._after = after
        self.path = path
        self._merge_id = merge_id
        self.sealed = False

    def id(self) -> int:
        return self._merge_id

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, EditCommand) or other.path != self.path or self.sealed:
            return False
        self._after = other._after
        if same_value(_value_at(self._after, self.path), _value_at(self._before, self.path)):
            # Typed back to where it was: the agent before, "unset" fields and all, so the file
            # does not gain a key; the stack drops the obsolete command without an undo.
            self._document._show(self._before, self.path)
            self.setObsolete(True)
        return True

    def redo(self) -> None:
        self._document._show(self._after, self.path)

    def undo(self) -> None:
        self._document._show(self._before, self.path)


class AgentDocument(QObject):
    """One open agent file (or a new agent not saved yet).

    Attributes:
        agent: the agent model, the one truth every view reads.
        path: the file, or None for a new agent.
        undo_stack: the agent's undo history.
        disk_stamp: the file as it was at load/save, to detect changes made by others.

    Signals:
        changed_at(FieldPath): the value at that path is new (an edit, its undo or redo, a
            reload with ``()``); values elsewhere are the same objects as before.
        dirty_changed(bool): the document became dirty or clean.
        path_changed: the document was saved under another file.
    """

    changed_at = Signal(object)
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
        # Imported on first use: at the top it would add ~17 ms before the first paint
        # (bench/studio_startup.py), and the window shows before any agent file is read.
        from schema_types.files.agent_file import load_agent

        path = Path(path).resolve()
        return cls(load_agent(path, check_schemas=False), path, parent)

    def save(self, path: Path | None = None) -> None:
        """Write the agent atomically to ``path`` (default: its own file) and mark it clean.

        Raises:
            ValueError: no path given for a new agent.
            OSError / SchemaError: the file could not be written.
        """
        from schema_types.files.agent_file import save_agent  # on first use, as in load

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
        from schema_types.files.agent_file import load_agent  # on first use, as in load

        if self.path is None:
            raise ValueError("this agent has no file to reload from")
        agent = load_agent(self.path, check_schemas=False)
        self.replace_agent(agent, dirty=False)
        self.disk_stamp = DiskStamp.of(self.path)

    def replace_agent(self, agent: Agent, *, dirty: bool) -> None:
        """Swap in another agent (reload, recovery restore); clears the undo history."""
        self.undo_stack.clear()
        self._forced_dirty = dirty
        self._emit_dirty()
        self._show(agent, ())

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
            True when applied (or nothing to change: equal, dict key order included); False
            when the model refused the value — the refusal is reported through the error
            reporter and nothing changes.
        """
        if not path:
            raise ValueError("set_field needs a path")
        if same_value(_value_at(self.agent, path), value):
            return True
        return self._edit(path, path, _set_op(value), text=text, merge_id=merge_id)

    def unset_field(self, path: FieldPath, *, text: str, merge_id: int = -1) -> bool:
        """Put the model field at ``path`` back to its default *and* out of the file.

        Setting None would leave ``key: null`` in the file; unset, the key disappears, as it was
        before anyone typed. The edit merges with typing in the same field like ``set_field``.

        Returns:
            False when the agent refused (reported).
        """
        owner = _value_at(self.agent, path[:-1])
        name = str(path[-1])
        unset = isinstance(owner, BaseModel) and name not in owner.model_fields_set
        if unset and getattr(owner, name, None) is None:
            return True
        return self._edit(path, path, _unset, text=text, merge_id=merge_id)

    def insert_item(self, path: FieldPath, value: Any, *, text: str) -> bool:
        """Insert ``value`` into a list at ``path[-1]`` (an index), or a dict under a new key."""

        def insert(container: Any, key: str | int) -> None:
            if isinstance(container, list):
                container.insert(int(key), value)
            elif key in container:
                raise ValueError(f"{key!r} exists already")
            else:
                container[key] = value

        return self._edit(path, path[:-1], _in_container(insert), text=text)

    def remove_item(self, path: FieldPath, *, text: str) -> bool:
        """Remove the list item or dict entry at ``path``."""

        def remove(container: Any, key: str | int) -> None:
            del container[key]

        return self._edit(path, path[:-1], _in_container(remove), text=text)

    def move_item(self, path: FieldPath, to_index: int, *, text: str) -> bool:
        """Move the list item at ``path`` to ``to_index`` (its index after the move)."""

        def move(container: Any, key: str | int) -> None:
            item = container.pop(int(key))
            container.insert(to_index, item)

        return self._edit(path, path[:-1], _in_container(move), text=text)

    def rename_key(self, path: FieldPath, new_key: str, *, text: str) -> bool:
        """Rename the dict entry at ``path`` keeping its position (e.g. an MCP server)."""

        def rename(container: Any, key: str | int) -> None:
            if new_key in container and new_key != key:
                raise ValueError(f"{new_key!r} exists already")
            items = [(new_key if k == key else k, v) for k, v in container.items()]
            container.clear()
            container.update(items)

        return self._edit(path, path[:-1], _in_container(rename), text=text)

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
        try:
            _rebuilt(self.agent, path, _set_op(value))
        except _REFUSED as exc:
            return validation_message(exc)
        return None

    def _edit(
        self, path: FieldPath, notice: FieldPath, op: _Op, *, text: str, merge_id: int = -1
    ) -> bool:
        try:
            after = _rebuilt(self.agent, path, op)
        except _REFUSED as exc:
            reporter().warning(f"{text}: not changed — {validation_message(exc)}")
            return False
        self.undo_stack.push(EditCommand(self, self.agent, after, notice, text, merge_id))
        return True

    def _show(self, agent: Agent, path: FieldPath) -> None:
        """Make ``agent`` the document's agent and say where it differs (the commands' step)."""
        self.agent = agent
        self.changed_at.emit(path)


def _set_op(value: Any) -> _Op:
    def op(parent: Any, key: str | int) -> Any:
        return _with_child(parent, key, value)

    return op


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
