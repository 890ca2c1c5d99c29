"""A tool whose output schema needs fixing is marked in the outline and the tools list and named
when its agent opens, like one whose parameters do; fixing it in the Output section clears it."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.document.qt_models import OutlineModel, ToolsListModel
from app.document.schema_health import tool_schema_health
from app.icons import icon
from tests.app._windows import studio_window
from tests.fakes.mcp_clients import write_agent

BAD_OUTPUT = {
    "type": "object",
    "properties": {"score": {"type": "integer", "minimum": 10, "maximum": 1}},
}
PRICE = {"name": "price", "prompt": "Price it.", "outputSchema": BAD_OUTPUT}
SOUND = {"name": "greet", "prompt": "Hello."}
MAXIMUM = ("metadata", "tools", 0, "output_schema", "properties", "score", "maximum")


def test_an_unsound_output_schema_marks_its_tool_until_fixed(qtbot: QtBot, tmp_path: Path) -> None:
    document = AgentDocument.load(write_agent(tmp_path / "a.agent.yaml", tools=[PRICE, SOUND]))
    outline, tools_list = OutlineModel(), ToolsListModel(document)
    outline.add_document(document)
    first = outline.index_for(document, "tool", document.agent.tools[0])
    health = tool_schema_health(document)

    with qtbot.waitSignals([outline.dataChanged, tools_list.dataChanged], timeout=10_000):
        pass  # the check runs from the event loop and the views hear of its outcome
    assert [t.name for t in health.unsound_tools()] == ["price"]
    assert health.problems(document.agent.tools[0]) == ()  # its parameters are sound
    decoration = outline.data(first, Qt.ItemDataRole.DecorationRole)
    assert decoration.cacheKey() == icon("warning").cacheKey()
    tip = outline.data(first, Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("⚠ The output schema needs fixing before the agent can be served — ")
    assert "properties.score.minimum" in tip
    assert tools_list.data(tools_list.index(0, 0), Qt.ItemDataRole.ToolTipRole) == tip

    with qtbot.waitSignal(health.changed, timeout=10_000):
        document.set_field(MAXIMUM, 100, text="Edit maximum")
    assert health.unsound_tools() == []
    decoration = outline.data(first, Qt.ItemDataRole.DecorationRole)
    assert decoration.cacheKey() == icon("tool").cacheKey()


def test_an_agent_with_an_unsound_output_schema_opens_and_says_what_to_fix(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = write_agent(tmp_path / "a.agent.yaml", tools=[PRICE, SOUND])
    window = studio_window(qtbot)

    document = window.open_file(path)

    assert document is not None and document.agent.tools[0].output_schema == BAD_OUTPUT
    status = window.statusBar().currentMessage
    qtbot.waitUntil(lambda: "need fixing" in status(), timeout=10_000)
    assert status() == (
        "⚠ a.agent.yaml: the output schemas of price need fixing before the agent can be "
        "served — open the tool to see where"
    )
    report = window._last_report
    assert report is not None
    assert report.detail.startswith("metadata.tools[0].outputSchema.properties.score.minimum: ")
