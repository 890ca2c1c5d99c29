"""The improve-from-failures pictures for ``python -m app.screenshots --only improve``: a failing
cell of the results matrix, the authoring model's suggested fix (its reason and the diff of the
agent file), and the pass rates before → after *Apply and re-run* with the new regression first,
at 1400×900 and 1024×700.

A small agent of its own (``book_flight`` with two cases, one failing) is opened beside the
example, against a local scripted model that plays both the authoring model and the served model
(``tests.fakes.authoring``); its fix makes the failing case pass and breaks the other one. The
fix is undone and the agent closed afterwards.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.screenshot_kit import Camera
    from app.window.main_window import MainWindow

__all__ = ["improve_views"]

_SERVED = "openai:fake-model"


async def improve_views(window: MainWindow, camera: Camera) -> None:
    """The suggested diff and the before → after rates, at both sizes."""
    from app.screenshot_kit import settle, wait_until
    from app.test_cases.matrix_tab import MatrixTab
    from tests.fakes.authoring import FIX_THAT_BREAKS, agent_file, authoring_and_served
    from tests.fakes.openai_server import FakeOpenAIServer

    os.environ["IMPROVE_TEST_KEY"] = "sk-local-screenshots"
    folder = Path(tempfile.mkdtemp(prefix="improve-", dir=os.environ.get("METAAGENT_HOME")))
    with FakeOpenAIServer(responder=authoring_and_served([FIX_THAT_BREAKS])) as server:
        path = agent_file(folder / "desk.agent.yaml", server.base_url)
        window.resize(1400, 900)
        document = window.open_file(path)
        assert document is not None
        tab = window.open_matrix_tab(document, models=[_SERVED])
        assert isinstance(tab, MatrixTab)
        await wait_until(lambda: tab.last_end is not None and not tab.busy, "the cases' run", 60)
        panel = tab.improve
        tab.select_cells([("book_flight", "oslo", _SERVED)])
        panel.suggest()
        await wait_until(lambda: panel.fix is not None, "the suggested fix", 60)
        await wait_until(lambda: not tab.tasks.is_running("improve"), "the suggestion's end", 10)
        await settle()
        await camera.shoot(window, "improve-diff.png")
        window.resize(1024, 700)
        await settle()
        await camera.shoot(window, "improve-diff-1024.png")
        panel.apply_and_rerun()
        await wait_until(lambda: panel.comparison is not None, "the re-run", 60)
        await wait_until(lambda: not tab.tasks.is_running("improve"), "the re-run's end", 10)
        await settle()
        await camera.shoot(window, "improve-rates-1024.png")
        window.resize(1400, 900)
        await settle()
        await camera.shoot(window, "improve-rates.png")
        panel.undo()
        window.remove_run_tab(tab)
        window.close_document(document)
