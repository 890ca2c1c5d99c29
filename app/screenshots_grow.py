"""The *Grow cases…* picture for ``python -m app.screenshots --only grow``: the dialog of the
richest tool at 1024×700, with the schema's proposals and the authoring model's requests in
words listed, two ticked and one selected (its arguments below the list).

The requests come from a local scripted model (``FakeOpenAIServer``) set as the authoring model
through a ``vllm`` endpoint added to the agent for the picture and taken back (undo) after.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.screenshot_kit import Camera
    from app.window.main_window import MainWindow

__all__ = ["grow_views"]

REQUESTS = {
    "paraphrases": [
        "Book Ada Lovelace on TP1351 to Lisbon on 1 June, aisle seat please",
        "Can you get me onto the morning flight to Lisbon next Monday?",
    ],
    "decoys": ["What is the weather in Lisbon on 1 June?", "Email my itinerary to my boss"],
}


def authoring_model(_body: Any) -> Any:
    """The authoring model of the picture: the same requests for every question."""
    from tests.fakes._script import text

    return text(json.dumps(REQUESTS), usage=(820, 96))


async def grow_views(window: MainWindow, camera: Camera) -> None:
    """The Grow dialog of the richest tool, at 1024×700."""
    from app.authoring.grow_dialog import GROUPS, open_grow_dialog
    from app.screenshot_kit import RICHEST_TOOL, wait_until
    from app.tool_editor.editor import ToolEditor
    from tests.fakes.openai_server import FakeOpenAIServer

    document = window.current_document()
    assert document is not None
    with FakeOpenAIServer(responder=authoring_model) as server:
        document.set_field(
            ("providers", "vllm"),
            {"VLLM_BASE_URL": server.base_url},
            text="Add the authoring model's endpoint",
        )
        tool = document.agent.metadata.tool(RICHEST_TOOL)
        assert tool is not None
        editor = window.open_tool_tab(document, tool)
        assert isinstance(editor, ToolEditor)
        editor.sections.setCurrentWidget(editor.tests)
        dialog = open_grow_dialog(
            editor.tests, document, tool, None, lambda _names: None, chosen_model="vllm:author"
        )
        dialog.resize(1024, 700)
        dialog.ask_for_requests()
        await wait_until(lambda: GROUPS["requests"] in _groups(dialog), "the requests in words")
        proposals = dialog.proposals()
        for proposal in (proposals[1], next(p for p in proposals if p.kind == "decoy")):
            dialog.set_ticked(proposal.case.name)
        dialog.show_proposal(proposals[1].case.name)
        await camera.shoot(dialog, "grow-dialog-1024.png")
        dialog.reject()
        editor.sections.setCurrentIndex(0)
        document.undo_stack.undo()


def _groups(dialog: Any) -> list[str]:
    tree = dialog.tree
    return [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())]
