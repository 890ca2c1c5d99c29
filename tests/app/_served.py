"""One real served call into a history store: the real ``AgentServer`` with the official
``mcp.Client`` in-process, as History's tests need a served conversation to show."""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types as types
from mcp import Client

from mcp_export.history.store import HistoryStore
from mcp_export.server.agent_server import AgentServer, load_served_agents

CLIENT = types.Implementation(name="test-client", version="9.9")


def serve_call(agent: Path, store: HistoryStore, tool: str, destination: str) -> None:
    """Call ``tool`` of the agent file ``agent`` with ``destination``; its writes flushed."""

    async def call() -> None:
        async with (
            AgentServer(load_served_agents([agent]), history=store) as served,
            Client(served.server, mode="legacy", client_info=CLIENT) as client,
        ):
            result = await client.call_tool(tool, {"destination": destination})
            assert not result.is_error, result.content

    anyio.run(call)
    store.flush()
