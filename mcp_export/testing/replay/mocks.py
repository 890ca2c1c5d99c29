"""A case's mocked inner tools and injected faults (``mock:`` under a case, ``schema_types.cases``).

:class:`MockedToolbox` stands in front of the toolbox a case would use (the real one, or a
recording's): a mocked tool answers with its fixed result or error; a delay waits, and past the
call's limit ends as a real time-out does; a server that is down is left out of the listing and
its tools cannot be called. Each is shaped by the rule the real toolbox uses (an MCP result turned
into an outcome, the same time-out and unavailable texts), so the model gets what it would get
from a real failure. Calls of tools that are not mocked go to the toolbox behind.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

import anyio
import mcp_types as types

from mcp_export.toolbox.agent_toolbox import (
    AgentToolbox,
    ToolOutcome,
    ToolSpec,
    timed_out_text,
    unavailable_text,
)
from mcp_export.toolbox.outcome import outcome_from_result
from mcp_export.toolbox.withheld import WithheldTools
from schema_types.agent import Agent
from schema_types.cases import MockedTool

__all__ = ["MockedToolbox", "mock_problems"]


def mock_problems(agent: Agent, mocks: Mapping[str, MockedTool]) -> list[str]:
    """What is wrong with a case's mocks: each key must name one of the agent's tool servers or
    one of their tools (``server__tool``)."""
    servers = list(agent.mcp_servers)
    problems: list[str] = []
    for key in mocks:
        if key in agent.mcp_servers or key.split("__", 1)[0] in agent.mcp_servers:
            continue
        problems.append(
            f"{key!r} names no tool server of the agent nor one of its tools "
            f"(server__tool; the servers: {', '.join(servers) or 'none'})"
        )
    return problems


def _down_reason(server: str, key: str) -> str:
    """Why a server mocked down is unavailable, worded as a real server that failed to start."""
    return (
        f"the MCP server '{server}' could not start: the case mocks it as down "
        f"(mock: {key}: {{down: true}})"
    )


def _result(mock: MockedTool) -> types.CallToolResult:
    """The MCP result a server would send for the mock's result or error."""
    if mock.error is not None:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=mock.error)], is_error=True
        )
    value: Any = mock.result
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    structured = value if isinstance(value, dict) else None
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=structured
    )


class MockedToolbox(AgentToolbox):
    """A case's mocks in front of ``inner`` (see the module docstring); never closes ``inner``."""

    def __init__(self, agent: Agent, inner: AgentToolbox, mocks: Mapping[str, MockedTool]) -> None:
        super().__init__(agent)
        self.call_timeout = inner.call_timeout
        self._inner = inner
        self._mocks = dict(mocks)
        self._down = {
            key.split("__", 1)[0] if key not in agent.mcp_servers else key: key
            for key, mock in mocks.items()
            if mock.down
        }

    @property
    def server_errors(self) -> dict[str, str]:
        """The servers that are down, mocked ones included."""
        errors = dict(self._inner.server_errors)
        errors.update({server: _down_reason(server, key) for server, key in self._down.items()})
        return errors

    async def allowed_tools(self) -> list[ToolSpec]:
        """The listing, without the tools of a server that is down."""
        return [s for s in await self._inner.allowed_tools() if s.server not in self._down]

    def withheld(self) -> list[WithheldTools]:
        """The toolbox behind's."""
        return self._inner.withheld()

    def _mock_of(self, name: str) -> MockedTool | None:
        mock = self._mocks.get(name)
        if mock is None and "__" in name:
            mock = self._mocks.get(name.split("__", 1)[0])
        return mock

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the session passes its remaining time
    ) -> ToolOutcome:
        """The mocked answer, or the toolbox behind's when ``name`` is not mocked."""
        mock = self._mock_of(name)
        if mock is None:
            return await self._inner.call(name, arguments, timeout=timeout)
        started = time.perf_counter()

        def elapsed() -> float:
            return (time.perf_counter() - started) * 1000

        server = name.split("__", 1)[0]
        if server in self._down:
            return ToolOutcome(
                unavailable_text(name, _down_reason(server, self._down[server])),
                True,
                duration_ms=elapsed(),
            )
        limit = self.call_limit(timeout)
        if mock.delay_ms is not None:
            try:
                with anyio.fail_after(limit):
                    await anyio.sleep(mock.delay_ms / 1000)
            except TimeoutError:
                return ToolOutcome(timed_out_text(name, limit), True, duration_ms=elapsed())
        if mock.error is None and "result" not in mock.model_fields_set:
            rest = None if timeout is None else max(0.0, timeout - elapsed() / 1000)
            return await self._inner.call(name, arguments, timeout=rest)
        return outcome_from_result(_result(mock), elapsed(), tool=name)

    async def aclose(self) -> None:
        """Nothing: the toolbox behind is not this one's to close."""
