"""Model providers behind one streaming interface (see ``providers.base.Provider``).

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
