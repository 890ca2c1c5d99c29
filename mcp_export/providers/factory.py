"""Which provider an agent uses, built from ``settings.model`` and the agent's ``providers``.

``settings.model`` is ``provider:model``. Known providers::

    openai:gpt-4.1-mini          OpenAI               key OPENAI_API_KEY (required)
    anthropic:claude-sonnet-4-5  Anthropic            key ANTHROPIC_API_KEY (required)
    ollama:llama3.2              http://localhost:11434/v1, no key
    lmstudio:qwen2.5-7b          http://localhost:1234/v1, no key
    openrouter:openai/gpt-4o     https://openrouter.ai/api/v1, key OPENROUTER_API_KEY (required)
    llamacpp:qwen2.5-1.5b        http://localhost:8080/v1, no key, one request at a time
    vllm:… / litellm:…           OpenAI-compatible; needs a base URL (VLLM_BASE_URL…), key optional
    azure:DEPLOYMENT             Azure OpenAI: AZURE_OPENAI_ENDPOINT (the resource, its /openai/v1,
                                 or a deployment URL), key AZURE_OPENAI_API_KEY (required, sent
                                 as api-key), AZURE_OPENAI_API_VERSION
    sampling                     the calling MCP client's model (``SamplingRequired``)

Each setting is looked up in ``agent.providers[provider id]`` by its names in order (for
OpenAI-compatible servers the provider's own name, then the ``OPENAI_…`` one, so
``providers: {ollama: {OPENAI_BASE_URL: …}}`` works); a value there may be a reference
(``env://NAME``, ``keyring://service/name``). When the agent says nothing, the process environment
variable of the provider's own name is used (``OPENAI_API_KEY`` for openai, ``OLLAMA_BASE_URL`` for
ollama — never another provider's key, which would send it to the wrong server).

Two settings in ``providers.<id>`` say how the endpoint is used, with defaults from the provider
kind: ``stream`` (``"true"``/``"false"``: whether answers are streamed) and
``maxConcurrentRequests`` (a positive whole number, or ``"unlimited"``: how many requests may be
in flight to the endpoint at once; the rest wait in line). Both providers take them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from mcp_export.errors import ConfigurationError, CredentialsMissing
from mcp_export.providers._endpoint import EndpointOptions, hosted_name
from mcp_export.providers.anthropic_provider import AnthropicProvider
from mcp_export.providers.base import Provider
from mcp_export.providers.kinds import (
    KNOWN_PROVIDERS,
    PROVIDER_KINDS,
    ProviderKind,
    azure_endpoint,
)
from mcp_export.providers.openai_provider import OpenAIProvider
from mcp_export.providers.sampling import Sampler, SamplingProvider
from mcp_export.redact import remember_secret
from schema_types.agent import Agent
from schema_types.agent_checks import parse_max_concurrency, parse_stream
from schema_types.errors import SecretError
from schema_types.secrets import ENV_SCHEME, resolve_secret

__all__ = [
    "SamplingRequired",
    "credentials_available",
    "provider_for_agent",
]


class SamplingRequired(ConfigurationError):
    """The agent's model is ``sampling``: only the calling MCP client can answer.

    The served server catches this and plugs a ``SamplingProvider`` in; elsewhere (the studio's
    chat, the CLI) the message says what to configure instead.
    """


_EXAMPLE = "openai:gpt-4.1-mini"


@dataclass(frozen=True)
class _Resolved:
    provider_id: str
    model: str
    kind: ProviderKind
    api_key: str | None
    key_name: str
    base_url: str | None
    stream: bool
    max_concurrency: int | None
    api_version: str | None
    learn_capacity: bool


def provider_for_agent(
    agent: Agent,
    *,
    env: Mapping[str, str] | None = None,
    sampler: Sampler | None = None,
    sampling_tools: bool = False,
) -> tuple[Provider, str]:
    """The provider and model name the agent's settings call for.

    Args:
        agent: the agent.
        env: the environment for ``env://`` references and fallbacks (default ``os.environ``).
        sampler: when given and the model is ``sampling``, a ``SamplingProvider`` on it is
            returned instead of raising ``SamplingRequired``.
        sampling_tools: whether that sampler's client can sample with tools.

    Returns:
        ``(provider, model name)``, e.g. ``(OpenAIProvider, "gpt-4.1-mini")``.

    Raises:
        SamplingRequired: the model is ``sampling`` and no sampler was given.
        CredentialsMissing: a required key is not set; the message names the setting and where
            it was looked for (``OPENAI_API_KEY is not set (env://OPENAI_API_KEY)``).
        ConfigurationError: no model, an unknown provider, a base URL is missing, or ``stream``
            or ``maxConcurrentRequests`` holds a value they cannot take.
    """
    if agent.settings.model == "sampling" and sampler is not None:
        return SamplingProvider(sampler, supports_tools=sampling_tools), "sampling"
    resolved = _resolve(agent, env)
    options = EndpointOptions(
        name=resolved.provider_id,
        timeout=agent.settings.timeout_seconds,
        key_name=resolved.key_name,
        stream=resolved.stream,
        max_concurrency=resolved.max_concurrency,
        learn_capacity=resolved.learn_capacity,
    )
    provider: Provider
    if resolved.kind.sdk == "anthropic":
        provider = AnthropicProvider(resolved.api_key, resolved.base_url, **options)
    else:
        provider = OpenAIProvider(
            resolved.api_key,
            resolved.base_url,
            key_header=resolved.kind.key_header,
            api_version=resolved.api_version,
            **options,
        )
    return provider, resolved.model


def credentials_available(agent: Agent, *, env: Mapping[str, str] | None = None) -> bool:
    """Whether ``provider_for_agent`` would succeed without a sampler (nothing is connected).

    False for ``sampling`` agents and for any missing model, key or base URL.
    """
    try:
        _resolve(agent, env)
    except ConfigurationError:
        return False
    return True


def _resolve(agent: Agent, env: Mapping[str, str] | None) -> _Resolved:
    model_setting = (agent.settings.model or "").strip()
    if not model_setting:
        raise ConfigurationError(f"the agent has no model: set settings.model, e.g. {_EXAMPLE}")
    if model_setting == "sampling":
        raise SamplingRequired(
            "the agent's model is 'sampling': only an MCP client that offers sampling can answer; "
            f"to run it here, set settings.model to a provider model, e.g. {_EXAMPLE}"
        )
    provider_id, _, model = model_setting.partition(":")
    kind = PROVIDER_KINDS.get(provider_id)
    if not model or kind is None:
        known = ", ".join(KNOWN_PROVIDERS)
        raise ConfigurationError(
            f"settings.model {model_setting!r} does not name a known provider: write "
            f"provider:model with a provider among {known}, e.g. {_EXAMPLE}"
        )
    values = agent.providers.get(provider_id, {})
    environment = env if env is not None else os.environ
    api_key, key_name = _lookup(kind.key_names, values, environment)
    # Whatever its source (a reference, a literal, the process environment), the key is now
    # known to every sink's redaction before it is ever sent.
    remember_secret(api_key)
    if api_key is None and kind.key_required:
        name = kind.key_names[0]
        raise CredentialsMissing(f"{name} is not set ({ENV_SCHEME}{name})")
    base_url, _ = _lookup(kind.url_names, values, environment)
    base_url = base_url or kind.default_url
    if kind.sdk == "openai" and base_url is None and provider_id != "openai":
        example = (
            "https://RESOURCE.openai.azure.com/openai/v1"
            if kind.version_names  # Azure OpenAI
            else "http://localhost:8000/v1"
        )
        raise ConfigurationError(
            f"{provider_id} needs a base URL: set providers.{provider_id}."
            f"{kind.url_names[0]} (e.g. {example})"
        )
    api_version = (
        _lookup(kind.version_names, values, environment)[0] if kind.version_names else None
    )
    if kind.version_names and base_url is not None:
        base_url, api_version = azure_endpoint(base_url, api_version)
    stream = _endpoint_setting(provider_id, values, "stream", parse_stream, kind.stream)
    max_concurrency = _endpoint_setting(
        provider_id, values, "maxConcurrentRequests", parse_max_concurrency, kind.max_concurrency
    )
    # A local or self-hosted server is asked what it is and how many requests it serves at
    # once, unless maxConcurrentRequests says how many to send.
    learn_capacity = (
        kind.sdk == "openai"
        and base_url is not None
        and hosted_name(base_url) is None
        and not (values.get("maxConcurrentRequests") or "").strip()
    )
    return _Resolved(
        provider_id,
        model,
        kind,
        api_key,
        key_name,
        base_url,
        stream,
        max_concurrency,
        api_version,
        learn_capacity,
    )


T = TypeVar("T")


def _endpoint_setting(
    provider_id: str,
    values: Mapping[str, str],
    name: str,
    parse: Callable[[str], T],
    default: T,
) -> T:
    """``providers.<id>.<name>`` read by ``parse``; ``default`` (the kind's) when not set.

    Raises:
        ConfigurationError: the value is not one the setting takes; the message names the
            setting and what it takes.
    """
    raw = values.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return parse(raw)
    except ValueError as exc:
        raise ConfigurationError(f"providers.{provider_id}.{name}: {exc}") from exc


def _lookup(
    names: tuple[str, ...],
    values: Mapping[str, str],
    environment: Mapping[str, str],
) -> tuple[str | None, str]:
    """The first setting found: ``(value, its name)``; ``(None, first name)`` when none is.

    Raises:
        CredentialsMissing: a setting in the agent refers to something that is not there.
    """
    for name in names:
        raw = values.get(name)
        if raw is None or raw == "":
            continue
        try:
            found = _resolve_reference(raw, name, environment)
        except SecretError as exc:
            raise CredentialsMissing(str(exc)) from exc
        return found, name
    own = environment.get(names[0])
    return (own or None), names[0]


def _resolve_reference(value: str, key_name: str, environment: Mapping[str, str]) -> str:
    variable = value[len(ENV_SCHEME) :] if value.startswith(ENV_SCHEME) else ""
    if not variable:  # keyring://, a plain value, or a malformed env:// (it says so)
        return resolve_secret(value, key_name=key_name)
    # env:// is read from the given environment (tests, a caller's own), with the message
    # resolve_secret gives for os.environ.
    found = environment.get(variable)
    if found:
        return found
    needed = f", needed for {key_name}" if key_name != variable else ""
    state = "is set but empty" if found == "" else "is not set"
    raise SecretError(f"{variable} {state} ({ENV_SCHEME}{variable}){needed}")
