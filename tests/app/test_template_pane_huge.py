"""A prompt of 460 KB in the template pane: diagnostics and preview come from a worker thread.

The prompt is a hostile one: ``{?nights}`` 20 000 times then ``{/destination}`` 20 000 times, every
tag unpaired. Opening it shows the text at once; the engine's diagnostics and preview are worked
out while the GUI thread keeps turning (a timer ticks throughout), and the latest edit is the one
shown. Showing the result (Qt laying out the preview's one long line) is GUI work, not counted.
The test dialog's preview is filled the same way.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.test_run import TestToolDialog
from schema_types.agent import Agent
from tests.app.test_template_editor import make_pane

PAIRS = 20_000
PROMPT = "{?nights}" * PAIRS + "{/destination}" * PAIRS
# The goal is 50 ms; Qt's first layout of the editor's one long line falls in the time measured,
# and a shared machine adds its own delays, so the test allows more. Analysing on the GUI thread
# held it for seconds.
GAP_LIMIT = 1.0


def test_a_huge_prompt_is_analysed_while_the_window_keeps_turning(qtbot: QtBot) -> None:
    pane, _document, _tool = make_pane(qtbot, PROMPT)
    assert pane.editor.text() == PROMPT
    assert pane.analysis.pending()  # the engine works in the background
    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        if pane.analysis.pending():  # not the tick after the result is shown
            gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(5)
    qtbot.waitUntil(lambda: not pane.analysis.pending(), timeout=60_000)
    timer.stop()

    assert pane.error_count() == 2 * PAIRS
    assert pane.preview.text() == PROMPT  # unpaired tags render as written
    assert gaps  # the timer ticked while the engine worked (how often depends on the machine)
    assert max(gaps) < GAP_LIMIT, f"the GUI thread stood still {max(gaps) * 1000:.0f} ms"


def test_the_latest_edit_wins_over_an_analysis_still_running(qtbot: QtBot) -> None:
    pane, document, _tool = make_pane(qtbot, PROMPT)
    assert pane.analysis.pending()
    fixed = "{?nights}" * PAIRS + "{/nights}" * PAIRS + "To {destination}."

    document.set_field(("metadata", "tools", 1, "prompt"), fixed, text="Fix the tags")
    qtbot.waitUntil(lambda: not pane.analysis.pending(), timeout=60_000)

    assert pane.error_count() == 0
    assert pane.preview.text().endswith("To Lisbon.") or pane.preview.text().endswith("To .")
    assert "{?nights}" not in pane.preview.text()


def test_the_test_dialog_fills_a_huge_prompt_in_the_background(qtbot: QtBot) -> None:
    agent = Agent.model_validate(
        {
            "metadata": {
                "tools": [
                    {
                        "name": "hostile",
                        "parameters": {"type": "object", "properties": {"x": {}, "y": {}}},
                        "prompt": "{?x}" * PAIRS + "{/y}" * PAIRS + "Done.",
                    }
                ]
            }
        }
    )
    document = AgentDocument(agent)
    dialog = TestToolDialog(document, document.agent.metadata.tools[0], None)
    qtbot.addWidget(dialog)
    dialog.show()

    assert dialog.analysis.pending()  # the window is up before the prompt is filled
    qtbot.waitUntil(lambda: not dialog.analysis.pending(), timeout=60_000)
    assert dialog.preview.text() == "{?x}" * PAIRS + "{/y}" * PAIRS + "Done."
