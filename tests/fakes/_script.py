"""What a fake model server answers: scripted replies, provider-neutral.

A ``Reply`` describes one answer (streamed text, tool calls, an HTTP error, a broken stream, a
hang…); each fake server renders it in its own wire format (Chat Completions or Messages API).
Build replies with the small constructors below rather than with ``Reply(...)`` directly::

    text("Hello", chunks=3, usage=(12, 3))
    text_without_usage("Hello")            # OpenAI stream without a usage chunk (llama.cpp)
    tool_calls([("call_1", "time__get_current_time", {"timezone": "UTC"})])
    status(429, retry_after=0)
    status(401, echo_credentials=True)     # the refusal repeats the key it was sent
    page(200, "<html>…</html>")            # any status with any body, as it is
    events(b"data: {...}\n\n", b"data: [DONE]\n\n")   # a 200 stream of raw bytes
    reset()                                # the connection is reset, nothing answered
    delay(0.2, text("slow answer"))        # or text("slow answer").delayed(0.2)

A responder (``Callable[[RequestBody], Reply]``) answers when the script queue is empty. It gets
the request's JSON body as a ``RequestBody``: a plain ``dict`` with a few API-neutral helpers
(``last_user_text``, ``tool_results``, ``rounds_since_user``, ``offered``) so one responder
serves both fakes.

A caller model (a client's model choosing among offered tools) is ``caller(...)``: it picks a
tool by the request and the offered list (by default the tool whose name and description share
the most words with the request), fills its arguments, and answers requests that offer no
tools with another responder (the served call's model)::

    caller({"book_flight": {"destination": "LIS"}}, answer=lambda body: text("Booked AF123."))
    caller(pick=lambda ask, offered: "send_email")          # a wrong tool on demand
    caller({"book_flight": '{"destination": '})             # arguments that are not JSON
Responders run on the server's handler threads, possibly several at once: keep them pure.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

__all__ = [
    "OfferedFunction",
    "Reply",
    "RequestBody",
    "Responder",
    "ToolCall",
    "ToolResult",
    "best_match",
    "caller",
    "count_user_turns",
    "cut_off",
    "delay",
    "echo",
    "events",
    "garbage",
    "hang",
    "page",
    "reset",
    "status",
    "text",
    "text_without_usage",
    "tool_calls",
    "tool_round_then_text",
]

ReplyKind = Literal[
    "text", "tool_calls", "status", "garbage", "cut_off", "hang", "page", "events", "reset"
]


@dataclass(frozen=True)
class ToolCall:
    """One tool call the fake model makes. ``arguments`` may be a raw string (to send bad JSON)."""

    id: str
    name: str
    arguments: dict[str, Any] | str

    @property
    def arguments_json(self) -> str:
        """The arguments as the JSON text the wire carries."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


@dataclass(frozen=True)
class Reply:
    """One scripted answer. See the module docstring for the constructors that build it.

    Attributes:
        kind: what to send.
        text: the answer text (for ``tool_calls``, text sent before the calls).
        calls: the tool calls of a ``tool_calls`` reply.
        chunks: how many pieces the text is streamed in.
        chunk_delay: seconds to pause between streamed chunks (interrupted by client
            disconnect and by ``stop()``).
        usage: (input tokens, output tokens); None computes a deterministic count.
        split_arguments: stream each call's arguments JSON in several pieces.
        interleave: alternate the argument pieces of parallel calls (stresses index assembly).
        finish_reason: overrides the stop/finish reason the server reports.
        status: HTTP status of a ``status`` reply.
        message: error message of a ``status`` reply.
        retry_after: seconds for the ``retry-after`` header of a ``status`` reply.
        abrupt: for ``cut_off``: close the socket mid-body instead of ending the stream cleanly.
        delay: seconds to wait before answering at all.
        event: for ``garbage`` (OpenAI stream): the data of the bad event (default: broken JSON).
        echo_credentials: for ``status``: the error message ends with the credential header the
            request carried, as some providers and proxies repeat it; for other replies the
            answer text ends with the key the request carried.
        body: for ``page``: the body, sent as it is.
        content_type: for ``page`` and ``events``: the ``content-type`` header.
        headers: for ``page``: more response headers (``location`` of a redirect…).
        raw_events: for ``events``: the stream's bytes, one HTTP chunk each.
    """

    kind: ReplyKind
    text: str = ""
    calls: tuple[ToolCall, ...] = ()
    chunks: int = 1
    chunk_delay: float = 0.0
    usage: tuple[int, int] | None = None
    split_arguments: bool = True
    interleave: bool = False
    finish_reason: str | None = None
    status: int = 200
    message: str | None = None
    retry_after: float | None = None
    abrupt: bool = False
    delay: float = 0.0
    event: str = ""
    echo_credentials: bool = False
    body: bytes = b""
    content_type: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    raw_events: tuple[bytes, ...] = ()

    def delayed(self, seconds: float) -> Reply:
        """The same reply, sent after waiting ``seconds`` more."""
        return replace(self, delay=self.delay + seconds)

    def text_pieces(self) -> list[str]:
        """The text split into ``chunks`` near-equal pieces (no empty pieces)."""
        return split_evenly(self.text, self.chunks)

    def output_tokens(self) -> int:
        """The output token count to report."""
        if self.usage is not None:
            return self.usage[1]
        return len(self.text_pieces()) + len(self.calls)


