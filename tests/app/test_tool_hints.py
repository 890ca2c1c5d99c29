"""The tool's MCP hints: each check box shows what a client goes by, and says when that is only
the protocol's default; a click cycles not stated → the other value → the default → not stated."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.document.tool_ref import ToolRef
from app.tool_editor.tool_fields import ToolFields
from schema_types.agent import Agent
from tests.app._tool_widgets import show_active


def _fields(qtbot: QtBot, annotations: dict[str, Any] | None) -> tuple[ToolFields, AgentDocument]:
    tool: dict[str, Any] = {"name": "t"}
    if annotations is not None:
        tool["annotations"] = annotations
    document = AgentDocument(Agent.model_validate({"metadata": {"tools": [tool]}}))
    fields = ToolFields(ToolRef(document, 0))
    show_active(qtbot, fields, 700, 200)
    return fields, document


def _shown(fields: ToolFields) -> dict[str, tuple[bool, str, bool]]:
    return {
        key: (check.isChecked(), check.text(), check.isTristate())
        for key, check in fields.hint_checks.items()
    }


def test_unstated_hints_show_the_protocols_defaults_and_say_so(qtbot: QtBot) -> None:
    fields, _ = _fields(qtbot, None)

    assert _shown(fields) == {
        "readOnlyHint": (False, "Read-only (default)", False),
        "destructiveHint": (True, "Destructive (default)", False),
        "idempotentHint": (False, "Idempotent (default)", False),
        "openWorldHint": (True, "Open world (default)", False),
    }
    assert all(check.font().italic() for check in fields.hint_checks.values())


def test_stated_hints_show_their_value_plainly(qtbot: QtBot) -> None:
    fields, _ = _fields(qtbot, {"readOnlyHint": False, "destructiveHint": False})

    shown = _shown(fields)
    assert shown["readOnlyHint"] == (False, "Read-only", False)
    assert shown["destructiveHint"] == (False, "Destructive", False)
    assert not fields.hint_checks["readOnlyHint"].font().italic()


def test_clicks_cycle_through_the_other_value_the_default_and_not_stated(qtbot: QtBot) -> None:
    fields, document = _fields(qtbot, None)
    check = fields.hint_checks["destructiveHint"]
    seen: list[tuple[Any, bool, str]] = []
    for _ in range(3):
        QTest.mouseClick(check, Qt.MouseButton.LeftButton)
        annotations = document.agent.tools[0].annotations
        seen.append((annotations, check.isChecked(), check.text()))

    assert seen == [
        ({"destructiveHint": False}, False, "Destructive"),
        ({"destructiveHint": True}, True, "Destructive"),
        (None, True, "Destructive (default)"),
    ]
    document.undo_stack.undo()
    assert document.agent.tools[0].annotations == {"destructiveHint": True}
    assert (check.isChecked(), check.text()) == (True, "Destructive")


def test_ticking_read_only_greys_out_destructive_and_idempotent(qtbot: QtBot) -> None:
    fields, document = _fields(qtbot, None)
    read_only = fields.hint_checks["readOnlyHint"]

    QTest.mouseClick(read_only, Qt.MouseButton.LeftButton)

    assert document.agent.tools[0].annotations == {"readOnlyHint": True}
    shown = _shown(fields)
    assert shown["readOnlyHint"] == (True, "Read-only", False)
    assert shown["destructiveHint"] == (False, "Destructive (not for read-only)", False)
    assert shown["idempotentHint"] == (False, "Idempotent (not for read-only)", False)
    assert not fields.hint_checks["destructiveHint"].isEnabled()
    assert shown["openWorldHint"] == (True, "Open world (default)", False)

    QTest.mouseClick(read_only, Qt.MouseButton.LeftButton)  # stated false: it writes again
    assert _shown(fields)["destructiveHint"] == (True, "Destructive (default)", False)
    assert fields.hint_checks["destructiveHint"].isEnabled()
