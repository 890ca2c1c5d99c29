"""The tools a run does not get because nobody can give permission, said in the run's trace.

The permission rule (``agent_toolbox``) hides tools silently: the model is simply not offered
them, and a server whose every tool needs permission is not even started. A person test-running
an agent then sees no tool calls and nothing in the protocol log, and cannot tell why. So a run
says, once per server, which tools were held back, why, and where to change it — in the studio
(the MCP servers page, the Model page) and in the agent file. The session turns each
:class:`WithheldTools` into a ``ToolsHidden`` trace note; the chat tab, the CLI and a served
call's progress all show it.

Tools the person left out on purpose (``include: false``) are not mentioned.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from schema_types.agent import Agent

__all__ = ["WithheldTools", "find_withheld"]


@dataclass(frozen=True)
class WithheldTools:
    """Tools of one MCP server that this run's model is not offered by the permission rule.

    Attributes:
        server: the server's name in the agent file.
        tools: the tools held back, as the server lists them; empty when the server was not
            started (every tool it has needs permission, so its names are not known).
        policy: the agent's ``toolPermission`` (``tool`` or ``always``).
    """

    server: str
    tools: tuple[str, ...]
    policy: str

    @property
    def text(self) -> str:
        """The trace note: which tools, why, and where to change it."""
        server = self.server
        count = len(self.tools)
        if count:
            which = (
                f"{count} tool{'s' if count != 1 else ''} of {server} hidden "
                f"({', '.join(self.tools)})"
            )
        else:
            which = f"The tools of {server} are hidden (the server was not started)"
        if self.policy == "always":
            return (
                f"{which}: this agent runs every tool only with a person's permission "
                "(toolPermission: always), and this run cannot ask. To offer them: Model ▸ Tool "
                "permission ▸ tool or never (settings.toolPermission in the agent file)."
            )
        return (
            f"{which}: they need a person's permission, and this run cannot ask "
            f"(toolPermission: tool). To offer them: Agent ▸ MCP servers ▸ {server} ▸ untick "
            "“Its tools need a person's permission”, or mark single tools there "
            f"(mcpServers.{server}.serverToolDefaults.permissionRequired: false in the agent "
            "file)."
        )


def find_withheld(
    agent: Agent, listed: Mapping[str, Sequence[str]], skipped: Collection[str]
) -> list[WithheldTools]:
    """The tools ``agent``'s permission rule holds back, per server, in the agent file's order.

    Args:
        agent: whose ``toolPermission`` and ``mcpServers`` apply.
        listed: the tool names each started server listed.
        skipped: the servers not started because none of their tools could be offered.
    """
    policy = agent.settings.tool_permission
    if policy == "never":
        return []
    withheld: list[WithheldTools] = []
    for server, config in agent.mcp_servers.items():
        names = listed.get(server)
        if names is None:
            if server in skipped:
                withheld.append(WithheldTools(server, (), policy))
            continue  # else it is down: its own error says so
        held = tuple(
            name
            for name in names
            if config.included(name) and (policy == "always" or config.permission_required(name))
        )
        if held:
            withheld.append(WithheldTools(server, held, policy))
    return withheld
