"""Where the Anthropic provider meets the SDK's HTTP transport (httpx2 over aiohttp).

The SDK gives no hook into the bytes it decodes but a response's ``stream``: the wrappers here sit
there, one passing the body through a ``BodyTap`` (the size limits, a preview of what came), one
passing it to a protocol log's ``ResponseRecord``. The others read what the transport's errors
mean: a connection closed after connecting, the detail of an error status, the exceptions of an
answer that stopped coming. httpx2 and the SDK are imported inside, by the first request, as in
``anthropic_provider``.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import aiohttp

from mcp_export.providers._exchange import ResponseRecord
from mcp_export.providers._wire import AnswerTooLarge, BodyTap, error_detail

if TYPE_CHECKING:
    import httpx2
    from anthropic import APIStatusError

__all__ = [
    "broken_off",
    "closed_after_connecting",
    "recorded_stream_class",
    "status_detail",
    "tap_body",
]


def closed_after_connecting(exc: BaseException) -> bool:
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


def status_detail(exc: APIStatusError) -> str:
    """What an error status's body says (its ``error.message``, an HTML page in a few words)."""
    import httpx2  # the SDK's transport: see anthropic_provider

    try:
        raw = exc.response.content
    except httpx2.ResponseNotRead:
        return exc.api_message or exc.message
    return error_detail(raw, exc.status_code)


@functools.cache
def broken_off() -> tuple[type[Exception], ...]:
    """What reading an answer raises when it stops coming (the provider's ``_cut_short`` says
    which): too large, quiet too long, broken off (made once: the SDK is imported with the first
    request)."""
    import anthropic  # the SDK and its transport: see anthropic_provider
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
    """The body wrapper ``tap_body`` puts in place (made once: httpx2 is imported with the SDK)."""
    import httpx2  # the SDK's transport: see anthropic_provider

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
def recorded_stream_class() -> type[Any]:
    """The body wrapper the provider's ``_on_response`` puts in place (made once: httpx2 is
    imported with the SDK)."""
    import httpx2  # the SDK's transport: see anthropic_provider

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


def tap_body(response: httpx2.Response) -> BodyTap:
    """Put a ``BodyTap`` between ``response``'s body and its reader (the SDK's SSE decoder).

    ``Response.stream`` is the public seat of a response's body in httpx; the SDK gives no other
    hook into the bytes it decodes.
    """
    tap = BodyTap()
    response.stream = _tapped_stream_class()(response.stream, tap)
    return tap
