"""The OpenAI-compatible provider: OpenAI, Azure OpenAI, Ollama, vLLM, LM Studio, llama.cpp,
llama-cpp-python, LiteLLM, OpenRouter.

Streams Chat Completions over HTTP with aiohttp (``providers._openai_http``); the conversation is
put in the API's terms by ``_openai_messages``, and the answer, chunk by chunk or whole, is read
by ``_openai_answer``. ``stream_options.include_usage`` asks for the usage chunk.

Not streamed: when the provider's ``stream`` setting is off, and for requests with tools to an
endpoint that refused streamed tool use: an error status that says so (llama.cpp's server in older
builds: 500 "Cannot use tools with stream"), or a 200 stream without a single byte, which is how
llama-cpp-python fails a streamed request inside the model call ("Automatic streaming tool choice
is not supported" for ``tool_choice: "auto"``, a prompt longer than its context: the reason is
only in its log). The request is not retried as it was but asked again at once with
``stream: false``, which answers or says why; when that answers a request with tools, the
endpoint is remembered for the process and a ``ProviderNotice`` says so once. A whole
``chat.completion`` is read as the one chunk that would carry it.

Messages name the endpoint: ``OpenAI``, ``OpenRouter``, ``Azure OpenAI`` for those hosted APIs,
``host:port`` for any other, with the kind of server where it says so (``127.0.0.1:8080
(llama-cpp-python)``, from its model list, asked once after its first error status; else its
``Server`` header). Texts that come from the server (error bodies, error events, a chunk's JSON,
its ``Server`` header) are redacted before they become part of a message: a server may repeat the
request's key.

Requests: no value in ``messages`` is null (an assistant message that only calls tools has
``content: ""``). ``max_tokens`` is sent as ``max_tokens`` to any base URL (what Ollama, vLLM and
older servers understand) and as ``max_completion_tokens`` to OpenAI itself (its reasoning models
refuse ``max_tokens``). ``tool_choice`` is sent only with tools, ``auto`` unless set; a tool name
becomes a function choice, except to a server that takes the choice only as a string (llama.cpp's
``llama-server``, known by its model list, asked before the first request that names a tool):
there it goes as ``"required"`` with only the named tool offered, and a notice says so.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any, Unpack

import aiohttp

from mcp_export.errors import (
    ProviderError,
    ProviderProtocolError,
    ProviderServerError,
    ProviderUnreachable,
)
from mcp_export.providers._endpoint import (
    EndpointOptions,
    HTTPEndpoint,
    endpoint_name,
    host_port,
    hosted_name,
    no_answer_in_time,
    stalled_answer,
)
from mcp_export.providers._openai_answer import BASE_URL_HINT, ChunkAssembly, as_chunk
from mcp_export.providers._openai_http import (
    ChatCompletionsHTTP,
    NotAStream,
    StatusError,
    StreamCutMidEvent,
    StreamErrorEvent,
    StreamSeen,
    forget_server_kinds,
    server_kind,
)
from mcp_export.providers._openai_messages import (
    STRING_CHOICE_SERVERS,
    named_choice,
    to_openai_messages,
    tools_and_choice,
)
from mcp_export.providers._retry import Failure, open_with_retries, status_failure
from mcp_export.providers._server_identity import tool_results_notice
from mcp_export.providers._wire import AnswerTooLarge
from mcp_export.providers.base import (
    ModelRequest,
    ProviderEvent,
    ProviderNotice,
    TextDelta,
)
from mcp_export.providers.kinds import OPENAI_URL
from mcp_export.redact import redact

__all__ = ["OPENAI_DEFAULT_URL", "OpenAIProvider", "forget_endpoints"]

logger = logging.getLogger(__name__)

OPENAI_DEFAULT_URL = OPENAI_URL

_END = object()
"""What ``_next_chunk`` returns after the last chunk."""
_PASSED_AS_IS = ("temperature", "top_p", "seed", "presence_penalty", "frequency_penalty")


class OpenAIProvider(HTTPEndpoint):
    """A ``Provider`` for anything that speaks the Chat Completions API.

    Takes ``HTTPEndpoint``'s arguments; ``api_key`` is None for keyless local servers (Ollama,
    LM Studio…), ``base_url`` None for OpenAI itself, ``name`` the provider id (``openai``,
    ``ollama``, ``openrouter``…). Besides them:

    Args:
        key_header: the header the key goes in: ``Authorization`` (``Bearer <key>``) or Azure
            OpenAI's ``api-key``.
        api_version: an ``api-version`` sent with every request (Azure OpenAI), or None.
    """

    DEFAULT_URL = OPENAI_DEFAULT_URL
    DEFAULT_NAME = "openai"
    DEFAULT_KEY_NAME = "OPENAI_API_KEY"
    _http: ChatCompletionsHTTP | None = None

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None = None,
        *,
        key_header: str = "Authorization",
        api_version: str | None = None,
        **options: Unpack[EndpointOptions],
    ) -> None:
        super().__init__(api_key, base_url, **options)
        self._key_header = key_header
        self._api_version = api_version

    def _http_now(self) -> ChatCompletionsHTTP:
        if self._http is None:
            self._http = ChatCompletionsHTTP(
                self.base_url,
                self._api_key,
                timeout=self._timeout,
                key_header=self._key_header,
                api_version=self._api_version,
            )
        log = self._http.log = self.protocol_log
        if log is not None:
            self._http.channel = self._named()
        return self._http

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        """Run one Chat Completions request: text deltas (notices), then one ``Completion``.

        Streamed unless the provider's ``stream`` setting is off, or the request offers tools and
        the endpoint refused streamed tool use before (then the whole answer arrives as one text
        delta and the completion). A streamed request the endpoint refuses for its tools, or
        answers with a 200 stream without a byte, is asked again at once without streaming.

        Raises:
            ProviderUnreachable: nothing answers at the base URL (after retries).
            ProviderAuthError: the key was refused (401/403).
            ProviderRateLimited: still 429 after retries.
            ProviderServerError: still 5xx after retries, or an error event mid-stream.
            ProviderTimeout: no answer within the timeout.
            ProviderProtocolError: a malformed or cut-off answer.
            ProviderError: any other refusal (unknown model, bad request…).
        """
        async with self.request_slot():  # held from sending to the end of the answer
            http = self._http_now()
            tool_names = frozenset(tool.name for tool in request.tools)
            notice = await self._choice_notice(http, request)
            if notice is not None:
                yield notice
            dropped = tool_results_notice(
                self.base_url, [{"role": m.role} for m in request.messages]
            )
            if dropped is not None:
                yield ProviderNotice(dropped)
            refused = False  # the endpoint said it refuses streamed tool use
            came_back_empty = False
            if self._stream and not (request.tools and self.base_url in _WHOLE_TOOL_TURNS):
                try:
                    response = await self._open(http, request, streamed=True)
                except _StreamedToolsRefused:
                    refused = True
                else:
                    try:
                        streamed = self._streamed_answer(http, response, tool_names, retry=True)
                        async with aclosing(streamed) as answer:
                            async for event in answer:
                                yield event
                        return
                    except _EmptyStream:  # it failed inside its stream, before a byte
                        came_back_empty = True
                if refused and request.tools and _whole_tool_turns_from_now(self.base_url):
                    yield self._whole_tool_turns_notice()
            response = await self._open(http, request, streamed=False)
            if "event-stream" in response.headers.get("Content-Type", ""):  # streamed anyway
                streamed = self._streamed_answer(http, response, tool_names, retry=False)
                async with aclosing(streamed) as answer:
                    async for event in answer:
                        yield event
                return
            events = await self._whole_answer(http, response, tool_names)
            if came_back_empty and request.tools and _whole_tool_turns_from_now(self.base_url):
                # Streamed, the request came back empty; whole, it was answered.
                yield self._whole_tool_turns_notice()
            for event in events:
                yield event

    async def _choice_notice(
        self, http: ChatCompletionsHTTP, request: ModelRequest
    ) -> ProviderNotice | None:
        """Before a request that forces a named tool to a local server: learn what kind of
        server it is (its model list, once per endpoint), and for one that takes the choice
        only as a string, the notice of how it is sent instead."""
        name = named_choice(request.parameters.get("tool_choice"))
        if not request.tools or name is None or hosted_name(self.base_url) is not None:
            return None
        await http.learn_kind()
        if server_kind(self.base_url) not in STRING_CHOICE_SERVERS:
            return None
        return ProviderNotice(
            f"{self._named()} takes tool_choice only as a string: the forced choice of {name} "
            f'goes as "required" with only {name} offered'
        )

    def _whole_tool_turns_notice(self) -> ProviderNotice:
        return ProviderNotice(
            f"{host_port(self.base_url)} refuses streamed tool use; tool turns go without streaming"
        )

    async def _streamed_answer(
        self,
        http: ChatCompletionsHTTP,
        response: aiohttp.ClientResponse,
        tool_names: frozenset[str],
        *,
        retry: bool,
    ) -> AsyncGenerator[ProviderEvent, None]:
        """The text deltas and the completion of a streamed answer.

        Raises:
            _EmptyStream: ``retry`` and the 200 stream ended without a single byte: how
                llama-cpp-python answers a streamed request that fails inside the model call
                (``tool_choice: "auto"``, a prompt longer than the context), the reason only
                in its log; asked whole, it answers or says why.
        """
        seen = StreamSeen()
        events = http.events(response, seen)
        try:
            assembly = ChunkAssembly(tool_names=tool_names)
            while (chunk := await self._next_chunk(events, seen)) is not _END:
                for text in assembly.add(chunk):
                    yield TextDelta(text)
            if retry and seen.tap.total == 0 and "event-stream" in seen.content_type:
                raise _EmptyStream
            yield assembly.completion(lambda: self._named(seen.server), seen, self.base_url)
        finally:
            await events.aclose()  # a stream left early closes its connection at once

    async def _open(
        self, http: ChatCompletionsHTTP, request: ModelRequest, *, streamed: bool
    ) -> aiohttp.ClientResponse:
        body = self.request_arguments(request, stream=streamed)
        streamed_tools = streamed and bool(request.tools)

        async def attempt() -> aiohttp.ClientResponse:
            try:
                return await http.open(body)
            except StatusError:
                if hosted_name(self.base_url) is None:
                    await http.learn_kind()  # the server answered: its model list may say what
                raise

        return await open_with_retries(
            attempt,
            lambda exc: self._translate(exc, request.model, streamed_tools=streamed_tools),
            self._policy,
        )

    async def _whole_answer(
        self,
        http: ChatCompletionsHTTP,
        response: aiohttp.ClientResponse,
        tool_names: frozenset[str],
    ) -> list[ProviderEvent]:
        """The events of an answer that was not streamed, read whole: its text as one delta,
        then the completion (``message.content``, ``message.tool_calls``, ``finish_reason``,
        ``usage``)."""
        seen = StreamSeen()
        try:
            raw = await http.whole(response, seen)
            body: object = json.loads(raw.decode("utf-8"))
        except Exception as exc:
            failure = self._read_failure(exc, streamed=False, server=seen.server)
            if failure is None:
                raise
            if isinstance(exc, ValueError) and not isinstance(exc, UnicodeDecodeError):
                failure = ProviderProtocolError(
                    f"{self.base_url} answered {response.status} with {seen.body()}, not a Chat "
                    f"Completions answer: {BASE_URL_HINT}"
                )
            raise failure from exc
        if isinstance(body, dict) and body.get("error"):
            error = body["error"]
            message = error.get("message") if isinstance(error, dict) else None
            raise ProviderServerError(
                f"{self._named(seen.server)} answered with an error: "
                f"{redact(str(message or error))}"
            )
        assembly = ChunkAssembly(tool_names=tool_names)
        text = "".join(assembly.add(as_chunk(body)))
        if not assembly.choices_seen:
            raise ProviderProtocolError(
                f"{self.base_url} answered {response.status} with {seen.body()}, which holds no "
                "answer (no choices); check the model name and the server's log"
            )
        if assembly.finish_reason is None:  # the body is whole: the answer is complete
            assembly.finish_reason = "tool_calls" if assembly.calls else "stop"
        completion = assembly.completion(lambda: self._named(seen.server), seen, self.base_url)
        return [TextDelta(text), completion] if text else [completion]

    async def _next_chunk(self, events: AsyncGenerator[object, None], seen: StreamSeen) -> object:
        """The next chunk of the stream, ``_END`` after the last; failures translated."""
        try:
            return await events.__anext__()
        except StopAsyncIteration:
            return _END
        except Exception as exc:
            failure = self._read_failure(exc, streamed=True, server=seen.server)
            if failure is None:
                raise
            raise failure from exc

    def _read_failure(
        self, exc: Exception, *, streamed: bool, server: str = ""
    ) -> ProviderError | None:
        """What a failure while reading the answer means, in words; None: not ours to translate.

        ``server`` is the response's ``Server`` header ("" when absent)."""
        named = self._named(server)
        if isinstance(exc, TimeoutError):  # aiohttp's read timeouts are TimeoutErrors too
            return stalled_answer(named, self._timeout)
        if isinstance(exc, aiohttp.ClientError | ConnectionError):
            what = "stream" if streamed else "answer"
            return ProviderProtocolError(
                f"the {what} from {self.base_url} broke off before the answer was complete"
            )
        if isinstance(exc, StreamErrorEvent):
            return ProviderServerError(
                f"{named} reported an error in the middle of the answer: {redact(exc.message)}"
            )
        if isinstance(exc, StreamCutMidEvent):
            return ProviderProtocolError(
                f"the stream from {named} ended in the middle of an event, before the answer "
                "was complete"
            )
        if isinstance(exc, AnswerTooLarge):
            return ProviderProtocolError(
                f"{named}: {exc} — no answer is that large; check the server at "
                f"{self.base_url}, or ask for a shorter answer (settings.maxOutputTokens)"
            )
        if isinstance(exc, UnicodeDecodeError):
            where = "in its stream" if streamed else "in its answer"
            return ProviderProtocolError(
                f"{named} sent bytes that are not UTF-8 {where} ({exc.reason}); "
                f"check that {self.base_url} speaks the Chat Completions API"
            )
        if isinstance(exc, ValueError):  # not JSON
            return ProviderProtocolError(
                f"{named} sent a stream event that is not valid JSON ({exc}); check "
                f"that {self.base_url} speaks the Chat Completions API"
            )
        return None

    async def list_models(self, *, timeout: float | None = None) -> list[dict[str, Any]]:  # noqa: ASYNC109
        """The entries of the endpoint's model list (``GET {base}/models``), asked in one of its
        request slots: on a server that serves one request at a time (llama-cpp-python cuts off
        a stream in progress for any other request, a model list included) it waits in line.

        Raises:
            as ``ChatCompletionsHTTP.models``.
        """
        async with self.request_slot():
            return await self._http_now().models(timeout=timeout)

    def request_arguments(self, request: ModelRequest, *, stream: bool = True) -> dict[str, Any]:
        """The request body for ``request``: streamed (asking for the usage chunk) or not."""
        arguments: dict[str, Any] = {
            "model": request.model,
            "messages": to_openai_messages(request.messages),
            "stream": stream,
        }
        if stream:
            arguments["stream_options"] = {"include_usage": True}
        parameters = request.parameters
        if request.tools:
            # Said even when it is the API's default: llama-cpp-python ignores the tools of a
            # streamed request without a choice, where "auto" gets a refusal that is handled.
            string_only = server_kind(self.base_url) in STRING_CHOICE_SERVERS
            arguments["tools"], arguments["tool_choice"] = tools_and_choice(
                request.tools, parameters.get("tool_choice"), string_only=string_only
            )
        for key in _PASSED_AS_IS:
            if key in parameters:
                arguments[key] = parameters[key]
        if "max_tokens" in parameters:
            field_name = "max_tokens" if self._base_url else "max_completion_tokens"
            arguments[field_name] = parameters["max_tokens"]
        if "stop" in parameters:
            arguments["stop"] = list(parameters["stop"])
        if "response_format" in parameters:
            arguments["response_format"] = parameters["response_format"]
        return arguments

    async def aclose(self) -> None:
        """Close the HTTP session and its connections."""
        if self._http is not None:
            http, self._http = self._http, None
            await http.aclose()

    # --- errors ---------------------------------------------------------------------------------

    @property
    def endpoint(self) -> str:
        """The endpoint as messages name it, with the kind of server when known
        (``127.0.0.1:8080 (llama-server)``)."""
        return self._named()

    def _named(self, server: str | None = None) -> str:
        """The endpoint as messages name it (see ``endpoint_name``): ``OpenAI``, or
        ``127.0.0.1:8080 (llama-cpp-python)``; ``server`` is a response's ``Server`` header."""
        return endpoint_name(self.base_url, kind=server_kind(self.base_url), server=server)

    def _unreachable(self) -> str:
        if self._name == "ollama":
            hint = "is Ollama running?"
        elif self._base_url is None:
            hint = "check the network connection"
        else:
            hint = "is the server running and the base URL right?"
        return f"nothing answers at {self.base_url} — {hint}"

    def _translate(
        self, exc: Exception, model: str, *, streamed_tools: bool = False
    ) -> Failure | None:
        if (
            streamed_tools
            and isinstance(exc, StatusError)
            and _refuses_streamed_tools(exc.code, exc.detail)
        ):
            return Failure(_StreamedToolsRefused(exc.detail))  # not retried: asked again whole
        if isinstance(exc, NotAStream):
            return Failure(
                ProviderProtocolError(
                    f"{self.base_url} answered {exc.code} with {exc.description}, not a Chat "
                    f"Completions stream: {BASE_URL_HINT}"
                )
            )
        if isinstance(exc, StatusError):
            return status_failure(
                self._named(exc.headers.get("Server")),
                exc.code,
                exc.detail,
                exc.headers,
                key_name=self._key_name,
                model=model,
                url=self.base_url,
            )
        if isinstance(exc, TimeoutError):  # aiohttp's connect and read timeouts included
            return Failure(no_answer_in_time(self._named(), self._timeout))
        if isinstance(exc, aiohttp.InvalidURL | aiohttp.NonHttpUrlClientError):
            return Failure(
                ProviderError(
                    f"the base URL {self.base_url} is not an http:// or https:// address (for "
                    "example http://localhost:11434/v1); check it"
                )
            )
        if isinstance(exc, aiohttp.ClientConnectorError | ConnectionRefusedError):
            return Failure(ProviderUnreachable(self._unreachable()), retryable=True)
        if isinstance(exc, aiohttp.ClientConnectionError | ConnectionError):
            # Connected, then closed or reset before a status line: a server that is going
            # down, or something at the address that is not an HTTP API.
            return Failure(
                ProviderUnreachable(
                    f"the connection to {self.base_url} was closed before any answer — is the "
                    "server running, and is the base URL an http(s) API address?"
                ),
                retryable=True,
            )
        if isinstance(exc, aiohttp.ClientError):  # e.g. an error body that broke off
            message = f"{self._named()} sent a malformed response: {redact(str(exc))}"
            return Failure(ProviderProtocolError(message))
        return None


