"""A tool test run from the studio, answered and recorded exactly as a served call would be.

The studio's chat tab runs a tool's filled prompt in a ``ChatSession`` built like a served call's
(the agent's own system prompt, its permission-filtered toolbox, no parameter overrides) and shows
the "caller's view": the ``CallToolResult`` an MCP client would receive for that call.

Why this module exists: the result is made by the server's own ``server.call.finish`` (which uses
``structured_answer`` / ``answer_result`` / ``failure_result``), and the history run row is written
by the server's own ``CallRecord``, so what the person sees in a test cannot drift from what
``metaagent serve`` returns. Only the thread kind (``tool-test``) and the caller name differ, so
the history view can tell test runs from served ones.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_export.errors import ExportError
from mcp_export.server.cost import agent_pricing
from mcp_export.server.history import CallRecord, HistoryAccess, call_title
from mcp_export.server.steps import finish
from mcp_export.server.tools import ServedAgent, ServedTool

if TYPE_CHECKING:
    from mcp_export.history.store import HistoryStore
    from mcp_export.session.events import FinalAnswer, SessionFailed
    from schema_types.agent import Agent

__all__ = ["TEST_CALLER", "ToolTestRecord", "caller_result"]

logger = logging.getLogger(__name__)

TEST_CALLER = "Meta Agent Studio (tool test)"
"""The ``caller`` of a test run's history row."""

# Where a served agent file would live when the studio's agent has not been saved yet; only named
# in messages, never opened.
_UNSAVED = Path("untitled.agent.yaml")


def _served_tool(agent: Agent, tool_name: str, agent_path: Path | None) -> ServedTool:
    definition = agent.metadata.tool(tool_name)
    if definition is None:
        names = ", ".join(t.name for t in agent.tools) or "none"
        raise KeyError(f"the agent has no tool named {tool_name!r} (its tools: {names})")
    owner = ServedAgent(agent, agent_path or _UNSAVED)
    # finish() reads only the name and the conversation flag; the listing is not needed here.
    return ServedTool(tool_name, owner, definition, input_schema={})


def _as_json(result: Any) -> dict[str, Any]:
    data: dict[str, Any] = result.model_dump(by_alias=True, exclude_none=True, mode="json")
    return data


def caller_result(
    agent: Agent,
    tool_name: str,
    outcome: FinalAnswer | SessionFailed,
    *,
    agent_path: Path | None = None,
    thread_id: str | None = None,
) -> dict[str, Any]:
    """The ``CallToolResult`` an MCP client receives for a call that ended with ``outcome``.

    Args:
        agent: the agent the tool belongs to.
        tool_name: the tool that was called.
        outcome: the session's last event.
        agent_path: the agent file (named in some messages).
        thread_id: the call's history thread (a conversation tool returns it as
            ``conversationId``).

    Returns:
        The result as wire JSON (``content``, ``structuredContent``, ``isError``).

    Raises:
        KeyError: the agent has no such tool.
    """
    tool = _served_tool(agent, tool_name, agent_path)
    record = CallRecord(HistoryAccess(None), thread_id, None, agent_pricing(agent))
    return _as_json(finish(tool, record, outcome, thread_id))


class ToolTestRecord:
    """The history of one tool test: a ``tool-test`` thread and a run row, as a served call has.

    History never fails a test: a store that cannot be written is logged and left alone.

    Args:
        agent: the agent the tool belongs to.
        tool_name: the tool under test.
        arguments: its arguments (recorded, so the history view can re-run the test).
        prompt: the filled prompt.
        history: the store, or None (nothing recorded).
        agent_path: the agent file.
    """

    def __init__(
        self,
        agent: Agent,
        tool_name: str,
        *,
        arguments: dict[str, Any],
        prompt: str,
        history: HistoryStore | None,
        agent_path: Path | None,
    ) -> None:
        self.agent = agent
        self.tool_name = tool_name
        self.agent_path = agent_path
        self._tool = _served_tool(agent, tool_name, agent_path)
        access = HistoryAccess(history)
        thread_id: str | None = None
        run_id: int | None = None
        if history is not None:
            try:
                thread_id, run_id = history.start_call(
                    thread_id=None,
                    agent_path=str(agent_path) if agent_path is not None else None,
                    agent_name=agent.metadata.name,
                    title=call_title(tool_name, prompt),
                    kind="tool-test",
                    tool_name=tool_name,
                    arguments=arguments,
                    filled_prompt=prompt,
                    caller=TEST_CALLER,
                    fingerprint=self._tool.fingerprint,
                    version=self._tool.version.decisive,
                )
            except ExportError as exc:
                logger.warning("history: %s; this test run is not recorded", exc)
                access = HistoryAccess(None)
                thread_id = run_id = None
        self._record: CallRecord = CallRecord(access, thread_id, run_id, agent_pricing(agent))

    @property
    def thread_id(self) -> str | None:
        """The test's history thread (the session writes its messages there), or None."""
        return self._record.thread_id

    def finish(self, outcome: FinalAnswer | SessionFailed) -> dict[str, Any]:
        """Record how the test ended; the caller's view of it (see ``caller_result``)."""
        return _as_json(finish(self._tool, self._record, outcome, self.thread_id))

    def cancelled(self) -> None:
        """The test was abandoned before it ended (the tab was closed)."""
        self._record.cancelled()
