"""The stand-ins protocol: what a served agent may carry in place of its provider and servers.

Its own module so the served catalogue (``server.tools``) can name it without importing the
runtime that uses it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from mcp_export.providers.base import Provider
    from mcp_export.toolbox.agent_toolbox import AgentToolbox

__all__ = ["StandIns"]


class StandIns(Protocol):
    """What answers in place of an agent's configured provider and tool servers (a test case's
    recording, replay or mocks): plugged in where the real ones are made, so the rest of a call
    (template, session, result) is the real path."""

    def provider(self) -> tuple[Provider, str]:
        """The provider and model name the calls use.

        Raises:
            ConfigurationError: it cannot be used.
        """
        ...

    def toolbox(self) -> AgentToolbox:
        """The toolbox the calls use (closed with the runtime)."""
        ...
