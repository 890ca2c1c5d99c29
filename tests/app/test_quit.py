"""Quitting the studio: every way out ends the process at once, cleanly, with nothing left behind.

The studio runs as a real process (``run_studio`` with the offscreen platform), opened on an
agent file from its command line, with a chat tab and a tool test tab both streaming a slow
answer from a local scripted model after a call to the agent's own tool server
(``mcp-server-time``). It is then quit by the Quit action, by closing the window and by SIGTERM:
the exit status is 0, nothing is written on stderr (no traceback), the process is gone within a
few seconds and so is every tool server it started. Unsaved changes are asked about first,
except on SIGTERM, which keeps them as a recovery copy. In process, Ctrl+Q reaches Quit from a
chat tab's input and from the window's dialogs (modal ones too), but waits for the answer
about unsaved changes. A tab closed before its run began starts no tool server for it.
"""

from __future__ import annotations

import asyncio
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from app.chat import ChatTab
from app.document.agent_document import AgentDocument
from app.window.dialogs import SaveAnswer
from app.window.main_window import MainWindow
from mcp_export.session.events import SessionFailed
from tests.app._windows import studio_window
from tests.app.conftest import KNOWN_QT_NOISE, REPO
from tests.fakes._script import Reply, RequestBody, text, tool_calls
from tests.fakes.mcp_clients import book_tool, time_server, write_agent
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.processes import alive, marked, new_mark, with_mark

START_LIMIT_S = 60.0  # the studio up, both runs past their tool call and streaming
QUIT_LIMIT_S = 6.0  # from the request to quit to the process gone
TIME_CALL = ("call_1", "time__get_current_time", {"timezone": "UTC"})

# Runs inside the studio's process: opens the tabs, starts both runs, waits until both stream
# their answer after the tool call, says so on stdout, then quits as asked (argv[2]).
DRIVER = """
import asyncio, json, os, re, sys, time
from PySide6.QtCore import qInstallMessageHandler
from app.studio import run_studio

agent, how, noise = sys.argv[1], sys.argv[2], [re.compile(p) for p in json.loads(sys.argv[3])]

def on_message(_kind, _context, message):
    if not any(p.search(message) for p in noise):  # the offscreen platform's own remarks
        print(message, file=sys.stderr, flush=True)

qInstallMessageHandler(on_message)

async def wait_until(predicate, what):
    deadline = time.monotonic() + 60
    while not predicate():
        if time.monotonic() > deadline:
            print(f"driver: gave up waiting for {what}", file=sys.stderr, flush=True)
            os._exit(3)
        await asyncio.sleep(0.05)

def streaming(tab):
    from app.chat.transcript import AssistantBlock
    cards = tab.transcript.tool_cards()
    blocks = tab.transcript.blocks()
    return bool(cards) and isinstance(blocks[-1], AssistantBlock)

def on_shown(window):
    async def drive():
        await wait_until(lambda: window.documents(), "the agent")
        document = window.documents()[0]
        def ask(doc):
            print("ASKED", doc.display_name(), flush=True)
            return "discard"
        window.ask_save = ask
        document.set_field(("metadata", "description"), "Edited, not saved.", text="Edit")
        chat = window.open_chat_tab(document)
        chat.submit("What time is it?")
        test = window.open_chat_tab(
            document,
            tool_name="book_flight",
            arguments={"destination": "Oslo"},
            prompt="Book a flight to Oslo for 1 passenger(s).",
        )
        await wait_until(lambda: streaming(chat) and streaming(test), "both runs to stream")
        print("QUITTING", time.monotonic(), flush=True)
        if how == "quit-action":
            window.quit_action.trigger()
        elif how == "close-window":
            window.close()
    asyncio.ensure_future(drive())

sys.exit(run_studio([agent], on_shown=on_shown))
"""


def _tool_then_slow_answer(body: RequestBody) -> Reply:
    """Ask for the time first; then an answer that takes a minute to stream."""
    if body.rounds_since_user == 0:
        return tool_calls([TIME_CALL])
    return text("Booked. " * 300, chunks=300, chunk_delay=0.2)


def _read_line(process: subprocess.Popen[bytes], prefix: str, limit: float) -> str:
    """The first line of the process's stdout that starts with ``prefix`` (bounded). The pipe is
    unbuffered, so what follows stays in it for ``communicate``."""
    assert process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + limit
    seen: list[str] = []
    try:
        while time.monotonic() < deadline:
            if selector.select(timeout=max(0.0, deadline - time.monotonic())):
                line = process.stdout.readline().decode()
                if not line:
                    break  # the process ended
                seen.append(line)
                if line.startswith(prefix):
                    return line
    finally:
        selector.unregister(process.stdout)
    process.kill()
    _, err = process.communicate(timeout=10)
    pytest.fail(f"no {prefix!r} line within {limit:.0f} s; stdout {seen!r}; stderr {err!r}")


@pytest.fixture
def slow_model() -> Any:
    with FakeOpenAIServer(responder=_tool_then_slow_answer) as server:
        yield server


