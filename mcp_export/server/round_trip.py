"""A served call answered by the client's model on a 2026-07-28 connection (input-required).

Each round of the call replays the chat loop from the ``RoundTripState`` the previous round left
in ``requestState`` (see ``server.sampling``), takes the client's new answer, and either finishes
or ends the round with another ``InputRequiredResult``. Progress is reported only for what is new
in a round, never for replayed turns.

The history is written once, when the run ends (answer or failure): a round that stops to ask the
client is not an outcome, and a client may never come back. A round holds its conversation only
while it runs (``server/turns.py``), not while the client's model thinks: a round that finds
the conversation grown since the first one (another turn answered in between) is refused, so
the turn is asked again with it rather than recorded beside it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import mcp_types as types

from mcp_export.providers.base import Usage
from mcp_export.providers.sampling import SamplingProvider
from mcp_export.server.result import error_result
from mcp_export.server.sampling import (
    SAMPLE_KEY,
    ReplayToolbox,
    RoundTripSampler,
    RoundTripState,
    SamplingInputRequired,
    SamplingRefused,
    create_message_params,
    response_from_result,
)
from mcp_export.server.steps import ServedRequest, drive, finish, new_session
from mcp_export.session.events import SessionFailed, TurnFinished
from mcp_export.session.record import SessionRecorder

if TYPE_CHECKING:
    from mcp_export.providers.sampling import SamplingResponse
    from mcp_export.session.chat import ChatSession
    from mcp_export.session.events import FinalAnswer

__all__ = ["run_round_trip"]


def _fresh_answer(
    params: types.CallToolRequestParams, tool: str
) -> tuple[SamplingResponse | None, str | None]:
    """The client's answer carried by this retry (or None), or the text of a refusal."""
    responses = params.input_responses or {}
    if not responses:
        return None, None
    answer = responses.get(SAMPLE_KEY)
    if not isinstance(answer, types.CreateMessageResult | types.CreateMessageResultWithTools):
        return None, (
            f"{tool}: the retry did not carry the model answer the server asked for "
            f"(input response {SAMPLE_KEY!r}); call the tool again without requestState"
        )
    try:
        return response_from_result(answer), None
    except SamplingRefused as exc:
        return None, f"{tool} failed: {exc}"


class _NewsFilter:
    """Tells the events of replayed turns (old news) from those of this round."""

    def __init__(self, sampler: RoundTripSampler) -> None:
        self._sampler = sampler
        self._turn = 0

    def __call__(self, event: Any) -> bool:
        if isinstance(event, TurnFinished):
            self._turn = event.turn
            return event.turn > self._sampler.replayed_turns
        # Tool calls run after the turn that asked for them: replayed when that turn was.
        return self._turn > self._sampler.replayed_turns


async def run_round_trip(
    request: ServedRequest, params: types.CallToolRequestParams
) -> types.CallToolResult | types.InputRequiredResult:
    """Play one round of a sampled call on a 2026-07-28 connection."""
    tool = request.tool
    if params.request_state:
        try:
            state = RoundTripState.loads(params.request_state)
        except (ValueError, KeyError, TypeError):
            return error_result(
                f"{tool.name}: the requestState is not one this server made; call the tool "
                "again without it"
            )
    else:
        prior = len(request.prior) if request.conversation is not None else None
        state = RoundTripState(started=time.time(), prior=prior)
    if request.conversation is not None and state.prior != len(request.prior):
        return error_result(
            f"conversation_id {request.conversation!r}: another turn of this conversation "
            "answered while this one waited for the client's model, so this answer would not "
            "know of it; call the tool again without requestState to ask again"
        )
    fresh, refusal = _fresh_answer(params, tool.name)
    if refusal is not None:
        return error_result(refusal)
    sampler = RoundTripSampler(state, fresh)

    choice = request.choice
    provider = SamplingProvider(sampler, supports_tools=choice.sampling_tools)
    toolbox = ReplayToolbox(request.runtime.toolbox(), state) if choice.sampling_tools else None
    session = new_session(request, None, None, provider=provider, toolbox=toolbox)
    try:
        outcome = await drive(request.ctx, session, request.prompt, news=_NewsFilter(sampler))
    finally:
        await request.runtime.note_inner_tools()

    if isinstance(outcome, SessionFailed) and isinstance(outcome.error, SamplingInputRequired):
        return types.InputRequiredResult(
            input_requests={
                SAMPLE_KEY: types.CreateMessageRequest(
                    params=create_message_params(outcome.error.request)
                )
            },
            request_state=state.dumps(),
        )
    return await _record_and_finish(request, session, outcome, (time.time() - state.started) * 1000)


async def _record_and_finish(
    request: ServedRequest,
    session: ChatSession,
    outcome: FinalAnswer | SessionFailed,
    duration_ms: float,
) -> types.CallToolResult:
    """Write the whole run into the history, then answer."""
    history = request.runtime.policy.history
    record = history.start(
        request.ctx,
        request.tool,
        request.prompt,
        request.arguments,
        request.conversation,
        pricing=request.runtime.pricing(request.choice),
    )
    store = history.store
    if store is not None and record.thread_id is not None:
        recorder = SessionRecorder(
            store,
            thread_id=record.thread_id,
            thread_kind="served",
            agent_name=request.tool.owner.agent.metadata.name,
            agent_path=str(request.tool.owner.path),
        )
        prior = sum(1 for m in request.prior if m.role != "system")
        skip = prior + (1 if session.agent.system_prompt else 0)
        for message in session.messages[skip:]:
            if message.role == "user":
                recorder.user_message(message.content)
            elif message.role == "assistant":
                recorder.model_turn_started()
                recorder.model_turn_finished(message, Usage())
            elif message.role == "tool":
                recorder.tool_result(message)
    result = finish(
        request.tool,
        record,
        outcome,
        record.thread_id,
        duration_ms=duration_ms,
        unavailable=request.runtime.unavailable_servers(),
    )
    if request.tool.conversation:
        await record.settled()
    return result
