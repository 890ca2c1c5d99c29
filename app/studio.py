"""Start the studio: ``metaagent [AGENT_FILE …]``.

The QApplication runs under a qasync event loop, so slots can await (model calls, MCP
connections) without freezing the window. A bare start shows the welcome page; files given on
the command line open as agents (large ones read on a worker thread, the window already up).
Recovery copies left by a crash are offered right after the window is shown. Heavy SDKs (mcp,
openai, anthropic) are not imported here: pages import them when they need them, after the
window is up.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

__all__ = ["create_application", "create_main_window", "run_studio"]

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
    """The main window opening ``files`` (the welcome page when there are none).

    A small agent is read at once and is in the window's first paint; larger files are read on
    a worker thread, so the window shows at once whatever their size, and each agent appears
    when it is read (``document_opened``). One that cannot be read is reported in the status
    bar.
    """
    from app.window.main_window import MainWindow

    window = MainWindow()
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
    """Run the studio until its window closes; returns the exit status.

    Args:
        args: command-line arguments after the program name (agent files).
        on_shown: called with the window right after it is shown (benchmarks, screenshots).
    """
    options = _parse(args)
    create_application()
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
        window.show()
        QTimer.singleShot(0, window.offer_recovery)
        if on_shown is not None:
            on_shown(window)
        await closed
        return 0

    result: int = qasync.run(main())
    return result
