"""The Agent page's MCP prompts setting: a check box bound to ``settings.toolsAsPrompts``,
undoable, saved into the agent file with its comments kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.pages.agent_page import AgentPage
from schema_types.files.agent_file import load_agent


@pytest.fixture
def page(qtbot: QtBot, example_path: Path) -> AgentPage:
    widget = AgentPage(AgentDocument.load(example_path))
    qtbot.addWidget(widget)
    widget.resize(1024, 700)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def _click(qtbot: QtBot, page: AgentPage) -> None:
    check = page.prompts_check
    qtbot.mouseClick(check, Qt.MouseButton.LeftButton, pos=check.rect().center())


def test_the_setting_is_off_for_an_agent_file_without_it(page: AgentPage) -> None:
    assert "toolsAsPrompts" not in page.document.agent.to_data()["settings"]
    assert not page.prompts_check.isChecked()
    assert page.prompts_check.isVisible() and page.prompts_hint.isVisible()
    assert "Anyone who connects can read both" in page.prompts_hint.text()


def test_a_click_turns_it_on_as_one_undo_step_and_undo_turns_it_off(
    qtbot: QtBot, page: AgentPage
) -> None:
    document = page.document
    steps = document.undo_stack.count()

    _click(qtbot, page)

    assert document.agent.settings.tools_as_prompts is True
    assert document.is_dirty()
    assert document.undo_stack.count() == steps + 1
    assert document.undo_stack.undoText() == "Edit tools as prompts"
    document.undo_stack.undo()
    assert document.agent.settings.tools_as_prompts is False
    assert not page.prompts_check.isChecked()
    document.undo_stack.redo()
    assert page.prompts_check.isChecked()


def test_two_clicks_are_two_undo_steps(qtbot: QtBot, page: AgentPage) -> None:
    document = page.document
    steps = document.undo_stack.count()

    _click(qtbot, page)
    _click(qtbot, page)

    assert document.agent.settings.tools_as_prompts is False
    assert document.undo_stack.count() == steps + 2
    document.undo_stack.undo()
    assert page.prompts_check.isChecked()


def test_a_change_made_elsewhere_shows_in_the_check_box(page: AgentPage) -> None:
    page.document.set_field(("settings", "tools_as_prompts"), True, text="prompts")
    assert page.prompts_check.isChecked()


def test_saving_writes_the_setting_beside_the_others_and_keeps_the_comments(
    qtbot: QtBot, page: AgentPage, example_path: Path
) -> None:
    before = example_path.read_text(encoding="utf-8")
    comments = [line for line in before.splitlines() if line.lstrip().startswith("#")]

    _click(qtbot, page)
    page.document.save()

    after = example_path.read_text(encoding="utf-8")
    assert load_agent(example_path).settings.tools_as_prompts is True
    assert "  toolPermission: tool\n  toolsAsPrompts: true\n" in after
    assert [line for line in after.splitlines() if line.lstrip().startswith("#")] == comments
    assert after.replace("  toolsAsPrompts: true\n", "") == before
