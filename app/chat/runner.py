"""The runtime behind one chat tab: provider, toolbox and chat session, made on first use.

Kept free of Qt so the tab's widgets only render events. One runner is one conversation: the
first ``run`` creates the provider (``provider_for_agent``), the agent's toolbox and the
``ChatSession``; later runs continue the same session (multi-turn). For a tool test the first run
is the tool call: it is built as the served server builds a call (the agent's system prompt, the
permission-filtered toolbox, no parameter overrides; a tool with an output schema answers in it),
recorded like a served call, and its caller's view (the ``CallToolResult`` an MCP client would
receive) is kept.

Each runner keeps one ``ProtocolLog`` (``protocol_log``) for its conversation: the provider and
the toolbox record into it from the moment they are made, before the session's first request,
so the log holds the whole raw exchange (keys masked) whether or not anyone shows it.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from collections.abc import Callable
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.collector import settle_after_import
from mcp_export.protocol_log import ProtocolLog, attach

if TYPE_CHECKING:
    from mcp_export.history.store import HistoryStore
    from mcp_export.providers.base import Provider
    from mcp_export.server.tool_test import ToolTestRecord
    from mcp_export.session.chat import ChatSession
    from mcp_export.session.events import FinalAnswer, SessionEvent, SessionFailed
    from mcp_export.toolbox.agent_toolbox import AgentToolbox
    from schema_types.agent import Agent

__all__ = ["ChatRunner", "ProviderFactory", "ToolTest", "preload_runtime"]

ProviderFactory = Callable[["Agent"], tuple["Provider", str]]
"""Makes the provider of a conversation and the model name to ask it for, from the agent."""


def _import_all(names: list[str]) -> None:
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # the real import reports it, where the person sees it


async def preload_runtime(agent: Agent) -> None:
    """Import the provider SDK and the MCP SDK the agent needs in a worker thread.

    Importing them takes about a second; done on the loop's thread, the first message of the
    first tab would freeze the window that long. (Garbage is collected on the GUI thread only,
    :mod:`app.collector`, so the worker never frees a Qt object.)
    """
    model = (agent.settings.model or "").strip()
    names = ["anthropic" if model.startswith("anthropic") else "openai"]
    if agent.mcp_servers:
        names.append("mcp_export.toolbox.agent_toolbox")
    missing = [name for name in names if name not in sys.modules]
    if missing:
        await asyncio.to_thread(_import_all, missing)
        settle_after_import()


@dataclass(frozen=True)
class ToolTest:
    """What a tool test calls: the tool and its (validated) arguments."""

    tool_name: str
    arguments: dict[str, Any]


class ChatRunner:
    """Runs the turns of one conversation and hands every event to a callback.

    Attributes:
        protocol_log: the raw exchange of this conversation with its model endpoint and tool
            servers (empty until the first run makes the provider and the toolbox).

    Args:
        agent: the agent; read once, at the first run (later edits apply to new tabs).
        agent_path: the agent file, or None for an unsaved agent.
        history: where to record the conversation, or None.
        test: the tool under test, or None for a plain chat.
        provider_factory: makes the provider and model name from the agent (default:
            ``provider_for_agent``, the agent's configured model).
    """

    def __init__(
        self,
        agent: Callable[[], Agent],
        agent_path: Path | None,
        *,
        history: HistoryStore | None = None,
        test: ToolTest | None = None,
        provider_factory: ProviderFactory | None = None,
    ) -> None:
        self._agent = agent
        self.agent_path = agent_path
        self.history = history
        self.test = test
        self._provider_factory = provider_factory
        self.protocol_log = ProtocolLog()
        self.session: ChatSession | None = None
        self.caller_view: dict[str, Any] | None = None
        """The caller's view of the tool test, once its first run has ended."""
        self._provider: Provider | None = None
        self._toolbox: AgentToolbox | None = None
        self._model = ""
        self._record: ToolTestRecord | None = None
        self._runs = 0
        self._in_run = False
        self._cancel_requested = False

    @property
    def running(self) -> bool:
        """Whether a turn is in progress."""
        return self._in_run

    async def run(
        self, message: str, on_event: Callable[[SessionEvent], None]
    ) -> FinalAnswer | SessionFailed:
        """Play one user turn; every event goes to ``on_event``; returns the last one.

        The session says its steps (``Step`` events: a tool server starting, the model, a
        retry's wait) for the tab's status line.

        A configuration problem (no model, no key) ends the turn with a ``SessionFailed`` too,
        so the tab shows every failure the same way.
        """
        from mcp_export.errors import ExportError, SessionError
        from mcp_export.session.events import FinalAnswer, SessionFailed
        from mcp_export.session.failure import failure_for

        self._in_run = True
        try:
            if self.session is None:
                await preload_runtime(self._agent())
            if self._cancel_requested:  # stopped before it began: start nothing
                cancelled = failure_for(SessionError("the run was cancelled"), kind="cancelled")
                return self._end_early(cancelled, on_event)
            try:
                session = self._session(message)
            except ExportError as exc:
                return self._end_early(failure_for(exc), on_event)
            outcome: FinalAnswer | SessionFailed | None = None
            async with aclosing(session.run(message)) as events:
                async for event in events:
                    on_event(event)
                    if isinstance(event, FinalAnswer | SessionFailed):
                        outcome = event
            if outcome is None:  # the session promises a last event; never leave the tab hanging
                outcome = failure_for(SessionError("the session ended without an answer"))
                on_event(outcome)
            self._finish_test(outcome)
            return outcome
        except BaseException:
            if self._record is not None:  # cancelled (the tab closed): leave an honest trail
                self._record.cancelled()
                self._record = None
            raise
        finally:
            self._in_run = False
            self._cancel_requested = False
            self._runs += 1

    def _end_early(
        self, failure: SessionFailed, on_event: Callable[[SessionEvent], None]
    ) -> SessionFailed:
        on_event(failure)
        self._finish_test(failure)
        return failure

    def cancel(self) -> None:
        """Stop the turn in progress, also one that has not begun yet or is still loading the
        SDKs (then no tool server starts for it); it ends with ``SessionFailed(kind="cancelled")``.
        """
        self._cancel_requested = True
        if self.session is not None:
            self.session.cancel()

    def _session(self, message: str) -> ChatSession:
        if self.session is not None:
            return self.session
        from mcp_export.providers.factory import provider_for_agent
        from mcp_export.server.tool_test import ToolTestRecord
        from mcp_export.session.chat import ChatSession
        from mcp_export.session.typed import OutputSpec

        agent = self._agent()
        if self._provider is None:
            self._provider, self._model = (self._provider_factory or provider_for_agent)(agent)
        if self._toolbox is None and agent.mcp_servers:
            from mcp_export.toolbox.agent_toolbox import AgentToolbox

            base_dir = self.agent_path.parent if self.agent_path is not None else None
            self._toolbox = AgentToolbox(agent, base_dir=base_dir)
        attach(self.protocol_log, self._provider, self._toolbox)
        path = str(self.agent_path) if self.agent_path is not None else None
        thread_id: str | None = None
        output: OutputSpec | None = None
        if self.test is not None and self._runs == 0:
            tool = agent.metadata.tool(self.test.tool_name)
            if tool is not None and tool.output_schema is not None:
                output = OutputSpec(tool.output_schema, tool.name)
            self._record = ToolTestRecord(
                agent,
                self.test.tool_name,
                arguments=self.test.arguments,
                prompt=message,
                history=self.history,
                agent_path=self.agent_path,
            )
            thread_id = self._record.thread_id
        self.session = ChatSession(
            agent,
            provider=self._provider,
            model=self._model,
            toolbox=self._toolbox,
            history=self.history,
            thread_id=thread_id,
            thread_kind="tool-test" if self.test is not None else "chat",
            agent_path=path,
            steps=True,
            output=output,
        )
        return self.session

    def _finish_test(self, outcome: FinalAnswer | SessionFailed) -> None:
        record, self._record = self._record, None
        if record is not None:
            self.caller_view = record.finish(outcome)
        elif self.test is not None and self._runs == 0:
            # The call never started (no model): the caller would get the failure as an error.
            from mcp_export.server.tool_test import caller_result
            from mcp_export.session.events import SessionFailed

            if isinstance(outcome, SessionFailed):
                self.caller_view = caller_result(
                    self._agent(), self.test.tool_name, outcome, agent_path=self.agent_path
                )

    async def aclose(self) -> None:
        """Stop the tool servers and close the provider's connections."""
        toolbox, self._toolbox = self._toolbox, None
        provider, self._provider = self._provider, None
        try:
            if toolbox is not None:
                await toolbox.aclose()
        finally:
            if provider is not None:
                await provider.aclose()
