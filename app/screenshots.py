"""Pictures of the studio's main views, to look at what a person sees: ``make screenshots``.

``python -m app.screenshots OUT_DIR [--dark] [--only GROUP …]`` starts the real studio (under
Xvfb with ``make screenshots``; ``QT_QPA_PLATFORM=offscreen`` works too) on a private copy of the
richest example agent, with its own data directory so no recent files or recovery copies of the
person leak in, walks through the views and saves one PNG per view into ``OUT_DIR``. ``--dark``
starts it in the dark theme, as View ▸ Theme ▸ Dark leaves it (a dark palette where the platform
has no dark theme, as under Xvfb); ``--only`` takes the named groups of views (studio, editor,
window, runs, endpoint, matrix, tests, callers, verify, newuser, history, typed, ship, replay,
attacks, grow, improve, authoring) instead of all. Getting started, which a first start shows,
is taken in the window group, from the Help menu. It stops with a non-zero status when a view
cannot be reached, so a broken view never leaves a stale picture behind unnoticed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QMenu

from app.screenshot_kit import (
    BUDGET_ANSWER,
    BUDGET_MODEL,
    RICHEST_TOOL,
    Camera,
    matrix_cases,
    run_test_dialog,
    run_tests_panel_cases,
    settle,
    wait_until,
)
from app.screenshots_attacks import attack_views
from app.screenshots_authoring import authoring_views
from app.screenshots_callers import caller_views
from app.screenshots_grow import grow_views
from app.screenshots_history import history_views
from app.screenshots_improve import improve_views
from app.screenshots_newuser import new_user_views
from app.screenshots_replay import replay_views
from app.screenshots_ship import ship_views
from app.screenshots_typed import typed_model, typed_views

if TYPE_CHECKING:
    from app.chat import ChatTab
    from app.tool_editor.editor import ToolEditor
    from app.window.main_window import MainWindow

__all__ = ["main"]

EXAMPLE = (
    Path(__file__).resolve().parent.parent / "resources" / "examples" / "travel-desk.agent.yaml"
)


LLAMA_QUESTION = "Which server answers here?"
"""A chat message the local model answers as llama.cpp's server does: without token counts."""


def scripted_model(body: Any) -> Any:
    """The local model: look up the time in Lisbon once, then confirm the booking (a question
    ending in ``LLAMA_QUESTION`` gets an answer without usage)."""
    from tests.fakes._script import text, text_without_usage, tool_calls

    if "response_format" in body:  # a typed tool's run (the typed group)
        return typed_model(body)
    if body.last_user_text.endswith(LLAMA_QUESTION):
        return text_without_usage(
            "A llama.cpp server: it streams answers but reports no token counts.", chunks=8
        )
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


def _open_tool_editor(window: MainWindow, tool_name: str) -> ToolEditor:
    """The tool editor of the example's tool ``tool_name``, opened in a tab."""
    from app.tool_editor.editor import ToolEditor

    document = window.current_document()
    assert document is not None
    tool = document.agent.metadata.tool(tool_name)
    if tool is None:
        raise RuntimeError(f"the example has no tool {tool_name}")
    editor = window.open_tool_tab(document, tool)
    assert isinstance(editor, ToolEditor)
    return editor


async def tool_editor_views(window: MainWindow, camera: Camera) -> None:
    """The tool editor with its tree, a string panel with an enum, and the JSON view; then a
    template with sections and fallbacks (:func:`template_sections_view`)."""
    editor = _open_tool_editor(window, RICHEST_TOOL)
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
    editor.document.undo_stack.undo()
    await template_sections_view(window, camera)


async def window_views(window: MainWindow, camera: Camera) -> None:
    """At 1024×700: the window with its toolbar, the View menu open on its themes, the tool
    editor; then at 1400×900 the tool editor in the dark theme chosen through View ▸ Theme, the
    keyboard shortcuts and Getting started."""
    document = window.current_document()
    assert document is not None
    tool = document.agent.metadata.tool(RICHEST_TOOL)
    assert tool is not None
    window.resize(1024, 700)
    window.show_page(document, "tools")
    await camera.shoot(window, "toolbar.png")
    view = window.view_menu
    window.menuBar().setActiveAction(view.menuAction())  # opened as a click on "View" does
    theme = next(a for a in view.actions() if a.text() == "&Theme")
    themes = theme.menu()
    assert isinstance(themes, QMenu)
    view.setActiveAction(theme)
    themes.popup(view.mapToGlobal(view.actionGeometry(theme).topRight()))
    await camera.shoot_with_menus(window, [view, themes], "view-menu.png")
    themes.close()
    view.close()
    editor = window.open_tool_tab(document, tool)
    builder = getattr(editor, "parameters", None)
    if builder is not None:
        builder.tree.expandAll()
        builder.select(("properties", "payment", "properties", "method"))
    await camera.shoot(window, "tool-editor-1024x700.png")
    window.resize(1400, 900)
    shown = window.view.theme()
    window.view.theme_actions["dark"].trigger()
    await camera.shoot(window, "dark.png")
    window.view.theme_actions[shown].trigger()
    for show, name in (
        (window.show_shortcuts, "shortcuts.png"),
        (window.show_getting_started, "getting-started.png"),
    ):
        dialog = show()
        await camera.shoot(dialog, name)
        dialog.close()


