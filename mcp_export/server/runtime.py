"""What the calls of a served server share: per-agent toolboxes and providers, the call policy.

Kept apart from the call pipeline (``server.call``) so building the server imports nothing of
the runtime: the toolbox, the providers and the chat session are imported by the first call.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from mcp_export.server.history import HistoryAccess
from mcp_export.server.stand_ins import StandIns

if TYPE_CHECKING:
    from mcp_export.history.store import HistoryStore
    from mcp_export.providers.base import Provider
    from mcp_export.server.cost import CallPricing
    from mcp_export.server.model import ModelChoice
    from mcp_export.server.tools import ServedAgent
    from mcp_export.toolbox.agent_toolbox import AgentToolbox, ToolSpec

__all__ = ["AgentRuntime", "CallPolicy", "StandIns"]

logger = logging.getLogger(__name__)


class CallPolicy:
    """Server-wide choices for calls: sampling allowed, where history goes, and whether tools
    that declare a cache use it (``server/cache.py``; test runs do not unless asked)."""

    def __init__(
        self,
        *,
        sampling: bool,
        history: HistoryStore | bool | str | None,
        read_cache: bool = True,
    ) -> None:
        self.sampling = sampling
        self.read_cache = read_cache
        self.history = HistoryAccess(history)

    async def aclose(self) -> None:
        """Close the history store if this server opened it."""
        self.history.close()


class AgentRuntime:
    """What the calls of one agent share: its toolbox and its configured provider.

    Both are created on first use (the first call), so start-up stays cheap, and closed by
    ``aclose``. ``inner_tools`` is the agent's allowed inner tools once a call has started its
    tool servers (None until then); the tool list derives annotations from it.
    """

    def __init__(self, served: ServedAgent, policy: CallPolicy) -> None:
        self.served = served
        self.policy = policy
        self.inner_tools: list[ToolSpec] | None = None
        self._toolbox: AgentToolbox | None = None
        self._provider: tuple[Provider, str] | None = None
        self._pricing: CallPricing | None = None

    @property
    def agent(self) -> Any:
        """The agent (``schema_types.Agent``)."""
        return self.served.agent

    def toolbox(self) -> AgentToolbox | None:
        """The agent's shared toolbox, or None when it has no MCP servers."""
        if not self.served.agent.mcp_servers:
            return None
        if self._toolbox is None:
            if self.served.stand_ins is not None:
                self._toolbox = self.served.stand_ins.toolbox()
                return self._toolbox
            from mcp_export.toolbox.agent_toolbox import AgentToolbox  # first call: see above

            self._toolbox = AgentToolbox(self.served.agent, base_dir=self.served.base_dir)
        return self._toolbox

    def unavailable_servers(self) -> dict[str, str]:
        """Each of the agent's tool servers that is unavailable now, with the first line of why."""
        if self._toolbox is None:
            return {}
        return {
            name: reason.splitlines()[0] if reason else reason
            for name, reason in self._toolbox.server_errors.items()
        }

    def configured_provider(self) -> tuple[Provider, str]:
        """The agent's own provider and model, made once.

        Raises:
            ConfigurationError: it cannot be used (no model set, credentials missing…).
        """
        if self._provider is None and self.served.stand_ins is not None:
            self._provider = self.served.stand_ins.provider()
        if self._provider is None:
            from mcp_export.providers.factory import provider_for_agent  # first call: see above

            self._provider = provider_for_agent(self.served.agent)
        return self._provider

    def pricing(self, choice: ModelChoice) -> CallPricing:
        """How the cost of a call on ``choice`` is reckoned (``server/cost.py``); the price
        table is read once, at the first call."""
        if self._pricing is None:
            from mcp_export.server.cost import agent_pricing  # first call: see above

            self._pricing = agent_pricing(self.served.agent)
        return self._pricing if choice.sampling is None else self._pricing.sampled()

    async def note_inner_tools(self) -> None:
        """Remember the allowed inner tools (the servers are running by now: cheap)."""
        toolbox = self._toolbox
        if toolbox is None or self.inner_tools is not None:
            return
        try:
            tools = await toolbox.allowed_tools()
        except Exception:  # only annotations depend on it: never fail a call for it
            logger.debug("could not list the inner tools", exc_info=True)
            return
        # A listing without an unavailable server's tools would decide the annotations for good;
        # it is kept only once every server answered.
        if not toolbox.server_errors:
            self.inner_tools = tools

    async def aclose(self) -> None:
        """Stop the tool servers and close the provider's connections."""
        toolbox, self._toolbox = self._toolbox, None
        if toolbox is not None:
            await toolbox.aclose()
        provider, self._provider = self._provider, None
        if provider is not None:
            await provider[0].aclose()
