"""What the providers that call a model over HTTP share: the endpoint, its key and the retries,
its request slots, how long it is waited for, how messages name it, and the protocol log they
may record into.

How long: an agent's provider (``factory.provider_for_agent``) waits for the answer to start,
and between the pieces of a streamed one, at most the agent's ``settings.timeoutSeconds``: the
limit of the whole run is also the limit of each wait in it, so a slow local model gets all the
time its author gave the run, and a model that never starts is given up at that limit. A
timeout's message names the limit, the setting and the endpoint."""

from __future__ import annotations

import asyncio
import contextlib
import re
import urllib.parse
import weakref
from collections.abc import AsyncIterator
from typing import ClassVar, TypedDict

from mcp_export.errors import ProviderTimeout
from mcp_export.protocol_log import ProtocolLog
from mcp_export.providers._endpoint_lock import LOCK_WAIT, one_process_at_a_time
from mcp_export.providers._retry import RetryPolicy
from mcp_export.providers._server_identity import LLAMA_CPP_PYTHON, host_port, identify
from mcp_export.redact import redact, remember_secret
from schema_types.agent import DEFAULT_TIMEOUT_SECONDS, TIMEOUT_SETTING

__all__ = [
    "EndpointOptions",
    "HTTPEndpoint",
    "endpoint_name",
    "host_port",
    "hosted_name",
    "no_answer_in_time",
    "stalled_answer",
]


class EndpointOptions(TypedDict, total=False):
    """``HTTPEndpoint``'s keyword arguments (see there), for a provider that takes them as they
    are and adds its own: ``**options: Unpack[EndpointOptions]``."""

    name: str | None
    max_retries: int
    timeout: float
    retry_delay: float
    key_name: str | None
    stream: bool
    max_concurrency: int | None
    learn_capacity: bool


class HTTPEndpoint:
    """The settings of one model endpoint; the OpenAI and Anthropic providers build on it.

    Args:
        api_key: the key (redacted from every sink from now on); None when there is none.
        base_url: the endpoint; None for the provider's own (``DEFAULT_URL``).
        name: the provider id used in messages; None for ``DEFAULT_NAME``.
        max_retries: retries on 429, 5xx and refused connections before giving up.
        timeout: seconds to wait for the response to start, and between stream chunks: the
            agent's ``settings.timeoutSeconds`` (its default when not given).
        retry_delay: the first backoff in seconds (doubles per retry); a ``retry-after`` header
            wins.
        key_name: the setting that holds the key, named in the 401 message; None for
            ``DEFAULT_KEY_NAME``.
        stream: whether answers are streamed (``providers.<id>.stream``); False asks for whole
            answers, for servers whose streaming is broken.
        max_concurrency: at most this many requests in flight to this endpoint (base URL) in
            this process, the rest wait in line (``providers.<id>.maxConcurrentRequests``);
            None for no limit.
        learn_capacity: ask the server what it is before its first request
            (``providers._server_identity``) and take its capacity instead of
            ``max_concurrency``: llama-server's slots; one request at a time for
            llama-cpp-python, then across processes too (``providers._endpoint_lock``). For
            OpenAI-compatible endpoints whose ``maxConcurrentRequests`` is not set.
    """

    DEFAULT_URL: ClassVar[str]
    DEFAULT_NAME: ClassVar[str]
    DEFAULT_KEY_NAME: ClassVar[str]
    protocol_log: ProtocolLog | None = None
    """Where the requests and responses are recorded (``mcp_export.protocol_log``, set with its
    ``attach``); None, the default, records nothing."""

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None = None,
        *,
        name: str | None = None,
        max_retries: int = 2,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        retry_delay: float = 0.5,
        key_name: str | None = None,
        stream: bool = True,
        max_concurrency: int | None = None,
        learn_capacity: bool = False,
    ) -> None:
        remember_secret(api_key)
        self._api_key = api_key
        self._base_url = base_url.rstrip("/") if base_url else None
        self._name = name if name is not None else self.DEFAULT_NAME
        self._timeout = timeout
        self._policy = RetryPolicy(max_retries=max_retries, initial_delay=retry_delay)
        self._key_name = key_name if key_name is not None else self.DEFAULT_KEY_NAME
        self._stream = stream
        self._max_concurrency = max_concurrency
        self._learn_capacity = learn_capacity

    @property
    def name(self) -> str:
        """The provider id (``openai``, ``ollama``, ``anthropic``…)."""
        return self._name

    @property
    def base_url(self) -> str:
        """The endpoint requests go to."""
        return self._base_url or self.DEFAULT_URL

    @property
    def endpoint(self) -> str:
        """The endpoint as messages name it (``endpoint_name``): ``OpenAI``, ``127.0.0.1:8080``."""
        return endpoint_name(self.base_url)

    @contextlib.asynccontextmanager
    async def request_slot(self) -> AsyncIterator[None]:
        """Hold one of the endpoint's request slots for a whole request, from sending it to the
        end of its answer; waits in line while all are taken. Free when there is no limit.

        With ``learn_capacity`` the server is asked first what it is (once per process): a
        llama-server gets as many requests at once as it has slots, a llama-cpp-python one, and
        that one waits for every other process's request to it as well (``EndpointBusy`` when
        one held it for ``LOCK_WAIT`` seconds)."""
        limit = self._max_concurrency
        across_processes = False
        if self._learn_capacity:
            identity = await identify(self.base_url, self._api_key)
            if identity.slots is not None:
                limit = identity.slots
            across_processes = identity.kind == LLAMA_CPP_PYTHON
        if limit is None:
            yield
            return
        async with _slots(self.base_url, limit):
            if not across_processes:
                yield
                return
            named = endpoint_name(self.base_url, kind=LLAMA_CPP_PYTHON)
            async with one_process_at_a_time(self.base_url, named, wait=LOCK_WAIT):
                yield


