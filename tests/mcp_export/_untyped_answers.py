"""What an untyped tool's caller receives, as wire JSON, for ``test_typed_untouched``.

Run as a script with the code of another commit on ``PYTHONPATH`` to record that commit's
answers (``tests/fixtures/typed/untyped_answers.json`` was recorded at 088b469, before typed
results): ``PYTHONPATH=OLD_TREE python tests/mcp_export/_untyped_answers.py OUT.json``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from mcp_export.server.agent_server import AgentServer, load_served_agents
from tests.fakes._script import Reply, RequestBody, text, tool_calls
from tests.fakes.mcp_clients import book_tool, time_server, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

_TIME_CALL = ("call_1", "t__get_current_time", {"timezone": "UTC"})


def _stable(value: Any) -> Any:
    """Wire JSON with what differs from run to run (durations, times, ids) made constant, and
    without the run trace's ``cost`` (recorded later than the answers: ``test_served_cost``
    checks it)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key == "cost" and "usage" in value and "turns" in value:
                continue
            if key == "durationMs":
                out[key] = 1.0
            elif key in ("conversationId", "io.metaagent/threadId"):
                out[key] = "<id>"
            else:
                out[key] = _stable(item)
        return out
    if isinstance(value, list):
        return [_stable(item) for item in value]
    if isinstance(value, str) and "datetime" in value:
        return "<time>"
    return value


def _respond(body: RequestBody) -> Reply:
    if body.last_user_text.startswith("Book a flight to Rome") and body.rounds_since_user == 0:
        return tool_calls([_TIME_CALL])
    return text(f"Booked: {body.last_user_text}", usage=(31, 5))


async def untyped_answers(folder: Path) -> dict[str, Any]:
    """tools/list and three tools/call results of an untyped agent, in both protocol eras."""
    answers: dict[str, Any] = {}
    tools = [book_tool(), book_tool("chat_flight", conversation=True)]
    with FakeOpenAIServer(responder=_respond) as model:
        path = write_agent(
            folder / "a.agent.yaml",
            base_url=model.base_url,
            tools=tools,
            mcp_servers={"t": time_server()},
        )
        for mode in ("legacy", "auto"):
            served = AgentServer(load_served_agents([path]), history=str(folder / f"{mode}.db"))
            async with served, Client(served.server, mode=mode) as client:
                listed = await client.list_tools()
                calls = [
                    await client.call_tool("book_flight", {"destination": "Oslo"}),
                    await client.call_tool("book_flight", {"destination": "Rome"}),
                    await client.call_tool("chat_flight", {"destination": "Paris"}),
                    await client.call_tool("book_flight", {"passengers": 0}),
                ]
            answers[mode] = _stable(
                {
                    "tools": [t.model_dump(by_alias=True, mode="json") for t in listed.tools],
                    "calls": [c.model_dump(by_alias=True, mode="json") for c in calls],
                }
            )
    return answers


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        found = anyio.run(untyped_answers, Path(folder))
    Path(sys.argv[1]).write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