SECTIONS_TOOL = "plan_trip"
SECTION_PROBLEMS = (
    "\n{!trip.start_date}Pick the best season to go.{/trip.start_date}"
    "\n{?trip.budget}Stay within the budget."
)
"""Appended to the tool's prompt: an inverted section on a required parameter (a warning) and a
section left open (an error)."""


async def template_sections_view(window: MainWindow, camera: Camera) -> None:
    """A template with sections and fallbacks, two section problems, and the preview of what is
    sent with its marks (a default, a fallback, a shown section); then the same at 1024×700."""
    editor = _open_tool_editor(window, SECTIONS_TOOL)
    pane = editor.template
    cursor = pane.editor.textCursor()
    cursor.movePosition(cursor.MoveOperation.End)
    pane.editor.setTextCursor(cursor)
    pane.editor.insertPlainText(SECTION_PROBLEMS)
    for path in ("trip.nights", "interests", "pace"):  # a default, a fallback, a default
        pane.samples.set_sent(path, False)
    if not any(d.code.endswith("section") for d in pane.diagnostics.diagnostics):
        raise RuntimeError("the template shows no section problem")
    total = sum(editor.split.sizes())
    editor.split.setSizes([total // 4, total - total // 4])
    await camera.shoot(window, "template-sections.png")
    window.resize(1024, 700)
    await camera.shoot(window, "template-sections-1024.png")
    window.resize(1400, 900)
    pane.samples.reset()
    editor.document.undo_stack.undo()


async def run_views(window: MainWindow, camera: Camera) -> None:
    """Test dialog, a finished test run (card open), the caller's view, history and export."""
    from app.export_dialog import ExportDialog
    from app.history.view import HistoryView

    document, tab = await run_test_dialog(window, camera)
    for card in tab.transcript.tool_cards():
        card.set_expanded(True)
    await camera.shoot(window, "chat-tab.png")
    tab.caller_toggle.click()
    await camera.shoot(window, "caller-view.png")
    tab.caller_toggle.click()
    tab.protocol_log_action.setChecked(True)  # the raw exchange of that run, below it
    log_view = tab.protocol_log_view
    if log_view is not None:  # open the inner tools/call, as a person reading it would
        entries = log_view.visible_entries()
        calls = [i for i, e in enumerate(entries) if e.summary.startswith("tools/call")]
        log_view.select_row(calls[0] if calls else 0)
    await camera.shoot(window, "protocol-log.png")
    tab.protocol_log_action.setChecked(False)
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


async def endpoint_views(window: MainWindow, camera: Camera) -> None:
    """At 1024×700: the Model page's endpoint settings, a chat whose model server reports no
    token counts, and a test run whose provider passes a notice to the trace."""
    from app.chat import ChatTab
    from app.pages.model_page import ModelPage
    from mcp_export.session.events import FinalAnswer
    from schema_types.arguments import apply_defaults, sample_arguments
    from schema_types.tool_prompt import filled_prompt
    from tests.fakes.noticing_provider import noticing

    document = window.current_document()
    assert document is not None
    window.resize(1024, 700)
    page = window.show_page(document, "model")
    assert isinstance(page, ModelPage)
    await settle()
    page.ensureWidgetVisible(page.test_button, 0, 40)
    await camera.shoot(window, "model-endpoint.png")

    tabs: list[ChatTab] = []
    try:
        chat = ChatTab(document, title="Chat")
        tabs.append(chat)
        chat.resize(1024, 700)
        chat.show()
        if not isinstance(await chat.send(f"Hello. {LLAMA_QUESTION}"), FinalAnswer):
            raise RuntimeError("the chat without token counts did not answer")
        await camera.shoot(chat, "chat-unknown-tokens.png")

        tool = document.agent.metadata.tool(RICHEST_TOOL)
        assert tool is not None
        arguments = sample_arguments(tool.parameters)
        prompt = filled_prompt(tool, apply_defaults(tool.parameters, arguments))
        test = ChatTab(
            document,
            title=tool.name,
            tool_name=tool.name,
            arguments=arguments,
            provider_factory=noticing(),
        )
        tabs.append(test)
        test.resize(1024, 700)
        test.show()
        test.start_test(prompt)
        await wait_until(lambda: isinstance(test.outcome, FinalAnswer), "the test run", 60)
        await camera.shoot(test, "trace-notice.png")
    finally:
        for tab in tabs:
            await tab.aclose()
            tab.close()


async def matrix_views(window: MainWindow, camera: Camera) -> None:
    """The test-case matrix on two models, run twice: the second model's answers change in
    between, so its cells regress (marked, first); the two models' answers to one case side by
    side, at 1400×900 and 1024×700, and one failed cell's details at 1024×700."""
    from app.document.test_cases import add_test_case
    from app.test_cases.matrix_tab import MatrixTab
    from schema_types.arguments import sample_arguments
    from schema_types.cases import TestCase
    from tests.fakes._script import text
    from tests.fakes.openai_server import FakeOpenAIServer

    document = window.current_document()
    assert document is not None
    tool = document.agent.metadata.tool(RICHEST_TOOL)
    assert tool is not None
    changed: list[bool] = []

    def budget(body: Any) -> Any:
        return text(BUDGET_ANSWER, chunks=6, usage=(640, 38)) if changed else scripted_model(body)

    with FakeOpenAIServer(responder=budget) as server:
        with document.macro("Test cases for the screenshots"):
            document.set_field(
                ("providers", "vllm"),
                {"VLLM_BASE_URL": server.base_url},
                text="Add the budget model's endpoint",
            )
            for case in matrix_cases(sample_arguments(tool.parameters)):
                add_test_case(document, tool.name, TestCase.model_validate(case))
        models = [document.agent.settings.model or "", BUDGET_MODEL]
        window.resize(1400, 900)
        tab = window.open_matrix_tab(document, models=models)
        assert isinstance(tab, MatrixTab)
        for run in ("first", "second"):
            if run == "second":
                changed.append(True)
                tab.last_end = None
                tab.run()
            await wait_until(
                lambda: tab.last_end is not None and not tab.busy,
                f"the {run} run of the cases",
                120,
            )
        cases = tab.model.cases()
        if tab.model.change((*cases[0], BUDGET_MODEL)) != "regressed":
            raise RuntimeError("the second run of the test cases shows no regression")
        tab.select_cells([(*cases[0], models[0]), (*cases[0], BUDGET_MODEL)])
        await camera.shoot(window, "test-matrix.png")
        window.resize(1024, 700)
        await camera.shoot(window, "test-matrix-1024.png")
        tab.select_cells([(*cases[0], BUDGET_MODEL)])
        await camera.shoot(window, "test-matrix-cell-1024.png")
        window.resize(1400, 900)
        window.remove_run_tab(tab)
    document.undo_stack.undo()


async def tests_panel_view(window: MainWindow, camera: Camera) -> None:
    """The tool editor's Tests section: three cases, the first selected, with their last results
    on two models from a real run of them (recorded in the studio's history), at 1400×900 and
    1024×700."""
    from app.tool_editor.editor import ToolEditor

    document = window.current_document()
    assert document is not None
    tool = document.agent.metadata.tool(RICHEST_TOOL)
    assert tool is not None
    cases, models = await run_tests_panel_cases(window, document, tool)
    tool = document.agent.metadata.tool(RICHEST_TOOL)
    assert tool is not None
    editor = window.open_tool_tab(document, tool)
    assert isinstance(editor, ToolEditor)
    window.resize(1400, 900)
    editor.sections.setCurrentWidget(editor.tests)
    panel = editor.tests
    await wait_until(lambda: panel.model.models() == sorted(models), "the last results")
    panel.select_case(cases[0]["name"])
    await camera.shoot(window, "tests-panel.png")
    window.resize(1024, 700)
    await camera.shoot(window, "tests-panel-1024.png")
    window.resize(1400, 900)
    editor.sections.setCurrentIndex(0)
    document.undo_stack.undo()


async def verify_call_view(window: MainWindow, camera: Camera) -> None:
    """The export dialog after Verify and a real call of the richest tool, for Cursor (whose
    entry hands the key on through ${env:OPENAI_API_KEY}), at full size and at 1024×700."""
    from app.export_dialog import ExportDialog

    document = window.current_document()
    assert document is not None and document.path is not None
    # The launched servers get HOME and nothing else of the studio's: keep their history, and
    # the client config verify reads, in the private data folder.
    real_home = os.environ.get("HOME")
    os.environ["HOME"] = os.environ["METAAGENT_HOME"]
    try:
        export = ExportDialog(document.path, window, document=document, save=window.save)
        export.set_client("cursor")
        export.show()
        export.start_verify()
        await wait_until(lambda: not export.is_verifying(), "the export check", 90)
        export.set_call_tool(RICHEST_TOOL)
        for size, name in ((None, "verify-call.png"), ((1024, 700), "verify-call-1024.png")):
            if size is not None:
                export.resize(*size)  # then a call at that size scrolls to its answer there
            export.start_call()
            await wait_until(lambda: not export.is_calling(), "the call", 90)
            if export.last_call is None or not export.last_call.ok:
                raise RuntimeError("the call from the export dialog did not answer")
            await camera.shoot(export, name)
        export.close()
    finally:
        if real_home is None:
            del os.environ["HOME"]
        else:
            os.environ["HOME"] = real_home


GROUPS: dict[str, Callable[[Any, Camera, Path], Awaitable[None]]] = {
    "studio": studio_views,
    "editor": lambda window, camera, _agent: tool_editor_views(window, camera),
    "window": lambda window, camera, _agent: window_views(window, camera),
    "runs": lambda window, camera, _agent: run_views(window, camera),
    "endpoint": lambda window, camera, _agent: endpoint_views(window, camera),
    "matrix": lambda window, camera, _agent: matrix_views(window, camera),
    "tests": lambda window, camera, _agent: tests_panel_view(window, camera),
    "callers": lambda window, camera, _agent: caller_views(window, camera),
    "verify": lambda window, camera, _agent: verify_call_view(window, camera),
    "newuser": lambda window, camera, _agent: new_user_views(window, camera),
    "history": lambda window, camera, _agent: history_views(window, camera),
    "typed": lambda window, camera, _agent: typed_views(window, camera),
    "ship": lambda window, camera, _agent: ship_views(window, camera),
    "replay": lambda window, camera, _agent: replay_views(window, camera),
    "attacks": lambda window, camera, _agent: attack_views(window, camera),
    "grow": lambda window, camera, _agent: grow_views(window, camera),
    "improve": lambda window, camera, _agent: improve_views(window, camera),
    "authoring": lambda window, camera, _agent: authoring_views(window, camera),
}
"""The groups of views, in the order they are walked (later groups use the agent opened by
``studio``)."""


async def drive(
    window: MainWindow, out_dir: Path, agent: Path, groups: list[str] | None = None
) -> None:
    """Walk through the views of ``groups`` (default: all) and save their pictures."""
    camera = Camera(out_dir)
    chosen = groups or list(GROUPS)
    if "studio" not in chosen and window.open_file(agent) is None:  # studio opens it otherwise
        raise RuntimeError(f"the studio could not open {agent}")
    for name in GROUPS:
        if name in chosen:
            await GROUPS[name](window, camera, agent)
    for path in camera.saved:
        print(path)  # noqa: T201 (the script's output is the list of pictures)


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m app.screenshots")
    parser.add_argument("out_dir", nargs="?", default="build/screenshots")
    parser.add_argument("--dark", action="store_true", help="the dark colour scheme")
    parser.add_argument("--only", nargs="+", choices=list(GROUPS), help="these groups only")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    """Run the studio, take the pictures into ``OUT_DIR`` (default ``build/screenshots``)."""
    options = _parse(argv)
    out_dir = Path(options.out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="metaagent-shots-"))
    os.environ["METAAGENT_HOME"] = str(home)
    # The example's tool server (mcp-server-time) is installed beside this interpreter, where
    # the toolbox finds it without PATH (as for a studio started as .venv/bin/metaagent).
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
    from app.settings_store import SettingsStore
    from app.studio import run_studio

    settings = SettingsStore(home)
    settings.set_getting_started_shown()  # the window group takes it from the Help menu
    if options.dark:
        settings.set_theme("dark")

    status: list[int] = []
    tasks: list[asyncio.Future[None]] = []

    def on_shown(window: MainWindow) -> None:
        async def run() -> None:
            try:
                await drive(window, out_dir, agent, options.only)
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
