"""The models a matrix run can go to, as the endpoints themselves list them.

:func:`endpoints_to_ask` names the providers whose model lists are worth asking: the agent's own
provider, each provider the agent configures under ``providers``, and each endpoint kept in
Preferences whose base URL is the one a run on ``kind:model`` reaches (the kind's own, since the
agent sets no other). :func:`list_offers` asks them all at once, each through the Model page's
:func:`~app.pages.model_endpoint.list_models` (the provider's own ``GET {base}/models``), and
returns ``provider:model`` names with a note for each endpoint that did not answer.

No Qt here: the matrix tab runs :func:`list_offers` on the qasync loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field

from app.pages.model_endpoint import EndpointError, endpoint_url, list_models
from mcp_export.providers.kinds import PROVIDER_KINDS
from schema_types.agent import Agent

__all__ = ["LIST_SECONDS", "Offers", "endpoints_to_ask", "list_offers"]

LIST_SECONDS = 5.0
"""How long one endpoint gets to list its models."""


@dataclass
class Offers:
    """What the endpoints listed.

    Attributes:
        models: ``provider:model`` names, each endpoint's sorted, in the order asked.
        asked: the providers that answered, with their base URL.
        notes: one line per provider that did not (``ollama: http://… is not reachable``).
    """

    models: list[str] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _as(agent: Agent, provider_id: str) -> Agent:
    """The agent as a run on one of ``provider_id``'s models sees it."""
    from mcp_export.testing.run import with_model  # the runtime's; loaded when a list is asked

    return with_model(agent, f"{provider_id}:-")


def endpoints_to_ask(agent: Agent, preferred: Iterable[tuple[str, str]] = ()) -> list[str]:
    """The provider ids whose model lists a matrix run could use, in the order to show them.

    Args:
        agent: its own provider first, then those under ``providers``.
        preferred: Preferences' endpoints as ``(kind, base URL)``; one counts when the agent does
            not configure that kind and the URL is the kind's own (where a run would go).
    """
    wanted: list[str] = []
    own = agent.settings.provider_id
    for provider_id in [own or "", *agent.providers]:
        if provider_id in PROVIDER_KINDS and provider_id not in wanted:
            wanted.append(provider_id)
    for kind, base_url in preferred:
        info = PROVIDER_KINDS.get(kind)
        if info is None or kind in wanted or info.default_url is None:
            continue
        if base_url.rstrip("/") == info.default_url.rstrip("/"):
            wanted.append(kind)
    return wanted


async def list_offers(
    agent: Agent,
    preferred: Iterable[tuple[str, str]] = (),
    *,
    timeout: float = LIST_SECONDS,  # noqa: ASYNC109
) -> Offers:
    """Ask each of :func:`endpoints_to_ask` for its models, all at once, each within ``timeout``."""
    providers = endpoints_to_ask(agent, preferred)

    async def one(provider_id: str) -> tuple[str, list[str] | str]:
        copy = _as(agent, provider_id)
        try:
            where = endpoint_url(copy)
            return where, await list_models(copy, timeout=timeout)
        except EndpointError as exc:
            return "", str(exc)

    answers = await asyncio.gather(*(one(p) for p in providers))
    offers = Offers()
    for provider_id, (where, answer) in zip(providers, answers, strict=True):
        if isinstance(answer, str):
            offers.notes.append(f"{provider_id}: {answer}")
            continue
        offers.asked.append(f"{provider_id} ({where})")
        offers.models.extend(f"{provider_id}:{model}" for model in answer)
    return offers