@pytest.mark.parametrize("how", ["quit-action", "close-window", "sigterm"])
def test_quitting_mid_run_exits_at_once_cleanly_and_stops_the_tool_servers(
    tmp_path: Path, slow_model: FakeOpenAIServer, how: str
) -> None:
    mark = new_mark()
    agent = write_agent(
        tmp_path / "desk.agent.yaml",
        base_url=slow_model.base_url,
        tools=[book_tool()],
        mcp_servers={"time": with_mark(time_server(), mark)},
    )
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER, encoding="utf-8")
    home = tmp_path / "home"
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "METAAGENT_HOME": str(home),
        "PYTHONPATH": str(REPO),
    }
    process = subprocess.Popen(
        [sys.executable, str(driver), str(agent), how, json.dumps(KNOWN_QT_NOISE)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
    )
    try:
        quitting = float(_read_line(process, "QUITTING", START_LIMIT_S).split()[1])
        servers = marked(mark)
        assert len(servers) == 2  # one tool server per tab, both up
        if how == "sigterm":
            process.send_signal(signal.SIGTERM)
        out, err = (b.decode() for b in process.communicate(timeout=QUIT_LIMIT_S + 10))
        took = time.monotonic() - quitting
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=10)

    assert err == ""
    assert process.returncode == 0
    assert took < QUIT_LIMIT_S
    assert not [pid for pid in servers if alive(pid)]
    assert marked(mark) == set()  # nor any tool server started while quitting
    if how == "sigterm":  # nobody to answer a question: the edit is kept for the next start
        assert "ASKED" not in out
        assert list((home / "recovery").glob("*.agent.yaml"))
    else:
        assert "ASKED desk.agent.yaml" in out


def _activate(qtbot: QtBot, window: QWidget, focus: QWidget) -> None:
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5_000)
    focus.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is focus, timeout=5_000)


def test_ctrl_q_in_a_chat_tabs_input_quits(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, example_path: Path
) -> None:
    window = studio_window(qtbot)
    document = window.open_file(example_path)
    assert document is not None
    tab = window.open_chat_tab(document)
    assert isinstance(tab, ChatTab)
    _activate(qtbot, window, tab.input)

    with qtbot.waitSignal(window.closed, timeout=5_000):
        QTest.keyClick(tab.input, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    assert not window.isVisible()


def test_ctrl_q_in_a_modal_dialog_of_the_window_closes_it_and_quits(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, example_path: Path
) -> None:
    window = studio_window(qtbot)
    document = window.open_file(example_path)
    assert document is not None
    dialog = window.open_test_dialog(document, document.agent.tools[0])
    assert dialog.isModal()
    field = dialog.focusWidget() or dialog
    _activate(qtbot, dialog, field)

    with qtbot.waitSignal(window.closed, timeout=5_000):
        QTest.keyClick(field, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    assert not dialog.isVisible() and not window.isVisible()


def test_ctrl_q_in_the_about_box_quits(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop
) -> None:
    window = studio_window(qtbot)
    window.show_about()
    box = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox))
    qtbot.waitUntil(box.isVisible, timeout=5_000)
    button = box.defaultButton() or box
    _activate(qtbot, box, button)

    with qtbot.waitSignal(window.closed, timeout=5_000):
        QTest.keyClick(button, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    assert not box.isVisible()


def test_ctrl_q_while_closing_asks_about_unsaved_changes_waits_for_the_answer(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, example_path: Path
) -> None:
    window = studio_window(qtbot)
    document = window.open_file(example_path)
    assert document is not None
    document.set_field(("metadata", "name"), "Changed", text="Edit name")
    asked: list[str] = []

    def ask(_document: object) -> SaveAnswer:
        asked.append("asked")
        window.quit_action.trigger()  # Ctrl+Q on the question: the question stays
        return "discard" if len(asked) == 1 else "cancel"

    window.ask_save = ask  # type: ignore[assignment,method-assign]
    with qtbot.waitSignal(window.closed, timeout=5_000):
        window.quit_action.trigger()
    assert asked == ["asked"]


def test_quit_asks_about_unsaved_changes_and_cancel_keeps_the_studio_open(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, example_path: Path
) -> None:
    window: MainWindow = studio_window(qtbot)
    document = window.open_file(example_path)
    assert document is not None
    document.set_field(("metadata", "name"), "Changed", text="Edit name")
    answers: list[SaveAnswer] = ["cancel", "discard"]
    window.ask_save = lambda _doc: answers.pop(0)  # type: ignore[assignment,method-assign]

    window.quit_action.trigger()
    assert window.isVisible() and answers == ["discard"]
    with qtbot.waitSignal(window.closed, timeout=5_000):
        window.quit_action.trigger()
    assert answers == []


def test_a_tab_closed_before_its_run_began_starts_no_tool_server(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    mark = new_mark()
    with FakeOpenAIServer(responder=_tool_then_slow_answer) as model:
        agent = write_agent(
            tmp_path / "desk.agent.yaml",
            base_url=model.base_url,
            mcp_servers={"time": with_mark(time_server(), mark)},
        )
        tab = ChatTab(AgentDocument.load(agent), title="Chat")
        qtbot.addWidget(tab)
        with qtbot.waitSignal(tab.finished, timeout=10_000) as finished:
            assert tab.submit("What time is it?")
            tab.close()  # before the run's task has taken a step
        future = asyncio.ensure_future(tab.aclose())
        qtbot.waitUntil(future.done, timeout=10_000)

    outcome = finished.args[0]
    assert isinstance(outcome, SessionFailed) and outcome.kind == "cancelled"
    assert model.bodies == [] and marked(mark) == set()
