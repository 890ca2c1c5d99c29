"""The export dialog: snippets, clipboard, install into a real config file, a real Verify and a
real call.

Install merges into a temporary config file that already holds other servers (the CLI's
``install``); Verify spawns the served agent as a real subprocess on the qasync loop, with only
what the client passes (HOME points into ``tmp_path``: the server's data folder and keyring live
there), and *Try a call* calls it with the official client against a ``FakeOpenAIServer``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel, QWidget
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.export_dialog import ExportDialog
from mcp_export.clients.entry import CLIENTS, ClientId, build_entry, snippet
from mcp_export.clients.verify_call import CallOutcome
from mcp_export.clients.verify_report import VerifyReport
from schema_types.files.agent_file import load_agent
from tests.fakes._script import Reply, RequestBody, text
from tests.fakes.home_keyring import HomeKeyring, use_home_keyring
from tests.fakes.openai_server import FakeOpenAIServer

SECRET = "test-key-SECRET-dialog-0123456789"
WAIT_MS = 90_000
AGENT_YAML = """\
metadata:
  name: Travel Desk
  version: 1.0.0
  description: Plans trips.
  tools:
    - name: book_flight
      description: Books a flight.
      parameters:
        type: object
        properties: {{destination: {{type: string}}}}
        required: [destination]
      prompt: Book a flight to {{destination}}.
      tests:
        - name: Lisbon
          arguments: {{destination: Lisbon}}
settings:
  model: openai:fake-model
providers:
  openai:
    OPENAI_API_KEY: env://OPENAI_API_KEY
    OPENAI_BASE_URL: {base_url}
