"""The export dialog: snippets, clipboard, install into a real config file, and a real Verify.

Install merges into a temporary config file that already holds other servers (the CLI's
``install``); Verify spawns the served agent as a real subprocess on the qasync loop.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from app.export_dialog import ExportDialog
from mcp_export.clients.entry import CLIENTS, ClientId, build_entry, snippet
from mcp_export.clients.verify_report import VerifyReport
from schema_types.files.agent_file import load_agent

OTHERS = {
    "time": {"command": "uvx", "args": ["mcp-server-time"]},
    "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"]},
}


@pytest.fixture
def dialog(qtbot: QtBot, example_path: Path) -> ExportDialog:
    widget = ExportDialog(example_path)
    qtbot.addWidget(widget)
    return widget


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


def test_copy_puts_the_snippet_on_the_clipboard(dialog: ExportDialog, qtbot: QtBot) -> None:
    dialog.set_client("vscode")
    qtbot.mouseClick(dialog.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == dialog.snippet_text()


def test_the_config_path_starts_at_the_clients_default(dialog: ExportDialog) -> None:
    from mcp_export.clients.entry import default_config_path

    dialog.set_client("claude-desktop")
    assert dialog.config_edit.text() == str(default_config_path("claude-desktop"))
    dialog.set_client("claude-code")
    assert dialog.install_fields.isHidden()
    assert "claude mcp add-json" in dialog.install_hint.text()
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
    dialog: ExportDialog, qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop
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
    # Without OPENAI_API_KEY the model check fails: the report is red and says so.
    ok_text = "Ready" if report.ok else "problem"
    assert ok_text in dialog.verify_status.text()
    assert dialog.verify_button.isEnabled() and not dialog.is_verifying()
    dialog.set_client("vscode")  # the report was about another client's entry
    assert dialog.report_view.toPlainText() == ""
    assert dialog.verify_status.text() == "Not verified yet."


def test_closing_the_dialog_cancels_a_running_verify(
    dialog: ExportDialog, qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop
) -> None:
    dialog.show()
    dialog.start_verify()
    assert dialog.is_verifying()
    dialog.reject()
    qtbot.waitUntil(lambda: not dialog.is_verifying(), timeout=10_000)
    assert dialog.last_report is None
