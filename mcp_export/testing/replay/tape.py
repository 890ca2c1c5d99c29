"""The stand-ins a recorded or replayed case plugs in where the real provider and toolbox are made.

- :class:`RecordingProvider` passes each request to the real provider and keeps the request and
  every event it yields; :class:`ReplayProvider` yields the recorded events, after checking that
  the request it is given is the recorded one (else the :class:`Tape` says where they differ and
  the request fails as a model request does).
- :class:`RecordingToolbox` and :class:`ReplayToolbox` do the same for the inner tools: the
  listing the model is offered, and each call's outcome.

Neither closes what it wraps: the real provider and toolbox are shared by every case of a model
and closed by the run.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from mcp_export import errors
from mcp_export.errors import ProviderError
from mcp_export.providers.base import ModelRequest, Provider, ProviderEvent
from mcp_export.redact import redact, redact_json
from mcp_export.testing.replay.fixture import (
    Fixture,
    event_data,
    event_from,
    first_difference,
    outcome_data,
    outcome_from,
    request_data,
    spec_data,
    spec_from,
)
from mcp_export.toolbox.agent_toolbox import AgentToolbox, ToolOutcome, ToolSpec
from mcp_export.toolbox.withheld import WithheldTools
from schema_types.agent import Agent

__all__ = [
    "Mode",
    "RecordingProvider",
    "RecordingToolbox",
    "ReplayMismatch",
    "ReplayProvider",
    "ReplayToolbox",
    "Tape",
]

Mode = Literal["record", "replay"]
Stream = Literal["exchanges", "judge", "caller"]
"""Whose model requests: the served call's model, the judge's, or a caller case's caller's."""
_WHAT: dict[Stream, str] = {
    "exchanges": "model request",
    "judge": "judge request",
    "caller": "caller request",
}

RERECORD = "re-record with metaagent test --record"


class ReplayMismatch(ProviderError):
    """The request a replay would send is not the recorded one."""


@dataclass
class Tape:
    """One case's fixture being recorded or replayed, with where the replay stands.

    Attributes:
        fixture: the recording (filled when recording).
        path: its file.
        mismatch: where the replay first left the recording (None: it has not).
    """

    fixture: Fixture
    path: Path
    mismatch: str | None = None
    _next_exchange: int = 0
    _next_judge: int = 0
    _next_caller: int = 0
    _next_call: int = 0

    def differs(self, text: str) -> str:
        """Note the first place the replay left the recording; returns the text to fail with."""
        if self.mismatch is None:
            self.mismatch = text
        return f"{text}; {RERECORD}"

    def next_index(self, stream: Stream) -> int:
        """The index of the next recorded exchange of ``stream`` (and move past it)."""
        if stream == "judge":
            self._next_judge += 1
            return self._next_judge - 1
        if stream == "caller":
            self._next_caller += 1
            return self._next_caller - 1
        self._next_exchange += 1
        return self._next_exchange - 1

    def exchanges(self, stream: Stream) -> list[dict[str, Any]]:
        """The recorded exchanges of ``stream`` (a caller case's caller's: in its ``caller``
        part, made when recording)."""
        if stream == "caller":
            if self.fixture.caller is None:
                self.fixture.caller = {}
            found: list[dict[str, Any]] = self.fixture.caller.setdefault("exchanges", [])
            return found
        return self.fixture.judge if stream == "judge" else self.fixture.exchanges

    def next_call(self) -> int:
        """The index of the next recorded tool call (and move past it)."""
        self._next_call += 1
        return self._next_call - 1


def _error_data(exc: ProviderError) -> dict[str, Any]:
    return {"type": type(exc).__name__, "message": redact(str(exc))}


def _error_from(data: dict[str, Any]) -> ProviderError:
    kind = getattr(errors, str(data.get("type", "")), None)
    if isinstance(kind, type) and issubclass(kind, ProviderError):
        return kind(data.get("message", ""))
    return ProviderError(data.get("message", ""))


class RecordingProvider:
    """The real provider, each request and its events kept on the tape (never closes it)."""

    def __init__(self, real: Provider, tape: Tape | None, stream: Stream = "exchanges") -> None:
        self._real = real
        self._tape = tape
        self._stream = stream

    @property
    def name(self) -> str:
        """The real provider's name."""
        return self._real.name

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        """The real provider's events, recorded as they pass."""
        if self._tape is None:
            async for event in self._real.stream(request):
                yield event
            return
        entry: dict[str, Any] = {"request": request_data(request), "events": []}
        self._tape.exchanges(self._stream).append(entry)
        try:
            async for event in self._real.stream(request):
                entry["events"].append(event_data(event))
                yield event
        except ProviderError as exc:
            entry["error"] = _error_data(exc)
            raise

    async def aclose(self) -> None:
        """Nothing: the real provider is the run's to close."""


