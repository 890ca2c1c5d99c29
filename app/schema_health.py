"""Which tools of an open agent have a parameters schema that needs fixing, kept current as the
agent is edited.

An agent opens in the studio even when a tool's parameters schema is unsound (so it can be fixed
here); serving, validating and exporting refuse it. :class:`ToolSchemaHealth` is what the outline
and the tools list read to mark those tools, and what the window reads to say so once the agent
is open. The problems are ``check_parameters_schema``'s, the rule the server applies.

The checks run from the event loop, a moment after the last edit, never inside a change or
before the window first paints (they load ``jsonschema``). Each schema is checked once per
distinct content: an edit elsewhere in the agent costs one JSON dump per tool, not a check.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer, Signal

if TYPE_CHECKING:
    from app.document import AgentDocument
    from schema_types._agent import ToolDefinition
    from schema_types._errors import Problem

__all__ = ["CHECK_DELAY_MS", "ToolSchemaHealth", "tool_schema_health"]

# After an edit, the check waits this long for the next one (a check is ~1–3 ms per changed
# schema; typing a parameter's description should not pay it per keystroke).
CHECK_DELAY_MS = 200


class ToolSchemaHealth(QObject):
    """The parameters-schema problems of each tool of one document (a child of the document).

    Signals:
        changed: emitted after a check whose outcome differs from the one before.
    """

    changed = Signal()

    def __init__(self, document: AgentDocument) -> None:
        super().__init__(document)
        self._document = document
        self._by_text: dict[str, tuple[Problem, ...]] = {}  # schema JSON → its problems
        self._by_tool: dict[int, tuple[Problem, ...]] = {}  # id(tool) → its problems
        self._checked = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(CHECK_DELAY_MS)
        self._timer.timeout.connect(self.check_now)
        document.changed.connect(self._timer.start)
        self._timer.start()

    @property
    def checked(self) -> bool:
        """Whether the tools have been checked at least once."""
        return self._checked

    def problems(self, tool: ToolDefinition) -> tuple[Problem, ...]:
        """What is wrong with ``tool``'s parameters as of the last check (``()`` when sound or
        not checked yet); paths are relative to the parameters schema."""
        return self._by_tool.get(id(tool), ())

    def unsound_tools(self) -> list[ToolDefinition]:
        """The tools whose parameters need fixing, in the agent's order."""
        return [tool for tool in self._document.agent.tools if self.problems(tool)]

    def check_now(self) -> bool:
        """Check every tool now (a schema seen before is not checked again); returns whether the
        outcome changed, after emitting :attr:`changed` if it did."""
        from schema_types._schema_check import check_parameters_schema

        self._timer.stop()
        by_text: dict[str, tuple[Problem, ...]] = {}
        by_tool: dict[int, tuple[Problem, ...]] = {}
        for tool in self._document.agent.tools:
            text = json.dumps(tool.parameters, sort_keys=True, default=repr)
            found = by_text.get(text)
            if found is None:
                found = self._by_text.get(text)
                if found is None:
                    found = tuple(check_parameters_schema(tool.parameters))
                by_text[text] = found
            if found:
                by_tool[id(tool)] = found
        self._by_text = by_text  # only the schemas the agent holds now
        differs = by_tool != self._by_tool or not self._checked
        self._by_tool, self._checked = by_tool, True
        if differs:
            self.changed.emit()
        return differs


def tool_schema_health(document: AgentDocument) -> ToolSchemaHealth:
    """The :class:`ToolSchemaHealth` of ``document``, created (and its first check scheduled)
    on first use."""
    health = document.findChild(ToolSchemaHealth, "", Qt.FindChildOption.FindDirectChildrenOnly)
    if isinstance(health, ToolSchemaHealth):
        return health
    return ToolSchemaHealth(document)
