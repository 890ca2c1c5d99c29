"""Which model answers a served call.

In order:

1. the agent's configured provider, when its credentials resolve (``settings.model`` is
   ``provider:model``);
2. otherwise the calling client's own model through MCP sampling, when the client declared the
   sampling capability and the server was not started with ``--no-sampling``
   (``settings.model: sampling`` skips step 1: sampling or nothing);
3. otherwise nothing: ``NoModel`` carries the message of the ``isError`` result, naming exactly
   what to set. A 2025-11-25 request served without a session (``--stateless``) cannot sample
   at all, whatever the client offers: its message says so, and what to do instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_export.errors import ConfigurationError
from mcp_export.server.sampling import client_sampling

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from mcp_export.providers.base import Provider
    from schema_types.agent import Agent

__all__ = ["SAMPLING_MODEL", "ModelChoice", "NoModel", "choose_model"]

SAMPLING_MODEL = "sampling"
"""The ``settings.model`` value that always asks the client's model."""

SamplingEra = Literal["session", "round-trip"]


class NoModel(ConfigurationError):
    """No model can answer this call; the message says what to set."""


@dataclass(frozen=True)
class ModelChoice:
    """The model for one call.

    Attributes:
        provider: the configured provider, or None when sampling is chosen.
        model: the model name (for sampling: the agent's model as a hint, possibly empty).
        sampling: None for the configured provider; else how sampling works on this connection
            (``session``: createMessage requests, 2025-11-25; ``round-trip``: input-required
            results, 2026-07-28).
        sampling_tools: whether the client samples with tools (the agent's tools are offered).
    """

    provider: Provider | None
    model: str
    sampling: SamplingEra | None = None
    sampling_tools: bool = False


def _modern(ctx: ServerRequestContext[Any]) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def choose_model(
    agent: Agent,
    ctx: ServerRequestContext[Any],
    configured: Any,
    *,
    allow_sampling: bool,
) -> ModelChoice:
    """Choose the model for one call of ``agent``.

    Args:
        agent: the agent.
        ctx: the call's request context (the client's capabilities, the protocol era).
        configured: a callable returning ``(provider, model)`` of the agent's configured
            provider, raising ``ConfigurationError`` when it cannot be used (no credentials…).
        allow_sampling: false with ``--no-sampling``.

    Raises:
        NoModel: no model can answer; the message names what to set.
    """
    settings = agent.settings
    forced = (settings.model or "").strip() == SAMPLING_MODEL
    reason: str | None = None
    if not forced:
        try:
            provider, model = configured()
        except ConfigurationError as exc:
            reason = str(exc)
        else:
            return ModelChoice(provider, model)
    can_sample, with_tools = client_sampling(ctx)
    if allow_sampling and can_sample:
        era: SamplingEra = "round-trip" if _modern(ctx) else "session"
        return ModelChoice(None, settings.model_name or "", era, with_tools)
    if allow_sampling and _sessionless_legacy(ctx):
        raise NoModel(_sessionless_message(forced, reason))
    raise NoModel(_no_model_message(forced, reason, allow_sampling=allow_sampling))


def _sessionless_legacy(ctx: ServerRequestContext[Any]) -> bool:
    """Whether this is a 2025-11-25 request served without a session (``--stateless``).

    In that era a session starts with ``initialize``, which tells the client's capabilities;
    without a session they are unknown (its ``initialize`` was a request of its own) and a
    request to the client has nowhere to land, so whether it offers sampling does not matter.
    """
    return not _modern(ctx) and ctx.session.client_params is None


_SESSIONLESS = (
    "it serves without sessions (--stateless), and MCP sampling with a 2025-11-25 client needs "
    "a session, whether the client offers sampling or not"
)
_SESSIONLESS_CHOICES = (
    "serve without --stateless (one instance, or a load balancer that keeps each "
    "Mcp-Session-Id on one instance), or call from a 2026-07-28 client, which samples without "
    "a session"
)


def _sessionless_message(forced: bool, reason: str | None) -> str:
    if forced:
        return (
            "no model: the agent's settings.model is 'sampling' (the calling client's model), "
            f"which this server cannot ask: {_SESSIONLESS}. Set settings.model to "
            f"provider:model (e.g. openai:gpt-4.1-mini) with its API key, {_SESSIONLESS_CHOICES}"
        )
    detail = reason or "the agent's model is not configured"
    return (
        f"no model: {detail}; and this server cannot use the client's model instead: "
        f"{_SESSIONLESS}. Configure the agent's model, {_SESSIONLESS_CHOICES}"
    )


def _no_model_message(forced: bool, reason: str | None, *, allow_sampling: bool) -> str:
    if forced:
        if not allow_sampling:
            return (
                "no model: the agent's settings.model is 'sampling' (the calling client's model), "
                "but this server runs with --no-sampling; serve without --no-sampling, or set "
                "settings.model to provider:model (e.g. openai:gpt-4.1-mini) with its API key"
            )
        return (
            "no model: the agent's settings.model is 'sampling' (the calling client's model), but "
            "this client does not offer MCP sampling; call from a client that does, or set "
            "settings.model to provider:model (e.g. openai:gpt-4.1-mini) with its API key"
        )
    detail = reason or "the agent's model is not configured"
    if not allow_sampling:
        return f"no model: {detail} (sampling through the client is off: --no-sampling)"
    return f"no model: {detail}, or call from a client that offers MCP sampling"
