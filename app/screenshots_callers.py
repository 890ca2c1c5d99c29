"""The caller cases' pictures for ``python -m app.screenshots --only callers``: the Tests section
with a caller case in the case editor, at 1400×900 and 1024×700.

The cases are the richest tool's, added through the agent document as the Tests section adds
them, and taken back (undo) afterwards.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.screenshot_kit import Camera
    from app.window.main_window import MainWindow

__all__ = ["CALLER_CASES", "caller_views"]

CALLER_CASES: list[dict[str, Any]] = [
    {
        "name": "Grace on TP1353, words only",
        "ask": "Book Grace Hopper (grace@example.com) on TP1353 on 1 June, an aisle seat please.",
        "expect": {
            "arguments": {"flight": {"number": "TP1353", "date": "2026-06-01"}},
            "contains": ["TP1353"],
        },
    },
    {
        "name": "Just the time",
        "ask": "What time is it in Lisbon right now?",
        "expect": {"picks": "none"},
    },
    {
        "name": "Search before booking",
        "ask": "Find me a flight from London to Lisbon on 1 June.",
        "expect": {"picks": "search_flights", "arguments": {"destination": "LIS"}},
    },
]
"""Caller cases of the richest tool: one to book, one for no tool of ours, one for another."""


async def caller_views(window: MainWindow, camera: Camera) -> None:
    """The Tests section with the first caller case selected, at both sizes."""
    from app.document.test_cases import add_test_case
    from app.screenshot_kit import RICHEST_TOOL
    from app.tool_editor.editor import ToolEditor
    from schema_types.cases import TestCase

    document = window.current_document()
    assert document is not None
    tool = document.agent.metadata.tool(RICHEST_TOOL)
    assert tool is not None
    with document.macro("Caller cases for the screenshots"):
        for case in CALLER_CASES:
            add_test_case(document, tool.name, TestCase.model_validate(case))
    tool = document.agent.metadata.tool(RICHEST_TOOL)  # the edit made a new definition
    assert tool is not None
    editor = window.open_tool_tab(document, tool)
    assert isinstance(editor, ToolEditor)
    editor.sections.setCurrentWidget(editor.tests)
    panel = editor.tests
    for width, height in ((1400, 900), (1024, 700)):
        window.resize(width, height)
        panel.select_case(CALLER_CASES[0]["name"])
        await camera.shoot(window, f"caller-case-{width}.png")
    window.resize(1400, 900)
    editor.sections.setCurrentIndex(0)
    document.undo_stack.undo()
