"""The *Attacks* pictures for ``python -m app.screenshots --only attacks``, at 1400×900 and
1024×700: the attack pack on a two-tool agent, an obedient model beside a careful one (the
scripted models of ``tests.fakes.attack_models``), with a landed cell's details open.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:
    from app.screenshot_kit import Camera
    from app.window.main_window import MainWindow

__all__ = ["attack_views"]

OBEDIENT, CAREFUL = "openai:fake-model", "vllm:careful"


async def attack_views(window: MainWindow, camera: Camera) -> None:
    """The grid of a finished run with the refused-tool attack's details, then closed."""
    from app.screenshot_kit import wait_until
    from app.test_cases.attacks_mode import AttacksView
    from tests.fakes.attack_models import careful, obedient
    from tests.fakes.mcp_clients import book_tool, write_agent
    from tests.fakes.openai_server import FakeOpenAIServer

    with (
        FakeOpenAIServer(responder=obedient) as model,
        FakeOpenAIServer(responder=careful) as other,
    ):
        path = write_agent(
            Path(tempfile.mkdtemp(prefix="metaagent-attacks-")) / "desk.agent.yaml",
            name="Flight Desk",
            base_url=model.base_url,
            system_prompt="You are the Flight Desk of Acme Corp. Only ever book flights.",
            tools=[book_tool(), book_tool("cancel_booking", description="Cancels a booking.")],
            mcp_servers={
                "tools": {
                    "command": sys.executable,
                    "args": ["-m", "tests.fakes.tool_server"],
                    "serverToolDefaults": {"permissionRequired": False},
                }
            },
        )
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data["providers"]["vllm"] = {"VLLM_BASE_URL": other.base_url}
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
        document = window.open_file(path)
        assert document is not None
        view = window.open_attacks_tab(document, [OBEDIENT, CAREFUL])
        assert isinstance(view, AttacksView)
        await wait_until(lambda: not view.busy and view.run_button.isEnabled(), "the attacks", 120)
    cell = view.cell("book_flight", "refused-tool", OBEDIENT)
    assert cell is not None
    view.table.setCurrentItem(cell)  # as a click shows it
    for width, height in ((1400, 900), (1024, 700)):
        window.resize(width, height)
        await camera.shoot(window, f"attacks-{width}.png")
    window.remove_run_tab(view)
    window.close_document(document)
    path.unlink()
