"""A real provider that also passes a notice, as a provider does when an endpoint needs handling.

``NoticingProvider`` wraps any ``Provider`` (the real OpenAI provider talking to
``FakeOpenAIServer``, say) and yields a ``ProviderNotice`` with every model request, before the
answer or after its text. It is a test double of the ``Provider`` protocol: the real
source of such notices (an OpenAI-compatible server that refuses streamed tool use) lives in the
OpenAI provider. Consumers must show a notice once, however many requests repeat it.

``noticing(text)`` is a provider factory for code that makes its provider from the agent
(``provider_for_agent``), such as the studio's chat tab.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from mcp_export.providers.base import (
    Completion,
    ModelRequest,
    Provider,
    ProviderEvent,
    ProviderNotice,
)
from mcp_export.providers.factory import provider_for_agent
from mcp_export.session.result import aclose_stream

if TYPE_CHECKING:
    from schema_types.agent import Agent

__all__ = ["NOTICE", "NoticingProvider", "noticing"]

NOTICE = "127.0.0.1:8080 refuses streamed tool use; tool turns go without streaming"
"""A notice as the OpenAI provider words it."""


class NoticingProvider:
    """``inner``, with ``notice`` passed on every model request.

    Args:
        inner: the provider that answers.
        notice: the notice's text.
        after_text: pass the notice after the answer's text (before its ``Completion``) instead
            of before the answer.
    """

    def __init__(self, inner: Provider, notice: str = NOTICE, *, after_text: bool = False) -> None:
        self.inner = inner
        self.notice = notice
        self.after_text = after_text

    @property
    def name(self) -> str:
        return self.inner.name

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        if not self.after_text:
            yield ProviderNotice(self.notice)
        events = self.inner.stream(request)
        try:
            async for event in events:
                if self.after_text and isinstance(event, Completion):
                    yield ProviderNotice(self.notice)
                yield event
        finally:
            await aclose_stream(events)

    async def aclose(self) -> None:
        await self.inner.aclose()


def noticing(
    notice: str = NOTICE, *, after_text: bool = False
) -> Callable[[Agent], tuple[Provider, str]]:
    """A provider factory: the agent's own provider (``provider_for_agent``), noticing."""

    def make(agent: Agent) -> tuple[Provider, str]:
        provider, model = provider_for_agent(agent)
        return NoticingProvider(provider, notice, after_text=after_text), model

    return make
