"""Model providers behind one streaming interface (see ``providers.base.Provider``).

- ``openai_provider.OpenAIProvider``: Chat Completions (OpenAI, Ollama, vLLM, LM Studio, LiteLLM,
  OpenRouter), over aiohttp (``_openai_http``).
- ``anthropic_provider.AnthropicProvider``: the Messages API, through the ``anthropic`` SDK.
- ``sampling.SamplingProvider``: the calling MCP client's model, through a ``Sampler`` the server
  provides.
- ``factory.provider_for_agent``: the provider an agent's ``settings.model`` names (the table of
  known providers is ``kinds``), with its credentials.
- ``parameters.resolve_parameters``: the model parameters of one call (override → agent →
  provider default).

Both HTTP providers take their endpoint, key and retry settings from ``_endpoint.HTTPEndpoint``.
Every provider reports ``Completion.stop_reason`` in one vocabulary (Anthropic's): ``end_turn``,
``tool_use``, ``max_tokens``, ``stop_sequence``; anything else as the backend said it.

Importing this package imports none of its modules; the Anthropic provider imports its SDK with
its first request.
"""
