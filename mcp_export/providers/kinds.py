"""The providers ``settings.model`` may name, and where each one's key and base URL come from.

The one table both ``providers.factory`` (building a provider) and ``clients.entry`` (the
environment variables an exported entry passes on) read.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KNOWN_PROVIDERS", "PROVIDER_KINDS", "ProviderKind"]


@dataclass(frozen=True)
class ProviderKind:
    """Where one provider's settings are looked up, and what it needs."""

    sdk: str  # "openai" or "anthropic"
    key_names: tuple[str, ...]
    url_names: tuple[str, ...]
    default_url: str | None = None
    key_required: bool = False


def _compatible(prefix: str, default_url: str | None, key_required: bool = False) -> ProviderKind:
    return ProviderKind(
        "openai",
        (f"{prefix}_API_KEY", "OPENAI_API_KEY"),
        (f"{prefix}_BASE_URL", "OPENAI_BASE_URL"),
        default_url,
        key_required,
    )


PROVIDER_KINDS: dict[str, ProviderKind] = {
    "openai": ProviderKind("openai", ("OPENAI_API_KEY",), ("OPENAI_BASE_URL",), key_required=True),
    "anthropic": ProviderKind(
        "anthropic", ("ANTHROPIC_API_KEY",), ("ANTHROPIC_BASE_URL",), key_required=True
    ),
    "ollama": _compatible("OLLAMA", "http://localhost:11434/v1"),
    "lmstudio": _compatible("LMSTUDIO", "http://localhost:1234/v1"),
    "openrouter": _compatible("OPENROUTER", "https://openrouter.ai/api/v1", key_required=True),
    "vllm": _compatible("VLLM", None),
    "litellm": _compatible("LITELLM", None),
}

KNOWN_PROVIDERS = (*PROVIDER_KINDS, "sampling")
"""The provider ids ``settings.model`` may start with."""
