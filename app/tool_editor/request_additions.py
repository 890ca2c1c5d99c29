"""Under the prompt preview: what a call of a typed tool adds to the model request for its schema.

A tool with an output schema makes the model answer in it the strongest way the agent's model
endpoint supports (``mcp_export.session.typed.request_additions``, the runtime's own plan): a
``response_format`` with the JSON Schema, a forced final tool whose input is the schema, or an
instruction. :class:`RequestAdditionsView` shows that plan for the agent's model as it is now:
a line saying how and when, where the wire format comes from, and the wire parameters as JSON. It
follows the tool's output schema and name and the agent's model; it is hidden while the tool
answers text. Nothing is computed here: the view shows what the runtime says.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QPlainTextEdit, QVBoxLayout, QWidget

from app.document.agent_document import FieldPath
from app.document.tool_ref import ToolRef
from app.tool_editor.sample_panel import heading
from mcp_export.session.typed import request_additions
from schema_types.agent import Agent, ToolDefinition

__all__ = ["HOW", "TITLE", "RequestAdditionsView", "additions_for", "provider_id"]

TITLE = "Added for the output schema"
HOW = {
    "response_format": "The request carries a response_format with the output schema",
    "final_tool": "The model gets a final tool whose input is the output schema, and must call it",
    "instruction": "The model is told the output schema and to answer with JSON only",
}
_TEXT_LINES = 3
"""Lines the text is at least tall enough for (it scrolls beyond, and grows with the column)."""


def provider_id(agent: Agent) -> str | None:
    """The provider id of the agent's model (``openai`` of ``openai:gpt-4.1-mini``,
    ``sampling``), None when no model is chosen."""
    model = agent.settings.model
    if not model:
        return None
    return model.split(":", 1)[0] if ":" in model else model


def additions_for(agent: Agent, tool: ToolDefinition) -> dict[str, Any] | None:
    """What a call of ``tool`` adds to the model request for its output schema, with the
    agent's model; None when the tool answers text or no model is chosen."""
    provider = provider_id(agent)
    if tool.output_schema is None or provider is None:
        return None
    tools = bool(agent.mcp_servers)
    return request_additions(provider, tool.output_schema, tool.name, tools=tools)


class RequestAdditionsView(QWidget):
    """The additions of one tool's output schema to its model requests (see module docstring).

    Attributes:
        heading: the view's title.
        text: how and when the model is made to answer in the schema and where the wire format
            comes from, then, after a blank line, the added request parameters as JSON (or the
            instruction's text).
    """

    def __init__(self, ref: ToolRef, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("requestAdditions")
        self.ref = ref
        # One scrolling text under a one-line heading: the column is narrow and short at
        # 1024×700, and wrapping labels around a text box would be laid out a line too short.
        self.text = QPlainTextEdit()
        self.text.setObjectName("requestAdditionsText")
        self.text.setAccessibleName("Added to the model request for the output schema")
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setMinimumHeight(self.text.fontMetrics().lineSpacing() * _TEXT_LINES + 12)
        self.heading = heading(TITLE, self.text)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.heading)
        layout.addWidget(self.text, 1)
        ref.changed.connect(self._on_tool_changed)
        ref.document.changed_at.connect(self._on_document_changed)
        self.refresh()

    def refresh(self) -> None:
        """Show the additions for the tool and the agent's model as they are now."""
        tool = self.ref.tool()
        agent = self.ref.document.agent
        if tool is None or tool.output_schema is None:
            self.hide()
            return
        added = additions_for(agent, tool)
        if added is None:
            text = (
                "No model is chosen: the Model page's choice decides how the model is made to "
                "answer in the output schema."
            )
        else:
            method = str(added.get("method", ""))
            how = HOW.get(method, method)
            when = added.get("when")
            wire = {k: v for k, v in added.items() if k not in ("method", "source", "when")}
            system = wire.get("system") if set(wire) == {"system"} else None
            body = system if system is not None else json.dumps(wire, indent=2, ensure_ascii=False)
            text = (
                f"{how} ({when}).\n" if when else f"{how}.\n"
            ) + f"Wire format: {added.get('source', '')}\n\n{body}"
        if text != self.text.toPlainText():
            self.text.setPlainText(text)
        self.show()

    def _on_tool_changed(self, part: FieldPath) -> None:
        if part[:1] in ((), ("output_schema",), ("name",)):
            self.refresh()

    def _on_document_changed(self, path: FieldPath) -> None:
        if path[:1] == ("settings",) or path[:1] == ("mcp_servers",) or not path:
            self.refresh()
