"""What the Model page knows about providers, and the two requests it makes to an endpoint.

- :data:`PROVIDERS`: the provider ids the page offers, with the ``providers.<id>`` keys that hold
  their base URL and API key (the names ``mcp_export.providers.provider_for_agent`` reads, in its
  order) and their default endpoint.
- :func:`list_models`: the model ids an endpoint offers (``GET {base}/models``; OpenAI-compatible
  servers and Ollama answer it, through the OpenAI provider's own HTTP requests, and so does
  Anthropic's API, through its SDK).
- :func:`test_connection`: a one-word prompt through the provider the agent's settings call for
  (the same provider code a served call runs), timed.

No Qt here: the page runs these coroutines on the qasync loop. Failures are :class:`EndpointError`
(or the runtime's ``ExportError``) with a message that says what to fix.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass

from mcp_export.providers.kinds import PROVIDER_KINDS, azure_endpoint
from schema_types.agent import TIMEOUT_SETTING, Agent
from schema_types.agent_checks import parse_max_concurrency
from schema_types.errors import SecretError

__all__ = [
    "KEYRING_SERVICE",
    "PROVIDERS",
    "ConnectionReport",
    "EndpointError",
    "ProviderInfo",
    "agent_slug",
    "endpoint_url",
    "keyring_entry",
    "list_models",
    "provider_info",
    "setting_of",
    "test_connection",
]

KEYRING_SERVICE = "metaagent-studio"
TEST_PROMPT = "Reply with one word: ready"


@dataclass(frozen=True)
class ProviderInfo:
    """One provider the page offers.

    Attributes:
        id: the part of ``settings.model`` before the colon (``openai``, ``ollama``…).
        label: what the person sees.
        key_names / url_names: the ``providers.<id>`` keys read for the API key and the base URL,
            first match wins; edits write the one present, else the first.
        default_url: the endpoint used when no base URL is set (None: must be set, or the
            vendor's own for OpenAI).
        key_required: whether requests fail without a key.
        sdk: ``openai`` (Chat Completions), ``anthropic`` or ``sampling`` (no endpoint).
        key_header / version_names: as in ``mcp_export.providers.kinds.ProviderKind`` (Azure
            OpenAI's ``api-key`` header and ``api-version``).
    """

    id: str
    label: str
    key_names: tuple[str, ...] = ()
    url_names: tuple[str, ...] = ()
    default_url: str | None = None
    key_required: bool = False
    sdk: str = "openai"
    key_header: str = "Authorization"
    version_names: tuple[str, ...] = ()


def _info(pid: str, label: str) -> ProviderInfo:
    """A provider's row: its label here, everything else from the runtime's kinds table."""
    if pid == "sampling":
        return ProviderInfo(pid, label, sdk="sampling")
    kind = PROVIDER_KINDS[pid]
    return ProviderInfo(
        pid,
        label,
        kind.key_names,
        kind.url_names,
        kind.default_url or kind.service_url,
        kind.key_required,
        kind.sdk,
        kind.key_header,
        kind.version_names,
    )


PROVIDERS: tuple[ProviderInfo, ...] = (
    _info("openai", "OpenAI-compatible"),
    _info("ollama", "Ollama"),
    _info("anthropic", "Anthropic"),
    _info("sampling", "MCP sampling (the client's model)"),
    # Offered only when an agent file already names them (all speak Chat Completions).
    _info("lmstudio", "OpenAI-compatible (LM Studio)"),
    _info("openrouter", "OpenAI-compatible (OpenRouter)"),
    _info("vllm", "OpenAI-compatible (vLLM)"),
    _info("litellm", "OpenAI-compatible (LiteLLM)"),
    _info("llamacpp", "OpenAI-compatible (llama.cpp)"),
    _info("azure", "Azure OpenAI"),
)
MAIN_PROVIDERS = PROVIDERS[:4]


def provider_info(provider_id: str | None) -> ProviderInfo:
    """The provider ``provider_id`` names (``openai`` for None or an unknown id)."""
    return next((p for p in PROVIDERS if p.id == provider_id), PROVIDERS[0])


def setting_of(agent: Agent, provider_id: str, names: tuple[str, ...]) -> tuple[str | None, str]:
    """The first of ``names`` set in ``providers.<provider_id>``: ``(value, name)``.

    ``(None, names[0])`` when none is set (the name an edit should write).
    """
    values = agent.providers.get(provider_id, {})
    for name in names:
        if values.get(name):
            return values[name], name
    return None, names[0] if names else ""


def agent_slug(agent: Agent) -> str:
    """The agent's name as a keyring-safe word: ``Travel Desk`` → ``travel-desk``."""
    slug = re.sub(r"[^a-z0-9]+", "-", agent.metadata.name.lower()).strip("-")
    return slug or "agent"


def keyring_entry(agent: Agent, provider_id: str) -> str:
    """The keyring entry name of the agent's key for ``provider_id``: ``travel-desk-openai``."""
    return f"{agent_slug(agent)}-{provider_id}"


class EndpointError(Exception):
    """A request to the model endpoint failed; the message says why and what to check."""


@dataclass(frozen=True)
class _Endpoint:
    info: ProviderInfo
    base_url: str
    api_key: str | None
    api_version: str | None = None
    max_concurrency: int | None = None


def _endpoint(agent: Agent, env: Mapping[str, str] | None = None) -> _Endpoint:
    """The resolved base URL and key of the agent's provider (references resolved)."""
    from schema_types.secrets import resolve_secret

    environment = os.environ if env is None else env
    info = provider_info(agent.settings.provider_id)
    if info.sdk == "sampling":
        raise EndpointError(
            "MCP sampling has no endpoint to ask: the calling client's model answers"
        )
    resolved: dict[str, str | None] = {}
    for kind, names in (
        ("key", info.key_names),
        ("url", info.url_names),
        ("version", info.version_names),
    ):
        if not names:
            resolved[kind] = None
            continue
        raw, name = setting_of(agent, info.id, names)
        try:
            resolved[kind] = resolve_secret(raw, key_name=name) if raw else environment.get(name)
        except SecretError as exc:
            raise EndpointError(str(exc)) from exc
    base_url = resolved["url"] or info.default_url
    if base_url is None:
        raise EndpointError(f"{info.label} needs a base URL: enter it in Base URL")
    version = resolved["version"] or None
    if info.version_names:
        base_url, version = azure_endpoint(base_url, version)
    known = PROVIDER_KINDS.get(info.id)
    limit = known.max_concurrency if known is not None else None
    written = agent.providers.get(info.id, {}).get("maxConcurrentRequests")
    if written:
        try:
            limit = parse_max_concurrency(written)
        except ValueError as exc:
            raise EndpointError(f"providers.{info.id}.maxConcurrentRequests: {exc}") from exc
    return _Endpoint(info, base_url.rstrip("/"), resolved["key"] or None, version, limit)


def endpoint_url(agent: Agent) -> str:
    """The base URL the agent's provider is asked at (its setting, else the provider's own).

    Raises:
        EndpointError: as :func:`list_models` would before asking, including for a provider
            that needs a key the agent does not have (set in the file or the environment).
    """
    endpoint = _endpoint(agent)
    if endpoint.info.key_required and not endpoint.api_key:
        name = endpoint.info.key_names[0] if endpoint.info.key_names else "its API key"
        raise EndpointError(f"{endpoint.info.label} needs a key ({name})")
    return endpoint.base_url


async def list_models(agent: Agent, *, timeout: float = 15.0) -> list[str]:  # noqa: ASYNC109
    """The model ids the agent's endpoint lists, sorted.

    Args:
        agent: its ``settings.model`` names the provider, ``providers`` the URL and key.
        timeout: seconds to wait for the answer.

    Raises:
        EndpointError: no endpoint (sampling, no base URL), an unresolvable key reference, or the
            request failed (unreachable, refused key, no model list there).
    """
    endpoint = _endpoint(agent)
    if endpoint.info.sdk == "anthropic":
        return await _anthropic_models(endpoint, timeout)
    return await _openai_models(endpoint, timeout)


async def _openai_models(endpoint: _Endpoint, timeout: float) -> list[str]:  # noqa: ASYNC109
    import aiohttp

    from mcp_export.providers._openai_http import StatusError
    from mcp_export.providers.openai_provider import OpenAIProvider

    # The provider's own request, in one of the endpoint's request slots, so that on a server
    # that serves one request at a time the list waits for a chat's answer instead of cutting it.
    provider = OpenAIProvider(
        endpoint.api_key,
        endpoint.base_url,
        timeout=timeout,
        max_concurrency=endpoint.max_concurrency,
        key_header=endpoint.info.key_header,
        api_version=endpoint.api_version,
    )
    try:
        entries = await provider.list_models(timeout=timeout)
    except TimeoutError as exc:
        raise EndpointError(f"{endpoint.base_url} did not answer within {timeout:g} s") from exc
    except StatusError as exc:
        raise EndpointError(_status_message(endpoint, exc.code, exc.detail)) from exc
    except (aiohttp.ClientError, ConnectionError) as exc:
        raise EndpointError(_unreachable(endpoint)) from exc
    except ValueError as exc:  # not JSON, not a model list
        raise EndpointError(
            f"{endpoint.base_url} has no model list ({exc}); type the model name instead"
        ) from exc
    finally:
        await provider.aclose()
    return sorted(str(entry["id"]) for entry in entries if isinstance(entry.get("id"), str))


async def _anthropic_models(endpoint: _Endpoint, timeout: float) -> list[str]:  # noqa: ASYNC109
    import anthropic

    client = anthropic.AsyncAnthropic(
        api_key=endpoint.api_key or "no-key",
        base_url=endpoint.base_url,
        max_retries=0,
        timeout=timeout,
    )
    try:
        return sorted([model.id async for model in client.models.list()])
    except anthropic.APITimeoutError as exc:
        raise EndpointError(f"{endpoint.base_url} did not answer within {timeout:g} s") from exc
    except anthropic.APIConnectionError as exc:
        raise EndpointError(_unreachable(endpoint)) from exc
    except anthropic.APIStatusError as exc:
        raise EndpointError(_status_message(endpoint, exc.status_code, exc.message)) from exc
    finally:
        await client.close()


def _unreachable(endpoint: _Endpoint) -> str:
    hint = "is Ollama running?" if endpoint.info.id == "ollama" else "check the base URL"
    return f"nothing answers at {endpoint.base_url} — {hint}"


def _status_message(endpoint: _Endpoint, status: int, message: str) -> str:
    if status in (401, 403):
        key = endpoint.info.key_names[0] if endpoint.info.key_names else "API key"
        return f"{endpoint.base_url} refused the key ({status}): check {key}"
    if status == 404:
        return f"{endpoint.base_url} has no model list ({status}); type the model name instead"
    return f"{endpoint.base_url} answered {status}: {message}"


@dataclass(frozen=True)
class ConnectionReport:
    """A successful connection test.

    Attributes:
        model: the model that answered.
        first_event_ms: milliseconds until the first piece of the answer arrived.
        total_ms: milliseconds until the answer was complete.
        reply: the answer's text.
    """

    model: str
    first_event_ms: float
    total_ms: float
    reply: str

    def summary(self) -> str:
        """One line for the page: latency and what the model said."""
        reply = " ".join(self.reply.split())
        if len(reply) > 60:
            reply = reply[:59] + "…"
        return (
            f"Connected: {self.model} answered in {self.total_ms:.0f} ms "
            f"(first token after {self.first_event_ms:.0f} ms): “{reply}”"
        )


async def test_connection(agent: Agent) -> ConnectionReport:
    """Send a one-word prompt through the agent's provider and time the answer.

    Uses the agent's model parameters, so a parameter the provider refuses shows up here too,
    and its time limit (``settings.timeoutSeconds``), which a served call's model has too.

    Raises:
        ExportError: (from ``mcp_export``) the provider cannot be built (no model, missing key,
            sampling) or the request failed; its message is the exact reason
            (``ProviderTimeout`` when no complete answer came within the time limit).
    """
    import asyncio

    from mcp_export.errors import ProviderTimeout
    from mcp_export.providers.base import ChatMessage, Completion, ModelRequest, NamedEndpoint
    from mcp_export.providers.factory import provider_for_agent
    from mcp_export.providers.parameters import resolve_parameters

    provider, model = provider_for_agent(agent)
    request = ModelRequest(
        model=model,
        messages=[ChatMessage("user", TEST_PROMPT)],
        parameters=resolve_parameters(agent.settings),
    )
    started = time.perf_counter()
    first: float | None = None
    reply = ""
    limit = agent.settings.timeout_seconds
    try:
        async with asyncio.timeout(limit):
            async for event in provider.stream(request):
                if first is None:
                    first = time.perf_counter()
                if isinstance(event, Completion):
                    reply = event.message.content
    except TimeoutError as exc:
        where = provider.endpoint if isinstance(provider, NamedEndpoint) else model
        raise ProviderTimeout(
            f"no complete answer from {where} within {limit:g} s ({TIMEOUT_SETTING})"
        ) from exc
    finally:
        await provider.aclose()
    done = time.perf_counter()
    return ConnectionReport(
        model=model,
        first_event_ms=((first or done) - started) * 1000,
        total_ms=(done - started) * 1000,
        reply=reply,
    )
