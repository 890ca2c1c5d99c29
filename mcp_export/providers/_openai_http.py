"""The requests of the OpenAI-compatible provider, made with aiohttp directly: Chat Completions
(streamed or whole) and the model list (``GET {base}/models``, for the studio's model picker and
for what kind of server an endpoint is).

Why not through the ``openai`` SDK's client: for each request the SDK builds an httpx-style request
(header objects merged and re-encoded several times, URL parsed, platform headers), hands it through
its auth, retry and transport layers to aiohttp, and decodes the stream line by line in Python, all
of it CPU on the one event loop a served agent shares between all its calls (README, benchmarks: 64
concurrent served calls). One HTTP stack serves both requests, so the project does not depend on the
SDK at all.

What the requests keep of the SDK's behaviour (so servers that work with the SDK work here):

- headers: ``Authorization: Bearer <key>`` (``no-key`` for keyless local servers, as the SDK
  needs some token too), ``Content-Type: application/json``, ``Accept: application/json``, and
  ``OpenAI-Organization`` / ``OpenAI-Project`` from ``OPENAI_ORG_ID`` / ``OPENAI_PROJECT_ID``
  when set, which the SDK reads from the environment;
- proxies from the environment (``HTTPS_PROXY``, ``NO_PROXY``…; looked up once per provider)
  and the system's certificates; connections kept alive between requests, with no limit on how
  many are open at once (a limit is the endpoint's ``maxConcurrentRequests`` setting, a queue in
  ``HTTPEndpoint.request_slot``, not a pool size that would make requests wait unseen);
- one timeout for the answer to start and for each wait between stream chunks;
- Server-Sent Events decoded as the SDK does: ``data:`` lines of an event joined by newlines,
  comments skipped, ``[DONE]`` ends the stream (the rest of the body, up to 64 KiB or 1 s, is
  read so the connection can be reused), an event whose JSON holds an ``error`` is an error;
- a failed status carries the body's ``error.message`` (or the body's text) as its detail.

What it adds: a 2xx HTML page is refused at once (``NotAStream``: a proxy or a web page at the
base URL, not the API); the stream's bytes pass a ``BodyTap`` (one event at most
``MAX_EVENT_BYTES``, the body ``MAX_ANSWER_BYTES``), which also keeps the first bytes so a body
without a single event can be described; an event cut off by the end of the body is
``StreamCutMidEvent``, not a JSON error. Decoding is linear in the body's size however it is
split into chunks. What a model list says about its server (``owned_by``) is remembered per
endpoint for messages (``server_kind``).

With a protocol log (``log``, set by the provider; None by default) every request, response and
failure is recorded there too (``providers._exchange``), named by ``channel``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import urllib.parse
from collections.abc import AsyncGenerator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp.helpers import get_env_proxy_for_url
from yarl import URL

from mcp_export.errors import ProviderProtocolError
from mcp_export.protocol_log import ProtocolLog
from mcp_export.providers._endpoint import endpoint_name
from mcp_export.providers._exchange import ResponseRecord, record_failure, record_request
from mcp_export.providers._server_identity import (
    SERVER_KINDS,
    forget_server_kinds,
    kind_of,
    known_identity,
    remember_kind,
    server_kind,
    serves_one_at_a_time,
)
from mcp_export.providers._sse import EventDecoder
from mcp_export.providers._wire import (
    MAX_ANSWER_BYTES,
    PREVIEW_BYTES,
    BodyTap,
    describe_body,
    error_detail,
)

__all__ = [
    "SERVER_KINDS",
    "ChatCompletionsHTTP",
    "NotAStream",
    "StatusError",
    "StreamCutByAnotherRequest",
    "StreamCutMidEvent",
    "StreamErrorEvent",
    "StreamSeen",
    "forget_server_kinds",
    "server_kind",
]

_MAX_ERROR_BODY = 64 * 1024
_MAX_DRAIN = 64 * 1024
_DRAIN_SECONDS = 1.0


class StatusError(Exception):
    """The endpoint answered with an error status (its body already read: the first bytes are
    ``raw``)."""

    def __init__(
        self, code: int, detail: str, headers: Mapping[str, str], raw: bytes = b""
    ) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail
        self.headers = headers
        self.raw = raw


class StreamErrorEvent(Exception):
    """An event in the middle of the stream that reports an error instead of a chunk."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotAStream(Exception):
    """A 2xx answer that is plainly not an event stream (an HTML page): ``description`` says what
    it is (``an HTML page titled '…'``)."""

    def __init__(self, code: int, description: str) -> None:
        super().__init__(f"{code}: {description}")
        self.code = code
        self.description = description


