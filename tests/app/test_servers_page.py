"""The MCP servers page: add/edit/remove (undoable), "Connect" against the real mcp-server-time,
per-tool permission and include settings saved to the file, a failing server's stderr shown, and
the add/edit dialog (secrets moved to the keyring, unknown keys kept).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.errors import reporter
from app.pages.model_page import ModelPage
from app.pages.server_dialog import ServerDialog, parse_pairs
from app.pages.server_tools import ServerToolsModel, probe_cache
from app.pages.servers_page import ServersPage
from schema_types.agent import McpServerConfig
from schema_types.files.agent_file import load_agent

TIME_SERVER = str(Path(sys.executable).parent / "mcp-server-time")
CONNECT_TIMEOUT_MS = 30_000


@pytest.fixture
def document(example_path: Path) -> AgentDocument:
    document = AgentDocument.load(example_path)
    # The example names the command as a client on PATH would; point at this venv's copy.
    time = document.agent.mcp_servers["time"]
    document.agent.mcp_servers["time"] = time.model_copy(update={"command": TIME_SERVER})
    # Tool settings are the test's business: start from the safe default (permission required).
    document.agent.mcp_servers["time"].server_tool_defaults.permission_required = None
    return document


@pytest.fixture
def page(qtbot: QtBot, document: AgentDocument) -> ServersPage:
    widget = ServersPage(document)
    qtbot.addWidget(widget)
    widget.resize(1000, 700)
    widget.show()
    return widget


def connect(qtbot: QtBot, page: ServersPage, name: str) -> None:
    page.select(name)
    qtbot.mouseClick(page.connect_button, Qt.MouseButton.LeftButton)
    # The result is cached before the connect task ends; the page shows it (and enables Connect
    # again) once the task's end is reported.
    qtbot.waitUntil(
        lambda: name in page.cache.results and page.connect_button.isEnabled(),
        timeout=CONNECT_TIMEOUT_MS,
    )


def check(model: ServerToolsModel, tool: str, column: int, checked: bool) -> bool:
    row = model.tool_names().index(tool)
    state = Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked
    return model.setData(model.index(row, column), state, Qt.ItemDataRole.CheckStateRole)


def shown(model: ServerToolsModel, tool: str, column: int) -> object:
    row = model.tool_names().index(tool)
    role = Qt.ItemDataRole.CheckStateRole if column in (2, 3) else Qt.ItemDataRole.DisplayRole
    return model.data(model.index(row, column), role)


# -- the list --------------------------------------------------------------------------------


def test_add_edit_and_remove_are_each_one_undoable_step(page: ServersPage) -> None:
    stack = page.document.undo_stack
    answers = iter(
        [
            ("files", McpServerConfig(command="mcp-server-files", args=["/tmp"])),
            ("docs", McpServerConfig(type="streamable-http", url="http://127.0.0.1:9/mcp")),
        ]
    )
    page.ask_server = lambda taken, name, config: next(answers)

    assert page.add_server()
    assert list(page.document.agent.mcp_servers) == ["time", "files"]
    assert page.selected_name() == "files"
    assert page.transport_label.text() == "stdio: mcp-server-files /tmp"

    assert page.edit_selected()  # renamed and changed to HTTP in one step
    assert list(page.document.agent.mcp_servers) == ["time", "docs"]
    assert page.document.agent.mcp_servers["docs"].url == "http://127.0.0.1:9/mcp"
    assert page.transport_label.text() == "streamable-http: http://127.0.0.1:9/mcp"

    assert page.remove_selected()
    assert list(page.document.agent.mcp_servers) == ["time"]

    stack.undo()
    assert list(page.document.agent.mcp_servers) == ["time", "docs"]
    stack.undo()
    assert list(page.document.agent.mcp_servers) == ["time", "files"]
    assert page.server_list.count() == 2
    stack.undo()
    assert list(page.document.agent.mcp_servers) == ["time"]
    assert page.server_list.count() == 1
    stack.redo()
    assert page.document.agent.mcp_servers["files"].args == ["/tmp"]


def test_the_server_default_permission_is_an_undoable_edit(qtbot: QtBot, page: ServersPage) -> None:
    def config() -> McpServerConfig:
        return page.document.agent.mcp_servers["time"]

    assert page.default_check.isChecked()  # unset counts as "needs permission"

    qtbot.mouseClick(page.default_check, Qt.MouseButton.LeftButton)

    assert config().server_tool_defaults.permission_required is False
    page.document.undo_stack.undo()
    assert config().server_tool_defaults.permission_required is None
    assert page.default_check.isChecked()


# -- connecting ------------------------------------------------------------------------------


def test_connect_lists_the_tools_of_mcp_server_time(
    qtbot: QtBot, page: ServersPage, qasync_loop: asyncio.AbstractEventLoop
) -> None:
    connect(qtbot, page, "time")

    model = page.tools_model
    assert model.tool_names() == ["get_current_time", "convert_time"]
    description = shown(model, "convert_time", ServerToolsModel.DESCRIPTION)
    assert isinstance(description, str) and "time" in description.lower()
    assert page.connect_status.text().startswith("Connected to mcp-time")
    assert page.connect_status.text().endswith(": 2 tools.")
    assert not page.error_view.isVisible()
    # Nothing is marked yet: both need permission, so a served call (toolPermission: tool)
    # gets neither, and the page says why.
    assert page.summary.text().splitlines() == [
        "0 of 2 inner tools usable by a served call (toolPermission: tool).",
        "Hidden: time › get_current_time — needs permission (toolPermission: tool)",
        "Hidden: time › convert_time — needs permission (toolPermission: tool)",
    ]


def test_permission_and_include_toggles_are_saved_and_undoable(
    qtbot: QtBot,
    page: ServersPage,
    example_path: Path,
    qasync_loop: asyncio.AbstractEventLoop,
) -> None:
    connect(qtbot, page, "time")
    model = page.tools_model
    model_page = ModelPage(page.document)
    qtbot.addWidget(model_page)

    assert check(model, "get_current_time", ServerToolsModel.PERMISSION, False)
    assert check(model, "convert_time", ServerToolsModel.PERMISSION, False)
    assert check(model, "convert_time", ServerToolsModel.INCLUDE, False)

    assert shown(model, "get_current_time", ServerToolsModel.SERVED) == "usable"
    assert shown(model, "convert_time", ServerToolsModel.SERVED) == (
        "hidden: excluded in the agent file"
    )
    assert shown(model, "convert_time", ServerToolsModel.INCLUDE) == Qt.CheckState.Unchecked
    assert page.summary.text().splitlines()[0] == (
        "1 of 2 inner tools usable by a served call (toolPermission: tool)."
    )
    assert model_page.usable_label.text() == (
        "1 of 2 inner tools usable by a served call (toolPermission: tool)."
    )

    page.document.save()
    tools = load_agent(example_path).mcp_servers["time"].tools
    assert tools["get_current_time"].permission_required is False
    assert tools["convert_time"].permission_required is False
    assert tools["convert_time"].include is False
    text = example_path.read_text(encoding="utf-8")
    assert "get_current_time:\n        permissionRequired: false" in text

    page.document.undo_stack.undo()
    assert page.document.agent.mcp_servers["time"].tools["convert_time"].include is True
    assert shown(model, "convert_time", ServerToolsModel.INCLUDE) == Qt.CheckState.Checked
    page.document.undo_stack.undo()
    page.document.undo_stack.undo()
    assert page.document.agent.mcp_servers["time"].tools == {}


def test_include_all_and_none_change_every_listed_tool_in_one_undo_step(
    qtbot: QtBot, page: ServersPage, qasync_loop: asyncio.AbstractEventLoop
) -> None:
    assert not page.include_none_button.isEnabled()  # nothing listed yet
    connect(qtbot, page, "time")
    model = page.tools_model
    steps = page.document.undo_stack.count()

    qtbot.mouseClick(page.include_none_button, Qt.MouseButton.LeftButton)
    included = [shown(model, name, ServerToolsModel.INCLUDE) for name in model.tool_names()]
    assert included == [Qt.CheckState.Unchecked, Qt.CheckState.Unchecked]
    assert page.document.undo_stack.count() == steps + 1
    assert page.document.undo_stack.undoText() == "Leave out every tool of time"

    qtbot.mouseClick(page.include_all_button, Qt.MouseButton.LeftButton)
    tools = page.document.agent.mcp_servers["time"].tools
    assert [tools[name].include for name in model.tool_names()] == [True, True]
    assert page.include_all_tools(True) == 0  # all included already: no empty undo step
    assert page.document.undo_stack.count() == steps + 2

    page.document.undo_stack.undo()
    tools = page.document.agent.mcp_servers["time"].tools
    assert [tools[name].include for name in model.tool_names()] == [False, False]


def test_a_failing_server_command_shows_its_stderr(
    qtbot: QtBot, page: ServersPage, qasync_loop: asyncio.AbstractEventLoop
) -> None:
    script = "import sys; sys.stderr.write('cannot open database /nope/tasks.db\\n'); sys.exit(2)"
    broken = McpServerConfig(command=sys.executable, args=["-c", script])
    page.document.insert_item(("mcp_servers", "tasks"), broken, text="Add MCP server tasks")

    connect(qtbot, page, "tasks")

    # The view shows the failure once the connect task has ended (just after the result lands).
    qtbot.waitUntil(page.error_view.isVisible, timeout=CONNECT_TIMEOUT_MS)
    assert "cannot open database /nope/tasks.db" in page.error_view.toPlainText()
    assert "could not start" in page.error_view.toPlainText()
    assert page.tools_model.rowCount() == 0
    report = reporter().history[-1]
    assert report.level == "error"
    assert report.message.startswith("MCP server tasks could not start: ")
    assert "cannot open database /nope/tasks.db" in report.detail
    assert "tasks — press Connect to list them" in page.summary.text()


def test_a_connection_that_works_replaces_the_earlier_failure_in_the_status_bar(
    qtbot: QtBot, example_path: Path, qasync_loop: asyncio.AbstractEventLoop
) -> None:
    from tests.app._windows import studio_window

    window = studio_window(qtbot)
    document = window.open_file(example_path)
    assert document is not None
    document.set_field(("mcp_servers", "time", "command"), "no-such-mcp-server", text="Edit")
    page = window.show_page(document, "servers")
    assert isinstance(page, ServersPage)
    connect(qtbot, page, "time")
    qtbot.waitUntil(lambda: "could not start" in window.statusBar().currentMessage(), timeout=5000)

    document.set_field(("mcp_servers", "time", "command"), TIME_SERVER, text="Edit")
    connect(qtbot, page, "time")

    message = window.statusBar().currentMessage()
    assert "could not start" not in message and "✖" not in message
    assert message == "Connected to time: 2 tools."
    assert not window.details_button.isVisible()


def test_editing_a_server_forgets_the_tools_of_its_old_command(
    qtbot: QtBot, page: ServersPage, qasync_loop: asyncio.AbstractEventLoop
) -> None:
    connect(qtbot, page, "time")
    config = page.document.agent.mcp_servers["time"]
    page.ask_server = lambda taken, name, old: (
        "clock",
        config.model_copy(update={"args": ["--local-timezone", "UTC"]}),
    )

    assert page.edit_selected()

    assert "time" not in probe_cache(page.document).results
    assert page.tools_model.rowCount() == 0
    assert page.connect_status.text() == "Not connected yet: press Connect to list its tools."


# -- the dialog ------------------------------------------------------------------------------


def test_the_dialog_builds_a_stdio_server_and_moves_a_literal_secret_to_the_keyring(
    qtbot: QtBot,
) -> None:
    dialog = ServerDialog({"time"}, keyring_prefix="travel-desk")
    qtbot.addWidget(dialog)
    dialog.name_edit.setText("github")
    dialog.command_edit.setText("github-mcp-server")
    dialog.args_edit.setText("stdio --toolsets 'repos issues'")
    dialog.env_edit.setPlainText("GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123\nLOG=debug")
    dialog.free_radio.setChecked(True)
    stored: list[tuple[str, str, str]] = []

    def store(service: str, entry: str, value: str) -> str:
        stored.append((service, entry, value))
        return f"keyring://{service}/{entry}"

    name, config = dialog.build(store_secret=store)

    assert name == "github"
    assert config.args == ["stdio", "--toolsets", "repos issues"]
    assert config.env == {
        "GITHUB_TOKEN": "keyring://metaagent-studio/travel-desk-github-GITHUB_TOKEN",
        "LOG": "debug",
    }
    assert stored == [
        (
            "metaagent-studio",
            "travel-desk-github-GITHUB_TOKEN",
            "ghp_abcdefghijklmnopqrstuvwxyz0123",
        )
    ]
    assert config.to_data()["serverToolDefaults"] == {"permissionRequired": False}


def test_the_dialog_keeps_what_it_does_not_show_and_refuses_bad_input(qtbot: QtBot) -> None:
    original = McpServerConfig.model_validate(
        {
            "command": "mcp-server-time",
            "tools": {"convert_time": {"permissionRequired": True}},
            "x-note": "kept",
        }
    )
    dialog = ServerDialog({"time", "other"}, "time", original)
    qtbot.addWidget(dialog)
    assert dialog.command_edit.text() == "mcp-server-time"
    assert dialog.ask_radio.isChecked()  # unset counts as needing permission

    dialog.args_edit.setText("--local-timezone 'Europe/Lisbon")
    dialog.accept()
    assert dialog.result_value is None
    assert "arguments" in dialog.error_label.text()

    dialog.args_edit.setText("")
    dialog.name_edit.setText("other")
    dialog.accept()
    assert "already has a server named 'other'" in dialog.error_label.text()

    dialog.name_edit.setText("time")
    _name, config = dialog.build(store_secret=lambda *_: "unused")
    assert config.to_data() == {
        "type": "stdio",
        "command": "mcp-server-time",
        "tools": {"convert_time": {"permissionRequired": True}},
        "x-note": "kept",
    }


def test_adding_a_server_asks_for_the_permission_choice_and_says_its_effect(
    qtbot: QtBot,
) -> None:
    dialog = ServerDialog(set(), tool_permission="tool")
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.name_edit.setText("time")
    dialog.command_edit.setText(TIME_SERVER)
    assert not dialog.ask_radio.isChecked() and not dialog.free_radio.isChecked()
    assert dialog.permission_effect.text().startswith("Choose one.")

    dialog.accept()
    assert dialog.result_value is None
    assert "choose whether its tools need a person's permission" in dialog.error_label.text()

    qtbot.mouseClick(dialog.ask_radio, Qt.MouseButton.LeftButton)
    assert dialog.permission_effect.isVisible()
    assert dialog.permission_effect.text().startswith(
        "Test runs and served calls of this agent (toolPermission: tool) will get none of "
        "this server's tools"
    )
    qtbot.mouseClick(dialog.free_radio, Qt.MouseButton.LeftButton)
    assert dialog.permission_effect.text() == (
        "Test runs and served calls of this agent will get this server's tools."
    )
    dialog.accept()
    assert dialog.result_value is not None
    assert dialog.result_value[1].server_tool_defaults.permission_required is False


def test_the_dialog_says_which_program_a_command_starts_or_where_it_looked(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # started as .venv/bin/metaagent: no venv bin
    dialog = ServerDialog(set())
    qtbot.addWidget(dialog)
    dialog.show()

    dialog.command_edit.setText("mcp-server-time")
    assert dialog.command_note.text() == f"Starts {TIME_SERVER}"

    dialog.command_edit.setText("no-such-mcp-server")
    beside = Path(sys.executable).parent
    assert dialog.command_note.text() == (
        f"⚠ Not found on PATH, nor beside the studio's Python ({beside}): install it, or write "
        "its full path."
    )
    assert dialog.command_note.toolTip().startswith(
        f"command not found: no-such-mcp-server (looked in PATH and beside this Python: "
        f"/usr/bin, /bin, {beside})"
    )
    assert dialog.command_note.isVisible()


def test_pairs_name_the_line_that_is_wrong() -> None:
    assert parse_pairs("A=1\n\nB = two = 2\n", "=", "environment") == {"A": "1", "B": "two = 2"}
    with pytest.raises(ValueError, match="headers, line 2: write Name: value"):
        parse_pairs("Accept: json\nno colon here", ":", "headers")


def test_the_arguments_field_stays_put_while_the_command_is_typed(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    dialog = ServerDialog(set())
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)

    def arguments_top() -> int:
        QApplication.processEvents()
        return dialog.args_edit.mapTo(dialog, QPoint(0, 0)).y()

    before = arguments_top()
    tops: list[int] = []
    for key in "mcp-server-time":  # "Not found…" until the name is whole, then "Starts …"
        qtbot.keyClick(dialog.command_edit, key)
        tops.append(arguments_top())
    assert dialog.command_note.text() == f"Starts {TIME_SERVER}"
    # A click aimed at Arguments before typing still lands on it.
    assert set(tops) == {before}
