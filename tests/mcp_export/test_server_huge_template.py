"""A served tool whose prompt template is huge and malformed does not hold up the server.

The template is ``{?x}`` 50 000 times then ``{/y}`` 50 000 times (400 KB, under the file limit):
a hundred thousand section tags that pair with nothing. Its first call must still be answered
(the tags render as written), and while it is being prepared the server keeps answering: the
official ``mcp.Client`` pings the real ``metaagent serve`` over stdio throughout the call.
A call of another tool comes first, so the one-time import of the call pipeline is not counted.
Ping exists only in the 2025-11-25 protocol (``mode="legacy"``).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client

from tests.fakes._script import text
from tests.fakes.mcp_clients import book_tool, serve_params, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio

TAGS = 50_000
# The rule is 50 ms; a shared CI machine's scheduling can add to any one wait, so the test
# allows more. Filling this template on the event loop keeps a ping waiting for seconds.
PING_LIMIT = 0.25


@pytest.mark.filterwarnings("ignore:ping is removed")
async def test_pings_are_answered_while_a_huge_template_is_first_filled(
    tmp_path: Path, metaagent_home: Path
) -> None:
    prompt = "{?x}" * TAGS + "{/y}" * TAGS + "Book {destination}."
    parameters = {
        "type": "object",
        "properties": {"destination": {"type": "string"}, "x": {}, "y": {}},
        "required": ["destination"],
    }
    huge = book_tool("huge", prompt=prompt, parameters=parameters)
    with FakeOpenAIServer([text("Booked."), text("Booked.")]) as model:
        tools = [book_tool(), huge]
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url, tools=tools)
        env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
        params = serve_params(str(path), "--no-history", env=env)
        pings: list[float] = []
        results: list[types.CallToolResult] = []
        with anyio.fail_after(120):
            async with Client(params, mode="legacy") as client:
                await client.call_tool("book_flight", {"destination": "Rome"})
                done = anyio.Event()

                async def call() -> None:
                    results.append(await client.call_tool("huge", {"destination": "Oslo"}))
                    done.set()

                async with anyio.create_task_group() as group:
                    group.start_soon(call)
                    while not done.is_set():
                        started = time.perf_counter()
                        await client.send_ping()
                        pings.append(time.perf_counter() - started)
                        await anyio.sleep(0.005)
        sent = model.bodies[1]["messages"][-1]["content"]
    (result,) = results
    assert not result.is_error
    assert sent == prompt.replace("{destination}", "Oslo")
    assert len(pings) >= 3, pings  # the call took long enough to overlap several pings
    assert max(pings) < PING_LIMIT, f"slowest ping {max(pings) * 1000:.0f} ms of {len(pings)}"
