"""Pictures of the studio's main views, to look at what a person sees: ``make screenshots``.

``python -m app.screenshots OUT_DIR`` starts the real studio (under Xvfb with ``make screenshots``;
``QT_QPA_PLATFORM=offscreen`` works too) on a private copy of the richest example agent, with its
own data directory so no recent files or recovery copies of the person leak in, walks through the
views and saves one PNG per view into ``OUT_DIR``. It stops with a non-zero status when a view
cannot be reached, so a broken view never leaves a stale picture behind unnoticed.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QApplication, QWidget

if TYPE_CHECKING:
    from app.window.main_window import MainWindow

__all__ = ["main"]

EXAMPLE = (
    Path(__file__).resolve().parent.parent / "resources" / "examples" / "travel-desk.agent.yaml"
)
RICHEST_TOOL = "book_flight"


def scripted_model(body: Any) -> Any:
    """The local model: look up the time in Lisbon once, then confirm the booking."""
    from tests.fakes._script import text, tool_calls

    if body.rounds_since_user == 0:
        call = ("call_1", "time__get_current_time", {"timezone": "Europe/Lisbon"})
        return tool_calls([call], usage=(812, 24))
    answer = (
        "**Booked.** Flight **TP1351** on 2026-06-01 for Grace Hopper.\n\n"
        "| Item | Value |\n|---|---|\n| Seat | 14A (window) |\n| Price | EUR 214.60 |\n"
        "| Reference | `QX7R2M` |\n\nThe confirmation goes to grace@example.com; "
        "it is 09:41 in Lisbon now."
    )
    return text(answer, chunks=24, usage=(905, 71))


async def wait_until(predicate: Callable[[], bool], what: str, limit: float = 30.0) -> None:
    """Let the event loop run until ``predicate()`` holds (bounded: fails after ``limit`` s)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not predicate():
        if loop.time() > deadline:
            raise TimeoutError(f"gave up waiting for {what} after {limit:.0f} s")
        await asyncio.sleep(0.05)


async def settle() -> None:
    """Let pending layouts, paints and deferred timers run."""
    for _ in range(5):
        QApplication.processEvents()
        await asyncio.sleep(0.02)