def split_evenly(value: str, pieces: int) -> list[str]:
    """Split ``value`` into at most ``pieces`` non-empty consecutive parts of near-equal size."""
    if not value:
        return []
    pieces = max(1, min(pieces, len(value)))
    size = math.ceil(len(value) / pieces)
    return [value[i : i + size] for i in range(0, len(value), size)]


def text(
    content: str,
    *,
    chunks: int = 1,
    usage: tuple[int, int] | None = None,
    chunk_delay: float = 0.0,
    finish_reason: str | None = None,
    echo_credentials: bool = False,
) -> Reply:
    """A plain text answer streamed in ``chunks`` pieces.

    ``echo_credentials``: the text ends with the key the request carried (a model or a proxy that
    repeats it), split across the chunks like the rest.
    """
    return Reply(
        "text",
        text=content,
        chunks=chunks,
        usage=usage,
        chunk_delay=chunk_delay,
        finish_reason=finish_reason,
        echo_credentials=echo_credentials,
    )


def count_user_turns(body: RequestBody) -> Reply:
    """A responder's answer naming how many user messages the request holds and its last one
    (``turn 2: …``): a conversation continued shows its earlier turns."""
    users = [m for m in body["messages"] if m["role"] == "user"]
    return text(f"turn {len(users)}: {body.last_user_text}")


def text_without_usage(content: str, *, chunks: int = 1, model: str = "fake-model") -> Reply:
    """A Chat Completions text stream with no usage chunk even when the request asks for one,
    as llama-cpp-python's server streams (it ignores ``stream_options.include_usage``).

    OpenAI wire only (an ``events`` reply of ready-made chunks); ``FakeOpenAIServer`` renders
    ``text(...)`` with usage whenever it is asked.
    """
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model}

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        payload = json.dumps({**base, "choices": [choice]}, separators=(",", ":"))
        return f"data: {payload}\n\n".encode()

    pieces = [chunk({"role": "assistant", "content": ""})]
    pieces += [chunk({"content": piece}) for piece in split_evenly(content, chunks)]
    pieces += [chunk({}, "stop"), b"data: [DONE]\n\n"]
    return events(*pieces)


