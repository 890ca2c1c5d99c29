"""The providers ``settings.model`` may name, and where each one's key and base URL come from.

The one table both ``providers.factory`` (building a provider) and ``clients.entry`` (the
environment variables an exported entry passes on) read, with each kind's defaults for the
endpoint settings ``stream`` and ``maxConcurrentRequests`` (``providers.<id>`` may set both).
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass

__all__ = [
    "AZURE_API_VERSION",
    "KNOWN_PROVIDERS",
    "PROVIDER_KINDS",
    "ProviderKind",
    "azure_endpoint",
]


OPENAI_URL = "https://api.openai.com/v1"
ANTHROPIC_URL = "https://api.anthropic.com"
"""The vendors' own endpoints, where a request goes when no base URL is set."""


@dataclass(frozen=True)
class ProviderKind:
    """Where one provider's settings are looked up, and what it needs.

    Attributes:
        sdk: ``openai`` (Chat Completions) or ``anthropic`` (Messages API).
        key_names / url_names: the settings that hold the key and the base URL, first found wins.
        default_url: the base URL when none is set (None: the vendor's own for openai and
            anthropic, else one must be set).
        key_required: whether requests fail without a key.
        stream: whether answers are streamed unless ``providers.<id>.stream`` says otherwise.
        max_concurrency: requests in flight to the endpoint at most, unless
            ``providers.<id>.maxConcurrentRequests`` says otherwise (None: no limit).
        key_header: the header the key goes in: ``Authorization`` (as ``Bearer <key>``) or, for
            Azure OpenAI, ``api-key`` (the key as it is).
        version_names: the settings that hold an ``api-version`` sent with every request.
        service_url: the vendor's own endpoint, for openai and anthropic (shown where no base
            URL is set; ``default_url`` stays None so the provider knows it talks to the vendor).
    """

    sdk: str
    key_names: tuple[str, ...]
    url_names: tuple[str, ...]
    default_url: str | None = None
    key_required: bool = False
    stream: bool = True
    max_concurrency: int | None = None
    key_header: str = "Authorization"
    version_names: tuple[str, ...] = ()
    service_url: str | None = None


def _compatible(
    prefix: str,
    default_url: str | None,
    key_required: bool = False,
    *,
    max_concurrency: int | None = None,
) -> ProviderKind:
    return ProviderKind(
        "openai",
        (f"{prefix}_API_KEY", "OPENAI_API_KEY"),
        (f"{prefix}_BASE_URL", "OPENAI_BASE_URL"),
        default_url,
        key_required,
        max_concurrency=max_concurrency,
    )


PROVIDER_KINDS: dict[str, ProviderKind] = {
    "openai": ProviderKind(
        "openai",
        ("OPENAI_API_KEY",),
        ("OPENAI_BASE_URL",),
        key_required=True,
        service_url=OPENAI_URL,
    ),
    "anthropic": ProviderKind(
        "anthropic",
        ("ANTHROPIC_API_KEY",),
        ("ANTHROPIC_BASE_URL",),
        key_required=True,
        service_url=ANTHROPIC_URL,
    ),
    "ollama": _compatible("OLLAMA", "http://localhost:11434/v1"),
    "lmstudio": _compatible("LMSTUDIO", "http://localhost:1234/v1"),
    # llama.cpp's llama-server and llama-cpp-python's server (python -m llama_cpp.server): one
    # request at a time unless the server says how many it serves (providers._server_identity:
    # llama-server's slots; llama-cpp-python one, across processes too, since it cuts off a
    # stream in progress when another request arrives).
    "llamacpp": _compatible("LLAMACPP", "http://localhost:8080/v1", max_concurrency=1),
    "openrouter": _compatible("OPENROUTER", "https://openrouter.ai/api/v1", key_required=True),
    "vllm": _compatible("VLLM", None),
    "litellm": _compatible("LITELLM", None),
    # Azure OpenAI: the resource's v1 API (https://RESOURCE.openai.azure.com/openai/v1, the
    # model is the deployment's name) or one deployment's URL
    # (https://RESOURCE.openai.azure.com/openai/deployments/DEPLOYMENT, which needs an
    # api-version); see azure_endpoint.
    "azure": ProviderKind(
        "openai",
        ("AZURE_OPENAI_API_KEY",),
        ("AZURE_OPENAI_ENDPOINT",),
        key_required=True,
        key_header="api-key",
        version_names=("AZURE_OPENAI_API_VERSION",),
    ),
}

KNOWN_PROVIDERS = (*PROVIDER_KINDS, "sampling")
"""The provider ids ``settings.model`` may start with."""

AZURE_API_VERSION = "2024-10-21"
"""The ``api-version`` a deployment URL gets when none is set: the latest generally available
version of the Azure OpenAI inference API in Microsoft's API lifecycle page."""


def azure_endpoint(url: str, version: str | None) -> tuple[str, str | None]:
    """The base URL and ``api-version`` requests to an Azure OpenAI setting go with.

    A resource's address alone (``https://RESOURCE.openai.azure.com``, what
    ``AZURE_OPENAI_ENDPOINT`` usually holds) means its v1 API (``…/openai/v1``), which needs no
    api-version; a deployment's URL (``…/openai/deployments/NAME``) needs one and gets
    ``AZURE_API_VERSION`` when none is set. A version that is set goes with every request.
    """
    parts = urllib.parse.urlsplit(url)
    if parts.path.strip("/") == "":
        url = urllib.parse.urlunsplit(parts._replace(path="/openai/v1"))
    elif "/openai/deployments/" in parts.path and not version:
        version = AZURE_API_VERSION
    return url.rstrip("/"), version or None
