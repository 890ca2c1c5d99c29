"""*Suggest a fix* in the studio's results matrix, by what a person sees.

The run, the authoring exchange and the re-run go through the real runtime to a
``FakeOpenAIServer`` over loopback playing both the authoring model and the served model
(``tests.fakes.authoring``); History is the real SQLite store. The person selects the failing
cell, clicks *Suggest a fix*, reads the reason and the diff, clicks *Apply and re-run*, reads the
rates, and clicks *Undo*: the agent's text is then the same bytes as before, and the file on
disk never changed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.authoring.improve_view import ImprovePanel
from app.test_cases.matrix_tab import MatrixTab
from schema_types.files.agent_file import text_for_save
from tests.app._windows import studio_window
from tests.fakes.authoring import (
    FIX_THAT_BREAKS,
    FIX_THAT_PASSES,
    agent_file,
    authoring_and_served,
)
from tests.fakes.openai_server import FakeOpenAIServer

RUN_MS = 60_000
SERVED = "openai:fake-model"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IMPROVE_TEST_KEY", "sk-test")


def _open(qtbot: QtBot, path: Path) -> MatrixTab:
    window = studio_window(qtbot)
    document = window.open_file(path)
    assert document is not None
    tab = window.open_matrix_tab(document, None, [SERVED])
    assert isinstance(tab, MatrixTab)
    qtbot.waitUntil(lambda: tab.last_end is not None and not tab.busy, timeout=RUN_MS)
    return tab


def _suggest(qtbot: QtBot, tab: MatrixTab) -> ImprovePanel:
    panel = tab.improve
    assert not panel.suggest_button.isEnabled()  # nothing selected yet
    tab.select_cells([("book_flight", "oslo", SERVED)])
    assert panel.suggest_button.isEnabled()
    qtbot.mouseClick(panel.suggest_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not tab.tasks.is_running("improve"), timeout=RUN_MS)
    return panel


def _apply(qtbot: QtBot, tab: MatrixTab, panel: ImprovePanel) -> None:
    assert panel.apply_button.isEnabled()
    qtbot.mouseClick(panel.apply_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.comparison is not None, timeout=RUN_MS)
    qtbot.waitUntil(lambda: not tab.tasks.is_running("improve"), timeout=RUN_MS)


def test_suggest_apply_rerun_and_undo_to_the_same_bytes(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    with FakeOpenAIServer(responder=authoring_and_served([FIX_THAT_PASSES])) as model:
        path = agent_file(tmp_path / "desk.agent.yaml", model.base_url)
        on_disk = path.read_bytes()
        tab = _open(qtbot, path)
        document = tab.document
        before = text_for_save(document.agent, path)
        panel = _suggest(qtbot, tab)

        assert panel.status.text() == "Suggested a change to prompt."
        assert panel.reason.isVisible()
        assert "expects the confirmation code" in panel.reason.text()
        shown = panel.diff.toPlainText()
        assert "--- desk.agent.yaml (now)" in shown
        assert any(
            line.startswith("+") and "Give the confirmation code." in line
            for line in shown.splitlines()
        )

        _apply(qtbot, tab, panel)

    assert panel.rates.text().split("<br>") == [
        f'<span style="color:#2e7d32">Fixed: book_flight / oslo on {SERVED}</span>',
        f"{SERVED}: 1/2 → 2/2 passed",
    ]
    assert panel.status.text() == "Applied (not saved): nothing regressed. Save to keep it."
    assert "Give the confirmation code." in text_for_save(document.agent, path)
    assert document.is_dirty()
    assert path.read_bytes() == on_disk  # nothing written until the author saves
    assert panel.first_result_at > panel.accepted_at

    qtbot.mouseClick(panel.undo_button, Qt.MouseButton.LeftButton)
    assert panel.status.text() == "The fix is undone."
    assert text_for_save(document.agent, path) == before
    assert not document.is_dirty()
    assert path.read_bytes() == on_disk


def test_a_fix_that_breaks_another_case_shows_the_regression_first(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    with FakeOpenAIServer(responder=authoring_and_served([FIX_THAT_BREAKS])) as model:
        path = agent_file(tmp_path / "desk.agent.yaml", model.base_url)
        tab = _open(qtbot, path)
        panel = _suggest(qtbot, tab)
        _apply(qtbot, tab, panel)

    lines = panel.rates.text().split("<br>")
    assert lines[0] == (
        f'<span style="color:#c62828"><b>Regressed</b>: book_flight / paris on {SERVED}</span>'
    )
    assert lines[1:] == [
        f'<span style="color:#2e7d32">Fixed: book_flight / oslo on {SERVED}</span>',
        f"{SERVED}: 1/2 → 1/2 passed",
    ]
    assert panel.status.text() == (
        "Applied (not saved): 1 passing case now fails. Undo takes the change back."
    )


def test_a_proposal_invalid_twice_is_refused_and_nothing_is_offered(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    bad = {"field": "parameters", "text": "not json", "reason": "broken"}
    with FakeOpenAIServer(responder=authoring_and_served([bad, bad])) as model:
        path = agent_file(tmp_path / "desk.agent.yaml", model.base_url)
        tab = _open(qtbot, path)
        panel = _suggest(qtbot, tab)

    assert panel.status.text().startswith(
        "no fix is offered: the authoring model's change was still invalid after one repair turn"
    )
    assert not panel.diff.isVisible()
    assert not panel.apply_button.isEnabled()
