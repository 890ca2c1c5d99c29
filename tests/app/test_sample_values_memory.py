"""Sample values survive a reopen: kept per agent file and tool beside the studio's settings."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.settings_store import SettingsStore
from app.test_run.memory import ArgumentMemory, SampleMemory
from app.tool_editor.editor import ToolEditor
from app.tool_editor.sample_values import SampleOverrides
from app.window.main_window import MainWindow


def open_editor(
    qtbot: QtBot, path: Path, tool_name: str, settings: SettingsStore | None = None
) -> tuple[MainWindow, ToolEditor]:
    """A shown studio window with ``path`` open and the tool's editor tab in front."""
    window = MainWindow(settings=settings)
    window.ask_save = lambda _doc: "discard"  # type: ignore[assignment,method-assign]
    qtbot.addWidget(window)
    window.show()
    document = window.open_file(path)
    assert document is not None
    tool = document.agent.metadata.tool(tool_name)
    assert tool is not None
    editor = window.open_tool_tab(document, tool)
    assert isinstance(editor, ToolEditor)
    return window, editor


def type_in_table(qtbot: QtBot, editor: ToolEditor, path: str, text: str) -> None:
    """Type ``text`` as the sample value of ``path`` in the table, as a person does."""
    pane = editor.template
    view = pane.sample_panel.view
    index = pane.samples.index(pane.samples.paths().index(path), 1)
    view.scrollTo(index)
    view.setCurrentIndex(index)
    view.edit(index)
    (field,) = view.viewport().findChildren(QLineEdit)
    qtbot.keyClicks(field, text)
    qtbot.keyClick(field, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: pane.samples.index(index.row(), 1).data() == text, timeout=10_000)


def untick(qtbot: QtBot, editor: ToolEditor, path: str) -> None:
    """Turn the row's check box off with the keyboard (Space on the parameter's cell)."""
    pane = editor.template
    index = pane.samples.index(pane.samples.paths().index(path), 0)
    view = pane.sample_panel.view
    view.setCurrentIndex(index)
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_Space)
    assert index.data(Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Unchecked


def test_typed_and_left_out_samples_are_back_in_a_new_window(
    qtbot: QtBot, example_path: Path
) -> None:
    """The default store: the studio's settings in its home (a private one per test)."""
    window, editor = open_editor(qtbot, example_path, "search_flights")
    type_in_table(qtbot, editor, "origin", "Faro")
    editor.template.samples.set_sent("return_date", False)
    shown = editor.template.preview.text()
    assert shown.startswith("Find flights from Faro to ")
    assert "One way: no return flight." in shown
    window.close()

    again, reopened = open_editor(qtbot, example_path, "search_flights")
    assert again is not window
    samples = reopened.template.samples
    assert samples.overrides() == SampleOverrides({"origin": "Faro"}, frozenset({"return_date"}))
    assert reopened.template.preview.text() == shown
    row = samples.paths().index("origin")
    assert samples.index(row, 1).data(Qt.ItemDataRole.ForegroundRole) is None  # typed, not grey
    assert (SettingsStore().home / "sample-values.ini").exists()


def test_samples_are_kept_per_agent_file_and_tool(
    qtbot: QtBot, example_path: Path, tmp_path: Path
) -> None:
    store = SettingsStore(tmp_path / "home")
    other = tmp_path / "other" / example_path.name
    other.parent.mkdir()
    other.write_bytes(example_path.read_bytes())
    window, editor = open_editor(qtbot, example_path, "local_time", store)
    type_in_table(qtbot, editor, "city", "Porto")
    window.close()

    _, same_file_other_tool = open_editor(qtbot, example_path, "search_flights", store)
    assert same_file_other_tool.template.samples.overrides().is_empty()
    _, other_file = open_editor(qtbot, other, "local_time", store)
    assert other_file.template.samples.overrides().is_empty()
    _, same = open_editor(qtbot, example_path, "local_time", store)
    assert same.template.preview.text().startswith("What is the local time in Porto")
    assert (store.home / "sample-values.ini").exists()


def test_reset_forgets_the_kept_samples(qtbot: QtBot, example_path: Path, tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "home")
    window, editor = open_editor(qtbot, example_path, "local_time", store)
    type_in_table(qtbot, editor, "city", "Porto")
    untick(qtbot, editor, "timezone")
    memory = SampleMemory(store)
    assert memory.recall(editor.document, "local_time") == SampleOverrides(
        {"city": "Porto"}, frozenset({"timezone"})
    )
    qtbot.mouseClick(editor.template.sample_panel.reset_button, Qt.MouseButton.LeftButton)
    assert memory.recall(editor.document, "local_time") is None
    window.close()
    _, reopened = open_editor(qtbot, example_path, "local_time", store)
    assert reopened.template.samples.overrides().is_empty()


def test_a_kept_value_the_schema_no_longer_has_is_skipped(tmp_path: Path, qtbot: QtBot) -> None:
    store = SettingsStore(tmp_path / "home")
    path = tmp_path / "a.agent.yaml"
    path.write_text(
        "apiVersion: metaagent/v1\nkind: Agent\nmetadata:\n  name: A\n  tools:\n"
        "    - name: t\n      prompt: 'Hi {who}'\n      parameters:\n        type: object\n"
        "        properties:\n          who: {type: string}\n",
        encoding="utf-8",
    )
    document = AgentDocument.load(path)
    SampleMemory(store).remember(
        document, "t", SampleOverrides({"who": "Ann", "gone": "x"}, frozenset({"gone"}))
    )
    _, editor = open_editor(qtbot, path, "t", store)
    assert editor.template.samples.overrides() == SampleOverrides({"who": "Ann"})
    assert editor.template.preview.text() == "Hi Ann"


def test_an_unreadable_entry_is_ignored(tmp_path: Path, example_path: Path, qtbot: QtBot) -> None:
    store = SettingsStore(tmp_path / "home")
    document = AgentDocument.load(example_path)
    memory = SampleMemory(store)
    settings = QSettings(str(memory.file), QSettings.Format.IniFormat)
    settings.setValue(memory.key(document, "local_time"), "{not json")
    settings.sync()
    assert memory.recall(document, "local_time") is None
    settings.setValue(memory.key(document, "local_time"), '{"typed": {"city": 3}, "left_out": "x"}')
    settings.sync()
    assert memory.recall(document, "local_time") == SampleOverrides()
    _, editor = open_editor(qtbot, example_path, "local_time", store)
    assert editor.template.samples.overrides().is_empty()


def test_test_arguments_keep_their_own_file(tmp_path: Path, example_path: Path) -> None:
    store = SettingsStore(tmp_path / "home")
    document = AgentDocument.load(example_path)
    arguments, samples = ArgumentMemory(store), SampleMemory(store)
    arguments.remember(document, "local_time", {"city": "Lisbon"})
    samples.remember(document, "local_time", SampleOverrides({"city": "Porto"}))
    assert arguments.recall(document, "local_time") == {"city": "Lisbon"}
    assert samples.recall(document, "local_time") == SampleOverrides({"city": "Porto"})
    assert arguments.file == store.home / "test-arguments.ini"
    assert samples.file == store.home / "sample-values.ini"
