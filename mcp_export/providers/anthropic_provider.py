"""The Anthropic provider: the Messages API through the official ``anthropic`` SDK.

The SDK (and httpx2, its transport) is imported by the first request, inside the methods that use
it: it is slow to import, and an agent on another provider never needs it. The conversation is
translated properly (a peer system drops tool turns here): system messages go to ``system=``; an
assistant's tool calls become ``tool_use`` blocks (``input`` always an object); tool results become
``tool_result`` blocks in user messages (consecutive results share one message, ``is_error``
carried) — the same grouping MCP sampling uses (``providers.sampling.to_turns``). What the API
refuses is not sent: text blocks that are empty or only whitespace are left out (an assistant turn
of tool calls alone carries none), and an error result without content says that the tool failed
without saying why.

Streaming: ``text_delta`` pieces are yielded as they come; a ``tool_use`` block's input arrives as
``input_json_delta`` pieces, joined and parsed when the stream is done. Input that does not parse
as a JSON object (cut off by ``max_tokens``, malformed) makes a call with empty arguments and an
``arguments_error`` that says so (and names ``max_tokens`` when the answer stopped there): the
session hands it back to the model as the call's result.

Usage: input from ``message_start.message.usage``, counting the prompt's cached tokens too
(``input_tokens`` + ``cache_creation_input_tokens`` + ``cache_read_input_tokens``, which the API
counts apart), so "in" means every prompt token, as OpenAI's ``prompt_tokens`` does; output from
``message_delta.usage.output_tokens``, a running total (the last one counts; ``message_start``'s
output count is a placeholder and is not used). A ``message_delta`` that carries an input count
replaces the first. A count the stream does not carry (Anthropic-compatible proxies may leave them
out) is None, not 0.

A stream without ``message_delta`` / ``message_stop`` was cut off; one without a single event is
described as what it was (an HTML page, a JSON body, nothing), as is a 2xx HTML page at once.

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

import functools
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import aiohttp

from mcp_export.errors import (
    ProviderAuthError,
    ProviderError,
    ProviderProtocolError,
    ProviderRateLimited,
    ProviderServerError,
    ProviderTimeout,
    ProviderUnreachable,
)
from mcp_export.providers._endpoint import HTTPEndpoint, endpoint_name
from mcp_export.providers._exchange import ResponseRecord, record_failure, record_request
from mcp_export.providers._retry import (
    Failure,
    close_quietly,
    open_with_retries,
    retry_after_seconds,
    status_failure,
)
from mcp_export.providers._wire import (
    PREVIEW_BYTES,
    AnswerTooLarge,
    BodyTap,
    describe_body,
    error_detail,
)
from mcp_export.providers.base import (
    ChatMessage,
    Completion,
    ModelRequest,
    ProviderEvent,
    TextDelta,
    ToolCallRequest,
    ToolSchema,
    Usage,
)
from mcp_export.providers.kinds import ANTHROPIC_URL
from mcp_export.providers.sampling import (
    DEFAULT_MAX_TOKENS,
    SamplingTurn,
    TextPart,
    ToolResultPart,
    ToolUsePart,
    to_turns,
)
from mcp_export.redact import redact

if TYPE_CHECKING:
    import httpx2
    from anthropic import APIStatusError, AsyncAnthropic, AsyncAPIResponse, AsyncStream
    from anthropic.types import Message, RawMessageStreamEvent

__all__ = ["ANTHROPIC_DEFAULT_URL", "AnthropicProvider", "to_anthropic_messages"]

logger = logging.getLogger(__name__)

ANTHROPIC_DEFAULT_URL = ANTHROPIC_URL
_KEEPALIVE_SECONDS = 5.0
_OVERLOADED = 529

_TOOL_CHOICES = {
    "auto": {"type": "auto"},
    "required": {"type": "any"},
    "any": {"type": "any"},
    "none": {"type": "none"},
}
_SILENT_FAILURE = "the tool failed without saying why"
_JSON_KINDS = {
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
    type(None): "null",
}
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
            response.stream = _recorded_stream_class()(response.stream, record)

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

    async def _streamed(
        self, client: AsyncAnthropic, arguments: dict[str, Any], model: str
    ) -> AsyncGenerator[ProviderEvent, None]:
        async def attempt() -> AsyncStream[RawMessageStreamEvent]:
            # One dict of keyword arguments defeats the SDK's overloads: say what comes back.
            try:
                opened: AsyncStream[RawMessageStreamEvent] = await client.messages.create(
                    **arguments
                )
            except Exception as exc:
                self._record_failure(exc)
                raise
            return opened

        stream = await open_with_retries(
            attempt, lambda exc: self._translate(exc, model), self._policy
        )
        try:
            await self._refuse_html(stream.response)
            tap = _tap(stream.response)
            assembly = _Assembly()
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
            try:
                opened: AsyncAPIResponse[Message] = await manager.__aenter__()
            except Exception as exc:
                self._record_failure(exc)
                raise
            return opened

        response = await open_with_retries(
            attempt, lambda exc: self._translate(exc, model), self._policy
        )
        http = response.http_response
        try:
            tap = _tap(http)
            try:
                raw = await response.read()
            except _broken_off() as exc:
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
        body = _json_object(raw) if "json" in content_type.lower() else None
        if body is None or not isinstance(body.get("content"), list):
            described = describe_body(tap.preview, content_type, complete=tap.complete_preview)
            raise ProviderProtocolError(
                f"{self.base_url} answered {http.status_code} with {described}, not a Messages "
                f"API answer: {_BASE_URL_HINT}"
            )
        return _whole_answer(body)

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
            error = ProviderTimeout(
                f"{self._label} stopped sending for {self._timeout:g} s in the middle of the "
                f"answer ({self.base_url})"
            )
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
            except _broken_off() as exc:
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
                arguments["tool_choice"] = _tool_choice(choice)
        if "stop" in parameters:
            arguments["stop_sequences"] = list(parameters["stop"])
        extra = {key: parameters[key] for key in ("temperature", "top_p") if key in parameters}
        if extra:
            arguments["extra_body"] = extra
        output_format = _output_format(parameters.get("response_format"))
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
            return Failure(
                ProviderTimeout(
                    f"{self._label} did not answer within {self._timeout:g} s ({self.base_url})"
                )
            )
        if isinstance(exc, anthropic.APIConnectionError):
            if _closed_after_connecting(exc):
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
        detail = _status_detail(exc)
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


def _closed_after_connecting(exc: BaseException) -> bool:
    """Whether a connection error is a connection closed or reset before any answer (rather than
    one that could not be made): the transport names both a connect error."""
    seen: BaseException | None = exc
    for _ in range(10):  # the SDK, httpx and aiohttp each wrap the error once
        if seen is None or isinstance(seen, aiohttp.ClientConnectorError):
            return False
        if isinstance(seen, aiohttp.ServerDisconnectedError | ConnectionResetError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _status_detail(exc: APIStatusError) -> str:
    """What an error status's body says (its ``error.message``, an HTML page in a few words)."""
    import httpx2  # the SDK's transport: see the top

    try:
        raw = exc.response.content
    except httpx2.ResponseNotRead:
        return exc.api_message or exc.message
    return error_detail(raw, exc.status_code)


