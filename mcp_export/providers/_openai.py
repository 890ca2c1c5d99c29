"""The OpenAI-compatible provider: OpenAI, Ollama, vLLM, LM Studio, LiteLLM, OpenRouter.

Streams Chat Completions through the official ``openai`` SDK, imported on first use (a served
agent that never calls a model does not pay for it). Text arrives as ``delta.content`` pieces;
tool calls as ``delta.tool_calls`` entries keyed by ``index`` whose arguments JSON comes in pieces,
assembled here and parsed once the stream finished. ``stream_options.include_usage`` asks for the
usage chunk. A stream that ends without a ``finish_reason`` was cut off.

Speed (bench/runtime_overhead.py): the SDK's client runs on its aiohttp transport (the SDK's own
``DefaultAioHttpClient``; its httpx2 pool re-checks every pooled connection for each new request,
which costs more than the request once dozens run at once), and the request goes through the
client's ``post`` with the body this module already built as JSON-ready dicts, the stream's chunks
coming back as the decoded JSON: ``chat.completions.create`` would walk the messages again to
transform them and build a pydantic object per chunk, together ~1 ms a request. Authentication,
base URL, timeouts, the SSE decoder and the typed errors are still the SDK's.

Parameters: ``max_tokens`` is sent as ``max_tokens`` to any base URL (what Ollama, vLLM and older
servers understand) and as ``max_completion_tokens`` to OpenAI itself (its reasoning models refuse
``max_tokens``). ``tool_choice`` is sent only with tools; a tool name becomes a function choice.

Stop reasons use the Anthropic vocabulary shared by every provider: ``end_turn``, ``tool_use``,
``max_tokens``, ``stop_sequence`` (anything else is passed as the server said it).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._errors import (
    ProviderProtocolError,
    ProviderServerError,
    ProviderTimeout,
    ProviderUnreachable,
)
from ._base import (
    ChatMessage,
    Completion,
    ModelRequest,
    ProviderEvent,
    TextDelta,
    ToolCallRequest,
    ToolSchema,
    Usage,
)
from ._retry import Failure, RetryPolicy, close_quietly, open_with_retries, status_failure

if TYPE_CHECKING:
    from openai import AsyncOpenAI, AsyncStream

__all__ = ["OPENAI_DEFAULT_URL", "OpenAIProvider", "to_openai_messages", "to_openai_tools"]

logger = logging.getLogger(__name__)

OPENAI_DEFAULT_URL = "https://api.openai.com/v1"

_FINISH_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}
_PASSED_AS_IS = ("temperature", "top_p", "seed", "presence_penalty", "frequency_penalty")
# Keyless local servers still need some bearer token in the SDK.
_NO_KEY = "no-key"


class OpenAIProvider:
    """A ``Provider`` for anything that speaks the Chat Completions API.

    Args:
        api_key: the key; None for keyless local servers (Ollama, LM Studio…).
        base_url: the endpoint (``http://localhost:11434/v1``); None for OpenAI itself.
        name: the provider id used in messages (``openai``, ``ollama``, ``openrouter``…).
        max_retries: retries on 429, 5xx and refused connections before giving up.
        timeout: seconds to wait for the response to start, and between stream chunks.
        retry_delay: the first backoff in seconds (doubles per retry); a ``retry-after`` header
            wins.
        key_name: the setting that holds the key, named in the 401 message.
    """

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None = None,
        *,
        name: str = "openai",
        max_retries: int = 2,
        timeout: float = 60.0,
        retry_delay: float = 0.5,
        key_name: str = "OPENAI_API_KEY",
    ) -> None:
        self._api_key = api_key
        self._base_url = base_url.rstrip("/") if base_url else None
        self._name = name
        self._timeout = timeout
        self._policy = RetryPolicy(max_retries=max_retries, initial_delay=retry_delay)
        self._key_name = key_name
        self._client: AsyncOpenAI | None = None

    @property
    def name(self) -> str:
        """The provider id (``openai``, ``ollama``…)."""
        return self._name

    @property
    def base_url(self) -> str:
        """The endpoint requests go to."""
        return self._base_url or OPENAI_DEFAULT_URL

    def _client_now(self) -> AsyncOpenAI:
        if self._client is None:
            from openai import AsyncOpenAI, DefaultAioHttpClient

            self._client = AsyncOpenAI(
                api_key=self._api_key or _NO_KEY,
                base_url=self.base_url,
                max_retries=0,  # our own bounded loop: see _retry.py
                timeout=self._timeout,
                http_client=DefaultAioHttpClient(timeout=self._timeout),
            )
        return self._client

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        """Stream one Chat Completions request: text deltas, then one ``Completion``.

        Raises:
            ProviderUnreachable: nothing answers at the base URL (after retries).
            ProviderAuthError: the key was refused (401/403).
            ProviderRateLimited: still 429 after retries.
            ProviderServerError: still 5xx after retries, or an error event mid-stream.
            ProviderTimeout: no answer within the timeout.
            ProviderProtocolError: a malformed or cut-off stream, or bad tool arguments.
            ProviderError: any other refusal (unknown model, bad request…).
        """
        from openai import AsyncStream

        client = self._client_now()
        arguments = self.request_arguments(request)

        async def attempt() -> AsyncStream[object]:
            # ``cast_to=object``: each chunk comes back as its decoded JSON (see the module doc).
            opened: AsyncStream[object] = await client.post(
                "/chat/completions",
                body=arguments,
                cast_to=object,
                stream=True,
                stream_cls=AsyncStream[object],
            )
            return opened

        stream = await open_with_retries(
            attempt, lambda exc: self._translate(exc, request.model), self._policy
        )
        try:
            assembly = _Assembly()
            async for chunk in self._chunks(stream):
                for text in assembly.add(chunk):
                    yield TextDelta(text)
            yield assembly.completion(self._label)
        finally:
            await close_quietly(stream.close)

    async def _chunks(self, stream: AsyncStream[object]) -> AsyncIterator[object]:
        import openai

        iterator = stream.__aiter__()
        while True:
            try:
                chunk = await iterator.__anext__()
            except StopAsyncIteration:
                return
            except openai.APITimeoutError as exc:
                raise ProviderTimeout(
                    f"{self._label} stopped sending for {self._timeout:g} s in the middle of "
                    f"the answer ({self.base_url})"
                ) from exc
            except openai.APIConnectionError as exc:
                raise ProviderProtocolError(
                    f"the stream from {self.base_url} broke off before the answer was complete"
                ) from exc
            except openai.APIError as exc:  # an error event inside the stream
                raise ProviderServerError(
                    f"{self._label} reported an error in the middle of the answer: {exc.message}"
                ) from exc
            except ValueError as exc:  # json.JSONDecodeError from the SSE decoder
                raise ProviderProtocolError(
                    f"{self._label} sent a stream event that is not valid JSON ({exc}); check "
                    f"that {self.base_url} speaks the Chat Completions API"
                ) from exc
            yield chunk

    def request_arguments(self, request: ModelRequest) -> dict[str, Any]:
        """The request body (``chat.completions.create``'s keyword arguments) for ``request``."""
        arguments: dict[str, Any] = {
            "model": request.model,
            "messages": to_openai_messages(request.messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
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
        choice = parameters.get("tool_choice")
        if request.tools and choice is not None:
            arguments["tool_choice"] = _tool_choice(choice)
        return arguments

    async def aclose(self) -> None:
        """Close the SDK client and its connections."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    # --- errors ---------------------------------------------------------------------------------

    @property
    def _label(self) -> str:
        return {"openai": "OpenAI", "ollama": "Ollama"}.get(self._name, self._name)

    def _unreachable(self) -> str:
        if self._name == "ollama":
            hint = "is Ollama running?"
        elif self._base_url is None:
            hint = "check the network connection"
        else:
            hint = "is the server running and the base URL right?"
        return f"nothing answers at {self.base_url} — {hint}"

    def _translate(self, exc: Exception, model: str) -> Failure | None:
        import openai

        if isinstance(exc, openai.APITimeoutError) and not _refused(exc):
            return Failure(
                ProviderTimeout(
                    f"{self._label} did not answer within {self._timeout:g} s ({self.base_url})"
                )
            )
        if isinstance(exc, openai.APIConnectionError):
            return Failure(ProviderUnreachable(self._unreachable()), retryable=True)
        if not isinstance(exc, openai.APIStatusError):
            return None
        return status_failure(
            self._label,
            exc.status_code,
            _error_message(exc),
            exc.response.headers,
            key_name=self._key_name,
            model=model,
            url=self.base_url,
        )


def _refused(exc: BaseException) -> bool:
    """Whether what the SDK reports as a timeout was a refused or dropped connection.

    This SDK's aiohttp transport maps every ``aiohttp.ClientConnectionError`` (connection refused,
    server gone before answering) to a connect *timeout*; the aiohttp error in the cause chain
    tells them apart.
    """
    import aiohttp

    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, aiohttp.ClientError):
            return not isinstance(cause, aiohttp.ServerTimeoutError)
        cause = cause.__cause__ or cause.__context__
    return False


def _error_message(exc: Any) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
    return str(exc.message)


# --- mapping ------------------------------------------------------------------------------------


def to_openai_messages(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """Chat Completions ``messages`` for a conversation.

    A failed tool's result is prefixed ``Error: `` (the API has no error flag) so the model can
    tell a failure from a result.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            content = f"Error: {message.content}" if message.is_error else message.content
            out.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": content})
        elif message.role == "assistant" and message.tool_calls:
            out.append(
                {
                    "role": "assistant",
                    "content": message.content or None,
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

    def add(self, chunk: object) -> list[str]:
        """Take in a chunk (its decoded JSON); return its text pieces.

        Raises:
            ProviderProtocolError: the chunk is not shaped like a ``chat.completion.chunk``.
        """
        if not isinstance(chunk, dict):
            raise ProviderProtocolError(f"a stream chunk is not a JSON object: {chunk!r:.200}")
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.usage = Usage(_count(usage, "prompt_tokens"), _count(usage, "completion_tokens"))
        pieces: list[str] = []
        for choice in _entries(chunk, "choices"):
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
                        call.name += function["name"]
                    if isinstance(function.get("arguments"), str):
                        call.arguments.append(function["arguments"])
            finish_reason = choice.get("finish_reason")
            if isinstance(finish_reason, str) and finish_reason:
                self.finish_reason = finish_reason
        self.text.extend(pieces)
        return pieces

    def completion(self, label: str) -> Completion:
        """The finished answer.

        Raises:
            ProviderProtocolError: the stream never finished, or tool arguments are not a JSON
                object.
        """
        if self.finish_reason is None:
            raise ProviderProtocolError(
                f"the {label} stream was cut off before the answer finished (no finish_reason)"
            )
        calls = tuple(
            _parsed_call(self.calls[index], index, self.finish_reason)
            for index in sorted(self.calls)
        )
        reason = _FINISH_REASONS.get(self.finish_reason, self.finish_reason)
        message = ChatMessage("assistant", "".join(self.text), tool_calls=calls)
        return Completion(message, self.usage, reason)


def _entries(parent: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """The objects in ``parent[key]`` (a list); raises on any other shape."""
    value = parent.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise ProviderProtocolError(f"a stream chunk's {key!r} is not a list of objects")
    return value


def _count(usage: dict[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) else 0


def _parsed_call(call: _PartialCall, index: int, finish_reason: str) -> ToolCallRequest:
    raw = "".join(call.arguments).strip()
    name = call.name or f"#{index}"
    try:
        arguments = json.loads(raw) if raw else {}
    except ValueError as exc:
        hint = " (the answer hit max_tokens)" if finish_reason == "length" else ""
        raise ProviderProtocolError(
            f"the model sent malformed arguments for tool {name!r}{hint}: {exc}"
        ) from exc
    if not isinstance(arguments, dict):
        raise ProviderProtocolError(
            f"the model sent arguments for tool {name!r} that are not a JSON object: {raw[:200]}"
        )
    return ToolCallRequest(call.id or f"call_{index}", name, arguments)
