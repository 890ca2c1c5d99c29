"""The OpenAI-compatible provider: OpenAI, Azure OpenAI, Ollama, vLLM, LM Studio, llama.cpp,
llama-cpp-python, LiteLLM, OpenRouter.

Streams Chat Completions over HTTP with aiohttp (``providers._openai_http``). Text arrives as
``delta.content`` pieces; tool calls as ``delta.tool_calls`` entries keyed by ``index`` whose
arguments JSON comes in pieces, assembled here and parsed once the stream finished (a name
repeated whole in every delta, as llama-cpp-python sends it, is read once).
``stream_options.include_usage`` asks for the usage chunk; a count the server does not give stays
None. A stream that ends without a ``finish_reason`` failed, and the message says how: a body with
no event at all (an HTML page, a JSON body, nothing) is described as what it is, events without a
single choice as an answer with no choices, the rest as cut off.

Not streamed: when the provider's ``stream`` setting is off, and for requests with tools to an
endpoint that refused streamed tool use: an error status that says so (llama.cpp's server in older
builds: 500 "Cannot use tools with stream"), or a 200 stream without a single byte, which is how
llama-cpp-python fails a streamed request inside the model call ("Automatic streaming tool choice
is not supported" for ``tool_choice: "auto"``, a prompt longer than its context: the reason is
only in its log). The request is not retried as it was but asked again at once with
``stream: false``, which answers or says why; when that answers a request with tools, the
endpoint is remembered for the process and a ``ProviderNotice`` says so once. A whole
``chat.completion`` is read as the one chunk that would carry it.

Tool arguments that are not one JSON object (malformed, cut off by ``max_tokens``) do not fail the
request: the call comes with empty arguments and an ``arguments_error``, and the session hands
that error to the model as the call's result.

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
becomes a function choice.

Stop reasons use the Anthropic vocabulary shared by every provider: ``end_turn``, ``tool_use``,
``max_tokens``, ``stop_sequence`` (anything else is passed as the server said it).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Unpack

import aiohttp

from mcp_export.errors import (
    ProviderError,
    ProviderProtocolError,
    ProviderServerError,
    ProviderTimeout,
    ProviderUnreachable,
)
from mcp_export.providers._endpoint import (
    EndpointOptions,
    HTTPEndpoint,
    endpoint_name,
    host_port,
    hosted_name,
)
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
from mcp_export.providers._retry import Failure, open_with_retries, status_failure
from mcp_export.providers._wire import AnswerTooLarge
from mcp_export.providers.base import (
    ChatMessage,
    Completion,
    ModelRequest,
    ProviderEvent,
    ProviderNotice,
    TextDelta,
    ToolCallRequest,
    ToolSchema,
    Usage,
)
from mcp_export.providers.kinds import OPENAI_URL
from mcp_export.redact import redact

__all__ = [
    "OPENAI_DEFAULT_URL",
    "OpenAIProvider",
    "forget_endpoints",
    "to_openai_messages",
    "to_openai_tools",
]

logger = logging.getLogger(__name__)

OPENAI_DEFAULT_URL = OPENAI_URL

_FINISH_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}
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
            assembly = _Assembly(tool_names=tool_names)
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
                    f"Completions answer: {_BASE_URL_HINT}"
                )
            raise failure from exc
        if isinstance(body, dict) and body.get("error"):
            error = body["error"]
            message = error.get("message") if isinstance(error, dict) else None
            raise ProviderServerError(
                f"{self._named(seen.server)} answered with an error: "
                f"{redact(str(message or error))}"
            )
        assembly = _Assembly(tool_names=tool_names)
        text = "".join(assembly.add(_as_chunk(body)))
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
            return ProviderTimeout(
                f"{named} stopped sending for {self._timeout:g} s in the middle of the answer"
            )
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
        if request.tools:
            arguments["tools"] = to_openai_tools(request.tools)
        parameters = request.parameters
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
        if request.tools:
            # Said even when it is the API's default: llama-cpp-python ignores the tools of a
            # streamed request without a choice, where "auto" gets a refusal that is handled.
            choice = parameters.get("tool_choice")
            arguments["tool_choice"] = _tool_choice("auto" if choice is None else choice)
        return arguments

    async def aclose(self) -> None:
        """Close the HTTP session and its connections."""
        if self._http is not None:
            http, self._http = self._http, None
            await http.aclose()

    # --- errors ---------------------------------------------------------------------------------

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
                    f"Completions stream: {_BASE_URL_HINT}"
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
            return Failure(
                ProviderTimeout(f"{self._named()} did not answer within {self._timeout:g} s")
            )
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


def _as_chunk(body: object) -> object:
    """A ``chat.completion`` body as the one stream chunk that would carry all of it: each
    choice's ``message`` as its ``delta``, each tool call with its ``index`` and its arguments as
    JSON text (some servers give them as an object)."""
    if not isinstance(body, dict) or not isinstance(body.get("choices"), list):
        return body
    choices: list[object] = []
    for choice in body["choices"]:
        if isinstance(choice, dict) and isinstance(choice.get("message"), dict):
            delta = dict(choice["message"])
            calls = delta.get("tool_calls")
            if isinstance(calls, list):
                delta["tool_calls"] = [_indexed_call(call, i) for i, call in enumerate(calls)]
            choice = {**choice, "delta": delta}
        choices.append(choice)
    return {**body, "choices": choices}


def _indexed_call(call: object, index: int) -> object:
    if not isinstance(call, dict):
        return call
    function = call.get("function")
    if isinstance(function, dict) and not isinstance(function.get("arguments"), str | None):
        function = {**function, "arguments": json.dumps(function["arguments"])}
    return {**call, "index": index, "function": function}


# --- mapping ------------------------------------------------------------------------------------


def to_openai_messages(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """Chat Completions ``messages`` for a conversation.

    A failed tool's result is prefixed ``Error: `` (the API has no error flag) so the model can
    tell a failure from a result. No value is null: an assistant message that only calls tools
    has ``content: ""`` (OpenAI's own answers carry null there, but llama-cpp-python fails with
    a 500 on a null; every server takes the empty string), and a call whose arguments could not
    be read is sent back with ``{}`` (the model's text was not JSON, and servers that render the
    arguments into their prompt parse them).
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            content = f"Error: {message.content}" if message.is_error else message.content
            out.append(
                {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": content}
            )
        elif message.role == "assistant" and message.tool_calls:
            out.append(
                {
                    "role": "assistant",
                    "content": message.content,
                    "tool_calls": [
                        {
                            "id": call.id,
                            "type": "function",
                            "function": {
                                "name": call.name,
                                "arguments": json.dumps(call.arguments, ensure_ascii=False),
                            },
                        }
                        for call in message.tool_calls
                    ],
                }
            )
        else:
            out.append({"role": message.role, "content": message.content})
    return out


def to_openai_tools(tools: Sequence[ToolSchema]) -> list[dict[str, Any]]:
    """Chat Completions ``tools`` (function tools)."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": dict(tool.input_schema),
            },
        }
        for tool in tools
    ]


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, str) and choice not in ("auto", "none", "required"):
        return {"type": "function", "function": {"name": choice}}
    return choice


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=lambda: list[str]())


@dataclass
class _Assembly:
    """The answer being assembled from stream chunks."""

    text: list[str] = field(default_factory=lambda: list[str]())
    calls: dict[int, _PartialCall] = field(default_factory=lambda: dict[int, _PartialCall]())
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    choices_seen: bool = False
    tool_names: frozenset[str] = frozenset()
    """The names of the tools the request offered."""

    def add(self, chunk: object) -> list[str]:
        """Take in a chunk (its decoded JSON); return its text pieces.

        Raises:
            ProviderProtocolError: the chunk is not shaped like a ``chat.completion.chunk``.
        """
        if not isinstance(chunk, dict):
            raise ProviderProtocolError(
                f"a stream chunk is not a JSON object: {redact(f'{chunk!r:.200}')}"
            )
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.usage = Usage(_count(usage, "prompt_tokens"), _count(usage, "completion_tokens"))
        pieces: list[str] = []
        for choice in _entries(chunk, "choices"):
            self.choices_seen = True
            delta = choice.get("delta")
            delta = delta if isinstance(delta, dict) else {}
            content = delta.get("content")
            if isinstance(content, str) and content:
                pieces.append(content)
            for position, entry in enumerate(_entries(delta, "tool_calls")):
                index = entry.get("index")
                call = self.calls.setdefault(
                    index if isinstance(index, int) else position, _PartialCall()
                )
                if isinstance(entry.get("id"), str) and entry["id"]:
                    call.id = entry["id"]
                function = entry.get("function")
                if isinstance(function, dict):
                    if isinstance(function.get("name"), str):
                        call.name = _joined_name(call.name, function["name"], self.tool_names)
                    if isinstance(function.get("arguments"), str):
                        call.arguments.append(function["arguments"])
            finish_reason = choice.get("finish_reason")
            if isinstance(finish_reason, str) and finish_reason:
                self.finish_reason = finish_reason
        self.text.extend(pieces)
        return pieces

    def completion(self, label: Callable[[], str], seen: StreamSeen, url: str) -> Completion:
        """The finished answer.

        Args:
            label: the endpoint's name in messages (made only for a message).
            seen: what the read of the stream saw (for the message of a stream without answer).
            url: the base URL, named in messages.

        Raises:
            ProviderProtocolError: the stream never finished (the message says what came
                instead).
        """
        if self.finish_reason is None:
            raise ProviderProtocolError(_unfinished(label(), seen, url, self.choices_seen))
        calls = tuple(
            _parsed_call(self.calls[index], index, self.finish_reason)
            for index in sorted(self.calls)
        )
        reason = _FINISH_REASONS.get(self.finish_reason, self.finish_reason)
        message = ChatMessage("assistant", "".join(self.text), tool_calls=calls)
        return Completion(message, self.usage, reason)


_BASE_URL_HINT = (
    "check the base URL — it should be the API root that /chat/completions is appended to, "
    "such as http://localhost:11434/v1 or https://api.openai.com/v1"
)


def _unfinished(label: str, seen: StreamSeen, url: str, choices_seen: bool) -> str:
    """Why a stream that ended without a ``finish_reason`` gave no answer, in words."""
    if seen.events == 0 and not seen.done:
        return (
            f"{url} answered 200 with {seen.body()}, not a Chat Completions stream: "
            f"{_BASE_URL_HINT}"
        )
    if not choices_seen:
        return (
            f"the stream from {label} ended with no choices ({seen.events} event"
            f"{'s' if seen.events != 1 else ''}, none with an answer): the server gave no "
            "answer; check the model name and the server's log"
        )
    if seen.done:
        return (
            f"the stream from {label} ended ([DONE]) without a finish_reason: the answer is "
            "incomplete"
        )
    return f"the stream from {label} was cut off before the answer finished (no finish_reason)"


def _entries(parent: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """The objects in ``parent[key]`` (a list); raises on any other shape."""
    value = parent.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise ProviderProtocolError(f"a stream chunk's {key!r} is not a list of objects")
    return value


def _joined_name(name: str, piece: str, offered: frozenset[str]) -> str:
    """The tool name so far after one more delta's ``function.name``.

    OpenAI sends the name once, in the call's first delta (a server may also send it in pieces,
    which join); llama-cpp-python repeats the whole name in every delta. So a piece equal to the
    name so far is that name again, not its second half, unless only the doubled name is a tool
    the request offered (a tool ``aa`` streamed as ``a`` + ``a``).
    """
    if not piece:
        return name
    if piece == name:
        doubled = name + piece
        return doubled if doubled in offered and name not in offered else name
    return name + piece


def _count(usage: dict[str, Any], key: str) -> int | None:
    """A token count of a ``usage`` object; None when the server did not give it (absent is not
    0: llama-cpp-python, for one, sends no usage in a stream)."""
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _parsed_call(call: _PartialCall, index: int, finish_reason: str) -> ToolCallRequest:
    """The call as the model sent it; arguments that are not one JSON object (malformed, cut off
    by ``max_tokens``) make a call with empty arguments and an ``arguments_error`` saying why,
    which the session hands back to the model instead of running the tool."""
    raw = "".join(call.arguments).strip()
    call_id, name = call.id or f"call_{index}", call.name or f"#{index}"
    hint = " (the answer hit max_tokens)" if finish_reason == "length" else ""
    try:
        arguments: object = json.loads(raw) if raw else {}
    except ValueError as exc:
        error = f"the arguments are not valid JSON{hint}: {exc}"
        return ToolCallRequest(call_id, name, {}, arguments_error=error)
    if not isinstance(arguments, dict):
        kind = _JSON_KINDS.get(type(arguments), "a JSON value")
        error = f"the arguments are {kind}, not a JSON object{hint}"
        return ToolCallRequest(call_id, name, {}, arguments_error=error)
    return ToolCallRequest(call_id, name, arguments)


_JSON_KINDS: dict[type, str] = {
    list: "a JSON array",
    str: "a JSON string",
    int: "a number",
    float: "a number",
    bool: "true or false",
    type(None): "null",
}
