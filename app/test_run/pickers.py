# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""Inputs for numbers and dates that keep exactly what a person types.

Qt's spin boxes and date edits hold a value within a range and bend what is typed to fit it
(``99`` where the maximum is 14 loses its second digit, ``1.2345`` becomes ``1.23``, the 31st
of a month turned into February becomes the 28th). These inputs hold text instead: what is typed
stays as typed and is sent as the number or string it spells, and the form's validation says what
is wrong with it (out of range, not a multiple, not a date) under the field. Text that spells no
number is an input problem of the field. A value put into the form (remembered, examples) is shown
as text and sent back unchanged until the text is edited.

A caller may leave a number or a date out: an empty input is "not set", shown as those words in
grey, and the clear button beside the input empties it. The arrow keys, the arrow buttons and the
wheel (on the input being edited only: scrolling the form past one changes nothing) still step: a
number by its ``multipleOf`` (else 1), stopping at the bounds (a value typed out of range steps to
the nearest bound); a date by the year, month or day (hour, minute, second) under the cursor.
Stepping a "not set" input starts from a real value: the default or the allowed value nearest 0
for a number, today (this hour, in UTC) for a date; a date's calendar button opens on today too,
not on some date far off.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from copy import deepcopy
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, InvalidOperation
from typing import Any

from PySide6.QtCore import QDate, QDateTime, QSignalBlocker, QSize, Qt, QTime, QTimeZone
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QCalendarWidget,
    QMenu,
    QToolButton,
    QWidget,
    QWidgetAction,
)

from app.icons import icon
from app.test_run.fields import ABSENT, NOT_SET, FieldEditor
from schema_types.json_text import json_text

__all__ = ["DateEditor", "DateTimeEditor", "IntegerEditor", "NumberEditor", "StepBox"]

Stepper = Callable[[str, int, int], str | None]
"""``(text, steps, cursor position)`` → the text after stepping, or None where it cannot step."""

_Step = QAbstractSpinBox.StepEnabledFlag


