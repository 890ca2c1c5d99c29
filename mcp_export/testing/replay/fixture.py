"""A recorded exchange of one test case on one model: what the model answered, what each inner
tool returned, and where it lives beside the agent file.

A fixture is one JSON file, ``<agent file>.replay/<tool>/<case>--<model>.json`` (each part made
safe for a file name: ``openai:gpt-4.1`` is ``openai@gpt-4.1``; other characters become ``_``
and add a short hash of the name), indented and with sorted keys so a re-recording diffs line by
line. Every string in it went through the one ``redact()``: a secret never reaches the file. It
holds:

- ``tools``: the inner tools the model was offered (as the toolbox listed them) and ``unavailable``
  (the servers that were down, with why);
- ``exchanges``: each model request as it was sent, and the events the provider yielded for it;
- ``toolCalls``: each inner tool call (name, arguments) and the outcome the model got back;
- ``judge``: the judge model's exchanges, when the case has a ``judge`` criterion;
- ``caller``, for a caller case only (its file is named by the caller model; ``model`` is the
  model that served the picked call, whose exchanges are the ones above): the caller model
  (``model``, ``provider``, ``modelName``), its ``exchanges`` (what it was offered and what it
  answered: its pick and arguments) and ``decoyServers``, what each live decoy server listed
  (a replay offers that listing instead of starting the server).

A replay compares each request it would send with the recorded one: :func:`first_difference`
says where they part.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_export.providers.base import (
    ChatMessage,
    Completion,
    ModelRequest,
    ProviderEvent,
    ProviderNotice,
    TextDelta,
    ToolCallRequest,
    Usage,
)
from mcp_export.redact import redact_json
from mcp_export.toolbox.agent_toolbox import ToolOutcome, ToolSpec

__all__ = [
    "FORMAT",
    "Fixture",
    "FixtureError",
    "event_data",
    "event_from",
    "first_difference",
    "fixture_path",
    "outcome_data",
    "outcome_from",
    "request_data",
    "spec_data",
    "spec_from",
]

FORMAT = 1
"""The fixture format's version (a file of another version is refused, with how to re-record)."""

_UNSAFE = re.compile(r"[^A-Za-z0-9._@-]+")
_MAX_PART = 80


class FixtureError(Exception):
    """A fixture cannot be read (missing, not JSON, another format); the message says what to do."""


def _part(text: str) -> str:
    """``text`` as one safe file-name part: other characters become ``_``; a name that changed
    (or is long) gets a short hash of the original so two names never share a file."""
    if ":" in text and "@" not in text:
        # provider:model reads as provider@model (a colon is no file-name character everywhere).
        text = text.replace(":", "@")
    safe = _UNSAFE.sub("_", text).strip("._") or "_"
    if safe == text and len(safe) <= _MAX_PART:
        return safe
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{safe[:_MAX_PART]}-{digest}"


def fixture_path(agent_path: Path, tool: str, case: str, model: str) -> Path:
    """Where the recording of ``case`` of ``tool`` on ``model`` lives, beside the agent file."""
    folder = agent_path.with_name(f"{agent_path.name}.replay")
    return folder / _part(tool) / f"{_part(case)}--{_part(model)}.json"


def _message_data(message: ChatMessage) -> dict[str, Any]:
    data: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        data["toolCalls"] = [
            {
                "id": call.id,
                "name": call.name,
                "arguments": call.arguments,
                "argumentsError": call.arguments_error,
            }
            for call in message.tool_calls
        ]
    if message.tool_call_id is not None:
        data["toolCallId"] = message.tool_call_id
    if message.name is not None:
        data["name"] = message.name
    if message.is_error:
        data["isError"] = True
    return data


def _message_from(data: dict[str, Any]) -> ChatMessage:
    calls = tuple(
        ToolCallRequest(c["id"], c["name"], c["arguments"], c.get("argumentsError"))
        for c in data.get("toolCalls", ())
    )
    return ChatMessage(
        data["role"],
        data.get("content", ""),
        calls,
        data.get("toolCallId"),
        data.get("name"),
        bool(data.get("isError", False)),
    )