"""

OTHERS = {
    "time": {"command": "uvx", "args": ["mcp-server-time"]},
    "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"]},
}


@pytest.fixture
def dialog(qtbot: QtBot, example_path: Path) -> ExportDialog:
    widget = ExportDialog(example_path)
    qtbot.addWidget(widget)
    return widget


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME for this test: the launched servers' data folder, config files and keyring."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return folder


@pytest.fixture
def model() -> Iterator[FakeOpenAIServer]:
    def booked(body: RequestBody) -> Reply:
        return text(f"Booked: {body.last_user_text}", echo_credentials=True)

    with FakeOpenAIServer(responder=booked, api_key=SECRET) as server:
        yield server


@pytest.fixture
def agent_path(tmp_path: Path, model: FakeOpenAIServer) -> Path:
    path = tmp_path / "travel.agent.yaml"
    path.write_text(AGENT_YAML.format(base_url=model.base_url), encoding="utf-8")
    return path


def _verify(dialog: ExportDialog, qtbot: QtBot) -> VerifyReport:
    with qtbot.waitSignal(dialog.verify_finished, timeout=WAIT_MS) as signal:
        qtbot.mouseClick(dialog.verify_button, Qt.MouseButton.LeftButton)
    report = signal.args[0]
    assert isinstance(report, VerifyReport)
    return report


def _call(dialog: ExportDialog, qtbot: QtBot) -> CallOutcome:
    assert dialog.call_row.isVisible() and dialog.call_button.isEnabled()
    with qtbot.waitSignal(dialog.call_finished, timeout=WAIT_MS) as signal:
        qtbot.mouseClick(dialog.call_button, Qt.MouseButton.LeftButton)
        assert dialog.is_calling() and not dialog.verify_button.isEnabled()
    outcome = signal.args[0]
    assert isinstance(outcome, CallOutcome)
    return outcome


def _shown(dialog: ExportDialog) -> str:
    return dialog.verify_status.text() + "\n" + dialog.report_view.toPlainText()


def _answer(dialog: ExportDialog, monkeypatch: pytest.MonkeyPatch, yes: bool) -> list[Path]:
    asked: list[Path] = []

    def ask(path: Path) -> bool:
        asked.append(path)
        return yes

    monkeypatch.setattr(dialog, "ask_confirm", ask)
    return asked


def _config_with_others(path: Path) -> Path:
    path.write_text(json.dumps({"mcpServers": dict(OTHERS), "theme": "dark"}, indent=2))
    return path


@pytest.mark.parametrize("client", list(CLIENTS))
def test_each_clients_snippet_is_what_snippet_gives(
    dialog: ExportDialog, example_path: Path, client: ClientId
) -> None:
    dialog.set_client(client)
    expected = build_entry(example_path, load_agent(example_path), client)
    assert dialog.snippet_text() == snippet(expected)
    notes = dialog.notes_label.text()
    assert CLIENTS[client].label in notes
    assert ("offers MCP sampling" in notes) == CLIENTS[client].sampling


def test_the_notes_say_which_clients_lack_sampling(dialog: ExportDialog) -> None:
    dialog.set_client("claude-desktop")
    assert "does not offer MCP sampling" in dialog.notes_label.text()
    dialog.set_client("vscode")
    assert "offers MCP sampling" in dialog.notes_label.text()


def test_the_server_name_is_editable_and_empty_is_refused(dialog: ExportDialog) -> None:
    dialog.set_client("cursor")
    assert json.loads(dialog.snippet_text())["mcpServers"].keys() == {"travel-desk"}
    dialog.name_edit.setText("trips")
    assert json.loads(dialog.snippet_text())["mcpServers"].keys() == {"trips"}
    dialog.name_edit.setText("  ")
    assert dialog.snippet_text() == ""
    assert not dialog.install_button.isEnabled()
    assert "must not be empty" in dialog.notes_label.text()


def test_a_portable_launcher_and_the_agent_path_as_written(dialog: ExportDialog) -> None:
    dialog.set_client("cursor")
    assert not dialog.command_edit.isEnabled()
    dialog.launcher_combo.setCurrentIndex(dialog.launcher_combo.findData("uvx"))
    dialog.path_edit.setText("agents/travel.agent.yaml")
    entry = json.loads(dialog.snippet_text())["mcpServers"]["travel-desk"]
    assert entry["command"] == "uvx"
    assert entry["args"] == [
        "--from", "meta-agent-studio", "metaagent", "serve", "agents/travel.agent.yaml"
    ]  # fmt: skip
    assert "uvx fetches meta-agent-studio" in dialog.notes_label.text()
    dialog.launcher_combo.setCurrentIndex(dialog.launcher_combo.findData("command"))
    assert dialog.command_edit.isEnabled()
    assert dialog.snippet_text() == "" and not dialog.install_button.isEnabled()
    assert "needs the command that runs metaagent" in dialog.notes_label.text()
    dialog.command_edit.setText("/opt/tools/bin/metaagent")
    entry = json.loads(dialog.snippet_text())["mcpServers"]["travel-desk"]
    assert entry["command"] == "/opt/tools/bin/metaagent"
    assert entry["args"] == ["serve", "agents/travel.agent.yaml"]


def test_copy_puts_the_snippet_on_the_clipboard(dialog: ExportDialog, qtbot: QtBot) -> None:
    dialog.set_client("vscode")
    qtbot.mouseClick(dialog.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == dialog.snippet_text()


def test_the_config_path_starts_at_the_clients_default(dialog: ExportDialog) -> None:
    from mcp_export.clients.entry import default_config_path

    dialog.set_client("claude-desktop")
    assert dialog.config_edit.text() == str(default_config_path("claude-desktop"))
    dialog.set_client("claude-code")
    assert dialog.install_box.fields.isHidden()
    assert "claude mcp add-json" in dialog.install_box.hint.text()
    assert dialog.snippet_text().startswith("claude mcp add-json travel-desk ")
    assert dialog.install_entry() is None


def test_install_keeps_other_servers_makes_a_backup_and_is_idempotent(
    dialog: ExportDialog, qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _config_with_others(tmp_path / "claude_desktop_config.json")
    before = config.read_bytes()
    asked = _answer(dialog, monkeypatch, yes=True)
    dialog.set_client("claude-desktop")
    dialog.config_edit.setText(str(config))

    qtbot.mouseClick(dialog.install_button, Qt.MouseButton.LeftButton)

    assert asked == [config]
    written = json.loads(config.read_text())
    assert written["theme"] == "dark"
    assert {"time", "files", "travel-desk"} <= written["mcpServers"].keys()
    assert {k: written["mcpServers"][k] for k in OTHERS} == OTHERS
    assert written["mcpServers"]["travel-desk"] == dialog.entry.entry  # type: ignore[union-attr]
    (backup,) = tmp_path.glob("claude_desktop_config.json.bak-*")
    assert backup.read_bytes() == before
    assert f"Written: {config}" in dialog.install_result.text()
    assert str(backup) in dialog.install_result.text()

    again = dialog.install_entry()
    assert again is not None and not again.changed
    assert "already installed" in dialog.install_result.text()
    assert len(list(tmp_path.glob("*.bak-*"))) == 1
    assert json.loads(config.read_text()) == written


def test_declining_the_confirmation_changes_nothing(
    dialog: ExportDialog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _config_with_others(tmp_path / "mcp.json")
    before = config.read_bytes()
    asked = _answer(dialog, monkeypatch, yes=False)
    dialog.set_client("cursor")
    dialog.config_edit.setText(str(config))
    assert dialog.install_entry() is None
    assert asked == [config]
    assert config.read_bytes() == before
    assert not list(tmp_path.glob("mcp.json.bak-*"))
    assert "nothing was changed" in dialog.install_result.text()


def test_an_install_error_is_shown_and_the_file_kept(
    dialog: ExportDialog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "mcp.json"
    config.write_text('{"servers": {"travel-desk": {"command": "other"}}}')
    _answer(dialog, monkeypatch, yes=True)
    dialog.set_client("vscode")
    dialog.config_edit.setText(str(config))
    assert dialog.install_entry() is None
    assert "already has a different server named 'travel-desk'" in dialog.install_result.text()
    assert config.read_text() == '{"servers": {"travel-desk": {"command": "other"}}}'

    dialog.force_check.setChecked(True)
    result = dialog.install_entry()
    assert result is not None and result.changed and result.backup is not None
    assert json.loads(config.read_text())["servers"]["travel-desk"]["type"] == "stdio"


def test_verify_launches_the_server_and_lists_its_tools(
    dialog: ExportDialog, qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, home: Path
) -> None:
    dialog.set_client("json")
    dialog.resize(820, 900)
    dialog.show()
    with qtbot.waitSignal(dialog.verify_finished, timeout=60_000) as signal:
        qtbot.mouseClick(dialog.verify_button, Qt.MouseButton.LeftButton)
        assert dialog.is_verifying()
        assert not dialog.verify_button.isEnabled()  # one run at a time
    report = signal.args[0]
    assert isinstance(report, VerifyReport)
    names = [tool.name for tool in report.tools]
    assert names == ["search_flights", "book_flight", "plan_trip", "local_time"]
    shown = dialog.report_view.toPlainText()
    assert "Tools the server lists" in shown
    assert all(name in shown for name in names)
    assert "connects (legacy handshake)" in shown
    # The plain JSON entry leaves OPENAI_API_KEY empty to fill in: the report is red and says so.
    assert not report.ok and "problem" in dialog.verify_status.text()
    assert "OPENAI_API_KEY" in dialog.verify_status.text()
    assert dialog.verify_button.isEnabled() and not dialog.is_verifying()
    assert dialog.call_row.isVisible() and dialog.call_tool() == names[0]
    dialog.set_client("vscode")  # the report was about another client's entry
    assert dialog.report_view.toPlainText() == ""
    assert dialog.verify_status.text() == "Not verified yet."
    assert not dialog.call_row.isVisible()


def test_closing_the_dialog_cancels_a_running_verify(
    dialog: ExportDialog, qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, home: Path
) -> None:
    dialog.show()
    dialog.start_verify()
    assert dialog.is_verifying()
    dialog.reject()
    qtbot.waitUntil(lambda: not dialog.is_verifying(), timeout=10_000)
    assert dialog.last_report is None


def test_a_claude_desktop_install_is_not_ready_names_the_value_and_the_call_shows_the_error(
    qtbot: QtBot,
    qasync_loop: asyncio.AbstractEventLoop,
    home: Path,
    agent_path: Path,
    model: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)  # the studio's own: the client never sees it
    dialog = ExportDialog(agent_path)
    qtbot.addWidget(dialog)
    _answer(dialog, monkeypatch, yes=True)
    dialog.set_client("claude-desktop")
    config = home / "claude_desktop_config.json"
    dialog.config_edit.setText(str(config))
    assert dialog.install_entry() is not None
    dialog.show()

    report = _verify(dialog, qtbot)

    assert not report.ok
    status = dialog.verify_status.text()
    assert "Ready" not in status and "To fill in: OPENAI_API_KEY" in status
    where = f"empty in {config} at mcpServers › travel-desk › env › OPENAI_API_KEY"
    assert where in dialog.report_view.toPlainText()
    assert dialog.call_tool() == "book_flight"
    assert dialog.call_source.text() == "with test case 'Lisbon'"
    assert not dialog.fix_box.isVisible()  # no document: the report says what to do

    outcome = _call(dialog, qtbot)

    assert outcome.is_error and not outcome.ok
    shown = _shown(dialog)
    assert "isError result" in shown
    assert "OPENAI_API_KEY is set but empty" in shown
    assert "call book_flight" in dialog.verify_status.text() and "Ready" not in shown
    assert model.bodies == []
    assert SECRET not in shown


def test_try_a_call_shows_the_models_answer(
    qtbot: QtBot,
    qasync_loop: asyncio.AbstractEventLoop,
    home: Path,
    agent_path: Path,
    model: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)  # Cursor fills ${env:OPENAI_API_KEY} from it
    dialog = ExportDialog(agent_path)
    qtbot.addWidget(dialog)
    dialog.set_client("cursor")
    dialog.config_edit.setText(str(home / "mcp.json"))  # not installed: the entry as exported
    dialog.show()
    report = _verify(dialog, qtbot)
    assert report.ok, dialog.report_view.toPlainText()
    assert dialog.verify_status.text().startswith("✔ Ready")

    outcome = _call(dialog, qtbot)

    assert outcome.ok and outcome.text == "Booked: Book a flight to Lisbon.[redacted]"
    shown = _shown(dialog)
    assert "✔ Ready: a client will see 1 tool, and book_flight answered." in shown
    assert 'call book_flight with test case \'Lisbon\': {"destination": "Lisbon"}' in shown
    assert "Booked: Book a flight to Lisbon." in shown
    assert len(model.bodies) == 1
    assert SECRET not in shown
    assert dialog.verify_button.isEnabled() and dialog.call_button.text() == "Try a call"


def test_verify_shows_the_prompts_of_an_agent_that_serves_its_tools_as_prompts(
    qtbot: QtBot,
    qasync_loop: asyncio.AbstractEventLoop,
    home: Path,
    agent_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    text = agent_path.read_text(encoding="utf-8")
    agent_path.write_text(
        text.replace(
            "  model: openai:fake-model\n", "  model: openai:fake-model\n  toolsAsPrompts: true\n"
        ),
        encoding="utf-8",
    )
    dialog = ExportDialog(agent_path)
    qtbot.addWidget(dialog)
    dialog.set_client("cursor")
    dialog.config_edit.setText(str(home / "mcp.json"))
    dialog.show()

    report = _verify(dialog, qtbot)

    assert report.ok, dialog.report_view.toPlainText()
    assert [prompt.name for prompt in report.prompts] == ["book_flight"]
    shown = _shown(dialog)
    assert "✔ Ready: a client will see 1 tool and 1 prompt." in shown
    assert "✔ 1 prompt listed" in shown
    assert "Prompts the server lists (for clients that run them on their own model)" in shown
    assert "book_flight(destination)" in shown


def _installed_without_key(
    qtbot: QtBot, home: Path, agent_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[AgentDocument, ExportDialog, Path]:
    """The dialog of an agent whose key is not set, installed for Claude Desktop and shown, its
    verify failed; with the agent's document and the client's config file."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    document = AgentDocument.load(agent_path)
    dialog = ExportDialog(agent_path, document=document)
    qtbot.addWidget(dialog)
    _answer(dialog, monkeypatch, yes=True)
    dialog.set_client("claude-desktop")
    config = home / "claude_desktop_config.json"
    dialog.config_edit.setText(str(config))
    dialog.install_entry()
    dialog.show()
    assert not _verify(dialog, qtbot).ok
    return document, dialog, config