class StepBox(QAbstractSpinBox):
    """A spin box whose text is its value: nothing typed is refused or corrected.

    Args:
        stepper: what the arrow keys, the wheel and the arrow buttons turn the text into.
        placeholder: the grey words shown while the text is empty.
    """

    def __init__(self, stepper: Stepper, placeholder: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._stepper = stepper
        self.lineEdit().setPlaceholderText(placeholder)
        self.setAccelerated(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # the wheel does not take focus

    def set_text(self, text: str) -> None:
        """Show ``text`` (emits the line edit's ``textChanged`` when it differs)."""
        self.lineEdit().setText(text)
        self.update()  # the arrow buttons' enabled state follows the text

    def stepEnabled(self) -> QAbstractSpinBox.StepEnabledFlag:
        text, cursor = self.text(), self.lineEdit().cursorPosition()
        enabled = _Step.StepNone
        if self._stepper(text, 1, cursor) is not None:
            enabled |= _Step.StepUpEnabled
        if self._stepper(text, -1, cursor) is not None:
            enabled |= _Step.StepDownEnabled
        return enabled

    def stepBy(self, steps: int) -> None:
        line = self.lineEdit()
        cursor = line.cursorPosition()
        text = self._stepper(self.text(), steps, cursor)
        if text is not None:
            self.set_text(text)
            line.setCursorPosition(min(cursor, len(text)))  # a date steps the same part again

    def wheelEvent(self, event: QWheelEvent) -> None:
        if self.hasFocus():
            super().wheelEvent(event)
        else:
            event.ignore()  # the form scrolls instead

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        words = self.lineEdit().placeholderText() + "  "
        return QSize(hint.width() + self.fontMetrics().horizontalAdvance(words), hint.height())


class _TextEditor(FieldEditor):
    """An argument typed as text in a :class:`StepBox`; empty is "not set" (absent)."""

    placeholder = NOT_SET

    def __init__(self, schema: Mapping[str, Any], *, required: bool, item: bool = False) -> None:
        super().__init__(schema, required=required, item=item)
        self.box = StepBox(self.stepped, self.placeholder)
        self._shown: tuple[str, Any] | None = None  # a value put in, and the text showing it

    def _finish(self, *extra: QWidget) -> None:
        """Lay out the box, ``extra`` and the clear button; start from the default."""
        self._lay_out(self.box, *extra, self._clear_button())
        self.box.lineEdit().textChanged.connect(self.edited)
        self.reset()

    def stepped(self, text: str, steps: int, cursor: int) -> str | None:
        """The text after ``steps`` steps, or None where it cannot step."""
        raise NotImplementedError

    def read(self, text: str) -> tuple[Any, str]:
        """The value ``text`` spells and ``""``, or ABSENT and what is wrong with the text."""
        raise NotImplementedError

    def show_text(self, value: Any) -> str:
        """The text showing ``value``."""
        return json.dumps(value, ensure_ascii=False, default=str)

    def _read_shown(self) -> tuple[Any, str]:
        text = self.box.text()
        if self._shown is not None and self._shown[0] == text:
            return deepcopy(self._shown[1]), ""
        return (ABSENT, "") if not text else self.read(text)

    def value(self) -> Any:
        return self._read_shown()[0]

    def input_problem(self) -> str:
        return self._read_shown()[1]

    def set_value(self, value: Any) -> None:
        text = "" if value is ABSENT else self.show_text(value)
        self._shown = None if value is ABSENT else (text, deepcopy(value))
        with QSignalBlocker(self.box.lineEdit()):
            self.box.set_text(text)

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
        self.box.set_text("")  # emits edited


# -- numbers ---------------------------------------------------------------------------------------

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_WHOLE = re.compile(r"[+-]?\d+")


def _number(schema: Mapping[str, Any], keyword: str) -> Decimal | None:
    value = schema.get(keyword)
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    return Decimal(repr(value)) if math.isfinite(value) else None


def _decimal_text(number: Decimal) -> str:
    return format(number, "f")


class _NumberEditor(_TextEditor):
    """A number typed as text; steps stop at the bounds."""

    whole = False

    def __init__(self, schema: Mapping[str, Any], *, required: bool, item: bool = False) -> None:
        super().__init__(schema, required=required, item=item)
        step = _number(schema, "multipleOf")
        if step is None or step <= 0 or (self.whole and step != step.to_integral_value()):
            step = Decimal(1)
        self._step = step
        # The lowest and highest values a step may reach: the bounds, for an exclusive bound the
        # nearest multiple of the step inside it, for an integer the nearest whole number.
        lows: list[Decimal] = []
        highs: list[Decimal] = []
        if (bound := _number(schema, "minimum")) is not None:
            lows.append(bound.to_integral_value(ROUND_CEILING) if self.whole else bound)
        if (bound := _number(schema, "exclusiveMinimum")) is not None:
            lows.append(((bound / step).to_integral_value(ROUND_FLOOR) + 1) * step)
        if (bound := _number(schema, "maximum")) is not None:
            highs.append(bound.to_integral_value(ROUND_FLOOR) if self.whole else bound)
        if (bound := _number(schema, "exclusiveMaximum")) is not None:
            highs.append(((bound / step).to_integral_value(ROUND_CEILING) - 1) * step)
        self.low = max(lows) if lows else None
        self.high = min(highs) if highs else None
        if self.low is not None and self.high is not None and self.low > self.high:
            self.low = self.high = None  # bounds nothing fits: stepping does not stop
        self._finish()

    def read(self, text: str) -> tuple[Any, str]:
        stripped = text.strip()
        if not _NUMBER.fullmatch(stripped):
            return ABSENT, f"{json_text(text)} is not a number"
        try:
            number: float = int(stripped) if _WHOLE.fullmatch(stripped) else float(stripped)
        except ValueError:  # more digits than Python converts
            return ABSENT, f"{json_text(text)} has too many digits"
        if not math.isfinite(number):
            return ABSENT, f"{json_text(text)} is too large a number"
        return number, ""

    def stepped(self, text: str, steps: int, cursor: int) -> str | None:
        if not text:
            return self._start()
        try:
            current = Decimal(text.strip()) if _NUMBER.fullmatch(text.strip()) else None
        except InvalidOperation:
            current = None
        if current is None:
            return None
        low, high = self.low, self.high
        if (steps > 0 and high is not None and current >= high) or (
            steps < 0 and low is not None and current <= low
        ):
            return None
        target = current + steps * self._step
        if high is not None:
            target = min(target, high)
        if low is not None:
            target = max(target, low)
        return _decimal_text(target)

    def _start(self) -> str:
        """Where stepping a "not set" input starts: the default, else the value nearest 0."""
        default = self.schema.get("default")
        if isinstance(default, int | float) and not isinstance(default, bool):
            return self.show_text(default)
        start = Decimal(0)
        if self.high is not None:
            start = min(start, self.high)
        if self.low is not None:
            start = max(start, self.low)
        return _decimal_text(start)


class IntegerEditor(_NumberEditor):
    """An integer typed as text; steps stop at ``minimum``/``maximum`` (exclusive bounds too)."""

    whole = True


class NumberEditor(_NumberEditor):
    """A number typed as text, with every decimal typed; ``1200`` is sent as the integer 1200."""


# -- dates -----------------------------------------------------------------------------------------

_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_DATE_TIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})([Tt ])(\d{2}):(\d{2}):(\d{2})")
_YEAR, _MONTH, _DAY, _HOUR, _MINUTE, _SECOND = range(6)
_SECONDS_IN = {_HOUR: 3600, _MINUTE: 60, _SECOND: 1}


