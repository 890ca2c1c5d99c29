"""The model requests and responses in a protocol log, from the real providers against the real
fake model servers (``tests.fakes``), with a key that a 401 repeats. The key has no well-known
shape (``mak-…``), so only the redaction of the values the runtime resolved can catch it.
"""

from __future__ import annotations

import json
import secrets
import socket

import pytest

from mcp_export.errors import ProviderAuthError, ProviderProtocolError, ProviderUnreachable
from mcp_export.protocol_log import ProtocolEntry, ProtocolLog, attach
from mcp_export.providers.anthropic_provider import AnthropicProvider
from mcp_export.providers.base import ChatMessage, Completion, ModelRequest
from mcp_export.providers.openai_provider import OpenAIProvider
from tests.fakes._script import Reply, events, status, text
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest("fake-model", [ChatMessage("user", "What time is it in Oslo?")])


@pytest.fixture
def key() -> str:
    return "mak-" + secrets.token_hex(20)


def refusal() -> Reply:
    """A 401 whose message repeats the credential header as it was sent."""
    return status(401, message="Incorrect API key provided", echo_credentials=True)


async def answer(provider: OpenAIProvider | AnthropicProvider) -> Completion:
    completion = None
    async for event in provider.stream(REQUEST):
        if isinstance(event, Completion):
            completion = event
    assert completion is not None
    return completion


def assert_nowhere(key: str, log: ProtocolLog) -> None:
    for entry in log.entries():
        assert key not in entry.text and key not in entry.summary, entry.as_text()
        assert key[4:] not in entry.text, entry.as_text()


def body_of(entry: ProtocolEntry) -> object:
    """The JSON body of a recorded request or response (after its head and a blank line)."""
    return json.loads(entry.text.split("\n\n", 1)[1])


async def test_openai_request_and_streamed_answer_are_recorded_without_the_key(key: str) -> None:
    log = ProtocolLog()
    with FakeOpenAIServer([text("It is 09:41.", chunks=4), refusal()]) as server:
        provider = OpenAIProvider(key, server.base_url, max_retries=0)
        assert attach(log, provider) == 1
        try:
            assert (await answer(provider)).message.content == "It is 09:41."
            with pytest.raises(ProviderAuthError):
                await answer(provider)
        finally:
            await provider.aclose()
    entries = log.entries()
    sent, streamed, refused_request, refused = entries[:4]
    assert {entry.channel for entry in entries} == {server.base_url.split("/")[2]}
    assert (sent.direction, sent.kind, sent.summary) == (
        "sent",
        "request",
        "POST /v1/chat/completions",
    )
    assert sent.text.startswith(f"POST {server.base_url}/chat/completions\n")
    assert "Authorization: Bearer [redacted]" in sent.text
    assert body_of(sent) == server.bodies[0]
    assert (streamed.direction, streamed.kind) == ("received", "stream")
    assert streamed.summary.startswith("200 OK, text/event-stream, 8 events, ")
    events = [line for line in streamed.text.splitlines() if line.startswith("data: ")]
    assert events[-1] == "data: [DONE]"
    pieces = [json.loads(line[6:]) for line in events[:-1]]
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in pieces[:-1]) == (
        "It is 09:41."
    )
    assert refused_request.kind == "request"
    assert (refused.direction, refused.kind) == ("received", "error")
    assert refused.summary.startswith("401 Unauthorized, application/json")
    assert "Incorrect API key provided: Bearer [redacted]" in refused.text
    assert_nowhere(key, log)


