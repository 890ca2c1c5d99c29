"""The Test dialog's form holds still: fields stay where a person aims.

The travel desk's ``search_flights`` in a real dialog offscreen, typed into and clicked as a
person would.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QLineEdit, QWidget
from pytestqt.qtbot import QtBot

from tests.app.test_test_dialog import search_flights_dialog


def _top(widget: QWidget) -> int:
    window = widget.window()
    return widget.mapTo(window, QPoint(0, 0)).y()


def test_fields_below_do_not_move_while_a_missing_value_is_typed(
    qtbot: QtBot, example_path: Path, tmp_path: Path
) -> None:
    dialog = search_flights_dialog(qtbot, example_path, tmp_path)  # Reset: the name is missing
    name, age = dialog.form.field("passengers[0].name"), dialog.form.field("passengers[0].age")
    assert isinstance(name, QLineEdit)
    label = dialog.form.editor("passengers[0].name").problem_label
    qtbot.waitUntil(label.isVisible, timeout=5000)  # the item's row laid out again by Reset
    assert label.text() == "required argument is missing"
    aimed_at = _top(age)

    qtbot.mouseClick(name, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(name, "A")  # the message goes at the first key

    for _ in range(3):  # the layout the change asked for, as the next paint shows it
        QApplication.processEvents()
    assert dialog.form.editor("passengers[0].name").problem() == ""
    assert label.text() == ""
    assert _top(age) == aimed_at  # a click aimed at the field below still lands on it
    qtbot.mouseClick(age, Qt.MouseButton.LeftButton)
    focused = QApplication.focusWidget()
    assert focused is not None
    assert focused is age or age.isAncestorOf(focused)
    qtbot.waitUntil(lambda: not label.isVisible(), timeout=5000)  # the room goes once left