class Camera:
    """Saves grabs of widgets into one directory and remembers what it saved."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.saved: list[Path] = []

    async def shoot(self, widget: QWidget, name: str) -> None:
        """Save ``widget`` as ``name`` (PNG) once it has settled."""
        await settle()
        path = self.out_dir / name
        if not widget.grab().save(str(path)):
            raise OSError(f"could not write {path}")
        self.saved.append(path)


async def studio_views(window: MainWindow, camera: Camera, agent: Path) -> None:
    """The welcome page, the main window and each settings page (issue: the studio)."""
    window.resize(1400, 900)
    await camera.shoot(window, "welcome.png")
    document = window.open_file(agent)
    if document is None:
        raise RuntimeError(f"the studio could not open {agent}")
    window.show_page(document, "tools")
    await camera.shoot(window, "main-window.png")
    window.show_page(document, "agent")
    await camera.shoot(window, "agent-settings.png")
    window.show_page(document, "model")
    await camera.shoot(window, "model-settings.png")
    servers = window.show_page(document, "servers")
    connect = getattr(servers, "connect_selected", None)
    if callable(connect):
        connect()
        tools_model = getattr(servers, "tools_model", None)
        await wait_until(
            lambda: tools_model is None or tools_model.rowCount() > 0,
            "the MCP server's tools",
        )
    await camera.shoot(window, "mcp-servers.png")


async def tool_editor_views(window: MainWindow, camera: Camera) -> None:
    """The tool editor with its tree, a string panel with an enum, and the JSON view."""
    from app.tool_editor.editor import ToolEditor

    document = window.current_document()
    assert document is not None
    tool = document.agent.metadata.tool(RICHEST_TOOL)
    if tool is None:
        raise RuntimeError(f"the example has no tool {RICHEST_TOOL}")
    editor = window.open_tool_tab(document, tool)
    assert isinstance(editor, ToolEditor)
    builder = editor.parameters
    builder.tree.expandAll()
    enum_path = next(
        (
            path
            for path in builder.model.paths()
            if isinstance(builder.model.node_json(path), dict)
            and "enum" in builder.model.node_json(path)
            and builder.model.node_json(path).get("type") == "string"
        ),
        None,
    )
    builder.select(enum_path)
    # A deliberate unknown placeholder, to show how the editor flags it.
    cursor = editor.template.editor.textCursor()
    cursor.movePosition(cursor.MoveOperation.End)
    editor.template.editor.setTextCursor(cursor)
    editor.template.editor.insertPlainText("\nSeat preference: {seat_preference}")
    await camera.shoot(window, "tool-editor.png")
    builder.side.setCurrentWidget(builder.json_view)
    await camera.shoot(window, "schema-json.png")
    document.undo_stack.undo()


async def run_views(window: MainWindow, camera: Camera) -> None:
    """Test dialog, a finished test run (card open), the caller's view, history and export."""
    from app.chat import ChatTab
    from app.export_dialog import ExportDialog
    from app.history.view import HistoryView
    from app.test_run import TestToolDialog
    from mcp_export.session.events import FinalAnswer

    document = window.current_document()
    assert document is not None
    tool = document.agent.metadata.tool(RICHEST_TOOL)
    assert tool is not None
    dialog = window.open_test_dialog(document, tool)
    assert isinstance(dialog, TestToolDialog)
    dialog.examples_button.click()
    await camera.shoot(dialog, "test-dialog.png")
    dialog.run_button.click()
    tab = window.run_tabs()[-1]
    assert isinstance(tab, ChatTab)
    await wait_until(lambda: isinstance(tab.outcome, FinalAnswer), "the test run's answer", 60)
    for card in tab.transcript.tool_cards():
        card.set_expanded(True)
    await camera.shoot(window, "chat-tab.png")
    tab.caller_toggle.click()
    await camera.shoot(window, "caller-view.png")
    tab.caller_toggle.click()
    history = window.open_history_tab(document)
    assert isinstance(history, HistoryView)
    await wait_until(lambda: bool(history.visible_entries()), "the history rows")
    history.select_row(0)
    history.open_entry(0)
    await camera.shoot(window, "history.png")
    assert document.path is not None
    export = ExportDialog(document.path, window)
    export.show()
    export.start_verify()
    await wait_until(lambda: not export.is_verifying(), "the export check", 90)
    await camera.shoot(export, "export-dialog.png")
    export.close()
    await tab.aclose()


async def drive(window: MainWindow, out_dir: Path, agent: Path) -> None:
    """Walk through every view and save its picture."""
    camera = Camera(out_dir)
    await studio_views(window, camera, agent)
    await tool_editor_views(window, camera)
    await run_views(window, camera)
    for path in camera.saved:
        print(path)  # noqa: T201 (the script's output is the list of pictures)


def main(argv: list[str]) -> int:
    """Run the studio, take the pictures into ``argv[0]`` (default ``build/screenshots``)."""
    out_dir = Path(argv[0] if argv else "build/screenshots").resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="metaagent-shots-"))
    os.environ["METAAGENT_HOME"] = str(home)
    # The example's tool server (mcp-server-time) is installed beside this interpreter.
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    agent = home / EXAMPLE.name
    # The test run talks to a local scripted model (the one the tests use), never a paid API.
    from tests.fakes.openai_server import FakeOpenAIServer

    model = FakeOpenAIServer(responder=scripted_model)
    os.environ["OPENAI_API_KEY"] = "sk-local-screenshots"
    text = EXAMPLE.read_text(encoding="utf-8").replace(
        "    OPENAI_API_KEY: env://OPENAI_API_KEY\n",
        f"    OPENAI_API_KEY: env://OPENAI_API_KEY\n    OPENAI_BASE_URL: {model.base_url}\n",
    )
    agent.write_text(text, encoding="utf-8")
    from app.studio import run_studio

    status: list[int] = []
    tasks: list[asyncio.Future[None]] = []

    def on_shown(window: MainWindow) -> None:
        async def run() -> None:
            try:
                await drive(window, out_dir, agent)
                status.append(0)
            except Exception as exc:
                print(f"screenshots: {exc}", file=sys.stderr)  # noqa: T201
                status.append(1)
            finally:
                for document in window.documents():
                    document.undo_stack.setClean()
                window.close()

        tasks.append(asyncio.ensure_future(run()))

    try:
        run_studio([], on_shown=on_shown)
    finally:
        model.stop()
        shutil.rmtree(home, ignore_errors=True)
    return status[0] if status else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
