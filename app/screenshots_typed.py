"""The typed-results pictures for ``python -m app.screenshots --only typed``: the tool editor's
Output section with an output schema built in it, what the preview says a call adds to the model
request for it, and a test run of the typed tool whose first answer does not fit (the schema
messages), repaired in one turn (the object as a tree), at 1400×900 and 1024×700.

The test run is a real run in the studio against the local scripted model of
``app/screenshots.py``, which answers a request that carries a ``response_format`` with
:func:`typed_model`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.screenshot_kit import Camera
    from app.window.main_window import MainWindow

__all__ = ["BOOKING_SCHEMA", "typed_model", "typed_views"]

BOOKING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reference": {"type": "string", "description": "The booking reference.", "minLength": 6},
        "flight": {"type": "string", "description": "Flight number, e.g. TP1351."},
        "seat": {"type": "string", "description": "The seat given."},
        "price": {
            "type": "object",
            "description": "What the ticket cost.",
            "properties": {
                "amount": {"type": "number", "minimum": 0},
                "currency": {"type": "string", "enum": ["EUR", "USD", "GBP"]},
            },
            "required": ["amount", "currency"],
        },
        "confirmation_sent": {"type": "boolean", "description": "Whether the email went out."},
    },
    "required": ["reference", "flight", "price", "confirmation_sent"],
}
"""The output schema the pictures give ``book_flight``."""

_WRONG = {"reference": "QX7R2M", "flight": "TP1351", "price": "EUR 214.60", "seat": "14A"}
_RIGHT = {
    "reference": "QX7R2M",
    "flight": "TP1351",
    "seat": "14A",
    "price": {"amount": 214.6, "currency": "EUR"},
    "confirmation_sent": True,
}


def typed_model(body: Any) -> Any:
    """The local model under a ``response_format``: look up the time first, then answer an
    object that misses a field and gives the price as text; told the schema messages (the
    repair turn), answer the object that fits."""
    from tests.fakes._script import text, tool_calls

    answered = any(
        m.get("role") == "assistant" and str(m.get("content") or "").startswith("{")
        for m in body.get("messages", [])
    )
    if answered:
        return text(json.dumps(_RIGHT, indent=1), chunks=6, usage=(1320, 64))
    if body.rounds_since_user == 0:
        call = ("call_1", "time__get_current_time", {"timezone": "Europe/Lisbon"})
        return tool_calls([call], usage=(980, 24))
    return text(json.dumps(_WRONG, indent=1), chunks=6, usage=(1105, 48))


async def typed_views(window: MainWindow, camera: Camera) -> None:
    """The Output section and the request additions, then a repaired typed test run, at both
    sizes (the schema is undone afterwards)."""
    from app.chat import ChatTab
    from app.screenshot_kit import RICHEST_TOOL, run_test_dialog, settle, wait_until
    from app.tool_editor.editor import ToolEditor

    document = window.current_document()
    assert document is not None
    tool = document.agent.metadata.tool(RICHEST_TOOL)
    assert tool is not None
    editor = window.open_tool_tab(document, tool)
    assert isinstance(editor, ToolEditor)
    window.resize(1400, 900)
    output = editor.output
    editor.sections.setCurrentWidget(output)
    await camera.shoot(window, "output-none.png")
    steps = document.undo_stack.index()
    output.add_schema()
    builder = output.builder
    builder.model.replace_parameters(BOOKING_SCHEMA, text="Build the booking's output schema")
    builder.tree.expandAll()
    builder.select(("properties", "price", "properties", "currency"))
    await camera.shoot(window, "output-tab.png")
    window.resize(1024, 700)
    await camera.shoot(window, "output-tab-1024.png")
    builder.side.setCurrentWidget(builder.json_view)
    await camera.shoot(window, "output-json-1024.png")
    builder.side.setCurrentWidget(builder.panel)
    window.resize(1400, 900)
    editor.sections.setCurrentWidget(editor.split)
    await settle()
    await camera.shoot(window, "output-request-additions.png")

    _document, tab = await run_test_dialog(window)
    assert isinstance(tab, ChatTab)
    await wait_until(lambda: tab.runner.caller_view is not None, "the caller's view")
    await camera.shoot(window, "typed-test-run.png")
    window.resize(1024, 700)
    await settle()
    tab.transcript.verticalScrollBar().setValue(tab.transcript.verticalScrollBar().maximum())
    await camera.shoot(window, "typed-test-run-1024.png")
    tab.caller_toggle.setChecked(True)
    await camera.shoot(window, "typed-caller-view-1024.png")
    tab.caller_toggle.setChecked(False)
    window.resize(1400, 900)
    window.remove_run_tab(tab)
    while document.undo_stack.index() > steps:
        document.undo_stack.undo()
    editor.sections.setCurrentIndex(0)
