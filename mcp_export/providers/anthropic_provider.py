"""The Anthropic provider: the Messages API through the official ``anthropic`` SDK.

The SDK (and httpx2, its transport) is imported by the first request, inside the methods that use
it: it is slow to import, and an agent on another provider never needs it. The conversation and the
settings are put in the API's terms by ``_anthropic_messages``; the answer, streamed or whole, is
read by ``_anthropic_answer``; the SDK's transport is met in ``_anthropic_http``.

A stream without a single event is described as what it was (an HTML page, a JSON body, nothing),
as is a 2xx HTML page at once.

The SDK decodes the stream; its bytes pass a ``BodyTap`` on the way (one event at most
``MAX_EVENT_BYTES``, the body ``MAX_ANSWER_BYTES``). Redirects are not followed: the SDK's client
would follow them with the ``x-api-key`` header to wherever they point. Texts that come from the
server (error bodies, error events) are redacted before they become part of a message.

Settings of the endpoint (``HTTPEndpoint``): with ``stream`` off the request asks for the whole
message (``stream: false``), read through the same ``BodyTap`` and passed on as one text delta
and the completion. Each request holds one of the endpoint's slots (``request_slot``) from sending
it to the end of its answer, so ``max_concurrency`` queues requests; nothing else does: the SDK's
aiohttp pool is unlimited here (by default it would hold requests past 1000 connections).

With a protocol log (``protocol_log``) every request and response is recorded there too
(``providers._exchange``): the SDK's HTTP client calls the provider's event hooks with each
request as it goes and each response as its head arrives, and the response's body passes a
recorder on its way to the SDK; a failure before any answer is recorded where the request is
made.

Messages name the endpoint: ``Anthropic`` for api.anthropic.com, ``host:port`` for any other base
URL (a proxy, a compatible server), whose failures are not Anthropic's. A 529 says the endpoint is
overloaded, and an ``error`` event in a stream carries its type (``overloaded_error``…).

Parameters: ``max_tokens`` is required by the API (``DEFAULT_MAX_TOKENS`` when unset);
``stop`` → ``stop_sequences``; ``temperature``/``top_p`` go in the request body directly (the
SDK's signature no longer lists them; models that accept them still do); a ``json_schema``
``response_format`` → ``output_config.format``; ``tool_choice`` ``auto``/``required`` (or
``any``)/``none``/a tool name/an OpenAI ``function`` choice → ``auto``/``any``/``none``/``tool``,
sent only with tools. ``seed``, the penalties and ``json_object`` have no Anthropic equivalent and
are left out.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, TypeVar

from mcp_export.errors import (
    ProviderAuthError,
    ProviderError,
    ProviderProtocolError,
    ProviderRateLimited,
    ProviderServerError,
    ProviderUnreachable,
)
from mcp_export.providers._anthropic_answer import StreamAssembly, json_object, whole_answer
from mcp_export.providers._anthropic_http import (
    broken_off,
    closed_after_connecting,
    recorded_stream_class,
    status_detail,
    tap_body,
)
from mcp_export.providers._anthropic_messages import (
    to_anthropic_messages,
    to_anthropic_tools,
    to_output_format,
    to_tool_choice,
)
from mcp_export.providers._endpoint import (
    HTTPEndpoint,
    endpoint_name,
    no_answer_in_time,
    stalled_answer,
)
from mcp_export.providers._exchange import ResponseRecord, record_failure, record_request
from mcp_export.providers._retry import (
    Failure,
    close_quietly,
    open_with_retries,
    retry_after_seconds,
    status_failure,
)
from mcp_export.providers._wire import PREVIEW_BYTES, AnswerTooLarge, describe_body
from mcp_export.providers.base import ModelRequest, ProviderEvent, TextDelta
from mcp_export.providers.kinds import ANTHROPIC_URL
from mcp_export.providers.sampling import DEFAULT_MAX_TOKENS
from mcp_export.redact import redact

if TYPE_CHECKING:
    import httpx2
    from anthropic import APIStatusError, AsyncAnthropic, AsyncAPIResponse, AsyncStream
    from anthropic.types import Message, RawMessageStreamEvent

__all__ = ["ANTHROPIC_DEFAULT_URL", "AnthropicProvider"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

ANTHROPIC_DEFAULT_URL = ANTHROPIC_URL
_KEEPALIVE_SECONDS = 5.0
_OVERLOADED = 529

# Error events inside a 200 stream carry only the error type.
_STREAM_ERRORS: dict[str, type[ProviderError]] = {
    "overloaded_error": ProviderServerError,
    "api_error": ProviderServerError,
    "rate_limit_error": ProviderRateLimited,
    "authentication_error": ProviderAuthError,
    "permission_error": ProviderAuthError,
}


class AnthropicProvider(HTTPEndpoint):
    """A ``Provider`` for the Anthropic Messages API.

    Takes ``HTTPEndpoint``'s arguments; ``api_key`` None lets the SDK find credentials itself
    (environment, profiles), ``base_url`` is the endpoint origin (None for Anthropic itself), and
    5xx includes 529 among the retried statuses.
    """

    DEFAULT_URL = ANTHROPIC_DEFAULT_URL
    DEFAULT_NAME = "anthropic"
    DEFAULT_KEY_NAME = "ANTHROPIC_API_KEY"
    _client: AsyncAnthropic | None = None

    def _client_now(self) -> AsyncAnthropic:
        if self._client is None:
            import httpx2  # the SDK's transport: see the top
            from anthropic import AsyncAnthropic, DefaultAioHttpClient  # the SDK: see the top

            self._client = AsyncAnthropic(
                api_key=self._api_key,
                base_url=self.base_url,
                max_retries=0,  # our own bounded loop: see providers/_retry.py
                timeout=self._timeout,
                # The SDK's aiohttp transport (it maps a refused connection to a connect error).
                # Its pool would hold requests past 1000 connections (the SDK's default limit;
                # None would be aiohttp's 100): 0 is aiohttp's "no limit", so only the
                # endpoint's own setting (``request_slot``) makes requests wait.
                http_client=DefaultAioHttpClient(
                    timeout=self._timeout,
                    follow_redirects=False,
                    limits=httpx2.Limits(max_connections=0, keepalive_expiry=_KEEPALIVE_SECONDS),
                    event_hooks={"request": [self._on_request], "response": [self._on_response]},
                ),
            )
        return self._client

    async def _on_request(self, request: httpx2.Request) -> None:
        """The SDK's client sends ``request``: record it when there is a log."""
        import httpx2  # the SDK's transport: see the top

        log = self.protocol_log
        if log is not None:
            try:
                body: bytes | None = request.content
            except httpx2.RequestNotRead:  # a streamed body (the SDK sends none)
                body = None
            url = str(request.url)
            record_request(log, self._label, request.method, url, request.headers.items(), body)

    async def _on_response(self, response: httpx2.Response) -> None:
        """The head of ``response`` arrived: when there is a log, its body is recorded as it
        is read."""
        log = self.protocol_log
        if log is not None:
            headers = response.headers.items()
            record = ResponseRecord(
                log, self._label, response.status_code, response.reason_phrase, headers
            )
            response.stream = recorded_stream_class()(response.stream, record)

    def _record_failure(self, exc: Exception) -> None:
        """Record a request that got no answer (an error status was recorded as its response)."""
        import anthropic  # the SDK: see the top

        log = self.protocol_log
        if log is not None and not isinstance(exc, anthropic.APIStatusError):
            record_failure(log, self._label, exc)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        """Run one Messages API request: text deltas (streamed, or the whole text at once when
        the endpoint's ``stream`` setting is off), then one ``Completion``. The request holds
        one of the endpoint's slots from sending it to the end of its answer.

        Raises:
            ProviderUnreachable, ProviderAuthError, ProviderRateLimited, ProviderServerError,
            ProviderTimeout, ProviderProtocolError, ProviderError: as for ``OpenAIProvider``.
        """
        client = self._client_now()
        arguments = self.request_arguments(request)
        async with self.request_slot():
            if not self._stream:
                for event in await self._whole(client, arguments, request.model):
                    yield event
                return
            async with aclosing(self._streamed(client, arguments, request.model)) as events:
                async for event in events:
                    yield event

    async def _open(self, attempt: Callable[[], Awaitable[T]], model: str) -> T:
        """Send a request with ``attempt`` until it is answered or the failure is final; each
        attempt that gets no answer is recorded in the protocol log."""

        async def recorded() -> T:
            try:
                return await attempt()
            except Exception as exc:
                self._record_failure(exc)
                raise

        return await open_with_retries(
            recorded, lambda exc: self._translate(exc, model), self._policy
        )

    async def _streamed(
        self, client: AsyncAnthropic, arguments: dict[str, Any], model: str
    ) -> AsyncGenerator[ProviderEvent, None]:
        async def attempt() -> AsyncStream[RawMessageStreamEvent]:
            # One dict of keyword arguments defeats the SDK's overloads: say what comes back.
            opened: AsyncStream[RawMessageStreamEvent] = await client.messages.create(**arguments)
            return opened

        stream = await self._open(attempt, model)
        try:
            await self._refuse_html(stream.response)
            tap = tap_body(stream.response)
            assembly = StreamAssembly()
            async with aclosing(self._events(stream)) as events:
                async for event in events:
                    text = assembly.add(event)
                    if text:
                        yield TextDelta(text)
                    if assembly.stopped:  # whatever follows message_stop, the answer is complete
                        break
            if assembly.events == 0:
                described = describe_body(
                    tap.preview,
                    stream.response.headers.get("content-type", ""),
                    complete=tap.complete_preview,
                )
                raise ProviderProtocolError(
                    f"{self.base_url} answered {stream.response.status_code} with {described}, "
                    f"not a Messages API stream: {_BASE_URL_HINT}"
                )
            yield assembly.completion(lambda: self._label)  # named only for a message
        finally:
            await close_quietly(stream.close)

    async def _whole(
        self, client: AsyncAnthropic, arguments: dict[str, Any], model: str
    ) -> list[ProviderEvent]:
        """One request without streaming: its answer as one text delta and the completion."""

        async def attempt() -> AsyncAPIResponse[Message]:
            # The raw response with its body unread, so the read passes a BodyTap; closed below.
            manager = client.messages.with_streaming_response.create(**arguments)
            opened: AsyncAPIResponse[Message] = await manager.__aenter__()
            return opened

        response = await self._open(attempt, model)
        http = response.http_response
        try:
            tap = tap_body(http)
            try:
                raw = await response.read()
            except broken_off() as exc:
                raise self._cut_short(
                    exc, "the answer from {url} broke off before it was complete"
                ) from exc
        finally:
            await close_quietly(response.close)
        content_type = http.headers.get("content-type", "")
        if "event-stream" in content_type.lower():
            raise ProviderProtocolError(
                f"{self._label} sent a stream though this request asked for a whole answer "
                "(streaming is off for this provider): turn streaming back on, or check the "
                f"server at {self.base_url}"
            )
        body = json_object(raw) if "json" in content_type.lower() else None
        if body is None or not isinstance(body.get("content"), list):
            described = describe_body(tap.preview, content_type, complete=tap.complete_preview)
            raise ProviderProtocolError(
                f"{self.base_url} answered {http.status_code} with {described}, not a Messages "
                f"API answer: {_BASE_URL_HINT}"
            )
        return whole_answer(body)

    def _cut_short(self, exc: Exception, broke_off: str) -> ProviderError:
        """The error of an answer that stopped coming: too large, quiet too long, or broken off
        (``broke_off`` with ``{url}``)."""
        import anthropic  # the SDK and its transport: see the top
        import httpx2

        if isinstance(exc, AnswerTooLarge):
            error: ProviderError = ProviderProtocolError(
                f"{self._label}: {exc} — no answer is that large; check the server at "
                f"{self.base_url}, or ask for a shorter answer (settings.maxOutputTokens)"
            )
        elif isinstance(exc, anthropic.APITimeoutError | httpx2.TimeoutException):
            error = stalled_answer(self._label, self._timeout, self.base_url)
        else:
            error = ProviderProtocolError(broke_off.format(url=self.base_url))
        return error

    async def _refuse_html(self, response: httpx2.Response) -> None:
        """Raise at once when a 2xx answer is an HTML page (a proxy or a web page, not the API)."""
        if "html" not in response.headers.get("content-type", "").lower():
            return
        preview = bytearray()
        async for chunk in response.aiter_bytes():
            preview += chunk
            if len(preview) >= PREVIEW_BYTES:
                break
        described = describe_body(bytes(preview[:PREVIEW_BYTES]), "text/html")
        raise ProviderProtocolError(
            f"{self.base_url} answered {response.status_code} with {described}, not a Messages "
            f"API stream: {_BASE_URL_HINT}"
        )

    async def _events(
        self, stream: AsyncStream[RawMessageStreamEvent]
    ) -> AsyncGenerator[RawMessageStreamEvent, None]:
        import anthropic  # the SDK: see the top

        iterator = stream.__aiter__()
        while True:
            try:
                event = await iterator.__anext__()
            except StopAsyncIteration:
                return
            except broken_off() as exc:
                raise self._cut_short(
                    exc, "the stream from {url} broke off before the answer was complete"
                ) from exc
            except anthropic.APIStatusError as exc:  # an ``error`` event inside the stream
                raise self._stream_error(exc) from exc
            except UnicodeDecodeError as exc:
                raise ProviderProtocolError(
                    f"{self._label} sent bytes that are not UTF-8 in its stream ({exc.reason}); "
                    f"check that {self.base_url} speaks the Messages API"
                ) from exc
            except ValueError as exc:  # json.JSONDecodeError from the SSE decoder
                raise ProviderProtocolError(
                    f"{self._label} sent a stream event that is not valid JSON ({exc}); check "
                    f"that {self.base_url} speaks the Messages API"
                ) from exc
            yield event

    def request_arguments(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments of ``messages.create`` for ``request``."""
        system, messages = to_anthropic_messages(request.messages)
        parameters = request.parameters
        arguments: dict[str, Any] = {
            "model": request.model,
            "messages": messages,
            "max_tokens": int(parameters.get("max_tokens") or DEFAULT_MAX_TOKENS),
            "stream": self._stream,
        }
        if system:
            arguments["system"] = system
        if request.tools:
            arguments["tools"] = to_anthropic_tools(request.tools)
            choice = parameters.get("tool_choice")
            if choice is not None:
                arguments["tool_choice"] = to_tool_choice(choice)
        if "stop" in parameters:
            arguments["stop_sequences"] = list(parameters["stop"])
        extra = {key: parameters[key] for key in ("temperature", "top_p") if key in parameters}
        if extra:
            arguments["extra_body"] = extra
        output_format = to_output_format(parameters.get("response_format"))
        if output_format is not None:
            arguments["output_config"] = {"format": output_format}
        dropped = [k for k in ("seed", "presence_penalty", "frequency_penalty") if k in parameters]
        if dropped:
            logger.debug("Anthropic has no %s: left out", ", ".join(dropped))
        return arguments

    async def aclose(self) -> None:
        """Close the SDK client and its connections."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    def _translate(self, exc: Exception, model: str) -> Failure | None:
        import anthropic  # the SDK: see the top

        if isinstance(exc, anthropic.APITimeoutError):
            return Failure(no_answer_in_time(self._label, self._timeout, self.base_url))
        if isinstance(exc, anthropic.APIConnectionError):
            if closed_after_connecting(exc):
                return Failure(
                    ProviderUnreachable(
                        f"the connection to {self.base_url} was closed before any answer — is "
                        "the server running, and is the base URL an http(s) API address?"
                    ),
                    retryable=True,
                )
            hint = "is the server running and the base URL right?"
            if self._base_url is None:
                hint = "check the network connection"
            return Failure(
                ProviderUnreachable(f"nothing answers at {self.base_url} — {hint}"), retryable=True
            )
        if isinstance(exc, TypeError) and "authentication" in str(exc):
            # The SDK found no credentials anywhere (api_key=None and nothing in the environment).
            return Failure(ProviderAuthError(f"no API key for {self._label}: set {self._key_name}"))
        if not isinstance(exc, anthropic.APIStatusError):
            return None
        detail = status_detail(exc)
        if exc.status_code == _OVERLOADED:
            return Failure(
                ProviderServerError(
                    f"{self._label} is overloaded ({_OVERLOADED}): {redact(detail)}; try again "
                    "later"
                ),
                retryable=True,
                retry_after=retry_after_seconds(exc.response.headers),
            )
        return status_failure(
            self._label,
            exc.status_code,
            detail,
            exc.response.headers,
            key_name=self._key_name,
            model=model,
            url=self.base_url,
        )

    @property
    def _label(self) -> str:
        """How messages name the endpoint: ``Anthropic`` for its own API, else where it is
        (``host:port``): a proxy's or a compatible server's failure is not Anthropic's."""
        return endpoint_name(self.base_url)

    def _stream_error(self, exc: APIStatusError) -> ProviderError:
        """An ``error`` event inside a 200 stream, as the error its type means."""
        kind = str(exc.type or "")
        error = _STREAM_ERRORS.get(kind, ProviderError)
        detail = redact(exc.api_message or exc.message)
        named = f" ({kind})" if kind else ""
        hint = "; try again later" if error in (ProviderServerError, ProviderRateLimited) else ""
        return error(
            f"{self._label} reported an error in the middle of the answer: {detail}{named}{hint}"
        )


_BASE_URL_HINT = (
    "check the base URL — it should be the origin that /v1/messages is appended to, such as "
    "https://api.anthropic.com"
)
