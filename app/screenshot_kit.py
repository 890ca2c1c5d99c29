"""What the studio's screenshots share: a camera that saves grabs, a bounded wait on the event
loop, and the real runs (a test dialog's run, test cases on two models) that several groups of
``app/screenshots.py`` picture.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QPoint
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QApplication, QMenu, QWidget

if TYPE_CHECKING:
    from app.chat import ChatTab
    from app.document.agent_document import AgentDocument
    from app.window.main_window import MainWindow
    from schema_types.agent import ToolDefinition

__all__ = [
    "BUDGET_ANSWER",
    "BUDGET_MODEL",
    "RICHEST_TOOL",
    "Camera",
    "matrix_cases",
    "run_test_dialog",
    "run_tests_panel_cases",
    "settle",
    "tests_panel_cases",
    "wait_until",
]

RICHEST_TOOL = "book_flight"


def matrix_cases(arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """Test cases of the richest tool for the matrix view (``arguments``: sample arguments)."""
    invoice = {**arguments, "payment": {"method": "invoice", "cost_center": "CC-4711"}}
    return [
        {
            "name": "Grace to Lisbon",
            "arguments": arguments,
            "expect": {"contains": ["TP1351"], "toolCalls": ["time__get_current_time"]},
        },
        {"name": "Window seat", "arguments": arguments, "expect": {"matches": "(?i)window"}},
        {
            "name": "Price in euros",
            "arguments": arguments,
            "expect": {"contains": ["EUR"], "notContains": ["USD"]},
        },
        {"name": "Pay by invoice", "arguments": invoice, "expect": {"contains": ["QX7R2M"]}},
        {
            "name": "No traveller",
            "arguments": {"flight": arguments.get("flight", {})},
            "expect": {"isError": True},
        },
    ]


async def wait_until(predicate: Callable[[], bool], what: str, limit: float = 30.0) -> None:
    """Let the event loop run until ``predicate()`` holds (bounded: fails after ``limit`` s)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not predicate():
        if loop.time() > deadline:
            raise TimeoutError(f"gave up waiting for {what} after {limit:.0f} s")
        await asyncio.sleep(0.05)


async def settle() -> None:
    """Let pending layouts, paints and deferred timers run."""
    for _ in range(5):
        QApplication.processEvents()
        await asyncio.sleep(0.02)


class Camera:
    """Saves grabs of widgets into one directory and remembers what it saved."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.saved: list[Path] = []

    async def shoot(self, widget: QWidget, name: str) -> None:
        """Save ``widget`` as ``name`` (PNG) once it has settled."""
        await settle()
        path = self.out_dir / name
        if not widget.grab().save(str(path)):
            raise OSError(f"could not write {path}")
        self.saved.append(path)

    async def shoot_with_menus(self, widget: QWidget, menus: list[QMenu], name: str) -> None:
        """Save ``widget`` with its open ``menus`` drawn over it where they show (a grab of a
        window leaves its popups out)."""
        await settle()
        picture = widget.grab()
        painter = QPainter(picture)
        origin = widget.mapToGlobal(QPoint(0, 0))
        for menu in menus:
            painter.drawPixmap(menu.mapToGlobal(QPoint(0, 0)) - origin, menu.grab())
        painter.end()
        path = self.out_dir / name
        if not picture.save(str(path)):
            raise OSError(f"could not write {path}")
        self.saved.append(path)


async def run_test_dialog(
    window: MainWindow, camera: Camera | None = None
) -> tuple[AgentDocument, ChatTab]:
    """Run the richest tool with its example arguments from the test dialog (shot as
    ``test-dialog.png`` by ``camera`` if given) and wait for the answer.

    Returns:
        The current document and the chat tab of the run.
    """
    from app.chat import ChatTab
    from app.test_run import TestToolDialog
    from mcp_export.session.events import FinalAnswer

    document = window.current_document()
    assert document is not None
    tool = document.agent.metadata.tool(RICHEST_TOOL)
    assert tool is not None
    dialog = window.open_test_dialog(document, tool)
    assert isinstance(dialog, TestToolDialog)
    dialog.examples_button.click()
    if camera is not None:
        await camera.shoot(dialog, "test-dialog.png")
    dialog.run_button.click()
    tab = window.run_tabs()[-1]
    assert isinstance(tab, ChatTab)
    await wait_until(lambda: isinstance(tab.outcome, FinalAnswer), "the test run's answer", 60)
    return document, tab


BUDGET_MODEL = "vllm:budget-model"
"""A second model for the test-case matrix, served by another local scripted model."""


BUDGET_ANSWER = (
    "Booked flight TP1353 on 2026-06-01 for Grace Hopper: seat 22C (aisle), USD 231.10, "
    "reference QX7R2M. A confirmation is on its way."
)
"""What the second model answers once its answers have changed: another flight, no time lookup."""


def tests_panel_cases(arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """Three cases of the richest tool for its Tests section; the first expects a lot."""
    return [
        {
            "name": "Grace to Lisbon",
            "arguments": arguments,
            "expect": {
                "contains": ["TP1351", "QX7R2M"],
                "notContains": ["sorry"],
                "matches": "(?i)lisbon",
                "toolCalls": ["time__get_current_time"],
                "maxToolCalls": 2,
                "maxTurns": 3,
                "maxDurationMs": 20000,
            },
        },
        {"name": "Window seat", "arguments": arguments, "expect": {"matches": "(?i)window"}},
        {"name": "Booking reference", "arguments": arguments, "expect": {"contains": ["QX7R2M"]}},
    ]


async def run_tests_panel_cases(
    window: MainWindow, document: AgentDocument, tool: ToolDefinition
) -> tuple[list[dict[str, Any]], list[str]]:
    """Add :func:`tests_panel_cases` to ``tool`` and run them on the agent's model and the budget
    model in a matrix tab (recorded in the studio's history), then close the tab.

    Returns:
        The cases and the models they ran on.
    """
    from app.document.test_cases import add_test_case
    from app.test_cases.matrix_tab import MatrixTab
    from schema_types.arguments import sample_arguments
    from schema_types.cases import TestCase
    from tests.fakes._script import text
    from tests.fakes.openai_server import FakeOpenAIServer

    cases = tests_panel_cases(sample_arguments(tool.parameters))
    models = [document.agent.settings.model or "", BUDGET_MODEL]
    with FakeOpenAIServer(responder=lambda _body: text(BUDGET_ANSWER, chunks=6)) as server:
        with document.macro("Test cases for the screenshots"):
            document.set_field(
                ("providers", "vllm"),
                {"VLLM_BASE_URL": server.base_url},
                text="Add the budget model's endpoint",
            )
            for case in cases:
                add_test_case(document, tool.name, TestCase.model_validate(case))
        selection = [(tool.name, case["name"]) for case in cases]
        run = window.open_matrix_tab(document, selection, models)
        assert isinstance(run, MatrixTab)
        await wait_until(lambda: run.last_end is not None and not run.busy, "the cases' run", 120)
        window.remove_run_tab(run)
    return cases, models
