"""The tab that edits one tool: the main window builds tool tabs through :func:`create_tool_tab`.

A tool tab provides ``document``, ``tool`` (the ``ToolDefinition`` it edits, tracked by
identity), the ``title_changed(str)`` and ``tool_removed()`` signals, ``test_requested``
(Ctrl+Enter), ``run_cases_requested`` (a list of ``(tool, case)`` names to run) and
``text_fields_added`` (text fields built after the tab was made, for the window's undo keys) —
:class:`~app.tool_editor.editor.ToolEditor` is the one in use.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from app.document.agent_document import AgentDocument
from app.tool_editor.editor import ToolEditor
from app.tool_editor.sample_values import SampleStore
from app.tool_editor.tests_panel import HistorySource
from schema_types.agent import ToolDefinition

__all__ = ["create_tool_tab"]


def create_tool_tab(
    document: AgentDocument,
    tool: ToolDefinition,
    parent: QWidget | None = None,
    *,
    samples_memory: SampleStore | None = None,
    history: HistorySource | None = None,
) -> QWidget:
    """The widget the main window shows in a tab for ``tool``.

    Args:
        document: the open agent.
        tool: the tool to edit.
        parent: the owning widget.
        samples_memory: where the editor keeps the person's preview sample values between
            sessions (the studio's :class:`~app.test_run.memory.SampleMemory`).
        history: gives the studio's history store, for the last results of the tool's test
            cases (read when the Tests section is shown).
    """
    return ToolEditor(document, tool, parent, samples_memory=samples_memory, history=history)
