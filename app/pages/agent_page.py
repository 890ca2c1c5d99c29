"""The Agent page: name, version, MCP instructions (the description), mode, whether the tools are
served as MCP prompts too, and the system prompt."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.document.agent_document import AgentDocument, FieldPath, touches
from app.layouts import buddy
from app.pages import ComboBinding, FieldBinding, LineEditBinding, TextEditBinding

__all__ = ["MODES", "AgentPage", "CheckBinding"]

# (value, label, explanation)
MODES = (
    ("tools", "Tools", "Serves its tools to MCP clients; each call runs one headless session."),
    ("interactive", "Interactive", "A chat partner: asks before using tools that need permission."),
    ("autonomous", "Autonomous", "Works on its own until done, using the tools it is allowed."),
)


class AgentPage(QScrollArea):
    """Edits who the agent is; every field is bound to the document (undoable)."""

    def __init__(self, document: AgentDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.setWidgetResizable(True)
        self.setFrameShape(QScrollArea.Shape.NoFrame)
        body = QWidget()
        self.setWidget(body)

        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("agentName")
        self.name_edit.setPlaceholderText("Travel Desk")
        self.name_edit.setToolTip("Shown to MCP clients as the server name (serverInfo.name).")
        self.version_edit = QLineEdit()
        self.version_edit.setObjectName("agentVersion")
        self.version_edit.setPlaceholderText("1.0.0")
        self.version_edit.setToolTip("Shown to MCP clients as the server version.")
        self.instructions_edit = _text_box(
            "agentInstructions",
            "What this agent does and when to call it.",
            "The agent's description. MCP clients receive it as the server's instructions, so "
            "say what the tools are for and when a client should use them.",
        )
        self.instructions_edit.setFixedHeight(self.fontMetrics().lineSpacing() * 5 + 12)
        self.mode_combo = QComboBox()
        self.mode_combo.setObjectName("agentMode")
        for value, label, explanation in MODES:
            self.mode_combo.addItem(label, value)
            self.mode_combo.setItemData(
                self.mode_combo.count() - 1, explanation, Qt.ItemDataRole.ToolTipRole
            )
        self.mode_combo.setToolTip("How the agent is meant to be used.")
        self.mode_hint = QLabel()
        self.mode_hint.setWordWrap(True)
        self.mode_hint.setEnabled(False)  # the palette's dimmed text, right in light and dark
        self.prompts_check = QCheckBox(
            "Also serve each tool as an MCP prompt, for clients that run it on their own model"
        )
        self.prompts_check.setObjectName("toolsAsPrompts")
        self.prompts_check.setToolTip(
            "For MCP clients without sampling: the client asks for a tool's prompt with the "
            "tool's arguments (prompts/get) and runs what it gets on its own model."
        )
        self.prompts_hint = QLabel(
            "A client gets the system prompt below and the tool's filled template; nothing runs "
            "here and no key is needed. Anyone who connects can read both."
        )
        self.prompts_hint.setWordWrap(True)
        self.prompts_hint.setEnabled(False)
        self.prompt_edit = _text_box(
            "systemPrompt",
            "You are …",
            "The system prompt every session of this agent starts with (chat, test runs and "
            "served tool calls).",
        )
        self.prompt_edit.setMinimumHeight(180)
        self.prompt_edit.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

        title = QLabel("<h2>Agent</h2>")
        intro = QLabel(
            "Who the agent is. MCP clients see the name, version and instructions when they "
            "connect; the system prompt starts every session."
        )
        intro.setWordWrap(True)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow(buddy("&Name:", self.name_edit), self.name_edit)
        form.addRow(buddy("&Version:", self.version_edit), self.version_edit)
        form.addRow(buddy("MCP &instructions:", self.instructions_edit), self.instructions_edit)
        form.addRow(buddy("&Mode:", self.mode_combo), self.mode_combo)
        form.addRow("", self.mode_hint)
        # The check box and its line in one cell: a word-wrapped label on a form row of its own
        # gets a row taller than its text.
        prompts_cell = QWidget()
        prompts_column = QVBoxLayout(prompts_cell)
        prompts_column.setContentsMargins(0, 0, 0, 0)
        prompts_column.setSpacing(2)
        prompts_column.addWidget(self.prompts_check)
        prompts_column.addWidget(self.prompts_hint)
        form.addRow(buddy("MCP &prompts:", self.prompts_check), prompts_cell)

        prompt_label = buddy("&System prompt:", self.prompt_edit)
        layout = QVBoxLayout(body)
        layout.addWidget(title)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(prompt_label)
        layout.addWidget(self.prompt_edit, 1)

        self.bindings = [
            LineEditBinding(document, self.name_edit, ("metadata", "name"), "name"),
            LineEditBinding(document, self.version_edit, ("metadata", "version"), "version"),
            TextEditBinding(
                document, self.instructions_edit, ("metadata", "description"), "MCP instructions"
            ),
            ComboBinding(document, self.mode_combo, ("metadata", "mode"), "mode"),
            CheckBinding(
                document, self.prompts_check, ("settings", "tools_as_prompts"), "tools as prompts"
            ),
            TextEditBinding(document, self.prompt_edit, ("system_prompt",), "system prompt"),
        ]
        for widget in (
            self.name_edit,
            self.version_edit,
            self.instructions_edit,
            self.mode_combo,
            self.prompts_check,
        ):
            QWidget.setTabOrder(widget, self._next_of(widget))
        document.changed_at.connect(self._on_changed_at)
        self._show_mode_hint()

    def _next_of(self, widget: QWidget) -> QWidget:
        order: list[QWidget] = [
            self.name_edit,
            self.version_edit,
            self.instructions_edit,
            self.mode_combo,
            self.prompts_check,
            self.prompt_edit,
        ]
        return order[order.index(widget) + 1]

    def _on_changed_at(self, path: FieldPath) -> None:
        if touches(path, ("metadata", "mode")):
            self._show_mode_hint()

    def _show_mode_hint(self) -> None:
        mode = self.document.agent.metadata.mode
        self.mode_hint.setText(next((e for v, _l, e in MODES if v == mode), ""))


def _text_box(name: str, placeholder: str, tip: str) -> QPlainTextEdit:
    """A multi-line text field in which Tab moves on to the next field."""
    box = QPlainTextEdit()
    box.setObjectName(name)
    box.setPlaceholderText(placeholder)
    box.setToolTip(tip)
    box.setTabChangesFocus(True)
    return box


class CheckBinding(FieldBinding):
    """A ``QCheckBox`` bound to a true/false field; each click is one undo step."""

    def __init__(
        self, document: AgentDocument, check: QCheckBox, path: FieldPath, label: str, **kwargs: Any
    ) -> None:
        super().__init__(document, check, path, label, **kwargs)
        self.check = check
        check.clicked.connect(self._on_clicked)  # a person's click, never setChecked
        self.refresh()

    def _on_clicked(self, checked: bool) -> None:
        self.commit(checked)
        self.document.seal()

    def refresh(self) -> None:
        checked = bool(self.model_value())
        if self.check.isChecked() != checked:
            with QSignalBlocker(self.check):
                self.check.setChecked(checked)
