"""The Model page: every field edits the agent through the document (undoable), the API key goes
to the keyring (a file-backed keyring backend defined here) and only its reference to the file,
and "Test connection" / "Refresh" talk to a real local HTTP server that speaks the OpenAI API.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import keyring
import keyring.backend
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.errors import reporter
from app.pages.model_fields import stop_from_text, stop_to_text
from app.pages.model_page import ModelPage
from schema_types.files.agent_file import load_agent
from tests.fakes._script import delay, text
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.ports import refused_origin

SECRET = "sk-test-0123456789abcdefghijklmnop"


class FileKeyring(keyring.backend.KeyringBackend):
    """A keyring backend that keeps its entries in a JSON file (what the studio sees as 'the
    system keyring' in these tests)."""

    priority = 1

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def _entries(self) -> dict[str, str]:
        if not self.path.exists():
            return {}
        entries: dict[str, str] = json.loads(self.path.read_text(encoding="utf-8"))
        return entries

    def get_password(self, service: str, username: str) -> str | None:
        return self._entries().get(f"{service}/{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        entries = self._entries()
        entries[f"{service}/{username}"] = password
        self.path.write_text(json.dumps(entries), encoding="utf-8")

    def delete_password(self, service: str, username: str) -> None:
        entries = self._entries()
        entries.pop(f"{service}/{username}", None)
        self.path.write_text(json.dumps(entries), encoding="utf-8")


@pytest.fixture
def file_keyring(tmp_path: Path) -> Iterator[FileKeyring]:
    previous = keyring.get_keyring()
    backend = FileKeyring(tmp_path / "keyring.json")
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


@pytest.fixture
def document(example_path: Path) -> AgentDocument:
    return AgentDocument.load(example_path)


@pytest.fixture
def page(qtbot: QtBot, document: AgentDocument) -> ModelPage:
    widget = ModelPage(document)
    qtbot.addWidget(widget)
    widget.resize(900, 900)
    widget.show()
    return widget


def retype(qtbot: QtBot, edit: QLineEdit, text: str) -> None:
    """Select what the field holds and type ``text`` over it, as a person does."""
    edit.setFocus()
    edit.selectAll()
    if text:
        qtbot.keyClicks(edit, text)
    else:
        qtbot.keyClick(edit, Qt.Key.Key_Delete)
    edit.editingFinished.emit()


def point_at(document: AgentDocument, base_url: str, model: str = "fake-model") -> None:
    document.set_field(("settings", "model"), f"openai:{model}", text="model")
    document.set_field(
        ("providers",),
        {"openai": {"OPENAI_API_KEY": "env://FAKE_OPENAI_KEY", "OPENAI_BASE_URL": base_url}},
        text="endpoint",
    )


# -- fields ----------------------------------------------------------------------------------


def test_typing_a_parameter_sets_it_as_one_undo_step(qtbot: QtBot, page: ModelPage) -> None:
    assert page.temperature_edit.text() == "0.2"

    retype(qtbot, page.temperature_edit, "0.75")

    assert page.document.agent.settings.temperature == 0.75
    page.document.undo_stack.undo()
    assert page.document.agent.settings.temperature == 0.2
    assert page.temperature_edit.text() == "0.2"
    page.document.undo_stack.redo()
    assert page.document.agent.settings.temperature == 0.75


def test_every_parameter_field_edits_its_setting_and_empty_means_unset(
    qtbot: QtBot, page: ModelPage
) -> None:
    before = page.document.agent.to_data()

    retype(qtbot, page.top_p_edit, "0.9")
    retype(qtbot, page.max_tokens_edit, "")
    retype(qtbot, page.seed_edit, "42")
    retype(qtbot, page.presence_edit, "-0.5")
    retype(qtbot, page.frequency_edit, "1.25")
    page.stop_edit.setFocus()
    qtbot.keyClicks(page.stop_edit, "END")
    qtbot.keyClick(page.stop_edit, Qt.Key.Key_Return)
    qtbot.keyClicks(page.stop_edit, "\\n\\n")

    assert page.document.agent.settings.top_p == 0.9
    assert page.document.agent.settings.max_output_tokens is None  # unset: the provider's default
    assert page.document.agent.settings.seed == 42
    assert page.document.agent.settings.presence_penalty == -0.5
    assert page.document.agent.settings.frequency_penalty == 1.25
    assert page.document.agent.settings.stop == ["END", "\n\n"]
    assert page.stop_edit.toPlainText() == "END\n\\n\\n"
    assert "maxOutputTokens" not in page.document.agent.to_data()["settings"]

    while page.document.undo_stack.canUndo():
        page.document.undo_stack.undo()
    assert page.document.agent.to_data() == before
    assert page.max_tokens_edit.text() == "1500"


def test_a_refused_value_leaves_the_setting_and_says_why(qtbot: QtBot, page: ModelPage) -> None:
    retype(qtbot, page.temperature_edit, "3")

    assert page.document.agent.settings.temperature == 0.2
    assert page.temperature_edit.text() == "0.2"  # the field shows the model again when left
    assert any("temperature" in r.message for r in reporter().history)


def test_model_name_provider_and_base_url_edit_the_agent(qtbot: QtBot, page: ModelPage) -> None:
    edit = page.model_combo.lineEdit()
    assert edit is not None and edit.text() == "gpt-4.1-mini"

    retype(qtbot, edit, "gpt-4.1")
    assert page.document.agent.settings.model == "openai:gpt-4.1"

    page.provider_combo.activated.emit(page.provider_combo.findData("ollama"))
    assert page.document.agent.settings.model == "ollama:gpt-4.1"
    assert page.base_url_edit.placeholderText() == "http://localhost:11434/v1"
    retype(qtbot, page.base_url_edit, "http://gpu-box:11434/v1")
    assert page.document.agent.providers["ollama"] == {"OLLAMA_BASE_URL": "http://gpu-box:11434/v1"}

    page.provider_combo.activated.emit(page.provider_combo.findData("sampling"))
    assert page.document.agent.settings.model == "sampling"
    assert not page.test_button.isEnabled()
    assert not page.key_field.edit.isEnabled()

    stack = page.document.undo_stack
    stack.undo()
    assert page.document.agent.settings.model == "ollama:gpt-4.1"
    stack.undo()
    assert "ollama" not in page.document.agent.providers
    stack.undo()
    stack.undo()
    assert page.document.agent.settings.model == "openai:gpt-4.1-mini"
    assert page.provider_combo.currentData() == "openai"
    assert edit.text() == "gpt-4.1-mini"


def test_loop_cap_timeout_and_permission_policy(qtbot: QtBot, page: ModelPage) -> None:
    assert "time — press Connect on the MCP servers page" in page.usable_label.text()

    page.turns_spin.setValue(15)
    page.timeout_spin.setValue(30)
    page.permission_combo.activated.emit(page.permission_combo.findData("always"))

    edited = page.document.agent.settings
    assert (edited.max_chat_turns, edited.timeout_seconds) == (15, 30.0)
    assert edited.tool_permission == "always"
    assert "no tools at all" in page.permission_hint.text()
    page.document.undo_stack.undo()
    assert page.document.agent.settings is not edited
    assert page.document.agent.settings.tool_permission == "tool"
    assert "only the tools marked" in page.permission_hint.text()


def _providers_in_file(path: Path) -> dict[str, dict[str, str]]:
    return dict(load_agent(path).providers)


def test_stream_and_concurrency_are_written_only_when_off_their_defaults_and_saved(
    qtbot: QtBot, page: ModelPage, example_path: Path
) -> None:
    document = page.document
    before = document.agent.to_data()
    assert page.stream_check.isChecked() and page.stream_check.isEnabled()
    assert page.concurrency_spin.value() == 0 and page.concurrency_spin.text() == "unlimited"

    qtbot.mouseClick(page.stream_check, Qt.MouseButton.LeftButton)
    page.concurrency_spin.setFocus()
    page.concurrency_spin.selectAll()
    qtbot.keyClicks(page.concurrency_spin, "4")
    page.concurrency_spin.editingFinished.emit()

    assert document.agent.providers["openai"] == {
        "OPENAI_API_KEY": "env://OPENAI_API_KEY",
        "stream": "false",
        "maxConcurrentRequests": "4",
    }
    document.save()
    reloaded = AgentDocument.load(example_path)
    assert reloaded.agent.providers["openai"]["stream"] == "false"
    assert reloaded.agent.providers["openai"]["maxConcurrentRequests"] == "4"
    again = ModelPage(reloaded)
    qtbot.addWidget(again)
    assert not again.stream_check.isChecked()
    assert again.concurrency_spin.value() == 4

    # Back to the defaults: the keys leave the file again.
    qtbot.mouseClick(page.stream_check, Qt.MouseButton.LeftButton)
    page.concurrency_spin.setValue(0)
    assert document.agent.providers["openai"] == {"OPENAI_API_KEY": "env://OPENAI_API_KEY"}
    document.save()
    saved = example_path.read_text(encoding="utf-8")
    assert "stream" not in saved and "maxConcurrentRequests" not in saved
    assert _providers_in_file(example_path)["openai"] == {"OPENAI_API_KEY": "env://OPENAI_API_KEY"}

    # Every change was its own undo step, and undo walks them back to the start.
    stack = document.undo_stack
    stack.undo()
    assert page.concurrency_spin.value() == 4
    assert document.agent.providers["openai"]["maxConcurrentRequests"] == "4"
    stack.undo()
    assert not page.stream_check.isChecked()
    stack.undo()
    assert page.concurrency_spin.value() == 0
    stack.undo()
    assert page.stream_check.isChecked()
    assert document.agent.to_data() == before


def test_a_llamacpp_endpoint_takes_one_request_at_a_time_unless_set_to_unlimited(
    qtbot: QtBot, page: ModelPage, example_path: Path
) -> None:
    document = page.document
    document.set_field(("settings", "model"), "llamacpp:qwen2.5-7b", text="model")
    assert page.endpoint_id() == "llamacpp"
    assert page.concurrency_spin.value() == 1  # the default of that kind, nothing written
    assert "llamacpp" not in document.agent.providers

    page.concurrency_spin.setValue(0)
    assert document.agent.providers["llamacpp"] == {"maxConcurrentRequests": "unlimited"}
    page.concurrency_spin.setValue(1)
    assert "llamacpp" not in document.agent.providers
    page.concurrency_spin.setValue(2)
    qtbot.mouseClick(page.stream_check, Qt.MouseButton.LeftButton)
    document.save()
    assert _providers_in_file(example_path)["llamacpp"] == {
        "maxConcurrentRequests": "2",
        "stream": "false",
    }

    # Another provider shows its own entry: openai has neither key.
    document.set_field(("settings", "model"), "openai:gpt-4.1-mini", text="model")
    assert page.stream_check.isChecked() and page.concurrency_spin.value() == 0
    page.provider_combo.activated.emit(page.provider_combo.findData("sampling"))
    assert not page.stream_check.isEnabled() and not page.concurrency_spin.isEnabled()


def test_endpoint_values_the_file_spells_otherwise_are_read_and_kept(
    qtbot: QtBot, document: AgentDocument
) -> None:
    document.set_field(
        ("providers",),
        {
            "openai": {
                "OPENAI_API_KEY": "env://OPENAI_API_KEY",
                "stream": "FALSE",
                "maxConcurrentRequests": "Unlimited",
            }
        },
        text="endpoint",
    )
    page = ModelPage(document)
    qtbot.addWidget(page)
    assert not page.stream_check.isChecked()
    assert page.concurrency_spin.value() == 0
    page.concurrency_spin.setValue(0)  # no change: the file keeps its spelling
    assert document.agent.providers["openai"]["maxConcurrentRequests"] == "Unlimited"
    assert document.agent.providers["openai"]["stream"] == "FALSE"


def test_stop_sequences_round_trip_through_their_text_form() -> None:
    sequences = ["END", "\n\n", "a\\b", "tab\there"]
    assert stop_from_text(stop_to_text(sequences)) == sequences
    assert stop_from_text("") is None


# -- API key ---------------------------------------------------------------------------------


def test_api_key_goes_to_the_keyring_and_only_its_reference_to_the_file(
    qtbot: QtBot, page: ModelPage, file_keyring: FileKeyring, example_path: Path
) -> None:
    field = page.key_field
    assert field.edit.echoMode() == QLineEdit.EchoMode.Password

    field.edit.setFocus()
    qtbot.keyClicks(field.edit, SECRET)
    qtbot.keyClick(field.edit, Qt.Key.Key_Return)

    reference = "keyring://metaagent-studio/travel-desk-openai"
    assert page.document.agent.providers["openai"]["OPENAI_API_KEY"] == reference
    assert file_keyring.get_password("metaagent-studio", "travel-desk-openai") == SECRET
    assert field.edit.text() == ""
    assert reference in field.status.text()
    page.document.save()
    saved = example_path.read_text(encoding="utf-8")
    assert SECRET not in saved
    assert reference in saved
    assert load_agent(example_path).providers["openai"]["OPENAI_API_KEY"] == reference

    page.document.undo_stack.undo()
    assert page.document.agent.providers["openai"]["OPENAI_API_KEY"] == "env://OPENAI_API_KEY"


def test_a_typed_env_reference_is_stored_as_it_is(
    qtbot: QtBot, page: ModelPage, file_keyring: FileKeyring, example_path: Path
) -> None:
    field = page.key_field
    field.edit.setFocus()
    qtbot.keyClicks(field.edit, "env://TRAVEL_OPENAI_KEY")
    assert field.edit.echoMode() == QLineEdit.EchoMode.Normal  # a reference is no secret
    qtbot.keyClick(field.edit, Qt.Key.Key_Return)

    assert page.document.agent.providers["openai"]["OPENAI_API_KEY"] == "env://TRAVEL_OPENAI_KEY"
    assert not file_keyring.path.exists()
    page.document.save()
    assert "OPENAI_API_KEY: env://TRAVEL_OPENAI_KEY" in example_path.read_text(encoding="utf-8")
    assert "TRAVEL_OPENAI_KEY" in field.status.text()


def test_a_literal_key_from_the_file_can_be_moved_to_the_keyring(
    qtbot: QtBot, document: AgentDocument, file_keyring: FileKeyring
) -> None:
    document.agent.providers = {"openai": {"OPENAI_API_KEY": SECRET}}
    page = ModelPage(document)
    qtbot.addWidget(page)
    page.show()
    assert "plain text" in page.key_field.status.text()
    assert page.key_field.move_button.isVisible()

    qtbot.mouseClick(page.key_field.move_button, Qt.MouseButton.LeftButton)

    reference = "keyring://metaagent-studio/travel-desk-openai"
    assert document.agent.providers["openai"]["OPENAI_API_KEY"] == reference
    assert file_keyring.get_password("metaagent-studio", "travel-desk-openai") == SECRET
    assert not page.key_field.move_button.isVisible()


# -- requests to the endpoint ----------------------------------------------------------------


def test_test_connection_reports_the_latency(
    qtbot: QtBot,
    page: ModelPage,
    qasync_loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-fake")
    with FakeOpenAIServer(api_key="sk-fake") as server:
        point_at(page.document, server.base_url)
        qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(
            lambda: page.test_result.text().startswith(("Connected", "✖")), timeout=10_000
        )

        assert page.test_result.text().startswith("Connected: fake-model answered in ")
        assert " ms (first token after " in page.test_result.text()
        assert server.bodies[0]["model"] == "fake-model"
        assert server.bodies[0]["temperature"] == 0.2  # the agent's own parameters
        assert server.bodies[0]["messages"][-1]["content"] == "Reply with one word: ready"
        qtbot.waitUntil(lambda: page.test_button.isEnabled(), timeout=10_000)


def test_test_connection_waits_as_long_as_the_agents_timeout_and_names_it(
    qtbot: QtBot,
    page: ModelPage,
    qasync_loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-fake")
    page.document.set_field(("settings", "timeout_seconds"), 1.0, text="timeout")
    with FakeOpenAIServer([delay(3, text("ready"))], api_key="sk-fake") as server:
        point_at(page.document, server.base_url)
        started = time.monotonic()
        qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(
            lambda: page.test_result.text().startswith(("Connected", "✖")), timeout=10_000
        )
        waited = time.monotonic() - started
        shown = page.test_result.text()
        assert shown.startswith("✖ Connection failed: "), shown
        assert "1 s (settings.timeoutSeconds)" in shown, shown
        assert server.origin.removeprefix("http://") in shown, shown
        assert waited < 2.5, waited
        qtbot.waitUntil(lambda: page.test_button.isEnabled(), timeout=10_000)


def test_test_connection_against_a_dead_port_shows_the_exact_error(
    qtbot: QtBot,
    page: ModelPage,
    qasync_loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-fake")
    with refused_origin() as origin:
        base_url = f"{origin}/v1"
        point_at(page.document, base_url)
        qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: page.test_result.text().startswith("✖"), timeout=15_000)

    message = (
        f"Connection failed: nothing answers at {base_url} — is the server running and the base "
        "URL right? (gave up after 3 attempts)"
    )
    assert page.test_result.text() == f"✖ {message}"
    assert reporter().history[-1].message == message
    assert reporter().history[-1].level == "error"


def test_test_connection_names_a_missing_key(
    qtbot: QtBot,
    page: ModelPage,
    qasync_loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.test_result.text().startswith("✖"), timeout=10_000)

    assert page.test_result.text() == (
        "✖ Connection failed: OPENAI_API_KEY is not set (env://OPENAI_API_KEY)"
    )


def test_refresh_lists_the_endpoint_models(
    qtbot: QtBot,
    page: ModelPage,
    qasync_loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-fake")
    with FakeOpenAIServer(models=("zeta-large", "alpha-mini"), api_key="sk-fake") as server:
        point_at(page.document, server.base_url, model="alpha-mini")
        qtbot.mouseClick(page.refresh_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: page.model_combo.count() == 2, timeout=10_000)

        items = [page.model_combo.itemText(i) for i in range(page.model_combo.count())]
        assert items == ["alpha-mini", "zeta-large"]
        assert page.model_combo.currentText() == "alpha-mini"
        assert page.refresh_result.text() == "The endpoint lists 2 models."
        assert server.requests[0].path == "/v1/models"
        assert server.requests[0].headers["authorization"] == "Bearer sk-fake"

        page.model_combo.activated.emit(1)
        assert page.document.agent.settings.model == "openai:zeta-large"


def test_refresh_against_a_dead_port_reports_why(
    qtbot: QtBot,
    page: ModelPage,
    qasync_loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-fake")
    with refused_origin() as origin:
        base_url = f"{origin}/v1"
        point_at(page.document, base_url)
        qtbot.mouseClick(page.refresh_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: page.refresh_result.text().startswith("✖"), timeout=10_000)

    message = f"Could not list the models: nothing answers at {base_url} — check the base URL"
    assert page.refresh_result.text() == f"✖ {message}"
    assert reporter().history[-1].message == message
    assert page.model_combo.count() == 0


def test_a_failed_test_stays_beside_its_button_while_refresh_selects_the_one_listed_model(
    qtbot: QtBot,
    page: ModelPage,
    qasync_loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-fake")
    with refused_origin() as origin:
        point_at(page.document, f"{origin}/v1", model="gpt-4.1-mini")
        qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: page.test_result.text().startswith("✖"), timeout=15_000)
    failure = page.test_result.text()
    assert "nothing answers at" in failure

    with FakeOpenAIServer(models=("solo-7b",), api_key="sk-fake") as server:
        point_at(page.document, server.base_url, model="gpt-4.1-mini")
        qtbot.mouseClick(page.refresh_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not page.tasks.is_running("refresh"), timeout=10_000)

    assert page.test_result.text() == failure and page.test_result.isVisible()
    assert page.model_combo.currentIndex() == 0 and page.model_combo.currentText() == "solo-7b"
    assert page.document.agent.settings.model == "openai:solo-7b"
    assert page.document.undo_stack.undoText() == "Edit model"
    assert page.refresh_result.text() == "The endpoint lists 1 model: solo-7b (selected)."
    assert reporter().history[-1].message == "1 model listed"

    qtbot.mouseClick(page.test_result.dismiss_button, Qt.MouseButton.LeftButton)
    assert not page.test_result.isVisible() and page.test_result.text() == ""
    assert page.refresh_result.isVisible()


def test_a_failed_refresh_stays_under_the_model_box_until_the_next_refresh(
    qtbot: QtBot,
    page: ModelPage,
    qasync_loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-fake")
    with refused_origin() as origin:
        point_at(page.document, f"{origin}/v1")
        qtbot.mouseClick(page.refresh_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: page.refresh_result.text().startswith("✖"), timeout=10_000)
    assert page.refresh_result.failed() and page.refresh_result.dismiss_button.isVisible()

    with FakeOpenAIServer(models=("c", "b", "a"), api_key="sk-fake") as server:
        point_at(page.document, server.base_url, model="b")
        qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: page.test_result.text().startswith("Connected"), timeout=10_000)
        assert page.refresh_result.text().startswith("✖ Could not list the models")

        qtbot.mouseClick(page.refresh_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not page.tasks.is_running("refresh"), timeout=10_000)

    assert page.refresh_result.text() == "The endpoint lists 3 models."
    assert page.model_combo.currentText() == "b"
    assert page.document.agent.settings.model == "openai:b"
    assert page.test_result.text().startswith("Connected: b answered in ")