class _StreamedToolsRefused(ProviderError):
    """The endpoint refused a streamed request with tools (``stream`` then goes off)."""


class _EmptyStream(Exception):
    """A streamed request got a 200 stream without a single byte."""


_WHOLE_TOOL_TURNS: set[str] = set()
"""The endpoints (base URLs) that refused streamed tool use in this process: their requests with
tools go without streaming."""


def forget_endpoints() -> None:
    """Forget what this process learnt about endpoints (tool turns taken whole, the kind of
    server at an address): the next requests find out again."""
    _WHOLE_TOOL_TURNS.clear()
    forget_server_kinds()


def _whole_tool_turns_from_now(base_url: str) -> bool:
    """Remember that ``base_url`` takes tool turns whole; True the first time (a notice says so
    once per endpoint and process)."""
    if base_url in _WHOLE_TOOL_TURNS:
        return False
    _WHOLE_TOOL_TURNS.add(base_url)
    return True


_REFUSAL_WORDS = ("not supported", "unsupported", "cannot", "can't", "not allowed")


def _refuses_streamed_tools(code: int, detail: str) -> bool:
    """Whether an error status is a server's refusal of tools in a streamed request.

    What servers say: llama-cpp-python (``chatml-function-calling`` and ``functionary`` chat
    formats) answers 500 "Automatic streaming tool choice is not supported" to ``tool_choice:
    "auto"``; llama.cpp's own server (builds before it streamed tool calls) 500 "Cannot use
    tools with stream". Any 400/422/500/501 whose text speaks of streaming and tools and of not
    supporting them is read the same way: at worst the request is asked once more, whole.
    """
    if code not in (400, 422, 500, 501):
        return False
    text = detail.lower()
    return "stream" in text and "tool" in text and any(w in text for w in _REFUSAL_WORDS)