def tool_calls(
    calls: Iterable[ToolCall | tuple[str, str, dict[str, Any] | str]],
    *,
    text: str = "",
    split_arguments: bool = True,
    interleave: bool = False,
    usage: tuple[int, int] | None = None,
    chunk_delay: float = 0.0,
) -> Reply:
    """An answer that calls tools: ``(id, name, arguments)`` triples or ``ToolCall`` objects."""
    parsed = tuple(c if isinstance(c, ToolCall) else ToolCall(*c) for c in calls)
    return Reply(
        "tool_calls",
        text=text,
        calls=parsed,
        chunks=max(1, len(text) // 8),
        split_arguments=split_arguments,
        interleave=interleave,
        usage=usage,
        chunk_delay=chunk_delay,
    )


def status(
    code: int,
    *,
    message: str | None = None,
    retry_after: float | None = None,
    echo_credentials: bool = False,
) -> Reply:
    """An HTTP error answer with the provider's error body shape (and ``retry-after`` if given).

    ``echo_credentials``: the message ends with the credential header as the request sent it
    (``Incorrect API key provided: Bearer sk-…``), as some providers and proxies answer.
    """
    return Reply(
        "status",
        status=code,
        message=message,
        retry_after=retry_after,
        echo_credentials=echo_credentials,
    )


def page(
    code: int,
    body: bytes | str,
    *,
    content_type: str = "text/html; charset=utf-8",
    headers: Iterable[tuple[str, str]] = (),
) -> Reply:
    """Any status with any body, sent as it is (``content-length`` set): an HTML error page of a
    proxy, a 200 that is not an API answer, a redirect (``headers=[("location", …)]``)."""
    raw = body.encode() if isinstance(body, str) else body
    return Reply("page", status=code, body=raw, content_type=content_type, headers=tuple(headers))


def events(
    *chunks: bytes,
    content_type: str = "text/event-stream; charset=utf-8",
    abrupt: bool = False,
    chunk_delay: float = 0.0,
) -> Reply:
    """A 200 stream of raw bytes, one HTTP chunk per argument (events the API never sends,
    bytes that are not UTF-8, one huge event…).

    ``abrupt`` closes the socket after the last chunk instead of ending the body; ``chunk_delay``
    pauses between chunks.
    """
    return Reply(
        "events",
        raw_events=chunks,
        content_type=content_type,
        abrupt=abrupt,
        chunk_delay=chunk_delay,
    )


def reset() -> Reply:
    """Read the request, then reset the connection (TCP RST) without a byte of answer."""
    return Reply("reset")


def garbage(event: str = "") -> Reply:
    """A stream whose second event is not JSON (a non-streaming body that is not JSON).

    ``event``: the OpenAI stream's bad event data instead, e.g. JSON that is not a chunk.
    """
    return Reply("garbage", text="Hel", event=event)


def cut_off(partial: str = "Hel", *, abrupt: bool = False) -> Reply:
    """A stream that ends early: no finish reason, no ``[DONE]`` / ``message_stop``.

    With ``abrupt`` the socket is closed mid-body (the client sees a broken connection);
    without it the HTTP body ends cleanly but the model's answer is incomplete.
    """
    return Reply("cut_off", text=partial, abrupt=abrupt)


def hang() -> Reply:
    """Never answer: wait until the client gives up (disconnects) or the server stops."""
    return Reply("hang")


def delay(seconds: float, reply: Reply) -> Reply:
    """``reply``, sent after ``seconds`` (a wait that a disconnect or ``stop()`` interrupts)."""
    return reply.delayed(seconds)


@dataclass(frozen=True)
class ToolResult:
    """A tool result found in a request (API-neutral)."""

    tool_call_id: str
    content: str
    is_error: bool = False


class RequestBody(dict[str, Any]):
    """A request's JSON body (a plain dict) with API-neutral helpers for responders.

    Each fake server fills the helper fields while parsing its own API's message shapes.
    """

    last_user_text: str = ""
    """The text of the last user message that carries text (not only tool results)."""
    tool_results: Sequence[ToolResult] = ()
    """Every tool result in the conversation, oldest first."""
    rounds_since_user: int = 0
    """How many assistant messages follow the last user text message (0 = a fresh question)."""
    offered: Sequence[OfferedFunction] = ()
    """The tools the request offers the model, in order."""


@dataclass(frozen=True)
class OfferedFunction:
    """A tool a request offers (API-neutral)."""

    name: str
    description: str
    parameters: dict[str, Any]


Responder = Callable[[RequestBody], Reply]


def echo(body: RequestBody) -> Reply:
    """The default responder: answer with the last user message's text, unchanged."""
    return text(body.last_user_text)


def tool_round_then_text(
    calls: Sequence[ToolCall | tuple[str, str, dict[str, Any] | str]],
    answer: str | None = None,
) -> Responder:
    """A responder for loops: call ``calls`` on a fresh question, then answer in text.

    The text is ``answer``, or ``"done: "`` followed by the tool results' contents joined by
    ``" | "`` so a test can see what the tools returned.
    """
    first = tool_calls(calls)

    def respond(body: RequestBody) -> Reply:
        if body.rounds_since_user == 0:
            return first
        if answer is not None:
            return text(answer)
        return text("done: " + " | ".join(r.content for r in body.tool_results))

    return respond


_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "to",
        "of",
        "for",
        "and",
        "or",
        "in",
        "on",
        "at",
        "me",
        "my",
        "i",
        "you",
        "your",
        "is",
        "are",
        "be",
        "with",
        "from",
        "by",
    ]
)


def _words(value: str) -> set[str]:
    return {w for w in _WORD.findall(value.lower().replace("_", " ")) if w not in _STOP}


def best_match(ask: str, offered: Sequence[OfferedFunction]) -> str | None:
    """The offered tool whose name and description share the most words with ``ask`` (the
    first of equals), or None when none shares a word."""
    wanted = _words(ask)
    best, score = None, 0
    for tool in offered:
        found = len(wanted & _words(f"{tool.name} {tool.description}"))
        if found > score:
            best, score = tool.name, found
    return best


Pick = Callable[[str, Sequence[OfferedFunction]], "str | None"]


def caller(
    arguments: Mapping[str, dict[str, Any] | str] | None = None,
    *,
    pick: Pick = best_match,
    answer: Responder | None = None,
    declines: str = "I cannot help with that.",
) -> Responder:
    """A caller model: on a request that offers tools, call the one ``pick`` chooses.

    Args:
        arguments: the arguments to call each tool with, by name (a string is sent as it is:
            JSON that does not parse, say); a tool not listed is called with ``{}``.
        pick: chooses the tool from the request's text and the offered list; None: answer in
            words (``declines``) and call nothing.
        answer: answers requests that offer no tools (the served call's model); default echo.
        declines: the text of a reply that calls nothing.
    """
    chosen = dict(arguments or {})

    def respond(body: RequestBody) -> Reply:
        if not body.offered or body.rounds_since_user > 0:
            return (answer or echo)(body)
        name = pick(body.last_user_text, body.offered)
        if name is None:
            return text(declines)
        return tool_calls([("call_1", name, chosen.get(name, {}))])

    return respond
