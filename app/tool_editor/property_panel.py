"""The property panel: every setting of the selected parameter, changing with its type.

Type, title, description, required; allowed values (enum), default and examples typed per node;
string length, pattern and format; numeric bounds (each either inclusive or exclusive) and
``multipleOf``; array item counts and uniqueness; whether an object allows other properties.

Each input edits the node through :class:`~app.tool_editor.parameter_model.ParameterTreeModel`
(typing merges into one undo step per input until focus leaves it). Problems are shown AT the
input they are about: a value that does not read as the node's type is not sent; a combination
the schema rules refuse (minimum above maximum, a default not among the enum values or not
matching the pattern, a pattern that is not a regular expression) is applied, since the person
may be halfway through fixing it, and flagged from ``check_parameters_schema``'s problems until
it is sound.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QObject, QSignalBlocker, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.tool_editor.parameter_edits import NODE_TYPES, REMOVE, NodePath, is_property, same_json
from app.tool_editor.parameter_model import ParameterTreeModel
from app.tool_editor.parameter_problems import keyword_matches
from app.tool_editor.schema_fields import FORMATS, MODELLED, BoundField, NumberField
from app.tool_editor.value_editors import FieldBox, ValueListEditor, format_value, parse_value

__all__ = ["PropertyPanel"]

# A problem at the lower bound (how check_parameters_schema reports "minimum > maximum") is
# shown at the upper bound too: the person may just have typed either.
_PAIRS = {"minimum": "maximum", "minLength": "maxLength", "minItems": "maxItems"}


def _form(group: QGroupBox | None = None) -> QFormLayout:
    """A form whose fields go under their labels when the panel is narrow, so it never needs
    a horizontal scroll bar beside the parameter tree."""
    form = QFormLayout() if group is None else QFormLayout(group)
    form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
    return form


class PropertyPanel(QScrollArea):
    """The settings of the node at :meth:`path` (``()`` is the parameters root)."""

    def __init__(self, model: ParameterTreeModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("propertyPanel")
        self.setWidgetResizable(True)
        self.setFrameShape(QScrollArea.Shape.NoFrame)
        self.model = model
        self._path: NodePath | None = None
        self._local: dict[str, str] = {}  # keyword → what the person typed that does not read
        self.boxes: dict[str, FieldBox] = {}
        self._build()
        model.refreshed.connect(self.refresh)
        self.set_path(None)

    # -- building --------------------------------------------------------------------------

    def _box(self, keyword: str, field: QWidget, *extra: QWidget) -> FieldBox:
        box = FieldBox(field, *extra)
        self.boxes[keyword] = box
        return box

    def _line(self, keyword: str, placeholder: str = "") -> QLineEdit:
        edit = QLineEdit()
        edit.setObjectName(f"{keyword}Edit")
        edit.setPlaceholderText(placeholder)
        edit.installEventFilter(self)
        return edit

    def _build(self) -> None:
        content = QWidget()
        self.heading = QLabel()
        self.heading.setObjectName("propertyHeading")
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        font = self.heading.font()
        font.setBold(True)
        self.heading.setFont(font)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.general_problem = QLabel()
        self.general_problem.setObjectName("generalProblem")
        self.general_problem.setWordWrap(True)

        self.name_edit = self._line("name")
        self.name_edit.setToolTip("Used in the template as {name}; unique among its siblings.")
        self.type_combo = QComboBox()
        self.type_combo.setObjectName("typeCombo")
        self.type_combo.addItems(NODE_TYPES)
        self.title_edit = self._line("title", "none")
        self.description_edit = QPlainTextEdit()
        self.description_edit.setObjectName("descriptionEdit")
        self.description_edit.setTabChangesFocus(True)
        self.description_edit.setPlaceholderText(self.model.slot.description_hint)
        self.description_edit.setFixedHeight(self.description_edit.fontMetrics().height() * 3 + 12)
        self.description_edit.installEventFilter(self)
        self.required_check = QCheckBox("Required")
        self.required_check.setObjectName("requiredCheck")
        general = _form()
        general.addRow("&Name:", self._box("name", self.name_edit))
        general.addRow("&Type:", self._box("type", self.type_combo))
        general.addRow("T&itle:", self._box("title", self.title_edit))
        general.addRow("&Description:", self._box("description", self.description_edit))
        general.addRow("", self._box("required", self.required_check))

        self.enum_editor = ValueListEditor("enum")
        self.default_edit = self._line("default", "no default")
        self.examples_editor = ValueListEditor("examples")
        self.values_group = QGroupBox("Values")
        values = _form(self.values_group)
        self.values_form = values
        values.addRow("&Allowed:", self._box("enum", self.enum_editor))
        values.addRow("D&efault:", self._box("default", self.default_edit))
        values.addRow("E&xamples:", self._box("examples", self.examples_editor))

        self.min_length_edit = NumberField("minLength", self._line("minLength", "none"))
        self.max_length_edit = NumberField("maxLength", self._line("maxLength", "none"))
        self.pattern_edit = self._line("pattern", "a regular expression")
        self.format_combo = QComboBox()
        self.format_combo.setObjectName("formatCombo")
        self.format_combo.setEditable(True)
        self.format_combo.addItems(["", *FORMATS])
        self.format_combo.setToolTip("A format hint checked by the server (empty: none)")
        line = self.format_combo.lineEdit()
        assert line is not None  # the combo is editable
        self.format_line: QLineEdit = line
        self.format_line.setPlaceholderText("none")
        self.format_line.installEventFilter(self)
        self.string_group = QGroupBox("Text")
        text = _form(self.string_group)
        text.addRow("Min length:", self._box("minLength", self.min_length_edit.edit))
        text.addRow("Max length:", self._box("maxLength", self.max_length_edit.edit))
        text.addRow("&Pattern:", self._box("pattern", self.pattern_edit))
        text.addRow("&Format:", self._box("format", self.format_combo))

        self.minimum = BoundField("minimum", "exclusiveMinimum", self._line("minimum", "none"))
        self.maximum = BoundField("maximum", "exclusiveMaximum", self._line("maximum", "none"))
        self.multiple_edit = NumberField("multipleOf", self._line("multipleOf", "none"))
        self.number_group = QGroupBox("Number")
        number = _form(self.number_group)
        number.addRow("Minimum:", self._box("minimum", self.minimum.edit, self.minimum.exclusive))
        number.addRow("Maximum:", self._box("maximum", self.maximum.edit, self.maximum.exclusive))
        number.addRow("Multiple of:", self._box("multipleOf", self.multiple_edit.edit))

        self.min_items_edit = NumberField("minItems", self._line("minItems", "none"))
        self.max_items_edit = NumberField("maxItems", self._line("maxItems", "none"))
        self.unique_check = QCheckBox("Items must be unique")
        self.unique_check.setObjectName("uniqueCheck")
        self.array_group = QGroupBox("List")
        array = _form(self.array_group)
        array.addRow("Min items:", self._box("minItems", self.min_items_edit.edit))
        array.addRow("Max items:", self._box("maxItems", self.max_items_edit.edit))
        array.addRow("", self._box("uniqueItems", self.unique_check))

        self.additional_check = QCheckBox("Allow properties not listed")
        self.additional_check.setObjectName("additionalCheck")
        self.additional_check.setToolTip("additionalProperties: unchecked refuses unknown keys")
        self.object_group = QGroupBox("Object")
        obj = _form(self.object_group)
        obj.addRow("", self._box("additionalProperties", self.additional_check))
        self.other_label = QLabel()
        self.other_label.setObjectName("otherKeywords")
        self.other_label.setWordWrap(True)
        self.other_label.setEnabled(False)

        self.groups = (self.values_group, self.string_group, self.number_group, self.array_group)
        layout = QVBoxLayout(content)
        layout.setContentsMargins(6, 4, 4, 4)
        layout.setSpacing(4)
        for widget in (self.heading, self.note, self.general_problem):
            layout.addWidget(widget)
        layout.addLayout(general)
        for group in (*self.groups, self.object_group):
            layout.addWidget(group)
        layout.addWidget(self.other_label)
        layout.addStretch(1)
        self.setWidget(content)
        self.content = content
        self._connect()

    def _connect(self) -> None:
        self.name_edit.textEdited.connect(self._on_name_edited)
        self.name_edit.returnPressed.connect(self._on_name_committed)
        self.type_combo.activated.connect(self._on_type_chosen)
        self.title_edit.textEdited.connect(lambda text: self._send("title", text or REMOVE))
        self.description_edit.textChanged.connect(self._on_description_changed)
        self.required_check.clicked.connect(self._on_required_clicked)
        self.enum_editor.values_edited.connect(lambda v: self._send("enum", v or REMOVE))
        self.enum_editor.invalid.connect(lambda message: self._set_local("enum", message))
        self.examples_editor.values_edited.connect(lambda v: self._send("examples", v or REMOVE))
        self.examples_editor.invalid.connect(lambda message: self._set_local("examples", message))
        for editor in (self.enum_editor, self.examples_editor):
            editor.step_done.connect(self.model.seal)
        self.default_edit.textEdited.connect(self._on_default_edited)
        self.pattern_edit.textEdited.connect(lambda text: self._send("pattern", text or REMOVE))
        self.format_combo.currentTextChanged.connect(self._on_format_changed)
        for field in (self.min_length_edit, self.max_length_edit, self.multiple_edit):
            field.edited.connect(self._on_number_edited)
        for field in (self.min_items_edit, self.max_items_edit):
            field.edited.connect(self._on_number_edited)
        for bound in (self.minimum, self.maximum):
            bound.edited.connect(self._on_bound_edited)
        self.unique_check.clicked.connect(
            lambda checked: self._send("uniqueItems", True if checked else REMOVE, typing=False)
        )
        self.additional_check.clicked.connect(
            lambda checked: self._send(
                "additionalProperties", REMOVE if checked else False, typing=False
            )
        )

    # -- showing ---------------------------------------------------------------------------

    def path(self) -> NodePath | None:
        """The node shown (``()`` the root, None nothing)."""
        return self._path

    def set_path(self, path: NodePath | None) -> None:
        """Show the node at ``path``."""
        if path != self._path:
            self._local = {}
        self._path = path
        self.refresh()

    def kind(self) -> str:
        """The shown node's type (``""`` for a schema the builder does not model)."""
        node = self.model.node_json(self._path) if self._path is not None else None
        kind = node.get("type") if isinstance(node, dict) else None
        return kind if isinstance(kind, str) and kind in NODE_TYPES else ""

    def refresh(self) -> None:
        """Show the node's current values and problems (after any change of the parameters)."""
        node = self.model.node_json(self._path) if self._path is not None else None
        if self._path is None or node is None:
            self._path = None
            noun = self.model.slot.noun
            self.heading.setText(f"No {noun} selected")
            self.note.setText(
                f"Select a{'n' if noun[0] in 'aeiou' else ''} {noun} in the tree to edit it."
            )
            self.note.show()
            self.content.setEnabled(False)
            return
        self.content.setEnabled(True)
        path, kind = self._path, self.kind()
        data: dict[str, Any] = node if isinstance(node, dict) else {}
        self.heading.setText(self._title(path, kind))
        self.note.setText("" if kind or not path else self._raw_note(node))
        self.note.setVisible(bool(self.note.text()))
        self._show_general(path, kind, data)
        for editor, keyword in ((self.enum_editor, "enum"), (self.examples_editor, "examples")):
            editor.set_kind(kind or "any")
            if keyword not in self._local:
                editor.set_values(data.get(keyword) if isinstance(data.get(keyword), list) else [])
        if "default" not in self._local:
            default = format_value(data["default"], kind) if "default" in data else ""
            self._set_text(self.default_edit, default, self._reads_as(data.get("default"), kind))
        self._show_string(data)
        for field in (self.min_length_edit, self.max_length_edit, self.multiple_edit):
            field.show_value(data)
        for field in (self.min_items_edit, self.max_items_edit):
            field.show_value(data)
        self.minimum.show_value(data)
        self.maximum.show_value(data)
        with QSignalBlocker(self.unique_check):
            self.unique_check.setChecked(data.get("uniqueItems") is True)
        with QSignalBlocker(self.additional_check):
            self.additional_check.setChecked(data.get("additionalProperties") is not False)
        self.additional_check.setEnabled(isinstance(data.get("additionalProperties", True), bool))
        self.values_group.setVisible(bool(path) and kind != "")
        # A boolean has a default worth setting; a list of allowed true/false values has not.
        for keyword in ("enum", "examples"):
            self.values_form.setRowVisible(self.boxes[keyword], kind != "boolean")
        self.string_group.setVisible(kind == "string")
        self.number_group.setVisible(kind in ("number", "integer"))
        self.array_group.setVisible(kind == "array")
        self.object_group.setVisible(kind == "object")
        others = [k for k in data if k not in MODELLED.get(kind, ())]
        self.other_label.setText(
            f"Also set: {', '.join(others)} (edit them in the JSON view)" if others and kind else ""
        )
        self.other_label.setVisible(bool(self.other_label.text()))
        self._show_problems()

    def _title(self, path: NodePath, kind: str) -> str:
        if not path:
            return "Parameters (the root object)"
        where = ".".join(p for p in path if p != "properties")
        return f"{where} — {kind or 'schema'}"

    def _raw_note(self, node: Any) -> str:
        return (
            "This schema uses keywords the builder does not model; edit it in the JSON view, or "
            "choose a type to replace it."
            if isinstance(node, dict)
            else "A boolean schema (any value / no value); choose a type to replace it."
        )

    def _show_general(self, path: NodePath, kind: str, data: dict[str, Any]) -> None:
        named = is_property(path)
        if not self.name_edit.hasFocus():
            # Typing has ended (renamed or refused): the field shows the real name, unflagged.
            self._set_text(self.name_edit, path[-1] if named else "")
            self._local.pop("name", None)
        self.name_edit.setEnabled(named)
        self.boxes["name"].set_problem(self._local.get("name", ""))
        with QSignalBlocker(self.type_combo):
            self.type_combo.setCurrentIndex(NODE_TYPES.index(kind) if kind else -1)
        self.type_combo.setEnabled(bool(path))
        self._set_text(self.title_edit, str(data.get("title") or ""))
        description = str(data.get("description") or "")
        if self.description_edit.toPlainText() != description:
            with QSignalBlocker(self.description_edit):
                self.description_edit.setPlainText(description)
        with QSignalBlocker(self.required_check):
            self.required_check.setChecked(named and self.model.is_required(path))
        self.required_check.setEnabled(named)

    def _show_string(self, data: dict[str, Any]) -> None:
        self._set_text(self.pattern_edit, str(data.get("pattern") or ""))
        shown = str(data.get("format") or "")
        if self.format_combo.currentText().strip() != shown:
            with QSignalBlocker(self.format_combo):
                self.format_combo.setCurrentText(shown)

    def _set_text(
        self, edit: QLineEdit, text: str, typed_means_it: Callable[[str], bool] | None = None
    ) -> None:
        """Show ``text`` unless the input holds it, or the person is typing something that
        means the same (``typed_means_it(typed)``: ``1e2`` for 100). A change from elsewhere
        (undo, the JSON view) shows even in the focused input."""
        if edit.text() == text:
            return
        if edit.hasFocus() and typed_means_it is not None and typed_means_it(edit.text()):
            return
        with QSignalBlocker(edit):
            edit.setText(text)

    def _reads_as(self, value: Any, kind: str) -> Callable[[str], bool]:
        def check(typed: str) -> bool:
            try:
                return bool(typed) and same_json(parse_value(typed, kind or "any"), value)
            except ValueError:
                return False

        return check

    def _show_problems(self) -> None:
        path = self._path
        found: dict[str, list[str]] = {}
        unplaced: list[str] = []
        enum_rows: dict[int, str] = {}
        example_rows: dict[int, str] = {}
        for where, message in self.model.node_problems(path) if path is not None else []:
            keyword = next((k for k in self.boxes if keyword_matches(where, k)), None)
            keyword = keyword or next(
                (b for b, alt in _ALIASES.items() if keyword_matches(where, alt)), None
            )
            if keyword is None:
                unplaced.append(f"{where}: {message}" if where else message)
                continue
            found.setdefault(keyword, []).append(message)
            if keyword in _PAIRS:
                found.setdefault(_PAIRS[keyword], []).append(message)
            rows = enum_rows if keyword == "enum" else example_rows
            if keyword in ("enum", "examples") and where.startswith(f"{keyword}["):
                rows[int(where[len(keyword) + 1 : where.index("]")])] = message
        for keyword, message in self._local.items():
            found[keyword] = [message]
        for keyword, box in self.boxes.items():
            box.set_problem("\n".join(dict.fromkeys(found.get(keyword, []))))
        self.enum_editor.mark(enum_rows)
        self.examples_editor.mark(example_rows)
        self.general_problem.setText("\n".join(unplaced))
        self.general_problem.setVisible(bool(unplaced))
        if unplaced:
            self.general_problem.setStyleSheet(self.boxes["name"].problem.styleSheet())

    def problem_at(self, keyword: str) -> str:
        """The problem shown under the input of ``keyword`` (``""`` when none)."""
        box = self.boxes[keyword]
        return box.problem.text() if not box.problem.isHidden() else ""

    # -- editing ---------------------------------------------------------------------------

    def _send(self, keyword: str, value: Any, *, typing: bool = True) -> bool:
        self._local.pop(keyword, None)
        if self._path is None:
            return False
        done = self.model.set_keyword(self._path, keyword, value, typing=typing)
        self._show_problems()
        return done

    def _set_local(self, keyword: str, message: str) -> None:
        self._local[keyword] = message
        self._show_problems()

    def _on_name_edited(self, text: str) -> None:
        path = self._path
        problem = self.model.name_problem(path, text) if path and text != path[-1] else None
        if problem:
            self._local["name"] = problem
        else:
            self._local.pop("name", None)
        self._show_problems()

    def _on_name_committed(self) -> None:
        path, text = self._path, self.name_edit.text().strip()
        if not path or not is_property(path) or text == path[-1]:
            return
        if self.model.rename(path, text):
            self._local.pop("name", None)
            self.set_path((*path[:-1], text))

    def _on_type_chosen(self, index: int) -> None:
        if self._path is not None and 0 <= index < len(NODE_TYPES):
            self._local = {}
            self.model.set_type(self._path, NODE_TYPES[index])

    def _on_description_changed(self) -> None:
        self._send("description", self.description_edit.toPlainText() or REMOVE)

    def _on_required_clicked(self, checked: bool) -> None:
        if self._path is not None:
            self.model.set_required(self._path, checked)

    def _on_default_edited(self, text: str) -> None:
        if not text:
            self._send("default", REMOVE)
            return
        try:
            value = parse_value(text, self.kind() or "any")
        except ValueError as exc:
            self._set_local("default", str(exc))
            return
        self._send("default", value)

    def _on_format_changed(self, text: str) -> None:
        node = self.model.node_json(self._path) if self._path is not None else None
        if isinstance(node, dict) and (node.get("format") or "") != text.strip():
            self._send("format", text.strip() or REMOVE)

    def _on_number_edited(self, keyword: str, value: Any, problem: str) -> None:
        if problem:
            self._set_local(keyword, problem)
        else:
            self._send(keyword, value)

    def _on_bound_edited(self, values: dict[str, Any], problem: str, box: str) -> None:
        if problem:
            self._set_local(box, problem)
            return
        self._local.pop(box, None)
        if self._path is not None:
            text = f"Edit {box} of {'.'.join(p for p in self._path if p != 'properties')}"
            self.model.set_keywords(self._path, values, text=text, typing=True)
        self._show_problems()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        """Focus leaving an input ends its typing run (the next edit is a new undo step)."""
        if event.type() == QEvent.Type.FocusOut:
            self.model.seal()
            if watched is self.name_edit:
                self._on_name_committed()
                self.refresh()  # a refused name is put back (the reporter said why)
        return False


# Keywords shown in another keyword's box (an exclusive bound in its bound's box).
_ALIASES = {"minimum": "exclusiveMinimum", "maximum": "exclusiveMaximum"}
