"""*Grow cases…* in the tool editor's Tests tab, by what a person sees: the proposals under their
sources, ticking two and pressing Add puts two cases in the table as one undo step, a served
call of the tool (real SQLite History, ``FakeOpenAIServer``) is offered with its answer, and
the authoring model's requests in words join the list (the scripted model server plays it)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import mcp_types as types
from mcp import Client
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidgetItem
from pytestqt.qtbot import QtBot

from app.authoring.grow_dialog import GrowDialog
from app.document.agent_document import AgentDocument
from app.tool_editor.tests_panel import TestsPanel
from mcp_export.history.store import HistoryStore
from mcp_export.server.agent_server import AgentServer, load_served_agents
from tests.app.test_tests_panel import click, open_editor, show_tests
from tests.fakes._script import text
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

WAIT_MS = 10_000
CASES = [{"name": "oslo", "arguments": {"destination": "Oslo"}}]


def _child(group: QTreeWidgetItem, row: int) -> QTreeWidgetItem:
    item = group.child(row)
    assert item is not None
    return item


def _groups(dialog: GrowDialog) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for i in range(dialog.tree.topLevelItemCount()):
        group = dialog.tree.topLevelItem(i)
        assert isinstance(group, QTreeWidgetItem)
        out[group.text(0)] = [_child(group, j).text(0) for j in range(group.childCount())]
    return out


def _open(qtbot: QtBot, document: AgentDocument, store: HistoryStore | None) -> GrowDialog:
    editor = open_editor(qtbot, document, store)
    panel = show_tests(qtbot, editor)
    click(qtbot, panel.grow_button)
    dialog = panel.grow_dialog
    qtbot.waitUntil(dialog.isVisible, timeout=WAIT_MS)
    return dialog


def test_ticking_two_and_adding_puts_two_cases_in_the_table_and_one_undo_removes_both(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = write_agent(
        tmp_path / "a.agent.yaml", tools=[book_tool("first"), book_tool(tests=CASES)]
    )
    document = AgentDocument.load(path)
    dialog = _open(qtbot, document, None)
    panel = dialog.parent()
    assert isinstance(panel, TestsPanel)

    groups = _groups(dialog)
    assert list(groups) == ["From the schema"]
    assert groups["From the schema"] == [
        "passengers absent",
        "passengers present",
        "passengers past minimum",  # on the minimum calls as the absent one (its default)
    ]
    assert not dialog.add_button.isEnabled() and dialog.add_button.text() == "Add 0 cases"
    dialog.set_ticked("passengers past minimum")
    dialog.set_ticked("passengers present")
    assert dialog.add_button.text() == "Add 2 cases"
    steps = document.undo_stack.count()
    click(qtbot, dialog.add_button)

    assert [c.name for c in document.agent.tools[1].tests] == [
        "oslo",
        "passengers present",
        "passengers past minimum",
    ]
    assert document.agent.tools[1].tests[2].expect.is_error is True
    assert panel.model.rowCount() == 3
    assert document.undo_stack.count() == steps + 1
    assert document.undo_stack.undoText() == "Add 2 grown cases of book_flight"
    document.undo_stack.undo()
    assert [c.name for c in document.agent.tools[1].tests] == ["oslo"]
    assert panel.model.rowCount() == 1


async def _serve(path: Path) -> None:
    async with (
        AgentServer(load_served_agents([path])) as served,
        Client(served.server, client_info=types.Implementation(name="desk", version="1")) as c,
    ):
        await c.call_tool("book_flight", {"destination": "Rome", "passengers": 3})


def test_a_served_call_is_offered_with_its_answer(qtbot: QtBot, tmp_path: Path) -> None:
    with FakeOpenAIServer([text("Booked Rome, seat 12C.")]) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml",
            base_url=model.base_url,
            tools=[book_tool("first"), book_tool(tests=CASES)],
        )
        asyncio.run(_serve(path))
    with HistoryStore() as store:
        dialog = _open(qtbot, AgentDocument.load(path), store)
        served = _groups(dialog)["From History (served calls)"]
        assert len(served) == 1 and served[0].startswith("served ")
        group = dialog.tree.topLevelItem(1)
        assert group is not None
        item = _child(group, 0)
        assert item.text(1) == '{"destination": "Rome", "passengers": 3}'
        dialog.tree.setCurrentItem(item)
        assert dialog.detail.toPlainText() == "Served answer:\nBooked Rome, seat 12C."
        dialog.reject()


REQUESTS = {"paraphrases": ["Fly me to Rome on Friday"], "decoys": ["Email my boss"]}


def test_requests_in_words_from_the_authoring_model_join_the_list(
    qtbot: QtBot, tmp_path: Path, qasync_loop: asyncio.AbstractEventLoop
) -> None:
    with FakeOpenAIServer([text(json.dumps(REQUESTS))]) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml",
            base_url=model.base_url,
            tools=[book_tool("first"), book_tool()],
        )
        dialog = _open(qtbot, AgentDocument.load(path), None)
        assert dialog.ask_button.isVisible()
        click(qtbot, dialog.ask_button)
        qtbot.waitUntil(lambda: "Requests in words" in _groups(dialog), timeout=WAIT_MS)

    assert _groups(dialog)["Requests in words"] == [
        "asks: Fly me to Rome on Friday",
        "not for us: Email my boss",
    ]
    assert dialog.status.text() == "The authoring model proposed 2 request(s) in words."
    dialog.set_ticked("not for us: Email my boss")
    assert dialog.chosen()[0].case.expect.picks == "none"
    schema = dialog.tree.topLevelItem(0)
    assert schema is not None
    assert _child(schema, 0).checkState(0) == Qt.CheckState.Unchecked
