"""The check every incoming message passes before the SDK sees it, on stdio and on HTTP alike.

The SDK parses what a client sends and refuses most of what is malformed, but some input it
mishandles, and a server that a careless or hostile client can reach must answer all of it:

- nesting: a message nested hundreds of levels deep parses (the HTTP transport of the
  2026-07-28 era uses ``json.loads``, which goes ~1000 levels) and then meets code that recurses
  per level (``copy.deepcopy`` of the arguments, schema checks, redaction walks): a
  ``RecursionError`` far from the wire. Messages deeper than ``MAX_NESTING`` are refused here,
  with their id when it can be read;
- ids: a request whose ``id`` is null, an object, an array, a float or a boolean validates as a
  *notification* (the SDK's model ignores members it does not know), so it is never answered,
  where JSON-RPC 2.0 owes an ``Invalid Request`` error with ``id: null``;
- everything else malformed (a batch, a byte order mark, bytes that are not UTF-8, an unpaired
  surrogate escape, a ``method`` that is not a string…) gets one short JSON-RPC error that says
  what is wrong, instead of a pydantic validation dump or silence.

``screen(raw)`` is the whole rule: None for a message to pass on unchanged, else the ``Refusal``
to answer. Valid messages take one fast path (the bytes parsed, the SDK's own pydantic model over
the result, then a walk of the containers in its free-form member, which stops past
``MAX_NESTING``, unless the message holds too few brackets to nest that deep); only refused input
is parsed a second time to say why.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import Any, cast

import mcp_types as types
import pydantic_core
from pydantic import ValidationError

__all__ = ["MAX_NESTING", "Refusal", "nesting_exceeds", "screen", "screen_message"]

MAX_NESTING = 100
"""The deepest nesting of arrays and objects a message may have (the message itself is level 1).

