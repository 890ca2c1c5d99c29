"""Fake model servers for tests and benchmarks: real HTTP on loopback that the real SDKs talk to.

``FakeOpenAIServer`` speaks the Chat Completions API, ``FakeAnthropicServer`` the Messages API.
Each runs a stdlib ``ThreadingHTTPServer`` on 127.0.0.1 (port 0) in a daemon thread, starts in its
constructor and stops on ``stop()`` / leaving its ``with`` block (every wait and keep-alive
connection is unblocked, threads are joined with a bound).

Script the answers per test, one reply per model request, then fall back to a responder::

    from tests.fakes import FakeOpenAIServer, status, text, tool_calls

    with FakeOpenAIServer(
        [
            status(429, retry_after=0),
            tool_calls([("call_1", "time__get_current_time", {"timezone": "UTC"})]),
            text("It is noon.", chunks=3, usage=(40, 5)),
        ]
    ) as server:
        provider = OpenAIProvider(api_key="sk-test", base_url=server.base_url)
        ...
        assert server.bodies[-1]["messages"][-1]["role"] == "tool"

Replies: ``text``, ``tool_calls`` (arguments JSON split across chunks by default; ``interleave``
alternates parallel calls), ``status`` (provider-shaped error body, ``retry-after``), ``garbage``
(a non-JSON SSE event), ``cut_off`` (stream ends without a finish; ``abrupt`` closes the socket),
``hang`` (never answers), ``page`` (a raw body of any content type, e.g. an HTML page with status
200), ``events`` (raw SSE event lines as given), ``reset`` (the connection is reset), and
``delay(seconds, reply)`` / ``reply.delayed(seconds)``;
``text(..., chunk_delay=s)`` pauses between chunks.

Responders answer when the script is empty (default ``echo``: the last user message's text);
``tool_round_then_text(calls, answer)`` calls tools on a fresh question then answers, for loops
and benchmarks. A responder gets the body as a ``RequestBody`` (a dict with ``last_user_text``,
``tool_results``, ``rounds_since_user``) and runs on server threads: keep it pure.

What the server saw: ``requests`` (method, path, lower-case headers, body), ``bodies`` (model
request bodies), ``wait_for_requests(n)``, ``disconnects`` / ``wait_for_disconnect()`` (clients
that closed the connection mid-answer, e.g. a cancelled stream), ``errors`` (responder crashes).
``api_key=`` makes the server refuse other keys with a 401; ``status(401, echo_credentials=True)``
repeats the request's credentials in the error body, as some providers and proxies do.
"""

from __future__ import annotations

from tests.fakes._script import (
    Reply,
    RequestBody,
    Responder,
    ToolCall,
    ToolResult,
    cut_off,
    delay,
    echo,
    events,
    garbage,
    hang,
    page,
    reset,
    status,
    text,
    tool_calls,
    tool_round_then_text,
)
from tests.fakes._server import FakeModelServer, RecordedRequest
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.openai_server import FakeOpenAIServer

__all__ = [
    "FakeAnthropicServer",
    "FakeModelServer",
    "FakeOpenAIServer",
    "RecordedRequest",
    "Reply",
    "RequestBody",
    "Responder",
    "ToolCall",
    "ToolResult",
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
    "tool_calls",
    "tool_round_then_text",
]
