"""The History view's pictures for ``python -m app.screenshots --only history``: an agent's
history with a matrix run of test cases and one test run by hand that a follow-up continued, at
1024×700 and 1400×900, listed whole and filtered by a word said only in the follow-up.

The test run and the matrix run are real runs in the studio (the local scripted models of
``app/screenshot_kit.py``), recorded in the studio's history as they always are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.screenshot_kit import Camera
    from app.window.main_window import MainWindow

__all__ = ["FOLLOW_UP", "history_views"]

FOLLOW_UP = "And what about Tokyo?"
"""The follow-up of the test run by hand; the filter's word ("Tokyo") is said only there."""


async def history_views(window: MainWindow, camera: Camera) -> None:
    """A test run by hand with a follow-up, 3 cases × 2 models run in a matrix tab, then History
    at both sizes: every run, and the runs that said "Tokyo"."""
    from app.history.view import HistoryView
    from app.screenshot_kit import (
        RICHEST_TOOL,
        run_test_dialog,
        run_tests_panel_cases,
        wait_until,
    )

    document, tab = await run_test_dialog(window)
    await tab.send(FOLLOW_UP)
    await tab.aclose()
    window.remove_run_tab(tab)

    tool = document.agent.metadata.tool(RICHEST_TOOL)
    assert tool is not None
    cases, _models = await run_tests_panel_cases(window, document, tool)
    document.undo_stack.undo()

    history = window.open_history_tab(document)
    assert isinstance(history, HistoryView)
    history.refresh()
    await wait_until(lambda: len(history.visible_entries()) > len(cases), "the history rows")
    history.open_entry(0)
    for width, height in ((1024, 700), (1400, 900)):
        window.resize(width, height)
        history.search.clear()
        history.open_entry(0)
        await camera.shoot(window, f"history-cases-{width}.png")
        history.search.setText("Tokyo")
        await wait_until(lambda: not history.model.searching, "the search")
        await camera.shoot(window, f"history-tokyo-{width}.png")
        history.open_entry(0)
        await camera.shoot(window, f"history-tokyo-open-{width}.png")
    history.search.clear()
