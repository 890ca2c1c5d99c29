"""Model providers behind one streaming interface (see ``_base.Provider``).

- ``OpenAIProvider``: Chat Completions (OpenAI, Ollama, vLLM, LM Studio, LiteLLM, OpenRouter).
- ``AnthropicProvider``: the Messages API.
- ``SamplingProvider``: the calling MCP client's model, through a ``Sampler`` the server provides.
- ``provider_for_agent``: the provider an agent's ``settings.model`` names, with its credentials.
- ``resolve_parameters``: the model parameters of one call (override → agent → provider default).

Every provider reports ``Completion.stop_reason`` in one vocabulary (Anthropic's): ``end_turn``,
``tool_use``, ``max_tokens``, ``stop_sequence``; anything else as the backend said it.

Importing this package does not import the provider SDKs: each provider imports its SDK the first
time it is asked for a model answer.
"""

from __future__ import annotations

from ._anthropic import AnthropicProvider
from ._base import (
    ChatMessage,
    Completion,
    ModelRequest,
    Provider,
    ProviderEvent,
    TextDelta,
    ToolCallRequest,
    ToolSchema,
    Usage,
)
from ._factory import KNOWN_PROVIDERS, SamplingRequired, credentials_available, provider_for_agent
from ._openai import OpenAIProvider
from ._parameters import PARAMETER_KEYS, resolve_parameters
from ._sampling import (
    DEFAULT_MAX_TOKENS,
    Sampler,
    SamplingProvider,
    SamplingRequest,
    SamplingResponse,
    SamplingTurn,
    TextPart,
    ToolResultPart,
    ToolUsePart,
)

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "KNOWN_PROVIDERS",
    "PARAMETER_KEYS",
    "AnthropicProvider",
    "ChatMessage",
    "Completion",
    "ModelRequest",
    "OpenAIProvider",
    "Provider",
    "ProviderEvent",
    "Sampler",
    "SamplingProvider",
    "SamplingRequest",
    "SamplingRequired",
    "SamplingResponse",
    "SamplingTurn",
    "TextDelta",
    "TextPart",
    "ToolCallRequest",
    "ToolResultPart",
    "ToolSchema",
    "ToolUsePart",
    "Usage",
    "credentials_available",
    "provider_for_agent",
    "resolve_parameters",
]
