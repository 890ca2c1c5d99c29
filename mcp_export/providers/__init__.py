"""Model providers behind one streaming interface (see ``providers.base.Provider``).

- ``openai_provider.OpenAIProvider``: Chat Completions (OpenAI, llama.cpp / llama-cpp-python,
  Ollama, vLLM, LM Studio, LiteLLM, OpenRouter, Azure OpenAI), over aiohttp (``_openai_http``),
  model lists included: no ``openai`` SDK.
- ``anthropic_provider.AnthropicProvider``: the Messages API, through the ``anthropic`` SDK.
- ``sampling.SamplingProvider``: the calling MCP client's model, through a ``Sampler`` the server
  provides.
- ``factory.provider_for_agent``: the provider an agent's ``settings.model`` names (the table of
  known providers is ``kinds``), with its credentials.
- ``parameters.resolve_parameters``: the model parameters of one call (override → agent →
  provider default).

Both HTTP providers take their endpoint, key, retry, streaming and concurrency settings from
``_endpoint.HTTPEndpoint``; a failure names the endpoint (the service, or host:port and the kind
of server).
Every provider reports ``Completion.stop_reason`` in one vocabulary (Anthropic's): ``end_turn``,
``tool_use``, ``max_tokens``, ``stop_sequence``; anything else as the backend said it.

Importing this package imports none of its modules; the Anthropic provider imports its SDK with
its first request.
"""