@functools.cache
def _broken_off() -> tuple[type[Exception], ...]:
    """What reading an answer raises when it stops coming (``_cut_short`` says which): too
    large, quiet too long, broken off (made once: the SDK is imported with the first request)."""
    import anthropic  # the SDK and its transport: see the top
    import httpx2

    return (
        AnswerTooLarge,
        anthropic.APITimeoutError,
        httpx2.TimeoutException,
        anthropic.APIConnectionError,
        httpx2.TransportError,
    )


@functools.cache
def _tapped_stream_class() -> type[Any]:
    """The body wrapper ``_tap`` puts in place (made once: httpx2 is imported with the SDK)."""
    import httpx2  # the SDK's transport: see the top

    class TappedStream(httpx2.AsyncByteStream):
        """A response body that passes its bytes through a ``BodyTap`` on their way."""

        def __init__(self, inner: httpx2.AsyncByteStream, tap: BodyTap) -> None:
            self._inner = inner
            self._tap = tap

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self._inner:
                self._tap.feed(chunk)
                yield chunk

        async def aclose(self) -> None:
            await self._inner.aclose()

    return TappedStream


@functools.cache
def _recorded_stream_class() -> type[Any]:
    """The body wrapper ``_on_response`` puts in place (made once: httpx2 is imported with the
    SDK)."""
    import httpx2  # the SDK's transport: see the top

    class RecordedStream(httpx2.AsyncByteStream):
        """A response body that passes its bytes to a ``ResponseRecord``, recorded when the body
        ends, breaks off, or is closed (its reader stopped before the end)."""

        def __init__(self, inner: httpx2.AsyncByteStream, record: ResponseRecord) -> None:
            self._inner = inner
            self._record = record

        async def __aiter__(self) -> AsyncIterator[bytes]:
            try:
                async for chunk in self._inner:
                    self._record.feed(chunk)
                    yield chunk
            except GeneratorExit:  # the reader stopped early; aclose records it
                raise
            except BaseException as exc:
                self._record.finish(exc)
                raise
            self._record.finish()

        async def aclose(self) -> None:
            self._record.finish()  # what came, when its reader stopped before the end
            await self._inner.aclose()

    return RecordedStream


