# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""The one undoable edit of a tool's ``parameters``: replace the whole dict, old → new.

Why not ``AgentDocument.set_field``: it skips a value that compares equal, and two dicts that
differ only in key order compare equal, so reordering properties (drag and drop) would be lost.
This command compares with key order (:func:`~app.tool_editor.parameter_edits.same_json`), follows
the ``ToolDefinition`` by identity (a tool moved or renamed meanwhile is still the one edited) and
merges typing into one step the way the document's own field edits do.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QUndoCommand

from app.document.agent_document import AgentDocument
from app.tool_editor.parameter_edits import same_json
from schema_types.agent import ToolDefinition

__all__ = ["ParametersEdit", "push_parameters", "seal_parameters"]


class ParametersEdit(QUndoCommand):
    """Replace ``tool.parameters`` by ``new`` (the document emits ``changed`` after it)."""

    def __init__(
        self, tool: ToolDefinition, new: dict[str, Any], text: str, merge_id: int = -1
    ) -> None:
        super().__init__(text)
        self.tool = tool
        self.old: dict[str, Any] = tool.parameters
        self.new = new
        self._was_set = "parameters" in tool.model_fields_set
        self._merge_id = merge_id
        self.sealed = False

    def id(self) -> int:
        return self._merge_id

    def mergeWith(self, other: QUndoCommand) -> bool:
        if (
            not isinstance(other, ParametersEdit)
            or other.tool is not self.tool
            or self.sealed
            or other._merge_id != self._merge_id
        ):
            return False
        self.new = other.new
        if same_json(self.new, self.old):
            self.setObsolete(True)
        return True

    def redo(self) -> None:
        # Set without validation: ``parameters`` is ``dict[str, Any]`` and validating would copy
        # the dict, so the tree could not tell its own edit from someone else's by identity.
        self.tool.__dict__["parameters"] = self.new
        self.tool.model_fields_set.add("parameters")

    def undo(self) -> None:
        self.tool.__dict__["parameters"] = self.old
        if not self._was_set:
            self.tool.model_fields_set.discard("parameters")


def push_parameters(
    document: AgentDocument,
    tool: ToolDefinition,
    new: dict[str, Any],
    *,
    text: str,
    merge_id: int = -1,
) -> bool:
    """Push the edit ``tool.parameters → new`` on ``document`` (nothing when it is the same)."""
    if same_json(tool.parameters, new):
        return True
    document.push(ParametersEdit(tool, new, text, merge_id))
    return True


def seal_parameters(document: AgentDocument) -> None:
    """End a typing run (focus left the field): the next edit is a new undo step."""
    document.seal()
    stack = document.undo_stack
    command = stack.command(stack.index() - 1) if stack.index() > 0 else None
    inner = getattr(command, "inner", command)  # the document wraps pushed commands
    if isinstance(inner, ParametersEdit):
        inner.sealed = True
