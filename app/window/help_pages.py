"""The Help menu's pages: Getting started, and About with the versions in use.

:class:`GettingStartedDialog` says what a Tools agent is and walks through making one: create the
agent, choose its model, add MCP servers, add a tool, test it, export it. Each step names the
menu item and keys that do it, read from the window's own actions (:class:`Step`), so the page
says what the menus really hold. The first start shows it once the window has painted and the
files it opens are read (:func:`~app.window.first_paint.after_first_paint`), so the window's
first paint never waits for it; Help ▸ Getting started shows it again.

:func:`studio_versions` lists the studio's version and those of Python, Qt, PySide6 and the MCP
SDK, read from the installed packages' metadata (the SDK itself is not imported);
:func:`show_about` shows them.
"""

from __future__ import annotations

import html
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata

import PySide6
from PySide6.QtCore import qVersion
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QMessageBox,
    QTextBrowser,
    QWidget,
)

from app.icons import app_icon
from app.layouts import closable_column
from app.window.screen_fit import fit_to_screen

__all__ = [
    "APP_DISTRIBUTION",
    "GettingStartedDialog",
    "Step",
    "getting_started_html",
    "show_about",
    "studio_versions",
]

APP_DISTRIBUTION = "meta-agent-studio"


@dataclass(frozen=True)
class Step:
    """One step of making a Tools agent.

    Attributes:
        title: what the step does.
        text: how (HTML).
        where: the menu item that does it (``Agent ▸ Test tool…``), empty for none.
        action: the item's action, whose keys the page shows (None: no keys).
    """

    title: str
    text: str
    where: str = ""
    action: QAction | None = None


def getting_started_html(steps: Sequence[Step]) -> str:
    """The Getting started page for ``steps``."""
    items = []
    for step in steps:
        how = html.escape(step.where)
        keys = step.action.shortcut() if step.action is not None else QKeySequence()
        if not keys.isEmpty():
            how += f" ({html.escape(keys.toString(QKeySequence.SequenceFormat.NativeText))})"
        where = f"<br><i>{how}</i>" if how else ""
        items.append(f"<li><b>{html.escape(step.title)}:</b> {step.text}{where}</li>")
    return (
        "<h2>Getting started</h2>"
        "<p>A <b>Tools agent</b> is an MCP server you design here. Each of its tools has a "
        "name, a description, parameters (a JSON Schema) and a prompt template. When an MCP "
        "client such as Claude Desktop calls a tool, the agent fills the template with the "
        "call's arguments and lets its model answer, which may use the agent's own MCP servers "
        "on the way; the model's answer is the tool's result.</p>"
        f"<ol>{''.join(items)}</ol>"
        "<p>Help ▸ Keyboard shortcuts lists every key; this page stays under Help ▸ Getting "
        "started.</p>"
    )


class GettingStartedDialog(QDialog):
    """The Getting started page in a window of its own (not modal).

    Args:
        steps: the steps it lists.
        parent: the main window.
    """

    def __init__(self, steps: Sequence[Step], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("gettingStarted")
        self.setWindowTitle("Getting started")
        self.browser = QTextBrowser()
        self.browser.setObjectName("gettingStartedText")
        self.browser.setOpenExternalLinks(True)
        self.browser.setHtml(getting_started_html(steps))
        closable_column(self, self.browser, stretch=self.browser)
        fit_to_screen(self, 560, 460)


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def studio_versions() -> list[tuple[str, str]]:
    """``(name, version)`` of the studio and what it runs on."""
    return [
        ("Meta Agent Studio", _version(APP_DISTRIBUTION)),
        ("Python", "{}.{}.{}".format(*sys.version_info[:3])),
        ("Qt", qVersion()),
        ("PySide6", PySide6.__version__),
        ("MCP Python SDK", _version("mcp")),
    ]


def show_about(parent: QWidget, title: str) -> QMessageBox:
    """Help ▸ About: what the studio is for and the versions in use, without blocking."""
    box = QMessageBox(parent)
    box.setObjectName("aboutBox")
    box.setWindowTitle(f"About {title}")
    box.setIconPixmap(app_icon().pixmap(64, 64))
    box.setText(f"<h3>{html.escape(title)}</h3>")
    rows = "".join(
        f"<tr><td>{html.escape(name)}</td><td>&nbsp;{html.escape(version)}</td></tr>"
        for name, version in studio_versions()
    )
    box.setInformativeText(
        "Author Tools agents and serve them over MCP. Serve one headless with "
        f"<tt>metaagent serve AGENT_FILE</tt>.<br><br><table>{rows}</table>"
    )
    box.open()
    return box