@pytest.fixture
def home_keyring(home: Path) -> Iterator[HomeKeyring]:
    """The keyring of this HOME, for the studio here and the servers it launches alike."""
    use_home_keyring(home, {})
    previous = keyring.get_keyring()
    backend = HomeKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


def test_the_key_stored_in_the_keyring_from_the_dialog_makes_the_install_work(
    qtbot: QtBot,
    qasync_loop: asyncio.AbstractEventLoop,
    home: Path,
    home_keyring: HomeKeyring,
    agent_path: Path,
    model: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _document, dialog, config = _installed_without_key(qtbot, home, agent_path, monkeypatch)
    offer = dialog.keyring_offer
    assert offer is not None and dialog.keyring_field is not None
    assert dialog.fix_box.isVisible() and not offer.save_button.isEnabled()

    dialog.keyring_field.edit.setText(SECRET)
    assert dialog.keyring_field.commit()
    assert offer.save_button.isEnabled()
    with qtbot.waitSignal(dialog.verify_finished, timeout=WAIT_MS) as signal:
        qtbot.mouseClick(offer.save_button, Qt.MouseButton.LeftButton)

    reference = "keyring://metaagent-studio/travel-desk-openai"
    assert load_agent(agent_path).providers["openai"]["OPENAI_API_KEY"] == reference
    assert home_keyring.get_password("metaagent-studio", "travel-desk-openai") == SECRET
    # The installed entry still carries its empty value; the agent no longer reads it.
    assert json.loads(config.read_text())["mcpServers"]["travel-desk"]["env"] == {
        "OPENAI_API_KEY": ""
    }
    assert signal.args[0].ok, dialog.report_view.toPlainText()
    assert not dialog.fix_box.isVisible()
    outcome = _call(dialog, qtbot)
    assert outcome.ok and "Booked: Book a flight to Lisbon." in outcome.text
    assert SECRET not in _shown(dialog)


def _visible_text(widget: QWidget) -> str:
    return "\n".join(label.text() for label in widget.findChildren(QLabel) if label.isVisible())


def test_a_key_the_keyring_refuses_is_explained_in_the_dialog_with_a_way_for_claude_desktop(
    qtbot: QtBot,
    qasync_loop: asyncio.AbstractEventLoop,
    home: Path,
    no_keyring: None,
    agent_path: Path,
    model: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    document, dialog, config = _installed_without_key(qtbot, home, agent_path, monkeypatch)
    assert dialog.keyring_field is not None

    qtbot.keyClicks(dialog.keyring_field.edit, SECRET)
    qtbot.mouseClick(dialog.keyring_field.store_button, Qt.MouseButton.LeftButton)

    assert dialog.keyring_offer is not None
    problem = dialog.keyring_offer.problem
    qtbot.waitUntil(lambda: not problem.visibleRegion().isEmpty(), timeout=5000)  # in view
    shown = _visible_text(dialog)
    assert "could not be stored in the system keyring" in shown
    assert "No recommended backend was available" in shown
    # The way that works for Claude Desktop: the value in its config, where the entry has it.
    assert "Claude Desktop starts the server without your shell's environment" in shown
    assert f"mcpServers › travel-desk › env › OPENAI_API_KEY in {config}" in shown
    assert "type env://" not in shown
    assert SECRET not in shown
    assert document.agent.providers["openai"]["OPENAI_API_KEY"] == "env://OPENAI_API_KEY"
    assert not document.is_dirty()  # nothing was written to the agent


def test_closing_the_dialog_cancels_a_running_call(
    qtbot: QtBot,
    qasync_loop: asyncio.AbstractEventLoop,
    home: Path,
    agent_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    dialog = ExportDialog(agent_path)
    qtbot.addWidget(dialog)
    dialog.set_client("cursor")
    dialog.show()
    _verify(dialog, qtbot)
    dialog.start_call()
    assert dialog.is_calling()
    dialog.reject()
    qtbot.waitUntil(lambda: not dialog.is_calling(), timeout=10_000)
    assert dialog.last_call is None


def test_the_windows_export_dialog_knows_its_document_so_it_can_offer_the_keyring(
    qtbot: QtBot, example_path: Path
) -> None:
    from tests.app._windows import studio_window

    window = studio_window(qtbot)
    document = window.open_file(example_path)
    assert document is not None
    dialog = window.open_export_dialog(document)

    assert isinstance(dialog, ExportDialog)
    assert dialog.document is document
    dialog.close()