class ReplayProvider:
    """Answers from the tape: the recorded events of each request, when it is the recorded one."""

    def __init__(self, tape: Tape, stream: Stream = "exchanges") -> None:
        self._tape = tape
        self._stream = stream

    @property
    def name(self) -> str:
        """The recorded provider's name."""
        caller = self._tape.fixture.caller
        if self._stream == "caller" and caller is not None:
            return str(caller["provider"])
        return self._tape.fixture.provider

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        """The recorded events.

        Raises:
            ReplayMismatch: the request differs from the recorded one, or was not recorded.
            ProviderError: the recorded request failed (the same error again).
        """
        tape = self._tape
        recorded = tape.exchanges(self._stream)
        index = tape.next_index(self._stream)
        what = _WHAT[self._stream]
        if index >= len(recorded):
            raise ReplayMismatch(
                tape.differs(
                    f"{what} {index + 1} is not in the recording (it holds {len(recorded)})"
                )
            )
        entry = recorded[index]
        where = first_difference(entry["request"], request_data(request))
        if where is not None:
            raise ReplayMismatch(
                tape.differs(f"{what} {index + 1} differs from the recording at {where}")
            )
        for event in entry["events"]:
            yield event_from(event)
        if "error" in entry:
            raise _error_from(entry["error"])

    async def aclose(self) -> None:
        """Nothing to close."""


class RecordingToolbox(AgentToolbox):
    """The real toolbox, its listing and each call's outcome kept on the tape."""

    def __init__(self, agent: Agent, real: AgentToolbox, tape: Tape) -> None:
        super().__init__(agent)
        self.call_timeout = real.call_timeout
        self._real = real
        self._tape = tape

    @property
    def server_errors(self) -> dict[str, str]:
        """The real toolbox's."""
        errors_now = self._real.server_errors
        self._tape.fixture.unavailable = redact_json(errors_now)
        return errors_now

    async def allowed_tools(self) -> list[ToolSpec]:
        """The real listing, recorded."""
        specs = await self._real.allowed_tools()
        self._tape.fixture.tools = [spec_data(spec) for spec in specs]
        self._tape.fixture.unavailable = redact_json(self._real.server_errors)
        return specs

    def withheld(self) -> list[WithheldTools]:
        """The real toolbox's."""
        return self._real.withheld()

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the session passes its remaining time
    ) -> ToolOutcome:
        """The real call, recorded."""
        outcome = await self._real.call(name, arguments, timeout=timeout)
        self._tape.fixture.tool_calls.append(
            {
                "name": name,
                "arguments": redact_json(arguments),
                "outcome": outcome_data(outcome),
            }
        )
        return outcome

    async def aclose(self) -> None:
        """Nothing: the real toolbox is the run's to close."""


class ReplayToolbox(AgentToolbox):
    """Answers from the tape: the recorded listing, and each call's recorded outcome when it is
    the recorded call. No tool server is started."""

    def __init__(self, agent: Agent, tape: Tape) -> None:
        super().__init__(agent)
        self._tape = tape

    @property
    def server_errors(self) -> dict[str, str]:
        """The servers that were unavailable in the recording."""
        return dict(self._tape.fixture.unavailable)

    async def allowed_tools(self) -> list[ToolSpec]:
        """The recorded listing."""
        return [spec_from(data) for data in self._tape.fixture.tools or ()]

    def withheld(self) -> list[WithheldTools]:
        """None: the recording keeps what the model was offered, not what was held back."""
        return []

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the session passes its remaining time
    ) -> ToolOutcome:
        """The recorded outcome of this call (an error outcome that says where the call left the
        recording, when it did)."""
        tape = self._tape
        recorded = tape.fixture.tool_calls
        index = tape.next_call()
        if index >= len(recorded):
            text = (
                f"tool call {index + 1} ({name}) is not in the recording (it holds {len(recorded)})"
            )
            return ToolOutcome(tape.differs(text), True)
        entry = recorded[index]
        now = {"name": name, "arguments": redact_json(arguments)}
        where = first_difference({"name": entry["name"], "arguments": entry["arguments"]}, now)
        if where is not None:
            text = f"tool call {index + 1} differs from the recording at {where}"
            return ToolOutcome(tape.differs(text), True)
        return outcome_from(entry["outcome"])

    async def aclose(self) -> None:
        """Nothing to close."""