Honest messages stay far below it (a tool's arguments are at most half as deep as its schema,
and agent files refuse schemas nested more than 100 levels); it keeps every recursive walk of a
message's data well inside Python's recursion limit."""

_ID_PREFIX = 64 * 1024
"""How far into an unparseable message ``_cheap_id`` looks for its ``id``."""
_TOP_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,30}|"(?:[^"\\\x00-\x1f]|\\.){0,256}")\s*[,}]')


@dataclass(frozen=True)
class Refusal:
    """A message refused: the JSON-RPC error to answer with, and whether it is owed one.

    Attributes:
        code: the JSON-RPC error code (``PARSE_ERROR`` or ``INVALID_REQUEST``).
        message: what is wrong and what to send instead, for the client.
        request_id: the request's id when it could be read, else None (``id: null``).
        answer: False for a malformed notification or response: JSON-RPC answers neither, so
            over stdio it is only logged (HTTP still refuses the POST with an error body).
    """

    code: int
    message: str
    request_id: types.RequestId | None = None
    answer: bool = True


def screen(raw: bytes) -> Refusal | None:
    """Check one message (a stdio line or an HTTP body) before the SDK parses it.

    Returns:
        None when the message may pass unchanged, else the refusal to answer with.
    """
    return screen_message(raw)[1]


def screen_message(raw: bytes) -> tuple[types.JSONRPCMessage | None, Refusal | None]:
    """``screen``, with the message as parsed when it passes.

    Returns:
        (the message, None) when it may pass unchanged, else (None, the refusal to answer with).
    """
    try:
        # Parsed first, then validated: the SDK's model over the bytes checks every value of the
        # free-form members again (a second for an array of a million strings), the model over
        # the parsed data passes them through.
        message = types.jsonrpc_message_adapter.validate_python(
            pydantic_core.from_json(raw), by_name=False
        )
    except (ValidationError, ValueError):
        return None, _diagnose(raw) or Refusal(
            types.INVALID_REQUEST, "Invalid Request: not a valid MCP JSON-RPC message"
        )
    if isinstance(message, types.JSONRPCNotification) and b'"id"' in raw:
        # Maybe a request whose id is not a string or an integer (see the module doc).
        refusal = _diagnose(raw)
        if refusal is not None:
            return None, refusal
    if _too_deep_message(message, raw):
        return None, _too_deep(message.id if isinstance(message, types.JSONRPCRequest) else None)
    return message, None


def _too_deep_message(message: types.JSONRPCMessage, raw: bytes) -> bool:
    """Whether a parsed message nests more than ``MAX_NESTING`` levels (its envelope is level 1;
    only its free-form member can nest)."""
    if isinstance(message, types.JSONRPCRequest | types.JSONRPCNotification):
        return nesting_exceeds(message.params, MAX_NESTING - 1, raw)
    if isinstance(message, types.JSONRPCResponse):
        return nesting_exceeds(message.result, MAX_NESTING - 1, raw)
    return nesting_exceeds(message.error.data, MAX_NESTING - 2, raw)


_WIDE = 10_000
"""Values in one level past which the walk first asks whether the text could nest that deep."""


def nesting_exceeds(value: Any, limit: int, text: bytes | None = None) -> bool:
    """Whether ``value`` nests lists and dicts more than ``limit`` levels (without recursion).

    Args:
        value: the parsed data.
        limit: the most levels allowed.
        text: the JSON ``value`` was parsed from, if at hand: a wide level (a long array) is
            walked only when the text holds more brackets than ``limit`` (a cheap count), as
            fewer cannot nest deeper.
    """
    level: list[Any] = [value] if isinstance(value, dict | list) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        if text is not None and sum(len(node) for node in level) > _WIDE:
            if text.count(b"[") + text.count(b"{") <= limit:
                return False
            text = None  # counted once
        level = [
            child
            for node in level
            for child in (node.values() if isinstance(node, dict) else node)
            if isinstance(child, dict | list)
        ]
    return False


def _valid_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def _too_deep(request_id: types.RequestId | None) -> Refusal:
    return Refusal(
        types.INVALID_REQUEST,
        f"Invalid Request: the message nests arrays and objects more than {MAX_NESTING} levels "
        "deep; send flatter data",
        request_id,
    )


def _cheap_id(raw: bytes) -> types.RequestId | None:
    """The id of a message too deep to parse, when a top-level ``"id"`` precedes any nesting."""
    head = raw[:_ID_PREFIX]
    start = head.find(b"{")
    if start < 0:
        return None
    nested = [i for i in (head.find(b"{", start + 1), head.find(b"[", start + 1)) if i >= 0]
    head = head[: min(nested)] if nested else head
    found = _TOP_ID.search(head, start)
    if found is None:
        return None
    try:
        value = pydantic_core.from_json(found.group(1))
    except ValueError:
        return None
    return cast(types.RequestId, value) if _valid_id(value) else None


def _diagnose(raw: bytes) -> Refusal | None:
    """Why ``raw`` is refused, or None when nothing is wrong with it after all."""
    if raw.startswith(codecs.BOM_UTF8):
        return Refusal(
            types.PARSE_ERROR,
            "Parse error: the message starts with a byte order mark (U+FEFF); "
            "send UTF-8 JSON without one",
        )
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Refusal(
            types.PARSE_ERROR,
            f"Parse error: the message is not UTF-8 (byte {exc.start} is invalid); "
            "send JSON in UTF-8",
        )
    try:
        data = pydantic_core.from_json(raw)
    except ValueError as exc:
        if "recursion limit" in str(exc):
            return _too_deep(_cheap_id(raw))
        hint = ""
        if "hex escape" in str(exc):
            hint = (
                "; a \\u escape takes four hex digits, and a surrogate (\\ud800-\\udfff) "
                "only comes as a high-low pair"
            )
        return Refusal(types.PARSE_ERROR, f"Parse error: not valid JSON ({exc}){hint}")
    if isinstance(data, list):
        if not data:
            return Refusal(types.INVALID_REQUEST, "Invalid Request: an empty batch ([])")
        return Refusal(
            types.INVALID_REQUEST,
            "Invalid Request: batches (a JSON array of messages) are not supported; "
            "send each message on its own",
        )
    if not isinstance(data, dict):
        return Refusal(
            types.INVALID_REQUEST,
            f"Invalid Request: a message is a JSON object, not {_json_kind(data)}",
        )
    return _diagnose_object(cast(dict[str, Any], data))


def _diagnose_object(data: dict[str, Any]) -> Refusal | None:
    request_id = data.get("id")
    readable_id = request_id if _valid_id(request_id) else None
    if nesting_exceeds(data, MAX_NESTING):
        return _too_deep(readable_id)
    if "method" not in data and ("result" in data or "error" in data):
        try:
            types.jsonrpc_message_adapter.validate_python(data, by_name=False)
        except ValidationError:
            return Refusal(
                types.INVALID_REQUEST, "Invalid Request: a malformed response", answer=False
            )
        return None
    if "id" in data and readable_id is None:
        return Refusal(
            types.INVALID_REQUEST,
            f"Invalid Request: the id must be a string or an integer, not {_json_kind(request_id)}",
        )
    notification = "id" not in data
    problem = _envelope_problem(data)
    if problem is None:
        try:
            types.jsonrpc_message_adapter.validate_python(data, by_name=False)
        except ValidationError:
            problem = "not a valid MCP JSON-RPC message"
        else:
            return None
    return Refusal(
        types.INVALID_REQUEST, f"Invalid Request: {problem}", readable_id, answer=not notification
    )


def _envelope_problem(data: dict[str, Any]) -> str | None:
    if data.get("jsonrpc") != "2.0":
        return '"jsonrpc" must be "2.0"'
    if "method" not in data:
        return 'no "method"'
    if not isinstance(data["method"], str):
        return f'"method" must be a string, not {_json_kind(data["method"])}'
    params = data.get("params")
    if params is not None and not isinstance(params, dict):
        return f'"params" must be an object, not {_json_kind(params)}'
    return None


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a fractional number" if isinstance(value, float) else "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"