class _DateTextEditor(_TextEditor):
    """A date typed as text, with a calendar to pick the day."""

    with_time = False

    def __init__(self, schema: Mapping[str, Any], *, required: bool, item: bool = False) -> None:
        super().__init__(schema, required=required, item=item)
        self.calendar = QCalendarWidget()
        self.calendar.setGridVisible(True)
        self.calendar_button = self._calendar_button()
        self._finish(self.calendar_button)

    def read(self, text: str) -> tuple[Any, str]:
        return text, ""  # as typed: validation says whether it is a date

    def show_text(self, value: Any) -> str:
        return value if isinstance(value, str) else super().show_text(value)

    def today(self) -> str:
        """The text a "not set" input steps to."""
        raise NotImplementedError

    def with_day(self, day: QDate) -> str:
        """The text with its day replaced by ``day`` (picked in the calendar)."""
        raise NotImplementedError

    def stepped(self, text: str, steps: int, cursor: int) -> str | None:
        if not text:
            return self.today()
        found = (_DATE_TIME if self.with_time else _DATE).match(text)
        if found is None or (not self.with_time and found.end() != len(text)):
            return None
        parts = [index for index, group in enumerate(found.groups(), 1) if group.isdigit()]
        numbers = [int(found.group(index)) for index in parts]
        day, time = QDate(*numbers[:3]), QTime(*numbers[3:]) if self.with_time else QTime(0, 0)
        if not day.isValid() or not time.isValid():
            return None
        # The part under the cursor: the last one that starts before it.
        starts = [found.start(index) for index in parts]
        part = max(index for index, start in enumerate(starts) if start <= cursor or index == 0)
        if part == _YEAR:
            day = day.addYears(steps)
        elif part == _MONTH:
            day = day.addMonths(steps)
        elif part == _DAY:
            day = day.addDays(steps)
        else:
            moment = QDateTime(day, time, QTimeZone.utc()).addSecs(steps * _SECONDS_IN[part])
            day, time = moment.date(), moment.time()
        if not 1 <= day.year() <= 9999:
            return None
        shown = day.toString("yyyy-MM-dd")
        if self.with_time:
            shown += found.group(4) + time.toString("HH:mm:ss")
        return shown + text[found.end() :]

    def _calendar_button(self) -> QToolButton:
        button = QToolButton()
        button.setArrowType(Qt.ArrowType.DownArrow)
        button.setAutoRaise(True)
        button.setToolTip("Pick the day in a calendar")
        button.setAccessibleName("Calendar")
        button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        button.setStyleSheet("QToolButton::menu-indicator { image: none; }")  # the arrow is one
        menu = QMenu(button)
        shown = QWidgetAction(menu)
        shown.setDefaultWidget(self.calendar)
        menu.addAction(shown)
        menu.aboutToShow.connect(self._on_calendar_opening)
        button.setMenu(menu)
        self.calendar.clicked.connect(self._on_day_picked)
        self.calendar.activated.connect(self._on_day_picked)
        return button

    def _on_calendar_opening(self) -> None:
        found = _DATE.match(self.box.text())
        day = QDate(*(int(group) for group in found.groups())) if found else QDate()
        self.calendar.setSelectedDate(day if day.isValid() else QDate.currentDate())

    def _on_day_picked(self, day: QDate) -> None:
        menu = self.calendar_button.menu()
        if menu is not None:
            menu.close()
        self.box.set_text(self.with_day(day))  # emits edited


class DateEditor(_DateTextEditor):
    """A date typed as ``YYYY-MM-DD`` (``format: date``), or picked in a calendar."""

    placeholder = f"{NOT_SET} (YYYY-MM-DD)"

    def today(self) -> str:
        return QDate.currentDate().toString("yyyy-MM-dd")

    def with_day(self, day: QDate) -> str:
        return day.toString("yyyy-MM-dd")


class DateTimeEditor(_DateTextEditor):
    """A moment typed as ``YYYY-MM-DDTHH:MM:SSZ`` (``format: date-time``, any offset)."""

    placeholder = f"{NOT_SET} (YYYY-MM-DDTHH:MM:SSZ)"
    with_time = True

    def today(self) -> str:
        now = QDateTime.currentDateTimeUtc()
        return f"{now.date().toString('yyyy-MM-dd')}T{now.time().hour():02d}:00:00Z"

    def with_day(self, day: QDate) -> str:
        text = self.box.text()
        if _DATE_TIME.match(text):
            return day.toString("yyyy-MM-dd") + text[10:]
        return day.toString("yyyy-MM-dd") + "T00:00:00Z"