async def test_anthropic_request_and_events_are_recorded_without_the_key(key: str) -> None:
    log = ProtocolLog()
    script = [text("It is 09:41.", chunks=3), refusal()]
    with FakeAnthropicServer(script) as server:
        provider = AnthropicProvider(key, server.base_url, max_retries=0)
        attach(log, provider)
        try:
            assert (await answer(provider)).message.content == "It is 09:41."
            with pytest.raises(ProviderAuthError):
                await answer(provider)
        finally:
            await provider.aclose()
    sent, streamed, _, refused = log.entries()
    assert sent.summary == "POST /v1/messages"
    assert "authorization: Bearer [redacted]" in sent.text
    assert body_of(sent) == server.bodies[0]
    assert streamed.kind == "stream"
    assert "event: message_start" in streamed.text and "event: message_stop" in streamed.text
    events = [json.loads(line[6:]) for line in streamed.text.splitlines() if line[:6] == "data: "]
    deltas = [e["delta"]["text"] for e in events if e["type"] == "content_block_delta"]
    assert "".join(deltas) == "It is 09:41."
    assert refused.kind == "error" and "Bearer [redacted]" in refused.text
    assert_nowhere(key, log)


async def test_an_answer_asked_whole_is_recorded_as_its_json_body(key: str) -> None:
    log = ProtocolLog()
    with FakeAnthropicServer([text("Whole.")]) as server:
        provider = AnthropicProvider(key, server.base_url, max_retries=0, stream=False)
        attach(log, provider)
        try:
            await answer(provider)
        finally:
            await provider.aclose()
    sent, received = log.entries()
    assert '"stream": false' in sent.text
    assert received.kind == "response"
    assert received.summary.startswith("200 OK, application/json, ")
    reply = body_of(received)
    assert isinstance(reply, dict) and reply["content"] == [{"type": "text", "text": "Whole."}]


async def test_a_request_nothing_answers_is_an_error_entry() -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    log = ProtocolLog()
    provider = OpenAIProvider("sk-none", f"http://127.0.0.1:{port}/v1", max_retries=0)
    attach(log, provider)
    try:
        with pytest.raises(ProviderUnreachable):
            await answer(provider)
    finally:
        await provider.aclose()
    sent, failed = log.entries()
    assert sent.kind == "request"
    assert (failed.direction, failed.kind) == ("received", "error")
    assert failed.summary.startswith("no answer: ClientConnectorError")


async def test_a_stream_that_breaks_off_is_recorded_with_what_came() -> None:
    log = ProtocolLog()
    piece = b'data: {"choices":[{"index":0,"delta":{"content":"It is"}}]}\n\n'
    with FakeOpenAIServer([events(piece, abrupt=True)]) as server:
        provider = OpenAIProvider("sk-none", server.base_url, max_retries=0)
        attach(log, provider)
        try:
            with pytest.raises(ProviderProtocolError):
                await answer(provider)
        finally:
            await provider.aclose()
    streamed = log.entries()[1]
    assert streamed.kind == "stream"
    assert "stopped: " in streamed.summary
    assert streamed.text.endswith(piece.decode())


async def test_a_long_stream_is_cut_at_the_entry_bound_with_the_rest_counted() -> None:
    log = ProtocolLog(max_entry_bytes=2000)
    with FakeOpenAIServer([text("word " * 2000, chunks=200)]) as server:
        provider = OpenAIProvider("sk-none", server.base_url, max_retries=0)
        attach(log, provider)
        try:
            assert (await answer(provider)).message.content == "word " * 2000
        finally:
            await provider.aclose()
    streamed = log.entries()[1]
    kept, _, more = streamed.text.rpartition("\n… ")
    assert len(kept.encode()) == 2000
    size = int(streamed.summary.split(", ")[-1].split()[0])
    head = len(streamed.text.split("\n\n", 1)[0].encode()) + 2
    assert more == f"{size + head - 2000} bytes more"


async def test_nothing_is_recorded_without_a_log(key: str) -> None:
    log = ProtocolLog()
    with FakeOpenAIServer([text("one"), text("two")]) as server:
        provider = OpenAIProvider(key, server.base_url, max_retries=0)
        assert provider.protocol_log is None
        attach(log, provider)
        try:
            await answer(provider)
            attach(None, provider)
            await answer(provider)
        finally:
            await provider.aclose()
    assert len(log) == 2
