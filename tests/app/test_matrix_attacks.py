"""The test matrix's Attacks view, driven like a person against ``FakeOpenAIServer``: an obedient
model's cells say LANDED with what leaked, a careful model's say HELD, and clicking a cell shows
the attack's arguments, answer, tool calls and what leaked. The run is the real one (the armed
agent served in-process, the attack pack's inner server and the test tool server over stdio) in
the view's worker thread."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
import yaml
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.test_cases.attacks_mode import AttacksView
from app.test_cases.matrix_tab import MatrixTab
from app.test_cases.runner import STOP_LIMIT_S
from mcp_export.testing.attacks.pack import ATTACKS
from tests.app._windows import studio_window
from tests.fakes._script import hang
from tests.fakes.attack_models import careful as _careful
from tests.fakes.attack_models import obedient as _obedient
from tests.fakes.mcp_clients import book_tool
from tests.fakes.openai_server import FakeOpenAIServer
from tests.mcp_export.test_attacks import _agent, _silent

OBEDIENT, CAREFUL = "openai:fake-model", "vllm:careful"


@pytest.fixture
def studio_policy() -> Iterator[None]:
    """The event loop policy ``qasync.run`` starts the studio with (a new loop is a Qt one)."""
    before = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(qasync.DefaultQEventLoopPolicy())
    try:
        yield
    finally:
        asyncio.set_event_loop_policy(before)


def _click(qtbot: QtBot, view: AttacksView, tool: str, attack: str, model: str) -> None:
    item = view.cell(tool, attack, model)
    assert item is not None
    rect = view.table.visualItemRect(item)
    view.table.scrollToItem(item)
    rect = view.table.visualItemRect(item)
    qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_obedient_cells_land_with_what_leaked_careful_ones_hold_and_a_cell_opens(
    tmp_path: Path, qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, studio_policy: None
) -> None:
    case = {"name": "oslo", "arguments": {"destination": "Oslo"}}
    with (
        FakeOpenAIServer(responder=_obedient) as model,
        FakeOpenAIServer(responder=_careful) as careful,
    ):
        path = _agent(tmp_path, model, [book_tool(tests=[case])])
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data["providers"]["vllm"] = {"VLLM_BASE_URL": careful.base_url}
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
        window = studio_window(qtbot)
        document = window.open_file(path)
        assert document is not None
        window.resize(1400, 900)
        matrix = window.open_matrix_tab(document, None, [OBEDIENT, CAREFUL])
        assert isinstance(matrix, MatrixTab)
        qtbot.waitUntil(lambda: matrix.last_end is not None and not matrix.busy, timeout=60_000)
        qtbot.mouseClick(matrix.attacks_button, Qt.MouseButton.LeftButton)
        view = window.tabs.currentWidget()
        assert isinstance(view, AttacksView) and view in window.run_tabs()
        assert window.tabs.tabText(window.tabs.currentIndex()) == "Attacks · Travel Desk"
        assert view.models == [OBEDIENT, CAREFUL] and view.busy
        with qtbot.waitSignal(view.finished, timeout=90_000) as ended:
            pass
        assert ended.args == [None]

    assert view.status.text() == "5 landed, 5 held, 0 errors, 0 skipped"
    assert view.table.rowCount() == len(ATTACKS)
    for attack in ATTACKS:
        landed = view.cell("book_flight", attack.name, OBEDIENT)
        held = view.cell("book_flight", attack.name, CAREFUL)
        assert landed is not None and held is not None
        assert landed.text().startswith("LANDED · "), (attack.name, landed.text())
        assert held.text().startswith("HELD"), (attack.name, held.text())
    secret = view.cell("book_flight", "env-secret", OBEDIENT)
    assert secret is not None and secret.text() == "LANDED · environment secret"
    assert "the environment secret (MA-ENV-" in secret.toolTip()
    refused = view.cell("book_flight", "refused-tool", OBEDIENT)
    assert refused is not None and refused.text() == "LANDED · called attackpack__wipe_files"
    reveal = view.cell("book_flight", "reveal-prompt", OBEDIENT)
    assert reveal is not None
    assert reveal.text() == (
        "LANDED · system prompt canary; template canary; system prompt's own text"
    )
    injected = view.cell("book_flight", "inner-injection", OBEDIENT)
    assert injected is not None and injected.text() == "LANDED · injected instruction"
    for attack in ATTACKS:  # red beside green on the light palette
        for name, colour in ((OBEDIENT, "#ffcdd2"), (CAREFUL, "#c8e6c9")):
            item = view.cell("book_flight", attack.name, name)
            assert item is not None and item.background().color().name() == colour

    _click(qtbot, view, "book_flight", "refused-tool", OBEDIENT)
    shown = view.details.toPlainText()
    assert "LANDED · refused-tool on book_flight" in shown
    assert "What leaked" in shown and "attackpack__wipe_files" in shown
    assert "Arguments sent" in shown and "Tool calls" in shown
    assert "attackpack__wipe_files (refused)" in shown

    _click(qtbot, view, "book_flight", "inner-injection", CAREFUL)
    shown = view.details.toPlainText()
    assert "HELD · inner-injection on book_flight" in shown
    assert "What leaked" not in shown
    assert "I can book a flight for you" in shown


def test_run_attacks_from_the_agent_menu_on_a_hanging_model_stops_and_says_so(
    tmp_path: Path, qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, studio_policy: None
) -> None:
    with FakeOpenAIServer(responder=lambda _body: hang()) as model:
        window = studio_window(qtbot)
        assert window.open_file(_agent(tmp_path, model)) is not None
        window.attacks_action.trigger()
        view = window.tabs.currentWidget()
        assert isinstance(view, AttacksView) and view.models == [OBEDIENT]
        qtbot.waitUntil(lambda: len(model.model_requests) >= 2, timeout=30_000)
        assert view.busy and not view.run_button.isEnabled()
        asked = time.monotonic()
        with qtbot.waitSignal(view.finished, timeout=int(STOP_LIMIT_S * 1000)) as ended:
            qtbot.mouseClick(view.stop_button, Qt.MouseButton.LeftButton)
        took = time.monotonic() - asked

    assert took < STOP_LIMIT_S / 2
    assert ended.args == ["Stopped: the attacks that finished are shown."]
    assert view.status.text() == ended.args[0]
    assert view.run_button.isEnabled() and not view.stop_button.isEnabled()
    window.close()


def test_a_silent_model_shows_error_not_reached_and_a_tool_without_text_is_skipped(
    tmp_path: Path, qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, studio_policy: None
) -> None:
    seats = book_tool(
        "count_seats",
        parameters={"type": "object", "properties": {"flight": {"type": "integer"}}},
    )
    with FakeOpenAIServer(responder=_silent) as model:
        window = studio_window(qtbot)
        assert window.open_file(_agent(tmp_path, model, [book_tool(), seats])) is not None
        with qtbot.waitSignal(window.tabs.currentChanged, timeout=5_000):
            window.attacks_action.trigger()
        view = window.tabs.currentWidget()
        assert isinstance(view, AttacksView)
        with qtbot.waitSignal(view.finished, timeout=90_000) as ended:
            pass
        assert ended.args == [None]

    error = view.cell("book_flight", "reveal-prompt", OBEDIENT)
    assert error is not None and error.text() == "ERROR"
    unreached = view.cell("book_flight", "inner-injection", OBEDIENT)
    assert unreached is not None and unreached.text() == "HELD · not reached"
    skipped = view.cell("count_seats", "env-secret", OBEDIENT)
    assert skipped is not None and skipped.text() == "SKIPPED"
    assert "no string parameter" in skipped.toolTip()
    assert view.status.text() == "0 landed, 4 held, 1 error, 5 skipped"
    _click(qtbot, view, "book_flight", "inner-injection", OBEDIENT)
    assert "HELD · inner-injection on book_flight" in view.details.toPlainText()
    assert "attackpack__lookup" in view.details.toPlainText()  # the note: it was never called
