"""What the Anthropic provider's failures say: the endpoint they came from (``Anthropic`` only for
api.anthropic.com, ``host:port`` for a proxy or a compatible server), what went wrong, and never
the key."""

from __future__ import annotations

import re
from dataclasses import dataclass

import anyio
import pytest

from mcp_export.errors import (
    ProviderAuthError,
    ProviderError,
    ProviderProtocolError,
    ProviderRateLimited,
    ProviderServerError,
    ProviderTimeout,
)
from mcp_export.providers.anthropic_provider import AnthropicProvider
from mcp_export.providers.base import ChatMessage, ModelRequest
from tests.fakes import cut_off, hang, page, status
from tests.fakes._script import Reply
from tests.fakes.anthropic_server import FakeAnthropicServer, error_event

pytestmark = pytest.mark.anyio

KEY = "sk-ant-messages-test-0123456789"


@dataclass(frozen=True)
class Case:
    id: str
    reply: Reply
    error: type[ProviderError]
    message: str  # a regex; {where} stands for the endpoint's host:port


CASES = [
    Case(
        "401",
        status(401, message="invalid x-api-key", echo_credentials=True),
        ProviderAuthError,
        r"^{where}: the API key was refused \(401\): check ANTHROPIC_API_KEY \(invalid x-api-key",
    ),
    Case(
        "403",
        status(403, message="Your API key does not have permission to use the specified resource."),
        ProviderAuthError,
        r"^{where}: .*\(403\).*permission to use the specified resource",
    ),
    Case(
        "404 model",
        status(404, message="model: claude-nope"),
        ProviderError,
        r"^{where} answered 404 for model 'claude-nope' at http://{where}: model: claude-nope; "
        r"check the model name",
    ),
    Case(
        "429",
        status(429, retry_after=0),
        ProviderRateLimited,
        r"^{where} is rate-limiting requests \(429\): Number of request tokens has exceeded",
    ),
    Case(
        "500",
        status(500),
        ProviderServerError,
        r"^{where} failed with 500: Internal server error; try again later",
    ),
    Case(
        "529",
        status(529, retry_after=0),
        ProviderServerError,
        r"^{where} is overloaded \(529\): Overloaded; try again later",
    ),
    Case(
        "overloaded_error event",
        error_event("overloaded_error", f"Overloaded (key {KEY})"),
        ProviderServerError,
        r"^{where} reported an error in the middle of the answer: Overloaded \(key \[redacted\]\) "
        r"\(overloaded_error\); try again later",
    ),
    Case(
        "cut-off stream",
        cut_off(),
        ProviderProtocolError,
        r"^the stream from {where} was cut off before the answer finished",
    ),
    Case(
        "non-SSE body",
        page(200, "OK", content_type="text/plain"),
        ProviderProtocolError,
        r"^http://{where} answered 200 with a text/plain body \('OK'\), not a Messages API "
        r"stream: check the base URL",
    ),
    Case(
        "no answer in time",
        hang(),
        ProviderTimeout,
        r"^{where} did not answer within 0\.5 s",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_a_failure_of_another_server_names_it_by_host_and_port(case: Case) -> None:
    with FakeAnthropicServer(responder=lambda body: case.reply) as server:
        where = server.base_url.removeprefix("http://")
        provider = AnthropicProvider(KEY, server.base_url, max_retries=0, timeout=0.5)
        request = ModelRequest("claude-nope", (ChatMessage("user", "Hi"),))
        try:
            with anyio.fail_after(20), pytest.raises(case.error) as caught:
                async for _ in provider.stream(request):
                    pass
        finally:
            await provider.aclose()
    message = str(caught.value)
    assert type(caught.value) is case.error, message
    assert re.search(case.message.replace("{where}", re.escape(where)), message), message
    assert "Anthropic" not in message
    assert KEY not in message


async def test_no_key_for_anthropic_itself_names_anthropic_and_the_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    provider = AnthropicProvider(None, None)
    try:
        with pytest.raises(ProviderAuthError) as caught:
            async for _ in provider.stream(ModelRequest("claude-x", (ChatMessage("user", "Hi"),))):
                pass
    finally:
        await provider.aclose()
    assert str(caught.value) == "no API key for Anthropic: set ANTHROPIC_API_KEY"


async def test_no_key_for_another_server_names_that_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    provider = AnthropicProvider(None, "http://proxy.internal:4000", key_name="PROXY_KEY")
    try:
        with pytest.raises(ProviderAuthError) as caught:
            async for _ in provider.stream(ModelRequest("claude-x", (ChatMessage("user", "Hi"),))):
                pass
    finally:
        await provider.aclose()
    assert str(caught.value) == "no API key for proxy.internal:4000: set PROXY_KEY"
