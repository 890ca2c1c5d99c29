# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""Inputs that have no empty state of their own: spin boxes and date edits.

A caller may leave a number or a date out, but a spin box always shows one. So "not set" is a value
just below the input's range, shown as the words "not set" (``specialValueText``), with a clear
button beside the input to get back to it. The first key or click on a "not set" input starts
from a real value: typed digits replace the words, and a date starts from today rather than from
the "not set" date in 1900.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from PySide6.QtCore import QDate, QDateTime, QEvent, QObject, QSignalBlocker, Qt, QTime, QTimeZone
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QDateEdit,
    QDateTimeEdit,
    QDoubleSpinBox,
    QLabel,
    QSpinBox,
    QToolButton,
)

from app.icons import icon
from app.test_run.fields import ABSENT, NOT_SET, FieldEditor

__all__ = ["DateEditor", "DateTimeEditor", "IntegerEditor", "NumberEditor"]

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_FLOAT_LIMIT = 1e15  # past this a double spin box shows digits a person cannot read anyway
_UNSET_DATE = QDate(1900, 1, 1)


class _UnsetTouch(QObject):
    """Makes the first key or click on a "not set" input start from a real value."""

    def __init__(self, editor: _UnsettableEditor) -> None:
        super().__init__(editor)
        self._editor = editor

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # The event type is checked first: other events arrive while the input is destroyed.
        kind = event.type()
        if kind == QEvent.Type.MouseButtonPress:
            touched = True
        elif kind == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            text = event.text()
            touched = bool(text and text.isprintable())
            touched = touched or event.key() in (Qt.Key.Key_Up, Qt.Key.Key_Down)
        else:
            touched = False
        if touched and self._editor.is_unset():
            self._editor.start_editing()
        return False


class _UnsettableEditor(FieldEditor):
    """An input that has no empty state of its own: "not set" is a value below its range."""

    def is_unset(self) -> bool:
        """Whether the input shows "not set"."""
        raise NotImplementedError

    def start_editing(self) -> None:
        """Called on the first touch of a "not set" input (before Qt handles it)."""

    def _clear_button(self) -> QToolButton:
        button = QToolButton()
        button.setIcon(icon("close"))
        button.setAutoRaise(True)
        button.setToolTip("Clear: leave this argument out")
        button.setAccessibleName("Clear")
        button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        button.clicked.connect(self._on_clear_clicked)
        return button

    def _on_clear_clicked(self) -> None:
        self.set_value(ABSENT)
        self.edited.emit()

    def _watch(self, widget: QAbstractSpinBox) -> None:
        # Clicks land on the spin box's inner line edit, keys on the spin box itself.
        touch = _UnsetTouch(self)
        widget.installEventFilter(touch)
        widget.lineEdit().installEventFilter(touch)


def _decimals(values: Iterable[Any]) -> int:
    """Enough decimals to show the bounds, step and default exactly (2 to 6)."""
    places = 2
    for value in values:
        if isinstance(value, float) and math.isfinite(value):
            exponent = Decimal(repr(value)).as_tuple().exponent
            if isinstance(exponent, int):
                places = max(places, -exponent)
    return min(places, 6)


def _number(schema: Mapping[str, Any], keyword: str) -> float | None:
    value = schema.get(keyword)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


class IntegerEditor(_UnsettableEditor):
    """A spin box within ``minimum``/``maximum`` (exclusive bounds too)."""

    def __init__(self, schema: Mapping[str, Any], *, required: bool, item: bool = False) -> None:
        super().__init__(schema, required=required, item=item)
        lows, highs = [_INT_MIN + 1], [_INT_MAX]
        if (bound := _number(schema, "minimum")) is not None:
            lows.append(math.ceil(bound))
        if (bound := _number(schema, "exclusiveMinimum")) is not None:
            lows.append(math.floor(bound) + 1)
        if (bound := _number(schema, "maximum")) is not None:
            highs.append(math.floor(bound))
        if (bound := _number(schema, "exclusiveMaximum")) is not None:
            highs.append(math.ceil(bound) - 1)
        low = min(max(lows), _INT_MAX - 1)
        self._unset = low - 1
        self.spin_box = QSpinBox()
        self.spin_box.setRange(self._unset, max(low, min(highs)))
        self.spin_box.setSpecialValueText(NOT_SET)
        step = _number(schema, "multipleOf")
        if step is not None and float(step).is_integer() and step > 0:
            self.spin_box.setSingleStep(int(step))
        self.spin_box.setCorrectionMode(QAbstractSpinBox.CorrectionMode.CorrectToNearestValue)
        self._lay_out(self.spin_box, self._clear_button())
        self._watch(self.spin_box)
        self.spin_box.valueChanged.connect(self.edited)
        self.reset()

    def is_unset(self) -> bool:
        return self.spin_box.value() == self._unset

    def start_editing(self) -> None:
        # Typed digits would be appended to "not set" and refused; replace it instead.
        self.spin_box.lineEdit().selectAll()

    def value(self) -> Any:
        return ABSENT if self.is_unset() else self.spin_box.value()

    def set_value(self, value: Any) -> None:
        number = _number({"v": value}, "v")
        with QSignalBlocker(self.spin_box):
            self.spin_box.setValue(self._unset if number is None else int(number))


