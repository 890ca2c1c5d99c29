"""A key the system keyring refuses on the Model page: the reason and the way out are shown under
the key field, whole, and said once (the status bar cuts so long a line at the window's edge)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.errors import reporter
from app.pages.model_page import ModelPage
from tests.app._tool_widgets import show_active

SECRET = "sk-test-0123456789abcdefghijklmnop"


@pytest.mark.usefixtures("no_keyring")
def test_a_refused_key_is_explained_under_its_field_once(qtbot: QtBot, example_path: Path) -> None:
    document = AgentDocument.load(example_path)
    page = ModelPage(document)
    show_active(qtbot, page, 740, 640)  # the page's room in a 1024x700 window
    field = page.key_field

    field.edit.setFocus()
    qtbot.keyClicks(field.edit, SECRET)
    assert field.edit.hasFocus()
    # A click moves the focus to the button as it is pressed, then the button is clicked.
    field.store_button.setFocus(Qt.FocusReason.MouseFocusReason)
    qtbot.mouseClick(field.store_button, Qt.MouseButton.LeftButton)
    page.model_combo.setFocus()  # the person moves on: leaving the field
    qtbot.wait(20)

    shown = field.status.text() if field.status.isVisible() else ""
    assert "could not be stored in the system keyring" in shown
    assert "type env://OPENAI_API_KEY" in shown
    assert field.status.wordWrap()
    assert field.status.width() <= page.width()
    assert SECRET not in shown
    errors = [r for r in reporter().history if "system keyring" in r.message]
    assert len(errors) == 1, [r.message for r in errors]
    assert document.agent.providers["openai"]["OPENAI_API_KEY"] == "env://OPENAI_API_KEY"
