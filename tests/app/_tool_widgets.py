"""Tool editor widget tests: a one-tool document, and a widget shown and active."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.document.tool_ref import ToolRef
from app.tool_editor.parameter_model import ParameterTreeModel
from schema_types.agent import Agent


def one_tool_model(params: dict[str, Any]) -> tuple[ParameterTreeModel, AgentDocument]:
    """A document holding one tool ``t`` with ``params``, and the parameter model of that tool."""
    agent = Agent.model_validate(
        {"metadata": {"name": "A", "tools": [{"name": "t", "parameters": params}]}}
    )
    document = AgentDocument(agent)
    return ParameterTreeModel(ToolRef(document, 0)), document


def show_active(qtbot: QtBot, widget: QWidget, width: int, height: int) -> None:
    """Show ``widget`` at that size and wait until it is the active window (keys reach it)."""
    qtbot.addWidget(widget)
    widget.resize(width, height)
    with qtbot.waitActive(widget, timeout=5000):
        widget.show()
        widget.activateWindow()
