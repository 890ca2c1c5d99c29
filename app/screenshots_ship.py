"""The *Ready to ship* pictures for ``python -m app.screenshots --only ship``, at 1400×900 and
1024×700: the example agent as it is (the keywords Gemini drops), then with a tool renamed past
Claude Code's and Cursor's name limits (refused), a finding picked (its source under the table),
and a small agent every client takes as written.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.screenshot_kit import Camera
    from app.window.main_window import MainWindow

__all__ = ["LONG_NAME", "ship_views"]

LONG_NAME = "plan_a_whole_trip_with_flights_hotels_and_a_day_by_day_itinerary"[:60]
"""The name the pictures give ``plan_trip``: past what Claude Code and Cursor take."""


async def ship_views(window: MainWindow, camera: Camera) -> None:
    """The panel of the example agent, refused and picked, then of a ready agent (the rename
    is undone afterwards)."""
    from app.screenshot_kit import wait_until
    from app.ship_panel import ShipPanel
    from tests.fakes.mcp_clients import book_tool, write_agent

    document = window.current_document()
    assert document is not None
    panel = window.open_ship_tab(document)
    assert isinstance(panel, ShipPanel)
    await wait_until(lambda: panel.result is not None and panel.is_current(), "the lint")
    for width, height in ((1400, 900), (1024, 700)):
        window.resize(width, height)
        await camera.shoot(window, f"ship-gemini-{width}.png")
    index = next(i for i, t in enumerate(document.agent.tools) if t.name == "plan_trip")
    document.set_field(("metadata", "tools", index, "name"), LONG_NAME, text="Rename plan_trip")
    await wait_until(lambda: panel.is_current() and bool(panel.tool_item(LONG_NAME)), "the lint")
    row = panel.tool_item(LONG_NAME)
    assert row is not None
    panel.table.setCurrentItem(row, 0)  # the renamed tool's findings, as a click shows them
    panel.findings.setCurrentItem(
        next(item for item in panel.finding_items() if "Cursor" in item.text())
    )
    for width, height in ((1400, 900), (1024, 700)):
        window.resize(width, height)
        await camera.shoot(window, f"ship-refused-{width}.png")
    document.undo_stack.undo()
    window.remove_run_tab(panel)

    path = write_agent(
        Path(tempfile.mkdtemp(prefix="metaagent-ship-")) / "ready.agent.yaml",
        name="Flight Desk",
        tools=[book_tool(), book_tool("cancel_booking", description="Cancels a booking.")],
    )
    ready = window.open_file(path)
    assert ready is not None
    shown = window.open_ship_tab(ready)
    assert isinstance(shown, ShipPanel)
    await wait_until(lambda: shown.result is not None and shown.is_current(), "the lint")
    for width, height in ((1400, 900), (1024, 700)):
        window.resize(width, height)
        await camera.shoot(window, f"ship-ready-{width}.png")
    window.remove_run_tab(shown)
    window.close_document(ready)
    path.unlink()
