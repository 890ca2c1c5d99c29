"""Unsaved changes survive a crash, and an agent with an unsound tool schema still opens.

The crash is real: a child studio process opens the agent, edits it, autosaves and dies with
``os._exit``; a new window in this process then finds the recovery copy and offers it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from app.document.recovery import RecoveryStore
from app.document.schema_health import tool_schema_health
from app.window.main_window import MainWindow
from schema_types.files.agent_file import load_agent
from tests.app._windows import studio_window

CABIN_DEFAULT = ("metadata", "tools", 0, "parameters", "properties", "cabin", "default")
CABIN_PROBLEM = (
    'metadata.tools[0].parameters.properties.cabin.default: "steerage" is not one of '
    '"economy", "premium_economy", "business", "first"'
)

# A studio that edits the agent (a new name, and a tool default its own enum refuses — the
# parameter tree allows that edit and marks it), writes its recovery copy, and crashes.
CRASHING_STUDIO = f"""
import os, sys
from pathlib import Path
from PySide6.QtWidgets import QApplication
from app.window.main_window import MainWindow

app = QApplication(sys.argv[:1])
window = MainWindow()
document = window.open_file(Path(sys.argv[1]))
document.set_field(("metadata", "name"), "Crashed Desk", text="Edit name")
document.set_field({CABIN_DEFAULT}, "steerage", text="Edit default")
window.autosaver.save_all()
os._exit(3)
"""


def _crash_while_editing(agent_file: Path, home: Path) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", METAAGENT_HOME=str(home))
    done = subprocess.run(
        [sys.executable, "-c", CRASHING_STUDIO, str(agent_file)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 3, done.stderr


def _status(window: MainWindow) -> str:
    return window.statusBar().currentMessage()


def test_after_a_crash_the_next_start_restores_the_unsaved_changes(
    qtbot, example_path: Path, metaagent_home: Path
) -> None:
    before = example_path.read_bytes()
    _crash_while_editing(example_path, metaagent_home)
    [entry] = RecoveryStore(metaagent_home).pending()
    assert entry.original == example_path.resolve() and entry.name == "Crashed Desk"
    assert "-  name: Travel Desk\n+  name: Crashed Desk\n" in entry.diff()
    assert example_path.read_bytes() == before  # the crash wrote nothing over the file

    window = studio_window(qtbot)
    asked: list[str] = []
    window.ask_recovery = lambda e: asked.append(e.key) or "restore"  # type: ignore[assignment,method-assign,func-returns-value]
    [document] = window.offer_recovery()

    assert asked == [entry.key]
    assert document.path == example_path.resolve() and document.is_dirty()
    assert document.agent.metadata.name == "Crashed Desk"
    assert document.get(CABIN_DEFAULT) == "steerage"  # restored although the schema is unsound
    assert RecoveryStore(metaagent_home).entries() == []  # offered once
    # The unsound default is named, with what to do, once the window is idle.
    qtbot.waitUntil(lambda: "need fixing" in _status(window), timeout=10_000)
    assert "the parameters of search_flights need fixing" in _status(window)
    assert window._last_report is not None and window._last_report.detail == CABIN_PROBLEM
    assert window.save()
    assert load_agent(example_path, check_schemas=False).metadata.name == "Crashed Desk"


def test_a_recovery_copy_can_be_discarded_or_kept_for_later(
    qtbot, example_path: Path, metaagent_home: Path
) -> None:
    _crash_while_editing(example_path, metaagent_home)
    window = studio_window(qtbot)

    window.ask_recovery = lambda _e: "later"  # type: ignore[assignment,method-assign]
    assert window.offer_recovery() == [] and window.documents() == []
    assert len(RecoveryStore(metaagent_home).pending()) == 1

    window.ask_recovery = lambda _e: "discard"  # type: ignore[assignment,method-assign]
    assert window.offer_recovery() == [] and window.documents() == []
    assert RecoveryStore(metaagent_home).entries() == []
    assert load_agent(example_path).metadata.name == "Travel Desk"


def test_a_dirty_agent_is_autosaved_and_a_save_removes_the_copy(
    qtbot, example_path: Path, metaagent_home: Path
) -> None:
    window = studio_window(qtbot, autosave_seconds=0.05)
    document = window.open_file(example_path)
    assert document is not None
    store = RecoveryStore(metaagent_home)

    document.set_field(("metadata", "name"), "Autosaved", text="Edit name")
    qtbot.waitUntil(lambda: len(store.entries()) == 1, timeout=10_000)
    [entry] = store.entries()
    assert entry.pid == os.getpid() and store.pending() == []  # this process is alive
    assert load_agent(entry.copy).metadata.name == "Autosaved"

    assert window.save()
    assert store.entries() == []


def test_an_agent_with_an_unsound_tool_schema_opens_and_says_what_to_fix(
    qtbot, example_path: Path
) -> None:
    text = example_path.read_text(encoding="utf-8")
    example_path.write_text(text.replace("default: economy", "default: steerage"), "utf-8")
    window = studio_window(qtbot)

    document = window.open_file(example_path)

    assert document is not None and window.current_document() is document
    assert document.get(CABIN_DEFAULT) == "steerage"
    assert not document.is_dirty()
    qtbot.waitUntil(lambda: "need fixing" in _status(window), timeout=10_000)
    assert _status(window) == (
        "⚠ travel-desk.agent.yaml: the parameters of search_flights need fixing before the agent "
        "can be served — open the tool to see where"
    )
    assert window._last_report is not None and window._last_report.detail == CABIN_PROBLEM

    # Fixed in the studio and saved, it is sound for the server again.
    document.set_field(CABIN_DEFAULT, "economy", text="Edit default")
    assert window.save()
    assert load_agent(example_path).tools[0].parameters["properties"]["cabin"]["default"] == (
        "economy"
    )


def test_a_sound_agent_opens_without_a_warning(qtbot, example_path: Path) -> None:
    window = studio_window(qtbot)
    document = window.open_file(example_path)
    assert document is not None

    health = tool_schema_health(document)
    with qtbot.waitSignal(health.pass_finished, timeout=10_000):
        pass  # the first pass over the tools, which the window reports on

    assert health.checked and "need fixing" not in _status(window)