def request_data(request: ModelRequest) -> dict[str, Any]:
    """A model request as the fixture keeps it (redacted)."""
    data = {
        "model": request.model,
        "messages": [_message_data(m) for m in request.messages],
        "tools": [
            {"name": t.name, "description": t.description, "inputSchema": dict(t.input_schema)}
            for t in request.tools
        ],
        "parameters": dict(request.parameters),
    }
    return _kept(data)


def _kept(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` as the fixture keeps it: plain JSON (tuples as lists, the form it has once
    written and read back), redacted."""
    plain: Any = json.loads(json.dumps(data, ensure_ascii=False, default=str))
    redacted: dict[str, Any] = redact_json(plain)
    return redacted


def event_data(event: ProviderEvent) -> dict[str, Any]:
    """A provider event as the fixture keeps it (redacted)."""
    if isinstance(event, TextDelta):
        data: dict[str, Any] = {"text": event.text}
    elif isinstance(event, ProviderNotice):
        data = {"notice": event.text}
    else:
        usage = event.usage
        data = {
            "completion": {
                "message": _message_data(event.message),
                "usage": {
                    "inputTokens": usage.input_tokens,
                    "outputTokens": usage.output_tokens,
                    "inputPartial": usage.input_partial,
                    "outputPartial": usage.output_partial,
                },
                "stopReason": event.stop_reason,
            }
        }
    return _kept(data)


def event_from(data: dict[str, Any]) -> ProviderEvent:
    """The provider event a fixture's entry stands for."""
    if "text" in data:
        return TextDelta(data["text"])
    if "notice" in data:
        return ProviderNotice(data["notice"])
    done = data["completion"]
    usage = done.get("usage", {})
    return Completion(
        _message_from(done["message"]),
        Usage(
            usage.get("inputTokens"),
            usage.get("outputTokens"),
            bool(usage.get("inputPartial", False)),
            bool(usage.get("outputPartial", False)),
        ),
        done.get("stopReason"),
    )


def spec_data(spec: ToolSpec) -> dict[str, Any]:
    """An offered inner tool as the fixture keeps it (redacted)."""
    data = {
        "name": spec.name,
        "server": spec.server,
        "tool": spec.tool,
        "description": spec.description,
        "inputSchema": spec.input_schema,
        "annotations": spec.annotations,
        "permissionRequired": spec.permission_required,
        "schemaProblem": spec.schema_problem,
    }
    return _kept(data)


def spec_from(data: dict[str, Any]) -> ToolSpec:
    """The inner tool a fixture's entry stands for."""
    return ToolSpec(
        data["name"],
        data["server"],
        data["tool"],
        data["description"],
        data["inputSchema"],
        data.get("annotations"),
        bool(data.get("permissionRequired", False)),
        data.get("schemaProblem"),
    )


def outcome_data(outcome: ToolOutcome) -> dict[str, Any]:
    """An inner tool's outcome as the fixture keeps it (redacted)."""
    data = {
        "text": outcome.text,
        "isError": outcome.is_error,
        "structured": outcome.structured,
        "refused": outcome.refused,
        "durationMs": round(outcome.duration_ms, 3),
    }
    return _kept(data)


def outcome_from(data: dict[str, Any]) -> ToolOutcome:
    """The outcome a fixture's entry stands for."""
    return ToolOutcome(
        data["text"],
        bool(data["isError"]),
        data.get("structured"),
        bool(data.get("refused", False)),
        float(data.get("durationMs", 0.0)),
    )


@dataclass
class Fixture:
    """The recorded exchange of one case on one model (see the module docstring)."""

    agent: str
    tool: str
    case: str
    model: str
    provider: str = ""
    model_name: str = ""
    tools: list[dict[str, Any]] | None = None
    unavailable: dict[str, str] = field(default_factory=lambda: dict[str, str]())
    exchanges: list[dict[str, Any]] = field(default_factory=lambda: list[dict[str, Any]]())
    tool_calls: list[dict[str, Any]] = field(default_factory=lambda: list[dict[str, Any]]())
    judge: list[dict[str, Any]] = field(default_factory=lambda: list[dict[str, Any]]())
    caller: dict[str, Any] | None = None

    def to_json(self) -> str:
        """The file's text."""
        data = {
            "format": FORMAT,
            "agent": self.agent,
            "tool": self.tool,
            "case": self.case,
            "model": self.model,
            "provider": self.provider,
            "modelName": self.model_name,
            "tools": self.tools,
            "unavailable": self.unavailable,
            "exchanges": self.exchanges,
            "toolCalls": self.tool_calls,
            "judge": self.judge,
        }
        if self.caller is not None:
            data["caller"] = self.caller
        return json.dumps(redact_json(data), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    def save(self, path: Path) -> None:
        """Write the file (through a temporary file, so a reader never sees half of it)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.tmp")
        temporary.write_text(self.to_json(), encoding="utf-8")
        temporary.replace(path)

    @classmethod
    def load(cls, path: Path) -> Fixture:
        """Read a fixture file.

        Raises:
            FixtureError: it is missing, not a fixture, or of another format.
        """
        again = "record it with metaagent test --record"
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise FixtureError(f"no recording at {path}: {again}") from None
        except OSError as exc:
            raise FixtureError(f"cannot read the recording {path}: {exc.strerror or exc}") from None
        try:
            data = json.loads(text)
            if not isinstance(data, dict) or data.get("format") != FORMAT:
                raise ValueError(f"not a format {FORMAT} recording")
            return cls(
                agent=str(data["agent"]),
                tool=str(data["tool"]),
                case=str(data["case"]),
                model=str(data["model"]),
                provider=str(data["provider"]),
                model_name=str(data["modelName"]),
                tools=data.get("tools"),
                unavailable=dict(data.get("unavailable") or {}),
                exchanges=list(data["exchanges"]),
                tool_calls=list(data["toolCalls"]),
                judge=list(data.get("judge") or []),
                caller=_caller_from(data.get("caller")),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise FixtureError(f"the recording {path} cannot be read ({exc}): {again}") from None
        except RecursionError:  # JSON nested deeper than the interpreter's stack
            raise FixtureError(
                f"the recording {path} cannot be read (it is nested too deeply to be a "
                f"recording): {again}"
            ) from None


def _caller_from(data: Any) -> dict[str, Any] | None:
    """A fixture's ``caller`` part, checked for the keys a replay reads."""
    if data is None:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("exchanges"), list):
        raise ValueError("its caller part holds no exchanges")
    for key in ("model", "provider", "modelName"):
        if not isinstance(data.get(key), str):
            raise ValueError(f"its caller part has no {key}")
    if not isinstance(data.get("decoyServers", {}), dict):
        raise ValueError("its caller part's decoyServers is not a mapping")
    caller: dict[str, Any] = data
    return caller


_EXCERPT = 40


def _excerpt(value: Any, at: int = 0) -> str:
    """About ``_EXCERPT`` characters of ``value`` around ``at``, quoted, control characters
    escaped, ``…`` where it was cut."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    start = max(0, at - _EXCERPT // 2)
    piece = repr(text[start : start + _EXCERPT])[1:-1]
    before = "…" if start else ""
    after = "…" if start + _EXCERPT < len(text) else ""
    return f"'{before}{piece}{after}'"


def first_difference(recorded: Any, now: Any, path: str = "") -> str | None:
    """Where ``now`` first differs from ``recorded`` (two JSON values), with a short excerpt of
    each side; None when they are equal."""
    if recorded == now:
        return None
    where = path or "the request"
    if isinstance(recorded, dict) and isinstance(now, dict):
        for key in sorted(set(recorded) | set(now), key=str):
            if key not in recorded:
                return f"{path}.{key}: not in the recording, now {_excerpt(now[key])}"
            if key not in now:
                return f"{path}.{key}: recorded {_excerpt(recorded[key])}, now absent"
            found = first_difference(recorded[key], now[key], f"{path}.{key}" if path else key)
            if found is not None:
                return found
    if isinstance(recorded, list) and isinstance(now, list):
        for index, (old, new) in enumerate(zip(recorded, now, strict=False)):
            found = first_difference(old, new, f"{path}[{index}]")
            if found is not None:
                return found
        return f"{where}: {len(recorded)} recorded, {len(now)} now"
    if isinstance(recorded, str) and isinstance(now, str):
        at = next(
            (i for i, (a, b) in enumerate(zip(recorded, now, strict=False)) if a != b),
            min(len(recorded), len(now)),
        )
        return (
            f"{where} at character {at}: recorded {_excerpt(recorded, at)}, now {_excerpt(now, at)}"
        )
    return f"{where}: recorded {_excerpt(recorded)}, now {_excerpt(now)}"
