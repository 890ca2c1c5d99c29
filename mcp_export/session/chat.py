"""The chat session: model → tool calls → results → model, until the model answers.

One ``ChatSession`` is one conversation with its own id and message list; ``run(message)`` plays one
user turn and yields ``SessionEvent``s (see ``session.events``). Every consumer (the studio's chat
tab, the served MCP server, the CLI) drives the same loop.

How a run is shaped, and why:

- The loop runs in its own asyncio task and hands events to the consumer through a queue. The
  consumer may do anything between events (render, await its own I/O) without the loop's
  timeout or cancel scope ever reaching into its code, and cancelling the consumer cancels the
  loop task, which aborts the model stream and the tool calls in flight.
- The whole run sits in one anyio cancel scope with the wall-clock deadline; ``cancel()`` cancels
  that scope. Both end the run with a ``SessionFailed`` event, never a hang and never an
  exception: the iterator does not raise ``ExportError``.
- The tool calls of one model turn run concurrently; their results are appended in call order.
- A session made with ``steps=True`` says what the run waits for as it begins (``Step`` events,
  ``session.steps``): a tool server starting and listing its tools, each model request, a
  retry's wait, the tool calls. Others see no steps (nothing is installed to find them).
- Nothing is shared between sessions except what the caller passes in (provider, toolbox,
  history store), and those are safe to share.
- Every event is a sink's text (the chat tab, the CLI, served results and progress): what the
  model and the tools say passes ``redact`` before it is emitted, so no resolved secret is shown.
  A tool's result is redacted before the model sees it too (the model's provider is outside);
  the arguments the model gave are shown (and recorded) redacted but reach the tool as they
  are. What the session writes into the history is redacted as well. The answer's trailing run
  of key characters is held back until the next space (``_DeltaRedactor``), so a key split
  across stream deltas is still caught.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import anyio

from mcp_export.errors import (
    EmptyAnswer,
    ExportError,
    ProviderProtocolError,
    SessionError,
    SessionTimeout,
    ToolChoiceIgnored,
)
from mcp_export.providers.base import (
    ChatMessage,
    Completion,
    ModelRequest,
    NamedEndpoint,
    Provider,
    ProviderNotice,
    TextDelta,
    ToolCallRequest,
    ToolSchema,
)
from mcp_export.providers.parameters import resolve_parameters
from mcp_export.redact import redact, redact_json
from mcp_export.session.events import (
    FinalAnswer,
    Notice,
    SessionEvent,
    SessionFailed,
    SessionStarted,
    ToolCallFinished,
    ToolCallRecord,
    ToolCallStarted,
    ToolsHidden,
    TurnFinished,
)
from mcp_export.session.failure import failure_for, turn_limit_error
from mcp_export.session.record import SessionRecorder, repair_tool_results
from mcp_export.session.result import SessionResult, aclose_stream, collect_result
from mcp_export.session.run_state import RunState, last_request_notice
from mcp_export.session.steps import StepReporter
from mcp_export.session.typed import OutputSpec, typed_turns
from schema_types.agent import TIMEOUT_SETTING

if TYPE_CHECKING:
    from mcp_export.history.store import HistoryStore, ThreadKind
    from mcp_export.toolbox.withheld import WithheldTools
    from schema_types.agent import Agent

__all__ = [
    "ChatSession",
    "SessionToolbox",
    "run_to_result",
]

logger = logging.getLogger(__name__)

_Emit = Callable[[SessionEvent | None], None]

_HOLD_LIMIT = 4096
"""The most answer text held back by ``_DeltaRedactor``: a secret is far shorter, and a longer
run (minified JSON, a long URL) still streams."""
_KEY_CHARACTERS = "".join(chr(code) for code in range(0x21, 0x7F))
"""Printable ASCII without the space: what keys are made of."""


class _DeltaRedactor:
    """Emits a stream's text deltas redacted, holding back the run of printable ASCII characters
    at the end of what arrived (keys are made of those): a key is redacted whole however the
    stream split it. Words are released at the next space; text in other scripts at once.
    """

    def __init__(self, emit: _Emit) -> None:
        self._emit = emit
        self._held = ""

    def add(self, text: str) -> None:
        held = self._held + text
        start = len(held.rstrip(_KEY_CHARACTERS))
        if len(held) - start > _HOLD_LIMIT:
            start = len(held)
        self._held = held[start:]
        if start:
            self._emit(TextDelta(redact(held[:start])))

    def flush(self) -> None:
        if self._held:
            held, self._held = self._held, ""
            self._emit(TextDelta(redact(held)))


def _redacted(message: ChatMessage) -> ChatMessage:
    """``message`` as the history records it: text and tool arguments redacted."""
    calls = tuple(
        replace(call, arguments=redact_json(call.arguments)) for call in message.tool_calls
    )
    return replace(message, content=redact(message.content), tool_calls=calls)


class _OfferedTool(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def input_schema(self) -> Mapping[str, Any]: ...


class _ToolOutcome(Protocol):
    @property
    def text(self) -> str: ...
    @property
    def is_error(self) -> bool: ...
    @property
    def refused(self) -> bool: ...
    @property
    def duration_ms(self) -> float: ...


class SessionToolbox(Protocol):
    """What a session needs of its tools: ``AgentToolbox`` is the implementation."""

    async def allowed_tools(self) -> Sequence[_OfferedTool]:
        """The tools the model may be offered (namespaced ``server__tool``)."""
        ...

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None,  # noqa: ASYNC109 - the toolbox bounds each call itself
    ) -> _ToolOutcome:
        """Run one tool; a refused, failing or timed-out tool comes back as an error outcome."""
        ...


@runtime_checkable
class _Withholding(Protocol):
    """A toolbox that can say which tools its permission rule held back (``AgentToolbox``)."""

    def withheld(self) -> Sequence[WithheldTools]:
        """Per server, the tools the model is not offered because nobody can permit them."""
        ...


class ChatSession:
    """One conversation of an agent with its model, using the agent's allowed tools.

    Args:
        agent: the agent (system prompt, settings, tool permission).
        provider: the model backend; may be shared between sessions.
        model: the model name to ask the provider for.
        toolbox: the agent's MCP tools; may be shared between sessions. None: no tools.
        history: where to record the conversation. None: not recorded.
        thread_id: continue this history thread (else a thread is created on the first message).
        thread_kind: the kind of a created thread (``chat``, ``call``, ``served``…).
        prior_messages: the conversation so far (system messages in it are ignored: the agent's
            system prompt comes first).
        parameters: model parameter overrides (snake_case), over the agent's settings.
        timeout: wall-clock limit of one run in seconds (default ``settings.timeoutSeconds``).
        max_turns: model requests per run (default ``settings.maxChatTurns``).
        agent_path: the agent file, recorded with a created history thread.
        steps: whether ``run`` yields ``Step`` events (for a consumer with a status line).
        output: the output schema the answer must follow (a typed tool, ``session.typed``);
            None: the answer is text.
    """

    def __init__(
        self,
        agent: Agent,
        *,
        provider: Provider,
        model: str,
        toolbox: SessionToolbox | None = None,
        history: HistoryStore | None = None,
        thread_id: str | None = None,
        thread_kind: ThreadKind = "chat",
        prior_messages: Sequence[ChatMessage] = (),
        parameters: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        max_turns: int | None = None,
        agent_path: str | None = None,
        steps: bool = False,
        output: OutputSpec | None = None,
    ) -> None:
        self.id = uuid.uuid4().hex
        self.output = output
        self.steps = steps
        self.agent = agent
        self.provider = provider
        self.model = model
        self.toolbox = toolbox
        self.overrides: dict[str, Any] = dict(parameters or {})
        self.timeout = agent.settings.timeout_seconds if timeout is None else timeout
        self.max_turns = agent.settings.max_chat_turns if max_turns is None else max_turns
        self.messages: list[ChatMessage] = []
        if agent.system_prompt:
            self.messages.append(ChatMessage("system", agent.system_prompt))
        self.messages.extend(m for m in prior_messages if m.role != "system")
        self._recorder = SessionRecorder(
            history,
            thread_id=thread_id,
            thread_kind=thread_kind,
            agent_name=agent.metadata.name,
            agent_path=agent_path,
        )
        self._running = False
        self._scope: anyio.CancelScope | None = None
        self._cancel_requested = False

    @property
    def thread_id(self) -> str | None:
        """The history thread of this conversation (None until recorded, or without history)."""
        return self._recorder.thread_id

    def set_parameter(self, name: str, value: Any) -> None:
        """Override a model parameter (snake_case) for the next runs; ``None`` clears a default."""
        self.overrides[name] = value

    def set_system_prompt(self, text: str) -> None:
        """Replace the system prompt of this conversation (not of the agent)."""
        if self.messages and self.messages[0].role == "system":
            del self.messages[0]
        if text:
            self.messages.insert(0, ChatMessage("system", text))

    def clear(self) -> None:
        """Forget the conversation but keep the system prompt (the history thread is left as is)."""
        del self.messages[1 if self.messages and self.messages[0].role == "system" else 0 :]

    def cancel(self) -> None:
        """Stop the run in progress: it ends with ``SessionFailed(kind="cancelled")``."""
        self._cancel_requested = True
        if self._scope is not None:
            self._scope.cancel()

    async def run(self, user_message: str) -> AsyncGenerator[SessionEvent, None]:
        """Play one user turn, yielding events until a ``FinalAnswer`` or a ``SessionFailed``.

        Call again on the same session for the next turn of the conversation. Close the iterator
        (``contextlib.aclosing``) when leaving it early: that aborts the run.

        Raises:
            RuntimeError: a run of this session is already in progress.
        """
        if self._running:
            raise RuntimeError("this session is already running a turn; wait for it to finish")
        self._running = True
        self._cancel_requested = False
        queue: asyncio.Queue[SessionEvent | None] = asyncio.Queue()
        task = asyncio.get_running_loop().create_task(self._drive(user_message, queue.put_nowait))
        # However the loop task ends (even cancelled by someone else), the consumer stops waiting.
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while True:
                event = await queue.get()
                if event is None:
                    return
                yield event
        finally:
            self._running = False
            if not task.done():
                task.cancel()
                # Let the abort reach the model stream and the tool calls before returning;
                # bounded, and given up if the consumer is cancelled again meanwhile.
                try:
                    await asyncio.wait({task}, timeout=5)
                except asyncio.CancelledError:
                    raise
                finally:
                    if task.done() and not task.cancelled():
                        task.exception()  # seen, so asyncio does not log it as lost

    async def _drive(self, user_message: str, emit: _Emit) -> None:
        steps = StepReporter(emit if self.steps else None)
        state = RunState(started=time.perf_counter(), steps=steps)
        answer: str | None = None
        failure: SessionFailed | None = None
        scope = anyio.CancelScope(deadline=anyio.current_time() + self.timeout)
        self._scope = scope
        if self._cancel_requested:
            scope.cancel()
        try:
            with scope, state.steps:
                answer = await self._turns(user_message, emit, state)
        except ExportError as exc:
            failure = failure_for(exc)
        except asyncio.CancelledError:
            # The consumer went away: leave an honest trail, then let the cancellation through.
            self._recorder.failed("cancelled")
            repair_tool_results(self.messages, "the run was cancelled")
            raise
        except Exception as exc:  # top of the loop task: anything else is a bug, reported
            logger.exception("chat session %s failed", self.id)
            failure = failure_for(SessionError(f"the session failed unexpectedly: {exc!r}"))
        finally:
            self._scope = None
        if answer is None and (failure is None or scope.cancel_called):
            # The scope ended the run (a provider may turn the cancellation into its own error).
            if self._cancel_requested:
                failure = failure_for(SessionError("the run was cancelled"), kind="cancelled")
            else:
                failure = failure_for(SessionTimeout(_timeout_message(self.timeout, state)))
        if failure is not None:
            # A failed run keeps its trace: what ran before it failed is part of the outcome.
            failure = replace(
                failure, tool_calls=tuple(state.calls), turns=state.turns, usage=state.usage
            )
            self._recorder.failed(failure.message)
            repair_tool_results(self.messages, failure.message)
            emit(failure)
        else:
            emit(
                FinalAnswer(
                    redact(answer or ""),
                    state.usage,
                    (time.perf_counter() - state.started) * 1000,
                    state.turns,
                    tuple(state.calls),
                    state.stop_reason,
                    state.output,
                )
            )
        emit(None)

    async def _turns(self, user_message: str, emit: _Emit, state: RunState) -> str:
        self.messages.append(ChatMessage("user", user_message))
        self._recorder.user_message(redact(user_message))
        emit(SessionStarted(self.id, self._recorder.thread_id, self.model))
        tools = await self._offered_tools(emit)
        parameters = resolve_parameters(self.agent.settings, self.overrides)
        if self.output is not None:
            return await typed_turns(self, self.output, tools, parameters, emit, state)
        for turn in range(1, self.max_turns + 1):
            state.turns = turn
            asked = parameters
            if tools and turn == self.max_turns and turn > 1 and asked.get("tool_choice") != "none":
                # Tools asked for now could not run: the model answers with what it has.
                asked = {**parameters, "tool_choice": "none"}
                emit(Notice(last_request_notice(self.max_turns)))
            request = ModelRequest(self.model, tuple(self.messages), tools, asked)
            message = await self._ask(request, emit, state)
            forced = _forced_choice(asked) if tools else None  # no tools: nothing to force
            if forced is not None and not message.tool_calls:
                raise _choice_ignored(forced, f"{self.provider.name}:{self.model}", message)
            if not message.tool_calls:
                if state.stop_reason == "max_tokens":
                    emit(Notice(_truncated_notice(asked)))
                return message.content
            if turn == self.max_turns:
                break  # the model wants more, but it would not be asked again: do not run them
            await self._run_tools(message.tool_calls, emit, state)
            parameters = _unforced(parameters)
        raise turn_limit_error(self.max_turns)

    async def _ask(self, request: ModelRequest, emit: _Emit, state: RunState) -> ChatMessage:
        """One model request of turn ``state.turns``: recorded, its message appended, its
        ``TurnFinished`` emitted; an empty answer raises ``EmptyAnswer``."""
        turn = state.turns
        self._recorder.model_turn_started()
        provider = self.provider
        endpoint = provider.endpoint if isinstance(provider, NamedEndpoint) else None
        state.steps.asking(f"{provider.name}:{self.model}", turn, endpoint=endpoint)
        completion = await self._model_turn(request, emit)
        message, usage = completion.message, completion.usage
        state.usages.append(usage)
        state.stop_reason = completion.stop_reason
        empty = not message.tool_calls and not message.content.strip()
        if not empty:  # an empty one's pending row becomes the run's error row (``failed``)
            self.messages.append(message)
            self._recorder.model_turn_finished(_redacted(message), usage)
        emit(TurnFinished(turn, usage.input_tokens, usage.output_tokens))
        if empty:
            raise _empty_answer(completion.stop_reason)
        return message

    def _add_message(self, message: ChatMessage) -> None:
        """Append a message the session itself writes (a tool result or a user note), recorded."""
        self.messages.append(message)
        if message.role == "tool":
            self._recorder.tool_result(message)
        else:
            self._recorder.user_message(redact(message.content))

    async def _offered_tools(self, emit: _Emit) -> tuple[ToolSchema, ...]:
        if self.toolbox is None:
            return ()
        offered = tuple(
            ToolSchema(spec.name, spec.description, spec.input_schema)
            for spec in await self.toolbox.allowed_tools()
        )
        if isinstance(self.toolbox, _Withholding):
            # Hidden silently, a person sees no tool calls and cannot tell why: the trace says.
            for held in self.toolbox.withheld():
                emit(ToolsHidden(held.text, held.server, held.tools, held.policy))
        return offered

    async def _model_turn(self, request: ModelRequest, emit: _Emit) -> Completion:
        completion: Completion | None = None
        deltas = _DeltaRedactor(emit)
        stream = self.provider.stream(request)
        try:
            async for event in stream:
                if isinstance(event, TextDelta):
                    if event.text:
                        deltas.add(event.text)
                elif isinstance(event, ProviderNotice):
                    emit(Notice(redact(event.text)))
                else:
                    completion = event
        finally:
            await aclose_stream(stream)  # a cancelled run must close the HTTP stream now, not at GC
        deltas.flush()
        if completion is None:
            raise ProviderProtocolError(
                f"the {self.provider.name} stream ended without a complete answer; "
                "check that the endpoint speaks the provider's API"
            )
        return completion

    async def _run_tools(
        self, calls: Sequence[ToolCallRequest], emit: _Emit, state: RunState
    ) -> None:
        for call in calls:
            emit(ToolCallStarted(call.id, call.name, redact_json(call.arguments)))
        state.steps.calling([call.name for call in calls])
        records: list[ToolCallRecord | None] = [None] * len(calls)
        if len(calls) == 1:
            records[0] = await self._call_tool(calls[0], emit)
        else:

            async def one(index: int) -> None:
                records[index] = await self._call_tool(calls[index], emit)

            async with anyio.create_task_group() as group:
                for index in range(len(calls)):
                    group.start_soon(one, index)
        for call, record in zip(calls, records, strict=True):
            assert record is not None
            result = ChatMessage(
                "tool",
                record.result,
                tool_call_id=call.id,
                name=call.name,
                is_error=record.is_error,
            )
            self.messages.append(result)
            self._recorder.tool_result(result)
            state.calls.append(record)

    async def _call_tool(self, call: ToolCallRequest, emit: _Emit) -> ToolCallRecord:
        started = time.perf_counter()
        refused = False
        if call.arguments_error is not None:
            # Never run on a guess: the model reads why, and may send the call again.
            text, is_error, duration = (
                f"the arguments of this call could not be read: {call.arguments_error}; "
                "send the call again with its arguments as one JSON object",
                True,
                0.0,
            )
        elif self.toolbox is None:
            text, is_error, refused = (
                f"no tool named {call.name!r}: this agent has no tools",
                True,
                True,
            )
            duration = 0.0
        else:
            scope = self._scope
            remaining = (scope.deadline - anyio.current_time()) if scope is not None else None
            try:
                outcome = await self.toolbox.call(call.name, call.arguments, timeout=remaining)
            except ExportError as exc:  # a tool server failure is a result the model can react to
                text, is_error = str(exc), True
                duration = (time.perf_counter() - started) * 1000
            else:
                text, is_error, refused = outcome.text, outcome.is_error, outcome.refused
                duration = outcome.duration_ms or (time.perf_counter() - started) * 1000
        finished = ToolCallFinished(
            call.id,
            call.name,
            redact_json(call.arguments),
            redact(text),
            is_error,
            refused,
            duration,
        )
        emit(finished)
        return finished.record()


def _timeout_message(limit: float, state: RunState) -> str:
    """Why a run that reached its time limit ended: the limit, its setting, and what the run
    was waiting for (the model and its server, a tool)."""
    waiting = state.steps.waiting_for
    during = f", waiting for {waiting}" if waiting else ""
    return f"no answer within the {limit:g} s time limit ({TIMEOUT_SETTING}){during}"


def _unforced(parameters: dict[str, Any]) -> dict[str, Any]:
    """The parameters of the turns after a tool round: a forced tool choice (``required``, a
    tool's name) held the first request to a tool call; kept, it would hold every request to
    one, and the run could only end at ``maxChatTurns``. ``none`` stays as it is."""
    choice = parameters.get("tool_choice")
    if choice is None or choice in ("auto", "none"):
        return parameters
    return {**parameters, "tool_choice": "auto"}


def _forced_choice(parameters: Mapping[str, Any]) -> str | None:
    """The tool choice of a request that must call a tool (``required``, a tool's name)."""
    choice = parameters.get("tool_choice")
    return choice if isinstance(choice, str) and choice not in ("auto", "none") else None


def _choice_ignored(choice: str, model: str, message: ChatMessage) -> ToolChoiceIgnored:
    """The error of a forced request answered with text: the answer is not returned as a
    success, for the choice was the agent's way of saying an answer needs the tool."""
    forced = "a tool call" if choice == "required" else f"a call of {choice}"
    text = " ".join(message.content.split())
    quoted = repr(text if len(text) <= 120 else text[:119] + "…")
    return ToolChoiceIgnored(
        f"settings.toolChoice is {choice!r}, which forces {forced}, but {model} answered with "
        f"text and no tool call ({quoted}): the model server did not honour the forced choice"
    )


def _truncated_notice(parameters: Mapping[str, Any]) -> str:
    limit = parameters.get("max_tokens")
    where = (
        f"settings.maxOutputTokens = {limit}"
        if limit is not None
        else "the model server's own limit; settings.maxOutputTokens sets one"
    )
    return (
        f"the answer was cut off at the token limit ({where}): it is incomplete "
        "(stop reason: max_tokens)"
    )


def _empty_answer(stop_reason: str | None) -> EmptyAnswer:
    if stop_reason == "refusal":
        return EmptyAnswer("the model refused to answer (stop reason: refusal)")
    if stop_reason == "max_tokens":
        return EmptyAnswer(
            "the model used up its output tokens before writing any answer "
            "(settings.maxOutputTokens)"
        )
    return EmptyAnswer("the model answered with an empty message")


async def run_to_result(session: ChatSession, user_message: str) -> SessionResult:
    """Run one user turn of ``session``; its answer and trace (never raises ``ExportError``)."""
    return await collect_result(session.run(user_message))