class StreamCutMidEvent(Exception):
    """The body ended in the middle of an event (its data does not parse)."""


class StreamCutByAnotherRequest(ProviderProtocolError):
    """A server that serves one request at a time (llama-cpp-python) ended the stream before a
    ``finish_reason``: another request arrived. Raised as it is, its message names the cause."""


@dataclass
class StreamSeen:
    """What the read of one stream saw, for the messages of a stream that held no answer.

    Attributes:
        content_type: the response's ``content-type``.
        server: the response's ``Server`` header ("" when absent).
        tap: the body's bytes so far (first bytes, count, bounds).
        events: how many data events were decoded.
        done: whether ``[DONE]`` arrived.
        finished: whether a chunk carried a ``finish_reason``.
    """

    content_type: str = ""
    server: str = ""
    tap: BodyTap = field(default_factory=BodyTap)
    events: int = 0
    done: bool = False
    finished: bool = False

    def body(self) -> str:
        """The body in a few words (see ``describe_body``)."""
        return describe_body(
            self.tap.preview, self.content_type, complete=self.tap.complete_preview
        )


_MAX_MODEL_LIST = 16 * 1024 * 1024
_PROBE_SECONDS = 2.0


class ChatCompletionsHTTP:
    """``POST {base_url}/chat/completions`` (streamed or whole) and ``GET {base_url}/models``
    requests on one aiohttp session.

    Args:
        base_url: the endpoint, ending before ``/chat/completions`` (a query it carries stays).
        api_key: the key; None for keyless local servers.
        timeout: seconds to wait for the answer to start, and between stream chunks.
        key_header: ``Authorization`` (the key as ``Bearer <key>``) or another header that
            carries the key as it is (Azure OpenAI's ``api-key``).
        api_version: sent as ``?api-version=`` with every request (Azure OpenAI); None for none.

    The session is made on first use, in the event loop that uses it.

    Attributes:
        log: where requests and responses are recorded; None records nothing.
        channel: the endpoint as the log names it.
    """

    log: ProtocolLog | None = None
    channel = ""

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        *,
        timeout: float,
        key_header: str = "Authorization",
        api_version: str | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.url = _endpoint_url(self.base_url, "/chat/completions", api_version)
        self.models_url = _endpoint_url(self.base_url, "/models", api_version)
        self._timeout = timeout
        if key_header.lower() == "authorization":
            credentials = {"Authorization": f"Bearer {api_key or 'no-key'}"}
        else:
            credentials = {key_header: api_key} if api_key else {}
        headers = {
            **credentials,
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": "MetaAgentStudio (OpenAI-compatible)",
        }
        for header, variable in (
            ("OpenAI-Organization", "OPENAI_ORG_ID"),
            ("OpenAI-Project", "OPENAI_PROJECT_ID"),
        ):
            if os.environ.get(variable):
                headers[header] = os.environ[variable]
        self._headers = headers
        self._session: aiohttp.ClientSession | None = None
        self._proxy: URL | None = None
        self._proxy_auth: aiohttp.BasicAuth | None = None

    def _session_now(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0),  # no pool limit: see the docstring
                timeout=aiohttp.ClientTimeout(
                    total=None, sock_connect=self._timeout, sock_read=self._timeout
                ),
                headers=self._headers,
            )
            self._proxy, self._proxy_auth = _env_proxy(self.url)
        return self._session

    async def open(self, body: dict[str, Any]) -> aiohttp.ClientResponse:
        """Send the request; returns the response once its headers arrived with a 2xx status.

        Raises:
            StatusError: the endpoint answered with anything but a 2xx status (redirects are
                not followed).
            NotAStream: a 2xx HTML page.
            aiohttp.ClientError, TimeoutError: as aiohttp raises them (refused, reset, timed out).
        """
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        session = self._session_now()
        log = self.log
        if log is not None:
            record_request(log, self.channel, "POST", self.url, self._headers.items(), data)
        try:
            response = await session.post(
                self.url,
                data=data,
                proxy=self._proxy,
                proxy_auth=self._proxy_auth,
                allow_redirects=False,  # as the SDK: a redirected POST is an error, not a GET
            )
        except Exception as exc:
            if log is not None:
                record_failure(log, self.channel, exc)
            raise
        if 200 <= response.status < 300:
            if "html" not in response.headers.get("Content-Type", "").lower():
                return response
            try:
                raw = await response.content.read(PREVIEW_BYTES)
            finally:
                response.close()
            self._record_read(response, raw, partial=len(raw) >= PREVIEW_BYTES)
            description = describe_body(raw, "text/html")
            raise NotAStream(response.status, description)
        try:
            error = await _status_error(response)
        finally:
            response.close()
        self._record_read(response, error.raw, partial=len(error.raw) >= _MAX_ERROR_BODY)
        raise error

    def _record(self, response: aiohttp.ClientResponse) -> ResponseRecord | None:
        """The record of ``response`` in the log; None without a log."""
        if self.log is None:
            return None
        reason = response.reason or ""
        return ResponseRecord(
            self.log, self.channel, response.status, reason, response.headers.items()
        )

    def _record_read(self, response: aiohttp.ClientResponse, raw: bytes, *, partial: bool) -> None:
        """Record ``response`` with the part of its body that was read (``raw``; ``partial``:
        not all of it)."""
        record = self._record(response)
        if record is not None:
            record.feed(raw)
            record.finish(partial=partial)

    async def models(self, *, timeout: float | None = None) -> list[dict[str, Any]]:  # noqa: ASYNC109
        """``GET {base_url}/models``: the entries of the endpoint's model list (``id``,
        ``owned_by``…); what they say about the server is remembered (``server_kind``).

        Args:
            timeout: seconds for the whole request; None for the session's timeouts.

        Raises:
            StatusError: any status but 2xx (redirects are not followed).
            ValueError: the body is not a model list (not JSON, no ``data`` list), or too large.
            aiohttp.ClientError, TimeoutError: as aiohttp raises them.
        """
        session = self._session_now()
        bound: dict[str, Any] = {}
        if timeout is not None:  # else the session's own (None here would mean no bound)
            bound["timeout"] = aiohttp.ClientTimeout(total=timeout)
        log = self.log
        if log is not None:
            headers = self._headers.items()
            record_request(log, self.channel, "GET", self.models_url, headers, None)
        try:
            response = await session.get(
                self.models_url,
                proxy=self._proxy,
                proxy_auth=self._proxy_auth,
                allow_redirects=False,
                **bound,
            )
        except Exception as exc:
            if log is not None:
                record_failure(log, self.channel, exc)
            raise
        record = self._record(response)
        failure: BaseException | None = None
        try:
            if not 200 <= response.status < 300:
                error = await _status_error(response)
                if record is not None:
                    record.feed(error.raw)
                raise error
            parts: list[bytes] = []
            size = 0
            async for chunk in response.content.iter_any():
                if record is not None:
                    record.feed(chunk)
                size += len(chunk)
                if size > _MAX_MODEL_LIST:
                    raise ValueError(f"the model list passed {_MAX_MODEL_LIST} bytes")
                parts.append(chunk)
        except BaseException as exc:
            failure = None if isinstance(exc, StatusError) else exc
            raise
        finally:
            response.close()
            if record is not None:
                record.finish(failure)
        body: object = json.loads(b"".join(parts).decode("utf-8"))
        entries = body.get("data") if isinstance(body, dict) else None
        if not isinstance(entries, list):
            raise ValueError("the answer is not a model list (no data list)")
        found = [entry for entry in entries if isinstance(entry, dict)]
        remember_kind(self.base_url, kind_of(found))
        return found

    async def learn_kind(self) -> None:
        """Ask the model list, once per endpoint in this process, what kind of server this is
        (bounded to a few seconds; any failure leaves it unknown)."""
        if known_identity(self.base_url) is not None:
            return
        remember_kind(self.base_url, None)
        with contextlib.suppress(Exception):  # a name for messages, nothing depends on it
            await self.models(timeout=_PROBE_SECONDS)

    async def events(
        self, response: aiohttp.ClientResponse, seen: StreamSeen
    ) -> AsyncGenerator[object, None]:
        """The decoded JSON of each event of the stream, up to ``[DONE]`` or its end.

        The response is released for reuse once read to the end, and closed (so the server
        sees the connection go) when the caller stops early or anything fails.

        Args:
            response: the opened response.
            seen: filled in as the stream is read (its bytes, events, ``[DONE]``).

        Raises:
            StreamErrorEvent: an event reporting an error.
            StreamCutMidEvent: the body ended in the middle of an event.
            AnswerTooLarge: an event or the whole body passed its bound.
            UnicodeDecodeError: a line that is not UTF-8.
            ValueError: an event that is not JSON.
            aiohttp.ClientError, TimeoutError: the connection broke or went quiet.
        """
        seen.content_type = response.headers.get("Content-Type", "")
        seen.server = response.headers.get("Server", "")
        decoder = EventDecoder()
        record = self._record(response)
        with _reading(response, record) as read, self._cut_named(seen):
            async for chunk in response.content.iter_any():
                for data in decoder.feed(_passed(chunk, seen, record)):
                    if data.startswith("[DONE]"):
                        seen.done = True
                        if record is not None:
                            record.finish()
                        read.finished = await _drained(response)
                        return
                    seen.events += 1
                    yield _noted(_decoded(data), seen)
            for data in decoder.finish():
                if data.startswith("[DONE]"):
                    seen.done = True
                    break
                seen.events += 1
                try:
                    value = _decoded(data)
                except ValueError as exc:  # the last event, without its line end
                    raise StreamCutMidEvent(str(exc)) from exc
                yield _noted(value, seen)
            read.finished = True

    @contextlib.contextmanager
    def _cut_named(self, seen: StreamSeen) -> Iterator[None]:
        """Name the cause of a stream that a server serving one request at a time ended early
        (``StreamCutByAnotherRequest``): its connection broke in the middle of the body (how
        llama-cpp-python 0.3.36 ends the answer in progress when another request arrives), or
        its events stopped before a ``finish_reason`` (how it ends one that had not started:
        ``[DONE]`` alone)."""
        try:
            yield
        except (aiohttp.ClientError, ConnectionError) as exc:
            if serves_one_at_a_time(self.base_url):
                raise StreamCutByAnotherRequest(self._cut_message(seen)) from exc
            raise
        if (seen.events or seen.done) and not seen.finished and serves_one_at_a_time(self.base_url):
            raise StreamCutByAnotherRequest(self._cut_message(seen))

    def _cut_message(self, seen: StreamSeen) -> str:
        kind = server_kind(self.base_url)
        named = endpoint_name(self.base_url, kind=kind, server=seen.server)
        return (
            f"the answer from {named} was cut off before it finished: {kind} serves one request "
            "at a time and ends the answer in progress when another request arrives — another "
            "program (or a setting with maxConcurrentRequests above 1) sent one meanwhile; "
            "Meta Agent Studio's own requests to it wait in line, across processes"
        )

    async def whole(self, response: aiohttp.ClientResponse, seen: StreamSeen) -> bytes:
        """The whole body of an answer that was not streamed (``stream: false``), bounded by
        ``MAX_ANSWER_BYTES``; the response is released for reuse once read, closed on failure.

        Raises:
            AnswerTooLarge: the body passed its bound.
            aiohttp.ClientError, TimeoutError: the connection broke or went quiet.
        """
        seen.content_type = response.headers.get("Content-Type", "")
        seen.server = response.headers.get("Server", "")
        seen.tap = BodyTap(max_event=MAX_ANSWER_BYTES)  # a JSON body is one piece, not events
        parts: list[bytes] = []
        record = self._record(response)
        with _reading(response, record) as read:
            async for chunk in response.content.iter_any():
                parts.append(_passed(chunk, seen, record))
            read.finished = True
        return b"".join(parts)

    async def aclose(self) -> None:
        """Close the session and its connections."""
        session, self._session = self._session, None
        if session is not None:
            await session.close()


