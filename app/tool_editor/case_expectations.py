"""The expectations of a test case as fields: lists, a pattern, limits, a schema, a judge.

:class:`ExpectationsForm` has one input per expectation of ``schema_types.cases.Expectations``:
one-per-line lists for ``contains``, ``notContains`` and ``toolCalls``, a line for ``matches``,
spin boxes with an "off" state for the limits, JSON text for ``jsonSchema``, text for ``judge``
and a check box for ``isError``. Each is an :class:`ExpectField`: how it shows a case's value,
reads its input back (:mod:`app.tool_editor.case_values`; a ``ValueError`` says what to fix),
and the line under it where that is said. The form holds no case: the case editor shows values
in it and writes what :attr:`ExpectationsForm.edited` reports.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase, QWheelEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.tool_editor.case_values import (
    list_text,
    parse_list,
    parse_schema,
    parse_tool_calls,
    schema_text,
    tool_calls_text,
)
from app.tool_editor.value_editors import error_colour

__all__ = ["ExpectField", "ExpectationsForm", "LimitBox", "parse_cost", "problem_line"]

_LIMIT = 2**31 - 1


@dataclass
class ExpectField:
    """The input of one expectation and how it reads and shows the case's value.

    Attributes:
        name: the field of ``Expectations`` (``not_contains``).
        widget: the input.
        problem: the line under it that says why its input is not taken.
        show: puts a value of the case into the input.
        read: the input's value as the case would hold it (raises ``ValueError``).
        normal: a value of the case in the form :attr:`read` gives, to compare them.
    """

    name: str
    widget: QWidget
    problem: QLabel
    show: Callable[[Any], None]
    read: Callable[[], Any]
    normal: Callable[[Any], Any]

    def reads_as(self, value: Any) -> bool:
        """Whether the input reads as ``value`` now."""
        try:
            return bool(self.read() == self.normal(value))
        except ValueError:
            return False


def problem_line(owner: QWidget) -> QLabel:
    """A line in the error colour of ``owner``'s palette, hidden until it has something to say."""
    label = QLabel()
    label.setObjectName("caseFieldProblem")
    label.setWordWrap(True)
    label.setStyleSheet(f"color: {error_colour(owner).name()};")
    label.hide()
    return label


def _text_box(name: str, lines: int, *, mono: bool = False) -> QPlainTextEdit:
    box = QPlainTextEdit()
    box.setObjectName(name)
    box.setTabChangesFocus(True)
    if mono:
        box.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    box.setFixedHeight(box.fontMetrics().lineSpacing() * lines + 12)
    return box


def _cell(field: QWidget, *problems: QLabel) -> QWidget:
    """``field`` with the problem lines under it, as one cell of a form row."""
    cell = QWidget()
    column = QVBoxLayout(cell)
    column.setContentsMargins(0, 0, 0, 0)
    column.setSpacing(2)
    column.addWidget(field)
    for problem in problems:
        column.addWidget(problem)
    return cell


class LimitBox(QSpinBox):
    """A limit: a whole number from 0 (or 1) up, or "off" (the lowest value, shown as a word).

    Like the test form's numbers, the wheel steps it only while it is being edited: scrolling
    the expectations past it changes nothing.
    """

    def __init__(self, name: str, off_at: int, suffix: str = "") -> None:
        super().__init__()
        self.setObjectName(name)
        self.setRange(off_at, _LIMIT)
        self.setSpecialValueText("off")
        self.setSuffix(suffix)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # the wheel does not take the focus
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 (Qt override)
        """Step only while being edited; otherwise let the expectations scroll."""
        if self.hasFocus():
            super().wheelEvent(event)
        else:
            event.ignore()


def parse_cost(text: str) -> float | None:
    """A ``maxCost`` as typed: US dollars, ``$`` allowed; empty: none.

    Raises:
        ValueError: not a number of dollars, or below 0 (the message says what to type).
    """
    typed = text.strip().removeprefix("$").strip()
    if not typed:
        return None
    try:
        amount = float(typed)
    except ValueError:
        raise ValueError(
            f"not an amount of US dollars: {text.strip()!r} (type e.g. 0.002)"
        ) from None
    if not amount >= 0 or amount == float("inf"):
        raise ValueError(f"a cost is 0 or more US dollars, not {text.strip()!r}")
    return amount


