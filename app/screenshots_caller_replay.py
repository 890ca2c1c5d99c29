"""The caller matrix in Replay for ``python -m app.screenshots --only replay``: two caller cases
of the richest tool recorded for one caller model (Record), then replayed with the caller's
model server stopped after one case's request in words changed, so one caller cell passes and
the other's replay differs, its Re-record bar showing where. At 1024×700.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.screenshot_kit import Camera
    from app.window.main_window import MainWindow

__all__ = ["caller_replay_views"]


async def caller_replay_views(window: MainWindow, camera: Camera) -> None:
    """Record two caller cases, replay them after one changed (see the module docstring)."""
    from app.document.test_cases import add_test_case
    from app.screenshot_kit import RICHEST_TOOL, wait_until
    from app.screenshots_callers import CALLER_CASES, CAREFUL, caller_model
    from app.test_cases.matrix_tab import MatrixTab
    from schema_types.cases import TestCase
    from tests.fakes.openai_server import FakeOpenAIServer

    document = window.current_document()
    assert document is not None
    start = document.undo_stack.index()
    chosen = [CALLER_CASES[1], CALLER_CASES[0]]  # one that passes, one whose ask will change

    async def run(tab: MatrixTab, mode: str) -> None:
        tab.run_modes.set_mode(mode)
        tab.last_end = None
        tab.run()
        await wait_until(lambda: tab.last_end is not None and not tab.busy, f"a {mode} run", 120)

    with FakeOpenAIServer(responder=caller_model) as server:
        with document.macro("Caller cases for the replay pictures"):
            document.set_field(
                ("providers", "vllm"), {"VLLM_BASE_URL": server.base_url}, text="Callers"
            )
            for case in chosen:
                add_test_case(document, RICHEST_TOOL, TestCase.model_validate(case))
        own = document.agent.settings.model or ""
        cells = [(RICHEST_TOOL, str(case["name"])) for case in chosen]
        tab = window.open_matrix_tab(document, cells, [own])
        assert isinstance(tab, MatrixTab)
        tab.stop()  # the first run asks the agent's own model as the caller: not this one
        await wait_until(lambda: not tab.busy, "the first run to stop")
        tab.caller_picker.set_checked([CAREFUL])
        await run(tab, "Record")
    index = [t.name for t in document.agent.tools].index(RICHEST_TOOL)
    tool = document.agent.tools[index]
    at = [case.name for case in tool.tests].index(str(chosen[1]["name"]))
    changed = "Book Grace Hopper (grace@example.com) on TP1351 on 1 June, aisle seat."
    document.set_field(("metadata", "tools", index, "tests", at, "ask"), changed, text="Ask")
    await run(tab, "Replay")  # the callers' model server is stopped
    passed = [r.passed for r in tab.last_end.results] if tab.last_end else []
    if sorted(passed) != [False, True]:
        raise RuntimeError(f"the caller replay should pass one cell and fail one: {passed}")
    tab.select_cells([(*cells[1], CAREFUL)])
    if not tab.run_modes.bar.isVisible():
        raise RuntimeError("the replay of a changed caller case shows no difference")
    window.resize(1024, 700)
    await camera.shoot(window, "caller-matrix-replay-1024.png")
    window.resize(1400, 900)
    window.remove_run_tab(tab)
    document.undo_stack.setIndex(start)