def _passed(chunk: bytes, seen: StreamSeen, record: ResponseRecord | None) -> bytes:
    """``chunk`` of a body, after passing it through ``seen``'s tap (the size bounds) and into
    ``record`` (if any)."""
    seen.tap.feed(chunk)
    if record is not None:
        record.feed(chunk)
    return chunk


@dataclass
class _Read:
    finished: bool = False
    """Whether the body was read to its end (the connection can then go back to the pool)."""


@contextlib.contextmanager
def _reading(response: aiohttp.ClientResponse, record: ResponseRecord | None) -> Iterator[_Read]:
    """Read ``response``'s body inside: afterwards the response is released for reuse when the
    reader set ``finished``, closed otherwise, and ``record`` (if any) is finished with the
    failure that broke the read off (none when the reader merely stopped early)."""
    read = _Read()
    failure: BaseException | None = None
    try:
        yield read
    except GeneratorExit:  # the reader stopped early: no failure of the body
        raise
    except BaseException as exc:
        failure = exc
        raise
    finally:
        if read.finished:
            response.release()
        else:
            response.close()
        if record is not None:
            record.finish(failure)


def _endpoint_url(base_url: str, path: str, api_version: str | None) -> str:
    """``base_url`` + ``path``, with the query the base URL carried and ``api-version`` (which
    replaces one the base URL carried)."""
    base, _, query = base_url.partition("?")
    params = [p for p in query.split("&") if p]
    if api_version:
        params = [p for p in params if not p.startswith("api-version=")]
        params.append("api-version=" + urllib.parse.quote(api_version, safe=""))
    return base.rstrip("/") + path + ("?" + "&".join(params) if params else "")


