"""Start the studio: ``metaagent [AGENT_FILE …]``.

The QApplication runs under a qasync event loop, so slots can await (model calls, MCP
connections) without freezing the window. A bare start shows the welcome page; files given on
the command line open as agents (large ones read on a worker thread, the window already up).
A start while a studio of the same user and data directory runs hands its files to that one
and ends (``app.single_instance``).
Recovery copies left by a crash are offered right after the window is shown; on the first run,
Getting started is shown once the window has painted. Heavy SDKs (mcp,
openai, anthropic) are not imported here: pages import them when they need them, after the
window is up.

Quitting (File ▸ Quit, closing the window, SIGTERM or Ctrl+C in the terminal) closes the window
first; the work it leaves running (chat tabs stopping their runs and tool servers) then ends
while the loop still runs, within :data:`CLOSE_DOWN_SECONDS`, and what is still running after
that is cancelled. Only then does the loop stop, so no task or callback is left to a stopped loop.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

# PySide6 reads the source of every module imported after it, looking for its own name (for its
# ``__feature__`` switches): the agent model (pydantic and the models), which every window needs
# before its first paint, is imported before it.
import schema_types.agent  # noqa: F401

# isort: split
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

__all__ = [
    "CANCEL_SECONDS",
    "CLOSE_DOWN_SECONDS",
    "create_application",
    "create_main_window",
    "run_studio",
]

logger = logging.getLogger(__name__)

CLOSE_DOWN_SECONDS = 12.0
"""How long the work left running when the window closed gets to end on its own: a chat tab
stops its run and its tool servers (the toolbox gives a server that ignores the end of its input
a few seconds before it kills it)."""
CANCEL_SECONDS = 3.0
"""How long the tasks still running after that get to end once cancelled."""
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)

if TYPE_CHECKING:
    from app.window.main_window import MainWindow


def create_application() -> QApplication:
    """The QApplication, named for desktop integration (icon, .desktop file, settings)."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication(sys.argv[:1])
    app.setApplicationName("Meta Agent Studio")
    app.setApplicationDisplayName("Meta Agent Studio")
    app.setOrganizationName("metaagent")
    app.setDesktopFileName("metaagent-studio")
    app.setQuitOnLastWindowClosed(False)  # the loop ends when the main window says it closed
    from app.collector import collect_on_gui_thread

    collect_on_gui_thread(app)  # never a Qt object freed by another thread's collection
    from app.icons import app_icon

    app.setWindowIcon(app_icon())
    return app


def create_main_window(files: Sequence[Path] = ()) -> MainWindow:
    """The main window opening ``files`` (the welcome page when there are none), in the theme
    the studio settings keep.

    A small agent is read at once and is in the window's first paint; larger files are read on
    a worker thread, so the window shows at once whatever their size, and each agent appears
    when it is read (``document_opened``). One that cannot be read is reported in the status
    bar.
    """
    from app.settings_store import SettingsStore
    from app.window.main_window import MainWindow

    settings = SettingsStore()
    if settings.theme() != "system":  # before the window is built, so it shows in it at once
        from app.window.theme import apply_theme

        apply_theme(settings.theme())
    window = MainWindow(settings)
    for path in files:
        window.open_file_soon(path)
    return window


def _parse(args: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="metaagent", description="Meta Agent Studio")
    parser.add_argument(
        "files",
        nargs="*",
        type=Path,
        metavar="AGENT_FILE",
        help="agent files to open (*.agent.yaml)",
    )
    return parser.parse_args(list(args))


def run_studio(args: list[str], *, on_shown: Callable[[MainWindow], None] | None = None) -> int:
    """Run the studio until its window closes and the work it left running has ended (see the
    module docstring for how long that may take); returns the exit status.

    Args:
        args: command-line arguments after the program name (agent files).
        on_shown: called with the window right after it is shown (benchmarks, screenshots).
    """
    options = _parse(args)
    create_application()
    from app.settings_store import metaagent_home
    from app.single_instance import StudioServer, forward_to_running_studio, instance_name

    name = instance_name(metaagent_home())
    if forward_to_running_studio(name, options.files):
        sys.stderr.write("metaagent: opened in the studio that is already running\n")
        return 0
    import qasync

    async def main() -> int:
        from app.errors import install_excepthook

        install_excepthook(asyncio.get_running_loop())
        window = create_main_window(options.files)
        closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def on_closed() -> None:
            if not closed.done():
                closed.set_result(None)

        window.closed.connect(on_closed)
        server = StudioServer(name, lambda files: _open_from_elsewhere(window, files))
        server.listen()
        window.closed.connect(server.close)
        _on_stop_signals(window.quit_without_asking)
        window.show()
        QTimer.singleShot(0, window.offer_recovery)
        window.show_getting_started_on_first_run()
        if on_shown is not None:
            on_shown(window)
        await closed
        for task in await _finish_tasks():
            logger.warning("quitting while this still runs: %r", task.get_coro())
        return 0

    result: int = qasync.run(main())
    return result


def _open_from_elsewhere(window: MainWindow, files: list[Path]) -> None:
    """Open the files a later ``metaagent FILE`` handed over, and bring the window forward."""
    for path in files:
        window.open_file_soon(path)
    if window.isMinimized():
        window.showNormal()
    window.raise_()
    window.activateWindow()


def _on_stop_signals(stop: Callable[[], None]) -> None:
    """Run ``stop`` on the loop when the process is told to end (SIGTERM, Ctrl+C)."""
    loop = asyncio.get_running_loop()
    for number in _STOP_SIGNALS:
        try:
            loop.add_signal_handler(number, stop)
        except (NotImplementedError, RuntimeError):  # no signal handlers here (Windows)
            return


async def _finish_tasks(
    close_down_seconds: float = CLOSE_DOWN_SECONDS, cancel_seconds: float = CANCEL_SECONDS
) -> set[asyncio.Task[object]]:
    """Let every other task end while the loop still runs; returns those that would not.

    They get ``close_down_seconds`` to end on their own (tasks they start meanwhile too); what
    still runs then is cancelled and gets ``cancel_seconds`` more. Then the loop turns a few
    more times, so the callbacks their endings scheduled run on a running loop.
    """
    loop = asyncio.get_running_loop()
    this = asyncio.current_task()

    def others() -> set[asyncio.Task[object]]:
        return {task for task in asyncio.all_tasks(loop) if task is not this and not task.done()}

    async def wait(limit: float) -> set[asyncio.Task[object]]:
        deadline = loop.time() + limit
        pending = others()
        while pending and loop.time() < deadline:
            await asyncio.wait(pending, timeout=deadline - loop.time())
            pending = others()
        return pending

    stuck = await wait(close_down_seconds)
    for task in stuck:
        task.cancel()
    stuck = await wait(cancel_seconds)
    for _ in range(3):
        await asyncio.sleep(0)
    return stuck
