"""The edits of the parameter tree, each ONE undoable command on the document.

Mixed into :class:`~app.tool_editor.parameter_model.ParameterTreeModel`: every method computes
the new ``parameters`` dict with :mod:`.parameter_edits`, checks its keyword types with
``parameters_from_json`` (the one implementation, in ``schema_types``) and pushes it as a
one ``set_field`` of the tool's ``parameters`` (a reorder counts: the document compares with key
order). A refused edit changes nothing and says why through the reporter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.document.agent_document import AgentDocument, merge_id_for
from app.document.tool_ref import ToolRef
from app.errors import reporter
from app.tool_editor import parameter_edits as edits
from app.tool_editor.parameter_edits import NodePath
from app.tool_editor.schema_slot import SchemaSlot
from schema_types.agent import ToolDefinition
from schema_types.errors import SchemaDefinitionError
from schema_types.schema.nodes import parameters_from_json

__all__ = ["ParameterActions"]


class ParameterActions:
    """Edit operations by node path; the host model provides the reading methods below."""

    document: AgentDocument
    ref: ToolRef
    slot: SchemaSlot
    # The node paths a rebuild should treat as "the same node, renamed or moved" (selection
    # and expansion follow it).
    _renamed: tuple[NodePath, NodePath] | None

    def tool(self) -> ToolDefinition | None:
        raise NotImplementedError

    def parameters(self) -> dict[str, Any] | None:
        raise NotImplementedError

    def node_json(self, path: NodePath) -> Any:
        raise NotImplementedError

    def row_of(self, path: NodePath) -> int | None:
        raise NotImplementedError

    def child_count(self, path: NodePath) -> int:
        raise NotImplementedError

    def is_required(self, path: NodePath) -> bool:
        raise NotImplementedError

    def _on_renamed(self, old_path: NodePath, new_path: NodePath) -> None:
        """Called after a rename by the person (not after undo/redo of one)."""

    # -- plumbing ------------------------------------------------------------------------------

    def _push(self, new: dict[str, Any], text: str, merge_key: tuple[Any, ...] = ()) -> bool:
        path = self.ref.path(self.slot.field)
        if path is None:
            return False
        try:
            parameters_from_json(new)
        except SchemaDefinitionError as exc:
            reporter().warning(f"{text}: not changed — {exc}")
            return False
        merge_id = merge_id_for((*path, *merge_key)) if merge_key else -1
        return self.document.set_field(path, new, text=text, merge_id=merge_id)

    def _try(self, text: str, make: Callable[[Any], dict[str, Any]]) -> dict[str, Any] | None:
        params = self.parameters()
        if params is None:
            return None
        try:
            return make(params)
        except (ValueError, KeyError) as exc:
            reporter().warning(f"{text}: not changed — {exc.args[0] if exc.args else exc}")
            return None

    def _label(self, path: NodePath) -> str:
        if not path:
            return self.slot.whole
        return edits.template_path(path) or edits.schema_path(path)

    def seal(self) -> None:
        """End a typing run: the next keyword edit is a new undo step."""
        self.document.seal()

    # -- structure -----------------------------------------------------------------------------

    def add_property(
        self,
        object_path: NodePath = (),
        name: str | None = None,
        schema: Any = None,
        *,
        row: int | None = None,
    ) -> NodePath | None:
        """Add a property to the object at ``object_path`` (a fresh unique name by default).

        Returns:
            The new property's path, or None when refused (reported).
        """
        chosen = name or edits.unique_name(self.parameters(), object_path, "new_property")
        text = f"Add {self.slot.noun} {chosen}"
        problem = edits.identifier_problem(chosen)
        if problem:
            reporter().warning(f"{text}: not changed — {problem}")
            return None
        new = self._try(
            text, lambda p: edits.with_property(p, object_path, chosen, schema, row=row)
        )
        if new is None or not self._push(new, text):
            return None
        return (*object_path, "properties", chosen)

    def add_item_schema(self, array_path: NodePath) -> NodePath | None:
        """Give the array at ``array_path`` a (string) item schema; returns its path."""
        new = self._try("Add item schema", lambda p: edits.with_item_schema(p, array_path))
        if new is None or not self._push(new, "Add item schema"):
            return None
        return (*array_path, "items")

    def remove(self, path: NodePath) -> bool:
        """Delete the property or item schema at ``path``."""
        text = f"Delete {self.slot.noun} {self._label(path)}"
        new = self._try(text, lambda p: edits.with_removed(p, path))
        return new is not None and self._push(new, text)

    def duplicate(self, path: NodePath) -> NodePath | None:
        """Insert a copy of property ``path`` right after it (``name_copy``); returns its path."""
        if not edits.is_property(path):
            reporter().warning("Duplicate: only properties can be duplicated")
            return None
        owner = edits.parent_object(path)
        name = edits.unique_name(self.parameters(), owner, f"{path[-1]}_copy")
        row = self.row_of(path)
        required = self.is_required(path)
        node = self.node_json(path)
        text = f"Duplicate {self.slot.noun} {path[-1]}"
        new = self._try(
            text,
            lambda p: edits.with_property(
                p, owner, name, node, row=None if row is None else row + 1, required=required
            ),
        )
        if new is None or not self._push(new, text):
            return None
        return (*owner, "properties", name)

    def name_problem(self, path: NodePath, new_name: str) -> str | None:
        """Why ``path`` cannot be renamed to ``new_name`` (None when it can)."""
        return edits.name_problem(self.parameters(), path, new_name)

    def rename(self, path: NodePath, new_name: str) -> bool:
        """Rename property ``path`` (unique among its siblings, usable in a template)."""
        if not path or path[-1] == new_name:
            return True
        text = f"Rename {self.slot.noun} {path[-1]} to {new_name}"
        new = self._try(text, lambda p: edits.with_renamed(p, path, new_name))
        if new is None:
            return False
        new_path = (*edits.parent_object(path), "properties", new_name)
        self._renamed = (path, new_path)
        try:
            done = self._push(new, text)
        finally:
            self._renamed = None
        if done:
            self._on_renamed(path, new_path)
        return done

    def move(self, path: NodePath, target_object: NodePath, row: int) -> NodePath | None:
        """Move property ``path`` into ``target_object`` at ``row`` (its index after the move).

        Returns:
            The property's path after the move, or None when refused (reported).
        """
        text = f"Move {self.slot.noun} {path[-1] if path else ''}"
        moved: list[NodePath] = []

        def make(params: Any) -> dict[str, Any]:
            new, where = edits.with_moved(params, path, target_object, row)
            moved.append(where)
            return new

        new = self._try(text, make)
        if new is None:
            return None
        self._renamed = (path, moved[0])  # the selection follows the moved property
        try:
            done = self._push(new, text)
        finally:
            self._renamed = None
        return moved[0] if done else None

    def move_by(self, path: NodePath, delta: int) -> NodePath | None:
        """Move property ``path`` up (-1) or down (+1) among its siblings."""
        row = self.row_of(path)
        if row is None or not edits.is_property(path):
            return None
        owner = edits.parent_object(path)
        if not 0 <= row + delta < self.child_count(owner):
            return None
        return self.move(path, owner, row + delta)

    # -- one node ------------------------------------------------------------------------------

    def set_required(self, path: NodePath, required: bool) -> bool:
        """List property ``path`` in its object's ``required`` (or take it out)."""
        text = f"{'Require' if required else 'Do not require'} {self.slot.noun} {self._label(path)}"
        new = self._try(text, lambda p: edits.with_required(p, path, required))
        return new is not None and self._push(new, text)

    def set_keywords(
        self, path: NodePath, values: dict[str, Any], *, text: str, typing: bool = False
    ) -> bool:
        """Set (or, with ``edits.REMOVE``, take out) keywords of the node at ``path``.

        With ``typing``, consecutive edits of the same keywords merge into one undo step.
        """
        new = self._try(text, lambda p: edits.with_keywords(p, path, values))
        merge_key = (*path, *sorted(values)) if typing else ()
        return new is not None and self._push(new, text, merge_key)

    def set_keyword(
        self, path: NodePath, keyword: str, value: Any, *, typing: bool = False
    ) -> bool:
        """Set one keyword of the node at ``path`` (``edits.REMOVE`` takes it out)."""
        text = f"Edit {keyword} of {self._label(path)}"
        return self.set_keywords(path, {keyword: value}, text=text, typing=typing)

    def set_type(self, path: NodePath, new_type: str) -> bool:
        """Change the node's type, keeping what still applies (see ``edits.with_type``)."""
        text = f"Make {self._label(path)} {new_type}"
        new = self._try(text, lambda p: edits.with_type(p, path, new_type))
        return new is not None and self._push(new, text)

    def replace_parameters(
        self, new: dict[str, Any], *, text: str, merge_key: tuple[Any, ...] = ()
    ) -> bool:
        """Replace the whole parameters (JSON view, import); the root must be an object."""
        return self._push(new, text, merge_key)