def _tap(response: httpx2.Response) -> BodyTap:
    """Put a ``BodyTap`` between ``response``'s body and its reader (the SDK's SSE decoder).

    ``Response.stream`` is the public seat of a response's body in httpx; the SDK gives no other
    hook into the bytes it decodes.
    """
    tap = BodyTap()
    response.stream = _tapped_stream_class()(response.stream, tap)
    return tap


# --- mapping ------------------------------------------------------------------------------------


def to_anthropic_messages(
    messages: Sequence[ChatMessage],
) -> tuple[str | None, list[dict[str, Any]]]:
    """``(system, messages)`` for the Messages API.

    A turn that is a single text is sent as a plain string; other turns as block lists. Text
    blocks that are empty or only whitespace are left out (the API refuses them), and so is an
    assistant turn with nothing else.
    """
    system, turns = to_turns(messages)
    sent = [_message(turn) for turn in turns]
    return system, [message for message in sent if message is not None]


def _message(turn: SamplingTurn) -> dict[str, Any] | None:
    blocks: list[dict[str, Any]] = []
    for part in turn.parts:
        if isinstance(part, TextPart):
            if part.text.strip():  # the API refuses empty and whitespace-only text blocks
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ToolUsePart):
            blocks.append(
                {"type": "tool_use", "id": part.id, "name": part.name, "input": dict(part.input)}
            )
        else:
            blocks.append(_tool_result(part))
    if not blocks:  # blank text only: an assistant's is left out, a user's the API judges
        texts = [part.text for part in turn.parts if isinstance(part, TextPart)]
        return {"role": "user", "content": "".join(texts)} if turn.role == "user" else None
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        return {"role": turn.role, "content": blocks[0]["text"]}
    return {"role": turn.role, "content": blocks}


def _tool_result(part: ToolResultPart) -> dict[str, Any]:
    content = part.content
    if part.is_error and not content.strip():
        content = _SILENT_FAILURE  # the API refuses an error result without content
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": part.tool_use_id,
        "content": content,
    }
    if part.is_error:
        block["is_error"] = True
    return block


def to_anthropic_tools(tools: Sequence[ToolSchema]) -> list[dict[str, Any]]:
    """Messages API ``tools``."""
    return [
        {"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)}
        for t in tools
    ]


def _tool_choice(choice: Any) -> Any:
    """The Messages API form of ``tool_choice``: ``auto``/``required``(``any``)/``none``, a tool
    name, an OpenAI ``function`` choice (an agent moved from an OpenAI model), or Anthropic's own
    object as it is."""
    if isinstance(choice, str):
        return _TOOL_CHOICES.get(choice) or {"type": "tool", "name": choice}
    if isinstance(choice, dict) and choice.get("type") == "function":
        function = choice.get("function")
        name = function.get("name") if isinstance(function, dict) else choice.get("name")
        return {"type": "tool", "name": name}
    return choice


def _output_format(response_format: Any) -> dict[str, Any] | None:
    if not isinstance(response_format, dict) or response_format.get("type") != "json_schema":
        return None
    spec = response_format.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, dict) else response_format.get("schema")
    if not isinstance(schema, dict):
        return None
    return {"type": "json_schema", "schema": schema}


@dataclass
class _Block:
    kind: str
    text: list[str] = field(default_factory=lambda: list[str]())
    id: str = ""
    name: str = ""
    start_input: Any = None