class NumberEditor(_UnsettableEditor):
    """A double spin box within the bounds; whole numbers are sent as JSON integers."""

    def __init__(self, schema: Mapping[str, Any], *, required: bool, item: bool = False) -> None:
        super().__init__(schema, required=required, item=item)
        keys = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
        decimals = _decimals([schema.get(k) for k in (*keys, "default")])
        tick = 10.0**-decimals
        lows, highs = [-_FLOAT_LIMIT], [_FLOAT_LIMIT]
        if (bound := _number(schema, "minimum")) is not None:
            lows.append(bound)
        if (bound := _number(schema, "exclusiveMinimum")) is not None:
            lows.append(bound + tick)
        if (bound := _number(schema, "maximum")) is not None:
            highs.append(bound)
        if (bound := _number(schema, "exclusiveMaximum")) is not None:
            highs.append(bound - tick)
        low = max(lows)
        self._unset = round(low - tick, decimals)
        self.spin_box = QDoubleSpinBox()
        self.spin_box.setDecimals(decimals)
        self.spin_box.setRange(self._unset, max(low, min(highs)))
        self.spin_box.setSpecialValueText(NOT_SET)
        step = _number(schema, "multipleOf")
        if step is not None and step > 0:
            self.spin_box.setSingleStep(float(step))
        self._lay_out(self.spin_box, self._clear_button())
        self._watch(self.spin_box)
        self.spin_box.valueChanged.connect(self.edited)
        self.reset()

    def is_unset(self) -> bool:
        return self.spin_box.value() <= self._unset

    def start_editing(self) -> None:
        self.spin_box.lineEdit().selectAll()

    def value(self) -> Any:
        if self.is_unset():
            return ABSENT
        number = self.spin_box.value()
        # A person who types 1200 means 1200, not 1200.0 (the template would show the ".0").
        return int(number) if number.is_integer() else number

    def set_value(self, value: Any) -> None:
        number = _number({"v": value}, "v")
        with QSignalBlocker(self.spin_box):
            self.spin_box.setValue(self._unset if number is None else float(number))


class DateEditor(_UnsettableEditor):
    """A date edit with a calendar; sends ``YYYY-MM-DD`` (``format: date``)."""

    def __init__(self, schema: Mapping[str, Any], *, required: bool, item: bool = False) -> None:
        super().__init__(schema, required=required, item=item)
        self.date_edit = QDateEdit()
        self.date_edit.setDisplayFormat("yyyy-MM-dd")
        self.date_edit.setCalendarPopup(True)
        self.date_edit.setMinimumDate(_UNSET_DATE)
        self.date_edit.setSpecialValueText(NOT_SET)
        self._lay_out(self.date_edit, self._clear_button())
        self._watch(self.date_edit)
        self.date_edit.dateChanged.connect(self.edited)
        self.reset()

    def is_unset(self) -> bool:
        return self.date_edit.date() == _UNSET_DATE

    def start_editing(self) -> None:
        # The calendar would open in 1900; today is where a test date usually is.
        self.date_edit.setDate(QDate.currentDate())

    def value(self) -> Any:
        return ABSENT if self.is_unset() else self.date_edit.date().toString("yyyy-MM-dd")

    def set_value(self, value: Any) -> None:
        date = QDate.fromString(value, Qt.DateFormat.ISODate) if isinstance(value, str) else None
        with QSignalBlocker(self.date_edit):
            self.date_edit.setDate(date if date is not None and date.isValid() else _UNSET_DATE)


class DateTimeEditor(_UnsettableEditor):
    """A date-time edit in UTC; sends ``YYYY-MM-DDTHH:MM:SSZ`` (``format: date-time``)."""

    def __init__(self, schema: Mapping[str, Any], *, required: bool, item: bool = False) -> None:
        super().__init__(schema, required=required, item=item)
        self._utc = QTimeZone.utc()
        self._unset_at = QDateTime(_UNSET_DATE, QTime(0, 0), self._utc)
        self.date_time_edit = QDateTimeEdit()
        self.date_time_edit.setTimeZone(self._utc)
        self.date_time_edit.setDisplayFormat("yyyy-MM-dd HH:mm:ss")
        self.date_time_edit.setCalendarPopup(True)
        self.date_time_edit.setMinimumDateTime(self._unset_at)
        self.date_time_edit.setSpecialValueText(NOT_SET)
        utc = QLabel("UTC")
        utc.setToolTip("Times are entered and sent in UTC")
        self._lay_out(self.date_time_edit, utc, self._clear_button())
        self._watch(self.date_time_edit)
        self.date_time_edit.dateTimeChanged.connect(self.edited)
        self.reset()

    def is_unset(self) -> bool:
        return self.date_time_edit.dateTime() == self._unset_at

    def start_editing(self) -> None:
        now = QDateTime.currentDateTimeUtc()
        self.date_time_edit.setDateTime(
            QDateTime(now.date(), QTime(now.time().hour(), 0), self._utc)
        )

    def value(self) -> Any:
        if self.is_unset():
            return ABSENT
        moment = self.date_time_edit.dateTime().toUTC()
        return f"{moment.date().toString('yyyy-MM-dd')}T{moment.time().toString('HH:mm:ss')}Z"

    def set_value(self, value: Any) -> None:
        moment = self._unset_at
        if isinstance(value, str):
            parsed = QDateTime.fromString(value, Qt.DateFormat.ISODate)
            if parsed.isValid():
                moment = parsed.toTimeZone(self._utc)
        with QSignalBlocker(self.date_time_edit):
            self.date_time_edit.setDateTime(moment)
