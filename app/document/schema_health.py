"""Which tools of an open agent have a parameters schema (or an output schema) that needs fixing,
kept current as the agent is edited.

An agent opens in the studio even when a tool's schema is unsound (so it can be fixed here);
serving, validating and exporting refuse it. :class:`ToolSchemaHealth` is what the outline and
the tools list read to mark those tools, and what the window reads to say so once the agent is
open. The problems are ``check_parameters_schema``'s and ``check_output_schema``'s, the rules the
server applies.

A pass runs from the event loop a moment after an edit that can change the outcome (a tool's
parameters, output schema or name, the tools list; typing a prompt is not one), never inside a
change, and in slices of a few milliseconds with the events in between, so an agent of thousands of
tools is checked while the window stays responsive. Results are kept by tool name (unique in an
agent), so a tool edited meanwhile keeps its mark until the pass. Checking one schema costs
milliseconds, so a pass remembers what it checked: edits share every object they do not change, so
a schema that is the very object checked before is not checked again, and a schema whose content
was seen before (undo, redo) reuses that outcome.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from app.document.agent_document import AgentDocument, FieldPath
from app.document.tool_ref import TOOLS_PATH, changed_tool_index, changes_tools_list

if TYPE_CHECKING:
    from schema_types.agent import ToolDefinition
    from schema_types.errors import Problem

__all__ = ["CHECK_DELAY_MS", "SLICE_MS", "ToolSchemaHealth", "tool_schema_health"]

# After an edit, the check waits this long for the next one (typing a parameter's description
# should not start a pass per keystroke).
CHECK_DELAY_MS = 200
# The longest a pass keeps the event loop before it lets the events waiting in.
SLICE_MS = 12

_Problems = tuple["Problem", ...]
_Found = tuple[_Problems, _Problems]  # (the parameters' problems, the output schema's)
_SLOTS = ("parameters", "output_schema")


class ToolSchemaHealth(QObject):
    """The schema problems of each tool of one document (a child of the document).

    Signals:
        changed: emitted after a pass whose outcome differs from the one before.
        pass_finished: emitted after every complete pass over the tools (after ``changed``).
    """

    changed = Signal()
    pass_finished = Signal()

    def __init__(self, document: AgentDocument) -> None:
        super().__init__(document)
        self._document = document
        # (field, tool name) → (the schema object checked, its JSON, its problems)
        self._seen: dict[tuple[str, str], tuple[object, str, _Problems]] = {}
        # (field, schema JSON) → its problems
        self._by_text: dict[tuple[str, str], _Problems] = {}
        self._by_tool: dict[str, _Found] = {}  # tool name → its problems, sound tools left out
        self._checked = False
        self._pass: _Pass | None = None
        self._delay = QTimer(self)
        self._delay.setSingleShot(True)
        self._delay.setInterval(CHECK_DELAY_MS)
        self._delay.timeout.connect(self._start_pass)
        self._slices = QTimer(self)
        self._slices.setSingleShot(True)
        self._slices.setInterval(0)
        self._slices.timeout.connect(self._run_slice)
        document.changed_at.connect(self._on_changed_at)
        self._delay.start()

    @property
    def checked(self) -> bool:
        """Whether the tools have been checked at least once."""
        return self._checked

    def problems(self, tool: ToolDefinition) -> tuple[Problem, ...]:
        """What is wrong with ``tool``'s parameters as of the last pass (``()`` when sound or
        not checked yet); paths are relative to the parameters schema."""
        return self._by_tool.get(tool.name, ((), ()))[0]

    def output_problems(self, tool: ToolDefinition) -> tuple[Problem, ...]:
        """What is wrong with ``tool``'s output schema as of the last pass (``()`` when it has
        none, it is sound, or it is not checked yet); paths are relative to the output schema."""
        return self._by_tool.get(tool.name, ((), ()))[1]

    def unsound_tools(self) -> list[ToolDefinition]:
        """The tools whose parameters or output schema need fixing, in the agent's order."""
        return [tool for tool in self._document.agent.tools if tool.name in self._by_tool]

    def _on_changed_at(self, path: FieldPath) -> None:
        inside = path[len(TOOLS_PATH) + 1 : len(TOOLS_PATH) + 2]
        if changes_tools_list(path) or (
            changed_tool_index(path) is not None
            and inside in ((), ("parameters",), ("output_schema",), ("name",))
        ):
            self.check_soon()

    def check_soon(self) -> None:
        """Start a pass after :data:`CHECK_DELAY_MS` without a further call (a pass under way is
        dropped: the agent it was reading has changed)."""
        self._pass = None
        self._slices.stop()
        self._delay.start()

    def check_now(self) -> bool:
        """Check every tool now, in one go; returns whether the outcome changed, after emitting
        :attr:`changed` if it did."""
        self._delay.stop()
        self._slices.stop()
        run = _Pass(self._document.agent.tools)
        while run.step(self._problems_of, deadline=None):
            pass
        self._pass = None
        return self._finish(run)

    def _start_pass(self) -> None:
        self._pass = _Pass(self._document.agent.tools)
        self._run_slice()

    def _run_slice(self) -> None:
        run = self._pass
        if run is None:
            return
        if run.step(self._problems_of, deadline=time.perf_counter() + SLICE_MS / 1000):
            self._slices.start()  # the rest after the events that came in meanwhile
            return
        self._pass = None
        self._finish(run)

    def _problems_of(self, tool: ToolDefinition) -> _Found:
        return self._slot_problems(tool, _SLOTS[0]), self._slot_problems(tool, _SLOTS[1])

    def _slot_problems(self, tool: ToolDefinition, field: str) -> _Problems:
        schema = getattr(tool, field)
        if schema is None:
            return ()
        seen = self._seen.get((field, tool.name))
        if seen is not None and seen[0] is schema:
            return seen[2]
        # Imported on first use (after the first paint): at the top it adds ~5 ms to start-up
        # (bench/studio_startup.py).
        from schema_types.output_schema import check_output_schema
        from schema_types.schema.check import check_parameters_schema

        check = check_parameters_schema if field == _SLOTS[0] else check_output_schema
        text = json.dumps(schema, sort_keys=True, default=repr)
        found = self._by_text.get((field, text))
        if found is None:
            found = self._by_text[(field, text)] = tuple(check(schema))
        self._seen[(field, tool.name)] = (schema, text, found)
        return found

    def _finish(self, run: _Pass) -> bool:
        alive = {tool.name for tool in run.tools}
        self._seen = {key: value for key, value in self._seen.items() if key[1] in alive}
        # Only the schemas the agent holds now.
        self._by_text = {(key[0], text): found for key, (_, text, found) in self._seen.items()}
        differs = run.found != self._by_tool or not self._checked
        self._by_tool, self._checked = run.found, True
        if differs:
            self.changed.emit()
        self.pass_finished.emit()
        return differs


class _Pass:
    """One pass over the tools the agent had when it started."""

    def __init__(self, tools: list[ToolDefinition]) -> None:
        self.tools = list(tools)
        self.next = 0
        self.found: dict[str, _Found] = {}

    def step(
        self, problems_of: Callable[[ToolDefinition], _Found], *, deadline: float | None
    ) -> bool:
        """Check tools until ``deadline`` (all of them when None); True while some are left."""
        tools, count = self.tools, len(self.tools)
        while self.next < count:
            tool = tools[self.next]
            self.next += 1
            found = problems_of(tool)
            if found[0] or found[1]:
                self.found[tool.name] = found
            if deadline is not None and self.next % 16 == 0 and time.perf_counter() > deadline:
                break
        return self.next < count


def tool_schema_health(document: AgentDocument) -> ToolSchemaHealth:
    """The :class:`ToolSchemaHealth` of ``document``, created (and its first pass scheduled)
    on first use."""
    health = document.findChild(ToolSchemaHealth, "", Qt.FindChildOption.FindDirectChildrenOnly)
    if isinstance(health, ToolSchemaHealth):
        return health
    return ToolSchemaHealth(document)
