"""One server per model for the cases that run with stand-ins, each call answered by its own
case's stand-ins.

A client pays once per server for checking the served tools' output schema (tens of
milliseconds), so a server per case would cost more than the replayed case itself. Instead the
cases of a model share one in-process server whose provider and toolbox are switches: each
forwards to the stand-ins of the case that is calling, which the case's task names with
:func:`calling_as` (a context variable, seen by the server's handler: the in-process client
calls it in the calling task).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from mcp_export.errors import ExportError
from mcp_export.providers.base import ModelRequest, Provider, ProviderEvent
from mcp_export.server.runtime import StandIns
from mcp_export.toolbox.agent_toolbox import AgentToolbox, ToolOutcome, ToolSpec
from mcp_export.toolbox.withheld import WithheldTools
from schema_types.agent import Agent

__all__ = ["Switch", "calling_as"]

_CALLING: ContextVar[StandIns | None] = ContextVar("replay_calling_case", default=None)


@contextmanager
def calling_as(stand_ins: StandIns) -> Iterator[None]:
    """Within this block, the switches of this task answer with ``stand_ins``."""
    token = _CALLING.set(stand_ins)
    try:
        yield
    finally:
        _CALLING.reset(token)


def _calling() -> StandIns:
    found = _CALLING.get()
    if found is None:
        raise ExportError("a case's server was called outside of its case (no stand-ins named)")
    return found


class _SwitchProvider:
    """The calling case's provider."""

    @property
    def name(self) -> str:
        return _calling().provider()[0].name

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        async for event in _calling().provider()[0].stream(request):
            yield event

    async def aclose(self) -> None:
        """Nothing: each case's provider is its own."""


class _SwitchToolbox(AgentToolbox):
    """The calling case's toolbox."""

    @property
    def server_errors(self) -> dict[str, str]:
        return _calling().toolbox().server_errors

    async def allowed_tools(self) -> list[ToolSpec]:
        return await _calling().toolbox().allowed_tools()

    def withheld(self) -> list[WithheldTools]:
        return _calling().toolbox().withheld()

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the session passes its remaining time
    ) -> ToolOutcome:
        return await _calling().toolbox().call(name, arguments, timeout=timeout)

    async def aclose(self) -> None:
        """Nothing: each case's toolbox is its own."""


class Switch:
    """The stand-ins of a shared server (``server.runtime.StandIns``): the calling case's."""

    def __init__(self, agent: Agent) -> None:
        self._agent = agent

    def provider(self) -> tuple[Provider, str]:
        """A provider that forwards to the calling case's, and its model name."""
        return _SwitchProvider(), _calling().provider()[1]

    def toolbox(self) -> AgentToolbox:
        """A toolbox that forwards to the calling case's."""
        return _SwitchToolbox(self._agent)