class ExpectationsForm(QWidget):
    """An input per expectation.

    Attributes:
        fields: the inputs, by ``Expectations`` field name (``max_turns``).
        form: their rows.
    """

    edited = Signal(object)
    """The person changed an input; carries its :class:`ExpectField`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("expectationsForm")
        self.fields: dict[str, ExpectField] = {}
        self._build()

    def _add(self, form: QFormLayout, label: str, field: ExpectField, tip: str) -> None:
        field.widget.setToolTip(tip)
        text = QLabel(label)
        text.setBuddy(field.widget)
        text.setToolTip(tip)
        form.addRow(text, _cell(field.widget, field.problem))
        self.fields[field.name] = field

    def _lines_field(self, name: str, object_name: str, *, calls: bool = False) -> ExpectField:
        box = _text_box(object_name, 3, mono=calls)
        field = ExpectField(
            name,
            box,
            problem_line(self),
            show=lambda v: box.setPlainText(tool_calls_text(v) if calls else list_text(v)),
            read=lambda: (parse_tool_calls if calls else parse_list)(box.toPlainText()),
            normal=lambda v: parse_tool_calls(tool_calls_text(v)) if calls else list(v),
        )
        box.textChanged.connect(lambda: self.edited.emit(field))
        return field

    def _limit_field(self, name: str, spin: LimitBox) -> ExpectField:
        def show(value: float | None) -> None:
            spin.setValue(spin.minimum() if value is None else round(value))

        def read() -> int | None:
            return None if spin.value() == spin.minimum() else spin.value()

        field = ExpectField(name, spin, problem_line(self), show, read, lambda v: v)
        spin.valueChanged.connect(lambda _value: self.edited.emit(field))
        return field

    def _cost_field(self) -> ExpectField:
        edit = QLineEdit()
        edit.setObjectName("expectMaxCost")
        edit.setPlaceholderText("off · US dollars a run, e.g. 0.002")
        field = ExpectField(
            "max_cost",
            edit,
            problem_line(self),
            show=lambda v: edit.setText("" if v is None else f"{v:g}"),
            read=lambda: parse_cost(edit.text()),
            normal=lambda v: v,
        )
        edit.textEdited.connect(lambda _text: self.edited.emit(field))
        return field

    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        form = self.form = QFormLayout()
        outer.addLayout(form)
        outer.addStretch(1)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        one_per_line = "One per line; a line in double quotes is read as a JSON string."
        self._add(
            form,
            "&Contains:",
            self._lines_field("contains", "expectContains"),
            f"Every one of these appears in the answer. {one_per_line}",
        )
        self._add(
            form,
            "N&ot contains:",
            self._lines_field("not_contains", "expectNotContains"),
            f"None of these appears in the answer. {one_per_line}",
        )
        matches = QLineEdit()
        matches.setObjectName("expectMatches")
        matches.setPlaceholderText("a regular expression, e.g. (?i)window seat")
        matches.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        field = ExpectField(
            "matches",
            matches,
            problem_line(self),
            show=lambda v: matches.setText(v or ""),
            read=lambda: matches.text() or None,
            normal=lambda v: v,
        )
        matches.textEdited.connect(lambda _text: self.edited.emit(field))
        self._add(
            form, "&Matches:", field, "A regular expression (Python syntax) found in the answer."
        )
        self._add(
            form,
            "&Tool calls:",
            self._lines_field("tool_calls", "expectToolCalls", calls=True),
            "Inner tools the call must use, one per line (server__tool); after a name, a JSON "
            'object of arguments the call must include: time__now {"timezone": "UTC"}',
        )
        for name, object_name, off_at, label, suffix, tip in (
            (
                "max_tool_calls",
                "expectMaxToolCalls",
                -1,
                "Ma&x tool calls:",
                "",
                "inner tool calls",
            ),
            ("max_turns", "expectMaxTurns", 0, "Max turns:", "", "model requests"),
            ("max_duration_ms", "expectMaxDurationMs", 0, "Max time:", " ms", "the call's time"),
        ):
            spin = LimitBox(object_name, off_at, suffix)
            self._add(
                form,
                label,
                self._limit_field(name, spin),
                (f"At most this many {tip}" if not suffix else f"At most {tip}") + " ('off': any)",
            )
        self._add(
            form,
            "Max c&ost:",
            self._cost_field(),
            "At most this many US dollars a run, at the price table's price of the model "
            "(empty: any; an unknown cost fails it)",
        )
        schema_box = _text_box("expectJsonSchema", 4, mono=True)
        schema_box.setPlaceholderText('{"type": "object"}')
        schema = ExpectField(
            "json_schema",
            schema_box,
            problem_line(self),
            show=lambda v: schema_box.setPlainText(schema_text(v)),
            read=lambda: parse_schema(schema_box.toPlainText()),
            normal=lambda v: v,
        )
        schema_box.textChanged.connect(lambda: self.edited.emit(schema))
        self._add(
            form,
            "JSON &Schema:",
            schema,
            "The answer parses as JSON (one Markdown fence allowed) and validates against this.",
        )
        judge_box = _text_box("expectJudge", 2)
        judge_box.setPlaceholderText("e.g. The answer recommends exactly one flight.")
        judge = ExpectField(
            "judge",
            judge_box,
            problem_line(self),
            show=lambda v: judge_box.setPlainText(v or ""),
            read=lambda: judge_box.toPlainText() if judge_box.toPlainText().strip() else None,
            normal=lambda v: v,
        )
        judge_box.textChanged.connect(lambda: self.edited.emit(judge))
        self._add(form, "&Judge:", judge, "A judge model decides whether the answer meets this.")
        check = QCheckBox("Expect an &error: the call must fail")
        check.setObjectName("expectIsError")
        error = ExpectField(
            "is_error",
            check,
            problem_line(self),
            show=lambda v: check.setChecked(bool(v)),
            read=lambda: True if check.isChecked() else None,
            normal=lambda v: True if v else None,
        )
        check.toggled.connect(lambda _on: self.edited.emit(error))
        check.setToolTip("For arguments the tool must refuse, say.")
        form.addRow("", _cell(check, error.problem))
        self.fields["is_error"] = error
