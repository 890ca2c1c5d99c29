"""Studio tests: a qasync loop under Qt, Qt warnings fail the test, the reporter is fresh per test.

``qasync_loop`` installs a ``qasync.QEventLoop`` as the running asyncio loop for the test, so
``@qasync.asyncSlot`` slots and ``asyncio.ensure_future`` work; ``qtbot.waitUntil`` /
``waitSignal`` spin Qt's loop, which runs the asyncio tasks too. At the end the tasks still
running get to finish (a chat tab's close-down, started when pytest-qt closed the tab); what does
not finish within ``SETTLE_MS`` is cancelled and fails the test, since a task cut off there would
leave its work (a tool server being stopped) to a closed loop and to later tests. Then the loop
is closed (forgetting it breaks later tests: "cannot be called from a running loop").
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

# Messages the offscreen platform prints on its own; they say nothing about our code.
KNOWN_QT_NOISE = [
    r"This plugin does not support propagateSizeHints\(\)",
    r"This plugin does not support raise\(\)",
    r"This plugin does not support grabbing the keyboard",
    r"QFont::setPointSizeF: Point size <= 0",
    r"Populating font family aliases took",
    r"offscreen.*does not support",
]

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
EXAMPLES = REPO / "resources" / "examples"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Any Qt warning fails a studio test (qutebrowser's habit), known offscreen noise aside."""
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            if item.get_closest_marker("qt_log_level_fail") is None:
                item.add_marker(pytest.mark.qt_log_level_fail("WARNING"))
            item.add_marker(pytest.mark.qt_log_ignore(*KNOWN_QT_NOISE))


@pytest.fixture(scope="session", autouse=True)
def _collect_on_the_gui_thread(qapp: object) -> Iterator[None]:
    """Garbage collected on the GUI thread only, as in the studio (``app.collector``): a test's
    worker thread must not free the Qt objects that earlier tests left to the collector."""
    from PySide6.QtWidgets import QApplication

    from app.collector import collect_on_gui_thread

    app = QApplication.instance()
    assert app is not None
    collector = collect_on_gui_thread(app)
    yield
    collector.stop()


# How long the tasks a test leaves running get to end on their own before they are cancelled.
SETTLE_MS = 20_000


@pytest.fixture
def qasync_loop(qapp: object, qtbot: QtBot) -> Iterator[asyncio.AbstractEventLoop]:
    """A qasync event loop running on the test's QApplication."""
    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    assert app is not None
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    asyncio.events._set_running_loop(loop)
    try:
        yield loop
    finally:
        cut_off = _settle(qtbot, loop)
        asyncio.events._set_running_loop(None)
        loop.close()
        asyncio.set_event_loop(None)
    if cut_off:
        pytest.fail(
            f"the test left tasks that did not end within {SETTLE_MS} ms; they were cancelled: "
            + "; ".join(cut_off)
            + ". Close what the test opened (aclose) before it ends."
        )


def _running(loop: asyncio.AbstractEventLoop) -> list[asyncio.Task[object]]:
    return [task for task in asyncio.all_tasks(loop) if not task.done()]


def _settle(qtbot: QtBot, loop: asyncio.AbstractEventLoop) -> list[str]:
    """Spin the loop until the test's tasks have ended; cancel those that do not. Returns what
    had to be cancelled."""
    try:
        qtbot.waitUntil(lambda: not _running(loop), timeout=SETTLE_MS)
        return []
    except qtbot.TimeoutError:
        stuck = _running(loop)
        for task in stuck:
            task.cancel()
        qtbot.waitUntil(lambda: not _running(loop), timeout=SETTLE_MS)
        return [repr(task.get_coro()) for task in stuck]


@pytest.fixture(autouse=True)
def _fresh_reporter() -> Iterator[None]:
    """Each test starts with an empty report history and no excepthook left from another."""
    from app import errors

    errors._reporter = None
    yield
    errors.uninstall_excepthook()
    errors._reporter = None


@pytest.fixture
def no_keyring() -> Iterator[None]:
    """A machine without a keyring backend: keyring's own ``fail`` backend, as it picks there."""
    import keyring
    from keyring.backends import fail

    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(previous)


@pytest.fixture
def example_path(tmp_path: Path) -> Path:
    """A private copy of the travel-desk example (tests edit and save it)."""
    source = EXAMPLES / "travel-desk.agent.yaml"
    if not source.exists():
        pytest.skip("resources/examples/travel-desk.agent.yaml is not there yet")
    target = tmp_path / "travel-desk.agent.yaml"
    target.write_bytes(source.read_bytes())
    return target
