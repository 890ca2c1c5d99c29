"""Edit ▸ Preferences keeps the price table (``prices.yaml`` in the data folder) as typed: OK
writes it when it reads, and a price the table cannot read is shown with what to fix, the dialog
stays open and the file is left as it was; ``metaagent test`` and the matrix read what was
written."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QDialogButtonBox
from pytestqt.qtbot import QtBot

from app.window.preferences import PreferencesDialog
from mcp_export.costs.prices import PRICES_FILE, load_prices
from schema_types.prices import ModelPrice
from tests.app._windows import studio_window
from tests.app.test_preferences import open_preferences, press

GOOD = "# hosted\nopenai:gpt-4.1-mini: {input: 0.4, output: 1.6}\n"


def _type(qtbot: QtBot, dialog: PreferencesDialog, text: str) -> None:
    box = dialog.prices.text_edit
    box.selectAll()
    box.setFocus()
    QTest.keyClick(box, Qt.Key.Key_Delete)
    box.insertPlainText(text)


def test_ok_writes_the_price_table_as_typed(qtbot: QtBot, metaagent_home: Path) -> None:
    window = studio_window(qtbot)
    dialog = open_preferences(qtbot, window)
    _type(qtbot, dialog, GOOD)
    press(dialog, QDialogButtonBox.StandardButton.Ok)

    assert not dialog.isVisible()
    assert (metaagent_home / PRICES_FILE).read_text(encoding="utf-8") == GOOD
    assert load_prices(metaagent_home / PRICES_FILE) == {
        "openai:gpt-4.1-mini": ModelPrice(input=0.4, output=1.6)
    }
    again = open_preferences(qtbot, window)
    assert again.prices.text_edit.toPlainText() == GOOD
    window.close()


def test_a_price_that_does_not_read_keeps_the_dialog_open_and_the_file(
    qtbot: QtBot, metaagent_home: Path
) -> None:
    (metaagent_home / PRICES_FILE).write_text(GOOD, encoding="utf-8")
    window = studio_window(qtbot)
    dialog = open_preferences(qtbot, window)
    _type(qtbot, dialog, "openai:gpt-4.1-mini: {input: cheap, output: 1.6}\n")
    press(dialog, QDialogButtonBox.StandardButton.Ok)

    assert dialog.isVisible()
    problem = dialog.prices.problem
    assert problem.isVisible()
    assert "has a bad entry for openai:gpt-4.1-mini: input: Input should be a valid number" in (
        problem.text()
    )
    assert (metaagent_home / PRICES_FILE).read_text(encoding="utf-8") == GOOD
    press(dialog, QDialogButtonBox.StandardButton.Cancel)
    window.close()