_SLOTS: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[str, int], asyncio.Semaphore]
] = weakref.WeakKeyDictionary()


def _slots(url: str, limit: int) -> asyncio.Semaphore:
    """The one semaphore of ``url`` with ``limit`` in the running loop, shared by every
    provider of that endpoint (sessions, served calls)."""
    loop = asyncio.get_running_loop()
    per_loop = _SLOTS.setdefault(loop, {})
    semaphore = per_loop.get((url, limit))
    if semaphore is None:
        semaphore = per_loop[(url, limit)] = asyncio.Semaphore(limit)
    return semaphore


_HOSTED = (
    ("api.openai.com", "OpenAI"),
    ("openrouter.ai", "OpenRouter"),
    ("openai.azure.com", "Azure OpenAI"),
    ("api.anthropic.com", "Anthropic"),
)
_SERVER_TEXT = 60
_UNPRINTABLE = re.compile(r"[^\x20-\x7e]+")


def hosted_name(url: str) -> str | None:
    """The service's name for a known hosted API (``OpenAI`` for ``https://api.openai.com/v1``,
    ``Azure OpenAI`` for any ``*.openai.azure.com``), else None."""
    host = (urllib.parse.urlsplit(url).hostname or "").lower()
    for domain, name in _HOSTED:
        if host == domain or host.endswith("." + domain):
            return name
    return None


def no_answer_in_time(who: str, seconds: float, where: str = "") -> ProviderTimeout:
    """The time-out of a model that did not start answering within ``seconds`` (the agent's
    time limit); ``where`` names the server when ``who`` does not."""
    return ProviderTimeout(f"{who} did not answer within {seconds:g} s ({_limit(where)})")


def stalled_answer(who: str, seconds: float, where: str = "") -> ProviderTimeout:
    """The time-out of an answer that stopped coming for ``seconds`` midway."""
    return ProviderTimeout(
        f"{who} stopped sending for {seconds:g} s in the middle of the answer ({_limit(where)})"
    )


def _limit(where: str) -> str:
    return f"{where}; {TIMEOUT_SETTING}" if where else TIMEOUT_SETTING


def endpoint_name(url: str, *, kind: str | None = None, server: str | None = None) -> str:
    """How messages name an endpoint: a known hosted API by its name, any other by where it is
    (``host:port``), with what the server says it is when it does: ``127.0.0.1:8080
    (llama-cpp-python)`` from its model list, else ``127.0.0.1:8080 (server: uvicorn)`` from
    its ``Server`` header.

    Args:
        url: the base URL.
        kind: the kind of server its model list showed (``llama-cpp-python``, ``vLLM``…).
        server: its ``Server`` response header, when a response had one.
    """
    hosted = hosted_name(url)
    if hosted is not None:
        return hosted
    where = host_port(url)
    said = kind
    if said is None and server:
        text = _UNPRINTABLE.sub(" ", server).strip()[:_SERVER_TEXT]
        said = f"server: {redact(text)}" if text else None
    return f"{where} ({said})" if said else where
