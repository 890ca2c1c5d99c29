"""The test form: a tool's parameters schema turned into nested input widgets.

:func:`build_editor` picks an editor per sub-schema from its typed node
(``schema_types.schema.nodes``):
a line edit for strings, number inputs that keep what is typed, a check box for booleans, a combo
box for enums, date inputs for ``date``/``date-time``, a list editor for arrays (each item its own
sub-form) and a group box for objects. What the form cannot show (``anyOf``/``oneOf``/``$ref``,
arrays of arrays, objects without properties, lists of types …) is typed as JSON for that sub-tree.

:class:`ArgumentsForm` reads the arguments as a caller would send them (empty optional fields
absent), and shows validation problems at the field they name, walking up the path to the nearest
field there is (``passengers[1].age`` → the age input of the second passenger).

An optional object is sent only once one of its fields is set, and then with just the fields set
(the server fills in their defaults); its box says so while it is left out, and its Clear button
empties every field to leave it out again. Its fields start empty rather than at their defaults,
since a default shown there would be a field set.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QApplication,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.icons import icon
from app.test_run.fields import (
    ABSENT,
    BooleanEditor,
    EnumEditor,
    FieldEditor,
    JsonEditor,
    StringEditor,
    hint_text,
)
from app.test_run.lists import ArrayEditor
from app.test_run.pickers import DateEditor, DateTimeEditor, IntegerEditor, NumberEditor
from schema_types.errors import Problem, SchemaDefinitionError
from schema_types.json_text import PathParts, format_path
from schema_types.schema.nodes import (
    NODE_CLASSES,
    ArraySchema,
    BooleanSchema,
    IntegerSchema,
    NumberSchema,
    ObjectSchema,
    RawSchema,
    SchemaNode,
    StringSchema,
    parameters_from_json,
)

__all__ = ["ABSENT", "ArgumentsForm", "ArrayEditor", "FieldEditor", "ObjectEditor", "build_editor"]

# Keywords that change what a value may be in ways a plain input cannot show.
_COMPOSITE = ("anyOf", "oneOf", "allOf", "$ref", "$dynamicRef", "not", "if", "const", "prefixItems")


def _fallback_reason(node: SchemaNode | bool | None) -> str:
    """Why ``node`` is typed as JSON, or ``""`` when the form has an input for it."""
    if not isinstance(node, NODE_CLASSES):
        return "any value is allowed" if node is True else "the schema has no single type"
    data = node.data if isinstance(node, RawSchema) else node.extras
    for keyword in _COMPOSITE:
        if keyword in data:
            return f"the schema uses {keyword}"
    if isinstance(node, RawSchema):
        kind = node.data.get("type")
        return f"the type is {kind}" if kind is not None else "the schema has no single type"
    if isinstance(node, ArraySchema):
        if isinstance(node.items, ArraySchema):
            return "an array of arrays"
        # Items typed as JSON one by one would be harder to read than the whole list.
        return _fallback_reason(node.items)
    if isinstance(node, ObjectSchema) and not node.properties:
        return "an object with free-form keys"
    return ""


def build_editor(
    node: SchemaNode | bool | None,
    *,
    required: bool,
    item: bool = False,
    always_sent: bool | None = None,
    title: str = "",
) -> FieldEditor:
    """The editor for one argument.

    Args:
        node: the argument's typed schema node (a boolean schema or None falls back to JSON).
        required: whether the enclosing object requires it.
        item: whether it is an array item.
        always_sent: whether it is sent even when empty (default: when required or an item);
            see :class:`~app.test_run.fields.FieldEditor`.
        title: the name shown on a group box (objects and arrays).
    """
    schema: dict[str, Any] = node.to_json() if not isinstance(node, bool | None) else {}
    sent = (required or item) if always_sent is None else always_sent
    reason = _fallback_reason(node)
    if reason:
        return JsonEditor(schema, required=required, item=item, reason=reason)
    if isinstance(node, ObjectSchema):
        return ObjectEditor(node, required=required, item=item, always_sent=sent, title=title)
    if isinstance(node, ArraySchema):
        items = node.items

        def item_editor() -> FieldEditor:
            return build_editor(items, required=True, item=True)

        return ArrayEditor(
            node, item_editor, required=required, item=item, always_sent=sent, title=title
        )
    if schema.get("enum"):
        return EnumEditor(schema, required=required, item=item)
    if isinstance(node, StringSchema) and node.format == "date":
        return DateEditor(schema, required=required, item=item)
    if isinstance(node, StringSchema) and node.format == "date-time":
        return DateTimeEditor(schema, required=required, item=item)
    if isinstance(node, IntegerSchema):
        return IntegerEditor(schema, required=required, item=item)
    if isinstance(node, NumberSchema):
        return NumberEditor(schema, required=required, item=item)
    if isinstance(node, BooleanSchema):
        return BooleanEditor(schema, required=required, item=item, always_sent=sent)
    return StringEditor(schema, required=required, item=item)


def field_label(name: str, required: bool, schema: Mapping[str, Any]) -> QLabel:
    """The label of a property row: bold with ``*`` when required, the hint as tooltip."""
    label = QLabel(f"{name} *" if required else name)
    if required:
        font = QFont(label.font())
        font.setBold(True)
        label.setFont(font)
        label.setAccessibleDescription("required")
    hint = hint_text(schema)
    label.setToolTip(
        f"{hint}\n(required)" if required and hint else "required" if required else hint
    )
    return label


class ObjectEditor(FieldEditor):
    """A group box with one row per property (the root is a plain form).

    An object that is not always sent is sent only once one of its fields is set; until then a
    line in the box says it is left out. Clear empties its fields to leave it out again.

    Attributes:
        fields: the editor of each property, by name.
        group_box: the box around the rows (None for the root).
        status: the "left out" line of an object that is not always sent (None otherwise).
        clear_button: empties every field of an object that is not always sent (None otherwise).
    """

    is_group = True

    def __init__(
        self,
        node: ObjectSchema,
        *,
        required: bool,
        item: bool = False,
        always_sent: bool | None = None,
        title: str = "",
        root: bool = False,
    ) -> None:
        super().__init__(node.to_json(), required=required, item=item, always_sent=always_sent)
        self.fields: dict[str, FieldEditor] = {}
        self.group_box: QGroupBox | None = None
        self.status: QLabel | None = None
        self.clear_button: QToolButton | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        if root:
            form = QFormLayout()
            layout.addWidget(self.problem_label)
            layout.addLayout(form)
        else:
            self.group_box = QGroupBox(f"{title} *" if required else title)
            self.group_box.setToolTip(hint_text(self.schema))
            layout.addWidget(self.group_box)
            inner = QVBoxLayout(self.group_box)
            if not self.always_sent:
                inner.addLayout(self._status_row(title))
            inner.addWidget(self.problem_label)
            form = QFormLayout()
            inner.addLayout(form)
            self.input = self.group_box
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        required_names = set(node.required or [])
        for name, sub in (node.properties or {}).items():
            child = build_editor(
                sub,
                required=name in required_names,
                always_sent=name in required_names and self.always_sent,
                title=name,
            )
            child.owner, child.key = self, name
            child.edited.connect(self._on_field_edited)
            self.fields[name] = child
            if child.is_group:
                form.addRow(child)
            else:
                label = field_label(name, name in required_names, child.schema)
                label.setBuddy(child.input)
                form.addRow(label, child)
        if root and not self.fields:
            form.addRow(QLabel("This tool takes no arguments."))
        self.reset()

    def _status_row(self, title: str) -> QHBoxLayout:
        self.status = QLabel("Left out: set one of its fields to send it.")
        self.status.setObjectName("objectStatus")
        self.status.setEnabled(False)  # greyed, as a note
        self.status.setWordWrap(True)
        self.clear_button = QToolButton()
        self.clear_button.setIcon(icon("close"))
        self.clear_button.setText("Leave out")
        self.clear_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.clear_button.setAutoRaise(True)
        tip = f"Clear: empty every field of {title or 'this object'} and leave it out"
        self.clear_button.setToolTip(tip)
        self.clear_button.setAccessibleName(f"Clear {title}".strip())
        self.clear_button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.clear_button.clicked.connect(self._on_clear_clicked)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.status, 1)
        row.addStretch()  # keeps the button at the right while the note is hidden
        row.addWidget(self.clear_button, 0, Qt.AlignmentFlag.AlignTop)
        return row

    def value(self) -> Any:
        found = {name: field.value() for name, field in self.fields.items()}
        value = {name: value for name, value in found.items() if value is not ABSENT}
        return value if value or self.always_sent else ABSENT

    def set_value(self, value: Any) -> None:
        given = value if isinstance(value, Mapping) else {}
        for name, field in self.fields.items():
            field.set_value(given.get(name, ABSENT))
        self._show_status()

    def reset(self) -> None:
        default = self.default()
        if isinstance(default, Mapping):
            self.set_value(default)
        elif self.always_sent:
            for field in self.fields.values():
                field.reset()
            self._show_status()
        else:
            self.set_value(ABSENT)  # fields at their defaults would be fields set

    def sub_editors(self) -> list[FieldEditor]:
        return list(self.fields.values())

    def _show_status(self) -> None:
        if self.status is not None and self.clear_button is not None:
            left_out = self.value() is ABSENT
            self.status.setVisible(left_out)
            self.clear_button.setEnabled(not left_out)

    def _on_field_edited(self) -> None:
        self._show_status()
        self.edited.emit()

    def _on_clear_clicked(self) -> None:
        self.set_value(ABSENT)
        self.edited.emit()


def walk(editor: FieldEditor) -> Iterator[FieldEditor]:
    """``editor`` and every editor inside it, parents first."""
    yield editor
    for sub in editor.sub_editors():
        yield from walk(sub)


class ArgumentsForm(QWidget):
    """The whole form for a tool's parameters.

    Args:
        parameters: the tool's parameters (a JSON Schema object); a schema the form cannot read
            is typed as one JSON object.
        parent: the parent widget.

    Attributes:
        root: the editor of the root object.
    """

    edited = Signal()

    def __init__(self, parameters: Mapping[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("argumentsForm")
        self._schema_problem = ""
        try:
            root: FieldEditor = ObjectEditor(
                parameters_from_json(parameters), required=True, root=True
            )
        except SchemaDefinitionError as exc:
            self._schema_problem = f"the parameters schema cannot be shown as a form: {exc}"
            root = JsonEditor(parameters, required=True, reason="the schema is not valid")
        self.root = root
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(root)
        layout.addStretch(1)
        root.edited.connect(self.edited)
        application = QApplication.instance()
        if isinstance(application, QApplication):
            application.focusChanged.connect(self._on_focus_changed)

    def _on_focus_changed(self, _old: QWidget | None, _now: QWidget | None) -> None:
        for editor in self.editors():
            editor.collapse_problem()

    def value(self) -> dict[str, Any]:
        """The arguments as a caller would send them (absent fields left out)."""
        value = self.root.value()
        return value if isinstance(value, dict) else {}

    def set_value(self, arguments: Mapping[str, Any]) -> list[str]:
        """Fill the form with ``arguments`` (what is not in them is cleared); emits ``edited``.

        Returns:
            The paths of the given values the form cannot show, and so does not send: a choice
            the ``enum`` does not list, a text where a check box is, a list where an object is.
        """
        given = dict(arguments)
        self.root.set_value(given)
        self.edited.emit()
        return _unshown(given, self.value())

    def reset(self) -> None:
        """Back to the schema defaults; emits ``edited``."""
        self.root.reset()
        self.edited.emit()

    def editors(self) -> Iterator[FieldEditor]:
        """Every editor of the form, parents first."""
        return walk(self.root)

    def editor(self, path: str) -> FieldEditor:
        """The editor of the argument at ``path`` (``passengers[0].age``).

        Raises:
            KeyError: no field has that path.
        """
        for editor in self.editors():
            if editor.path == path:
                return editor
        raise KeyError(path)

    def field(self, path: str) -> QWidget:
        """The input widget of the argument at ``path`` (a group box for objects and arrays).

        Raises:
            KeyError: no field has that path.
        """
        return self.editor(path).input

    def input_problems(self) -> list[Problem]:
        """Inputs that cannot be read (JSON fields with invalid text), before any validation."""
        problems = [Problem("", self._schema_problem)] if self._schema_problem else []
        for editor in self.editors():
            message = editor.input_problem()
            if message:
                problems.append(Problem(editor.path, message))
        if isinstance(self.root, JsonEditor) and not isinstance(self.root.value(), dict):
            problems.append(Problem("", "arguments must be a JSON object"))
        return problems

    def show_problems(self, problems: Sequence[Problem]) -> None:
        """Show each problem under the nearest field its path names; clear the others."""
        editors = list(self.editors())
        by_path = {editor.path: editor for editor in editors}
        messages: dict[str, list[str]] = {}
        for problem in problems:
            owner = _nearest(problem.path, by_path)
            # Under a field that is not the argument itself, the message says which one.
            relative = problem.path[len(owner) :].lstrip(".")
            text = f"{relative}: {problem.message}" if relative else problem.message
            if text not in messages.setdefault(owner, []):
                messages[owner].append(text)
        for editor in editors:
            editor.set_problem("\n".join(messages.get(editor.path, [])))


def _unshown(given: Any, shown: Any, parts: PathParts = ()) -> list[str]:
    """The paths of the values in ``given`` that ``shown`` does not hold as they are.

    Only what ``given`` holds counts: a value ``shown`` has besides (``false`` for a check box that
    is always sent) is no value lost.
    """
    if isinstance(given, Mapping) and isinstance(shown, Mapping):
        lost: list[str] = []
        for key, value in given.items():
            where = (*parts, key)
            lost += _unshown(value, shown[key], where) if key in shown else [format_path(where)]
        return lost
    if isinstance(given, list) and isinstance(shown, list) and len(given) == len(shown):
        return [
            path
            for index, (value, kept) in enumerate(zip(given, shown, strict=True))
            for path in _unshown(value, kept, (*parts, index))
        ]
    # As JSON, so that 1, 1.0 and true stay different values.
    same = json.dumps(given, sort_keys=True, default=str) == json.dumps(
        shown, sort_keys=True, default=str
    )
    return [] if same else [format_path(parts)]


def _nearest(path: str, by_path: Mapping[str, FieldEditor]) -> str:
    """The longest field path that is ``path`` or one of its ancestors (``""``: the root)."""
    best = ""
    for candidate in by_path:
        if len(candidate) <= len(best):
            continue
        if path == candidate or path.startswith((candidate + ".", candidate + "[")):
            best = candidate
    return best
