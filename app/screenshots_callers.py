"""The caller cases' pictures for ``python -m app.screenshots --only callers``: the Tests section
with a caller case in the case editor, and the results matrix with two caller models' columns
beside the served model's (a failed caller cell selected, then its transcripts), at 1400×900
and 1024×700.

The cases are the richest tool's, added through the agent document as the Tests section adds
them, and taken back (undo) afterwards. The run is real: the served calls go to the studio's
local scripted model, the caller requests to a second local scripted model that answers as two
callers, a careful one and a hasty one (``tests/fakes/_script.py``'s caller).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.document.agent_document import AgentDocument
    from app.screenshot_kit import Camera
    from app.window.main_window import MainWindow

__all__ = ["CALLER_CASES", "caller_views"]

CALLER_CASES: list[dict[str, Any]] = [
    {
        "name": "Grace on TP1351, words only",
        "ask": "Book Grace Hopper (grace@example.com) on flight TP1351 on 1 June, window seat.",
        "expect": {
            "arguments": {"flight": {"number": "TP1351", "date": "2026-06-01"}},
            "contains": ["TP1351"],
        },
    },
    {
        "name": "Just the time",
        "ask": "What time is it in Lisbon right now?",
        "expect": {"picks": "none"},
    },
    {
        "name": "No details given",
        "ask": "Book me a flight, please.",
    },
    {
        "name": "Search before booking",
        "ask": "Find me a flight from London to Lisbon on 1 June.",
        "expect": {"picks": "search_flights", "arguments": {"destination": "LIS"}},
    },
]
"""Caller cases of the richest tool: one to book, one for no tool of ours, one without what a
booking needs, one for another of the agent's tools."""

CAREFUL, HASTY = "vllm:careful-caller", "vllm:hasty-caller"
"""The caller models of the matrix's run."""
_GRACE = {
    "traveller": {"name": "Grace Hopper", "email": "grace@example.com"},
    "flight": {"number": "TP1351", "date": "2026-06-01"},
}


def caller_model(body: Any) -> Any:
    """The callers: the careful one books with what the request says (and nothing when it says
    too little) and leaves the time alone; the hasty one searches instead of booking."""
    from tests.fakes._script import text, tool_calls

    ask = body.last_user_text
    if "time" in ask:
        return text("It is 09:41 in Lisbon.", usage=(1210, 9))
    if body.get("model") == "hasty-caller":
        found = {"origin": "LHR", "destination": "LIS", "departure_date": "2026-06-01"}
        return tool_calls([("call_1", "search_flights", found)], usage=(1210, 31))
    arguments = _GRACE if "Grace" in ask else {}
    return tool_calls([("call_1", "book_flight", arguments)], usage=(1210, 44))


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
    await _matrix_views(window, camera, document, tool.name)
    document.undo_stack.undo()


async def _matrix_views(
    window: MainWindow, camera: Camera, document: AgentDocument, tool_name: str
) -> None:
    """Three caller cases and an ordinary one, twice each, on the agent's model and two callers."""
    from app.document.test_cases import add_test_case
    from app.screenshot_kit import tests_panel_cases, wait_until
    from app.test_cases.matrix_tab import MatrixTab
    from app.test_cases.transcript import TranscriptDialog
    from schema_types.arguments import sample_arguments
    from schema_types.cases import TestCase
    from tests.fakes.openai_server import FakeOpenAIServer

    tool = document.agent.metadata.tool(tool_name)
    assert tool is not None
    ordinary = tests_panel_cases(sample_arguments(tool.parameters))[1]
    with FakeOpenAIServer(responder=caller_model) as server:
        with document.macro("Caller models for the screenshots"):
            document.set_field(
                ("providers", "vllm"),
                {"VLLM_BASE_URL": server.base_url},
                text="Add the callers' endpoint",
            )
            add_test_case(document, tool_name, TestCase.model_validate(ordinary))
        chosen = [ordinary["name"], *(case["name"] for case in CALLER_CASES[:3])]
        own = document.agent.settings.model or ""
        tab = window.open_matrix_tab(document, [(tool_name, name) for name in chosen], [own])
        assert isinstance(tab, MatrixTab)
        tab.stop()  # the first run asks the agent's own model as the caller: not this one
        await wait_until(lambda: not tab.busy, "the first run to stop")
        tab.caller_picker.set_checked([CAREFUL, HASTY])
        tab.repeat.setValue(2)
        tab.last_end = None
        tab.run()
        await wait_until(lambda: tab.last_end is not None and not tab.busy, "the callers' run", 120)
        window.resize(1400, 900)
        tab.select_cells([(tool_name, CALLER_CASES[2]["name"], CAREFUL)])
        await camera.shoot(window, "caller-matrix-1400.png")
        window.resize(1024, 700)
        await camera.shoot(window, "caller-matrix-1024.png")
        tab.select_cells([(tool_name, CALLER_CASES[0]["name"], HASTY)])
        dialog = tab.open_transcript()
        assert isinstance(dialog, TranscriptDialog)
        await camera.shoot(dialog, "caller-transcript.png")
        dialog.close()
        window.resize(1400, 900)
        window.remove_run_tab(tab)
    document.undo_stack.undo()
