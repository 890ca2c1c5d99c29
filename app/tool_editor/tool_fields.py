"""The tool's own fields at the top of its editor: name, title, description and MCP annotations.

The name is checked as it is typed (MCP-safe, unique in the agent: the agent model's rules) and
applied on Enter or when focus leaves; title and description are typed into the document like
every other field (one undo step per field until focus leaves). Annotations are the MCP behaviour
hints. Each hint is yes, no or "not stated" (left out, so clients assume the protocol's default):
its check box shows the value a client goes by, and says "(default)" while the hint is not
stated. A click goes not stated → the opposite of the default → the default stated → not stated.
Destructive and Idempotent mean something only for a tool that changes things (MCP: "meaningful
only when readOnlyHint is false"): while Read-only is ticked they show unticked and greyed, and
say so, whatever the file states for them.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSignalBlocker
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QWidget,
)

from app.document.agent_document import FieldPath
from app.document.tool_ref import ToolRef
from app.pages import LineEditBinding, TextEditBinding
from app.tool_editor.value_editors import error_colour
from schema_types.agent import ToolDefinition

__all__ = ["ANNOTATION_HINTS", "HINT_DEFAULTS", "ToolFields"]

# MCP ToolAnnotations hints: (key, label, what it tells a client).
ANNOTATION_HINTS = (
    ("readOnlyHint", "Read-only", "The tool does not change anything."),
    ("destructiveHint", "Destructive", "The tool may delete or overwrite things."),
    ("idempotentHint", "Idempotent", "Calling it again with the same arguments changes nothing."),
    ("openWorldHint", "Open world", "The tool reaches outside systems (web, other services)."),
)
# The hints that mean nothing for a read-only tool (MCP ToolAnnotations).
WRITE_HINTS = ("destructiveHint", "idempotentHint")
# What a client assumes for a hint the tool does not state (MCP ToolAnnotations).
HINT_DEFAULTS = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}


class ToolFields(QWidget):
    """Name, title, description and annotations of the tool ``ref`` follows."""

    def __init__(self, ref: ToolRef, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ref = ref
        self.document = document = ref.document
        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("toolName")
        self.name_edit.setToolTip(
            "The MCP tool name clients call: 1 to 128 letters, digits, '_', '-' or '.', unique "
            "in this agent. Press Enter to rename."
        )
        self.name_problem = QLabel()
        self.name_problem.setObjectName("toolNameProblem")
        self.name_problem.setWordWrap(True)
        self.name_problem.hide()
        self.title_edit = QLineEdit()
        self.title_edit.setObjectName("toolTitle")
        self.title_edit.setPlaceholderText("A human-readable name (optional)")
        self.description_edit = QPlainTextEdit()
        self.description_edit.setObjectName("toolDescription")
        self.description_edit.setTabChangesFocus(True)
        self.description_edit.setPlaceholderText("What the tool does, for the calling model.")
        self.description_edit.setToolTip(
            "Sent to MCP clients with the tool: the calling model decides from it when to use it."
        )
        self.description_edit.setFixedHeight(self.description_edit.fontMetrics().height() * 3 + 12)
        self.hint_checks: dict[str, QCheckBox] = {}
        hints = QHBoxLayout()
        hints.setContentsMargins(0, 0, 0, 0)
        for key, label, tip in ANNOTATION_HINTS:
            check = QCheckBox(label)
            check.setObjectName(key)
            default = "yes" if HINT_DEFAULTS[key] else "no"
            check.setToolTip(
                f"{tip}\nNot stated, clients assume {default}. Click to state the other value, "
                "again to state the default, again to leave it out."
            )
            check.clicked.connect(lambda _checked=False, k=key: self._on_hint_clicked(k))
            self.hint_checks[key] = check
            hints.addWidget(check)
        hints.addStretch(1)

        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        names = QHBoxLayout()
        names.addWidget(self.name_edit, 1)
        title_label = QLabel("T&itle:")
        title_label.setBuddy(self.title_edit)
        names.addWidget(title_label)
        names.addWidget(self.title_edit, 1)
        name_label = QLabel("&Name:")
        name_label.setBuddy(self.name_edit)
        form.addRow(name_label, names)
        form.addRow("", self.name_problem)
        description_label = QLabel("&Description:")
        description_label.setBuddy(self.description_edit)
        form.addRow(description_label, self.description_edit)
        form.addRow("Hints:", hints)

        self.name_edit.textEdited.connect(self._on_name_edited)
        self.name_edit.editingFinished.connect(self._on_name_committed)
        self.title_binding = LineEditBinding(
            document,
            self.title_edit,
            lambda: self._field("title"),
            "tool title",
            to_model=lambda text: text or None,
            follow=False,
        )
        self.description_binding = TextEditBinding(
            document,
            self.description_edit,
            lambda: self._field("description"),
            "description",
            follow=False,
        )
        ref.changed.connect(self._on_tool_changed)
        ref.removed.connect(lambda: self.setEnabled(False))
        self.refresh()

    def _tool_getter(self) -> ToolDefinition | None:
        return self.ref.tool()

    def _field(self, name: str) -> FieldPath | None:
        return self.ref.path(name)

    def _on_tool_changed(self, part: FieldPath) -> None:
        if part[:1] in ((), ("title",)):
            self.title_binding.refresh()
        if part[:1] in ((), ("description",)):
            self.description_binding.refresh()
        if part[:1] in ((), ("name",), ("annotations",)):
            self.refresh()

    def refresh(self) -> None:
        """Show the tool's name and annotations (the bindings show title and description)."""
        tool = self._tool_getter()
        if tool is None:
            self.setEnabled(False)
            return
        if not self.name_edit.hasFocus() and self.name_edit.text() != tool.name:
            with QSignalBlocker(self.name_edit):
                self.name_edit.setText(tool.name)
        annotations = tool.annotations or {}
        read_only = annotations.get("readOnlyHint") is True
        for key, label, _tip in ANNOTATION_HINTS:
            check, value = self.hint_checks[key], annotations.get(key)
            stated = isinstance(value, bool)
            moot = read_only and key in WRITE_HINTS
            with QSignalBlocker(check):
                shown = value if isinstance(value, bool) else HINT_DEFAULTS[key]
                check.setChecked(shown and not moot)
            check.setEnabled(not moot)
            if moot:
                check.setText(f"{label} (not for read-only)")
            else:
                check.setText(label if stated else f"{label} (default)")
            font = check.font()
            font.setItalic(not stated or moot)
            check.setFont(font)

    def _on_name_edited(self, text: str) -> None:
        tool, path = self._tool_getter(), self._field("name")
        problem = None
        if tool is not None and path is not None and text.strip() != tool.name:
            problem = self.document.validate_field(path, text.strip())
        self.name_problem.setText(problem or "")
        self.name_problem.setStyleSheet(f"color: {error_colour(self).name()};")
        self.name_problem.setVisible(bool(problem))

    def _on_name_committed(self) -> None:
        tool, path = self._tool_getter(), self._field("name")
        text = self.name_edit.text().strip()
        if tool is None or path is None or text == tool.name:
            return
        if not self.document.set_field(path, text, text=f"Rename tool {tool.name} to {text}"):
            self.name_edit.setText(tool.name)
        self.name_problem.hide()

    def _on_hint_clicked(self, key: str) -> None:
        tool, path = self._tool_getter(), self._field("annotations")
        if tool is None or path is None:
            return
        annotations: dict[str, Any] = dict(tool.annotations or {})
        value, default = annotations.get(key), HINT_DEFAULTS[key]
        if not isinstance(value, bool):
            annotations[key] = not default
        elif value != default:
            annotations[key] = default
        else:
            annotations.pop(key, None)
        label = next(text for k, text, _ in ANNOTATION_HINTS if k == key)
        self.document.set_field(path, annotations or None, text=f"Set hint {label}")
