"""The matrix's run modes and A/B pictures for ``python -m app.screenshots --only replay``.

Three cases of the richest tool on the budget model: recorded (Record), then replayed with the
model server stopped after the template changed, so the first cell's replay differs and its
Re-record bar shows, beside the run-mode choice on Replay; then *Compare with a variant…* with
an edited template, both sides run for real. Each at 1400×900 and 1024×700. Then the caller
matrix in Replay (``app.screenshots_caller_replay``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.screenshot_kit import Camera
    from app.window.main_window import MainWindow

__all__ = ["replay_views"]

_WORDING = " Prefer an aisle seat."
_PLAIN = (
    "Booked flight TP1353 on 2026-06-01 for Grace Hopper: window seat 14A, EUR 212.40. A "
    "confirmation is on its way."
)


async def replay_views(window: MainWindow, camera: Camera) -> None:
    """Record, a replay that differs, and an A/B comparison (see the module docstring)."""
    from app.document.test_cases import add_test_case
    from app.screenshot_kit import (
        BUDGET_ANSWER,
        BUDGET_MODEL,
        RICHEST_TOOL,
        matrix_cases,
        wait_until,
    )
    from app.screenshots_caller_replay import caller_replay_views
    from app.test_cases.ab_dialog import ABDialog
    from app.test_cases.matrix_tab import MatrixTab
    from schema_types.arguments import sample_arguments
    from schema_types.cases import TestCase
    from tests.fakes._script import text
    from tests.fakes.openai_server import FakeOpenAIServer

    def answer(body: Any) -> Any:
        aisle = "aisle seat" in json.dumps(body)
        return text(BUDGET_ANSWER if aisle else _PLAIN, chunks=3, usage=(600, 40))

    document = window.current_document()
    assert document is not None
    start = document.undo_stack.index()
    tool = document.agent.metadata.tool(RICHEST_TOOL)
    assert tool is not None
    index = [t.name for t in document.agent.tools].index(RICHEST_TOOL)
    prompt = ("metadata", "tools", index, "prompt")

    async def run(tab: MatrixTab, mode: str) -> None:
        tab.run_modes.set_mode(mode)
        tab.last_end = None
        tab.run()
        await wait_until(lambda: tab.last_end is not None and not tab.busy, f"a {mode} run", 120)

    with FakeOpenAIServer(responder=answer) as server:
        with document.macro("Cases for the replay pictures"):
            document.set_field(
                ("providers", "vllm"), {"VLLM_BASE_URL": server.base_url}, text="Budget endpoint"
            )
            prices = {BUDGET_MODEL: {"input": 0.1, "output": 0.4}}
            document.set_field(("settings", "prices"), prices, text="Budget price")
            for case in matrix_cases(sample_arguments(tool.parameters))[1:4]:
                add_test_case(document, tool.name, TestCase.model_validate(case))
        cases = [(RICHEST_TOOL, c["name"]) for c in matrix_cases({})[1:4]]
        window.resize(1400, 900)
        tab = window.open_matrix_tab(document, cases, [BUDGET_MODEL])
        assert isinstance(tab, MatrixTab)
        await wait_until(lambda: tab.last_end is not None and not tab.busy, "the first run", 120)
        await run(tab, "Record")
    kept = document.undo_stack.index()
    document.set_field(prompt, tool.prompt + " Mention the fare class.", text="Edit template")
    await run(tab, "Replay")  # the model server is stopped
    tab.select_cells([(*cases[0], BUDGET_MODEL)])
    if not tab.run_modes.bar.isVisible():
        raise RuntimeError("the replay of a changed template shows no difference")
    for width, height in ((1400, 900), (1024, 700)):
        window.resize(width, height)
        await camera.shoot(window, f"matrix-replay-{width}.png")
    document.undo_stack.setIndex(kept)

    with FakeOpenAIServer(responder=answer) as server:
        document.set_field(
            ("providers", "vllm", "VLLM_BASE_URL"), server.base_url, text="Budget endpoint"
        )
        tab.compare_button.click()
        dialog = tab.findChild(ABDialog)
        assert isinstance(dialog, ABDialog)
        dialog.template.setPlainText(tool.prompt + _WORDING)
        dialog.rounds.setValue(2)
        dialog.run()
        await wait_until(
            lambda: dialog.comparison is not None and not dialog.busy, "the A/B runs", 120
        )
    for width, height in ((1400, 900), (1024, 700)):
        dialog.resize(width, height)
        await camera.shoot(dialog, f"matrix-ab-{width}.png")
    dialog.close()
    window.remove_run_tab(tab)
    document.undo_stack.setIndex(start)
    await caller_replay_views(window, camera)