async def _status_error(response: aiohttp.ClientResponse) -> StatusError:
    """The ``StatusError`` of a response with an error status: its body's first
    ``_MAX_ERROR_BODY`` bytes read for the detail (the caller closes the response)."""
    raw = await response.content.read(_MAX_ERROR_BODY)
    return StatusError(response.status, error_detail(raw, response.status), response.headers, raw)


async def _drained(response: aiohttp.ClientResponse) -> bool:
    """Read what follows ``[DONE]`` so the connection can be reused; False when more than
    ``_MAX_DRAIN`` follows, the body does not end within ``_DRAIN_SECONDS``, or reading fails
    (the connection is then closed rather than reused: the answer is complete either way)."""
    left = _MAX_DRAIN
    try:
        async with asyncio.timeout(_DRAIN_SECONDS):
            async for rest in response.content.iter_any():
                left -= len(rest)
                if left < 0:
                    return False
    except (aiohttp.ClientError, TimeoutError):
        return False
    return True


def _env_proxy(url: str) -> tuple[URL | None, aiohttp.BasicAuth | None]:
    """The proxy (and its credentials) the environment sets for ``url``, else (None, None).

    Looked up once per provider: aiohttp's own ``trust_env`` repeats the lookup (and reads
    ``~/.netrc``) for every request.
    """
    try:
        return get_env_proxy_for_url(URL(url))
    except LookupError:
        return None, None


def _noted(value: object, seen: StreamSeen) -> object:
    """``value`` (a chunk), after noting in ``seen`` whether it carries a ``finish_reason``."""
    if not seen.finished and isinstance(value, dict):
        choices = value.get("choices")
        if isinstance(choices, list):
            seen.finished = any(isinstance(c, dict) and c.get("finish_reason") for c in choices)
    return value


def _decoded(data: str) -> object:
    value: object = json.loads(data)
    if isinstance(value, dict):
        error = value.get("error")
        if error:
            message = error.get("message") if isinstance(error, dict) else None
            if not isinstance(message, str) or not message:
                message = "An error occurred during streaming"
            raise StreamErrorEvent(message)
    return value