@dataclass
class _Assembly:
    """The answer being assembled from stream events."""

    blocks: dict[int, _Block] = field(default_factory=lambda: dict[int, _Block]())
    input_tokens: int | None = None
    output_tokens: int | None = None
    stop_reason: str | None = None
    stopped: bool = False
    events: int = 0

    def add(self, event: RawMessageStreamEvent) -> str:
        """Take in an event; return its text (``""`` when it carries none)."""
        self.events += 1
        if event.type == "message_start":
            self.input_tokens = _input_tokens(getattr(event.message, "usage", None))
        elif event.type == "content_block_start":
            block = event.content_block
            if block.type == "text":
                self.blocks[event.index] = _Block("text", [block.text] if block.text else [])
                return block.text
            if block.type == "tool_use":
                self.blocks[event.index] = _Block(
                    "tool_use", id=block.id, name=block.name, start_input=block.input
                )
        elif event.type == "content_block_delta":
            current = self.blocks.get(event.index)
            delta = event.delta
            if current is not None and delta.type == "text_delta":
                current.text.append(delta.text)
                return delta.text
            if current is not None and delta.type == "input_json_delta":
                current.text.append(delta.partial_json)
        elif event.type == "message_delta":
            self.stop_reason = event.delta.stop_reason
            usage = getattr(event, "usage", None)
            output = _count(usage, "output_tokens")
            if output is not None:
                self.output_tokens = output
            if _count(usage, "input_tokens") is not None:
                self.input_tokens = _input_tokens(usage)
        elif event.type == "message_stop":
            self.stopped = True
        return ""

    def completion(self, label: Callable[[], str]) -> Completion:
        """The finished answer.

        Args:
            label: the endpoint's name in messages (made only for a message).

        Raises:
            ProviderProtocolError: the stream never finished.
        """
        if self.stop_reason is None and not self.stopped:
            raise ProviderProtocolError(
                f"the stream from {label()} was cut off before the answer finished "
                "(no message_delta)"
            )
        text: list[str] = []
        calls: list[ToolCallRequest] = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if block.kind == "text":
                text.extend(block.text)
            else:
                calls.append(_parsed_call(block, self.stop_reason))
        message = ChatMessage("assistant", "".join(text), tool_calls=tuple(calls))
        return Completion(message, Usage(self.input_tokens, self.output_tokens), self.stop_reason)


def _json_object(raw: bytes) -> dict[str, Any] | None:
    try:
        body = json.loads(raw)
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def _whole_answer(body: dict[str, Any]) -> list[ProviderEvent]:
    """The events of a whole (not streamed) Messages API answer."""
    stop_reason = body.get("stop_reason")
    stop = stop_reason if isinstance(stop_reason, str) else None
    text: list[str] = []
    calls: list[ToolCallRequest] = []
    for block in body["content"]:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            text.append(block["text"])
        elif block.get("type") == "tool_use":
            calls.append(
                _call(
                    str(block.get("id", "")), str(block.get("name", "")), block.get("input"), stop
                )
            )
    answer = "".join(text)
    usage = body.get("usage")
    completion = Completion(
        ChatMessage("assistant", answer, tool_calls=tuple(calls)),
        Usage(_input_tokens(usage), _count(usage, "output_tokens")),
        stop,
    )
    return [TextDelta(answer), completion] if answer else [completion]


def _input_tokens(usage: Any) -> int | None:
    """The prompt's tokens: ``input_tokens`` plus the cached ones the API counts apart
    (``cache_creation_input_tokens``, ``cache_read_input_tokens``), the way OpenAI's
    ``prompt_tokens`` includes its cached tokens; None without ``input_tokens``."""
    counted = _count(usage, "input_tokens")
    if counted is None:
        return None
    cached = (_count(usage, name) for name in _CACHE_COUNTS)
    return counted + sum(count for count in cached if count is not None)


_CACHE_COUNTS = ("cache_creation_input_tokens", "cache_read_input_tokens")


def _count(usage: Any, name: str) -> int | None:
    """A count of a usage object (the SDK's, or a dict of a whole answer); None when absent."""
    value = usage.get(name) if isinstance(usage, dict) else getattr(usage, name, None)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _parsed_call(block: _Block, stop_reason: str | None) -> ToolCallRequest:
    """The call of a ``tool_use`` block; input that is not a JSON object (cut off, malformed) is
    an ``arguments_error`` the model is told about, with empty arguments."""
    raw = "".join(block.text).strip()
    if not raw:
        start = block.start_input
        return _call(block.id, block.name, start if start is not None else {}, stop_reason)
    try:
        arguments = json.loads(raw)
    except ValueError as exc:
        return ToolCallRequest(
            block.id,
            block.name,
            {},
            arguments_error=_input_error(f"malformed ({exc})", stop_reason),
        )
    return _call(block.id, block.name, arguments, stop_reason)


def _call(id: str, name: str, arguments: Any, stop_reason: str | None) -> ToolCallRequest:
    if isinstance(arguments, dict):
        return ToolCallRequest(id, name, arguments)
    error = _input_error(
        f"{_JSON_KINDS.get(type(arguments), 'a value')}, not a JSON object", stop_reason
    )
    return ToolCallRequest(id, name, {}, arguments_error=error)


def _input_error(problem: str, stop_reason: str | None) -> str:
    if stop_reason == "max_tokens":
        return (
            f"the tool input is {problem}: the answer reached max_tokens before the call was "
            "complete (settings.maxOutputTokens)"
        )
    return f"the tool input is {problem}"
