"""The case editor's Max cost: typed in US dollars, one undo step per typing run, a wrong amount
stays in its field with what to type and the agent keeps the last valid one. Real widgets
offscreen, typed into with key clicks.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.errors import reporter
from tests.app.test_tests_panel import agent_file, cases_of, open_editor, show_tests, type_into


def test_max_cost_is_typed_in_dollars_and_a_wrong_amount_is_not_saved(
    qtbot: QtBot, tmp_path: Path
) -> None:
    document = AgentDocument.load(agent_file(tmp_path))
    panel = show_tests(qtbot, open_editor(qtbot, document))
    cost = panel.editor.fields["max_cost"]
    assert cost.widget.property("text") == ""  # off
    steps = document.undo_stack.index()

    type_into(qtbot, cost.widget, "$0.002")
    assert cases_of(document)[0].expect.max_cost == 0.002
    assert document.undo_stack.index() == steps + 1

    type_into(qtbot, cost.widget, "x")
    assert cost.problem.isVisible()
    assert cost.problem.text() == (
        "Not saved: not an amount of US dollars: '$0.002x' (type e.g. 0.002)"
    )
    assert cases_of(document)[0].expect.max_cost == 0.002  # the last valid one
    cost.widget.setFocus(Qt.FocusReason.MouseFocusReason)
    qtbot.keyClick(cost.widget, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(cost.widget, "-1")
    assert cost.problem.text() == "Not saved: a cost is 0 or more US dollars, not '-1'"
    qtbot.keyClick(cost.widget, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(cost.widget, Qt.Key.Key_Delete)
    assert not cost.problem.isVisible()
    assert cases_of(document)[0].expect.max_cost is None

    document.set_field(
        ("metadata", "tools", 1, "tests", 0, "expect", "max_cost"), 0.5, text="From elsewhere"
    )
    assert cases_of(document)[0].expect.max_cost == 0.5
    qtbot.waitUntil(lambda: cost.widget.property("text") == "0.5", timeout=5000)
    assert reporter().history == []
