"""The tool list a caller model is offered: ours as served, plus decoys.

Our tools come from the agent's own server's ``tools/list`` as a client receives it (names with
the prefix when served with ``--prefix``, title, description, ``inputSchema``, annotations), never
from a second rendering of the tool definitions. Decoys are what a real client would offer beside
ours: the tools of other agent files (listed from their own served ``tools/list``), of real MCP
servers (started and listed live, never called), and bundled common tools (calendar, mail, web,
files: names, descriptions and schemas only, shipped in ``common_tools.json``).

A decoy named like one of ours, or like a decoy already offered, is left out: a client cannot
offer two tools of one name either.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import Client

from mcp_export.errors import ExportError
from mcp_export.providers.base import ToolSchema
from mcp_export.server.agent_server import AgentServer
from mcp_export.server.tools import ServedAgent
from mcp_export.toolbox.probe import probe_server
from schema_types.agent import McpServerConfig
from schema_types.errors import SchemaError
from schema_types.files.agent_file import load_agent

__all__ = [
    "COMMON_SETS",
    "DecoyError",
    "OfferedTool",
    "agent_decoys",
    "common_decoys",
    "listed_tools",
    "merge_offers",
    "server_decoys",
]


class DecoyError(ExportError):
    """A decoy cannot be offered (an agent file that does not load, a server that does not
    start, an unknown bundled set); the message says which and why."""


@dataclass(frozen=True)
class OfferedTool:
    """One tool offered to a caller model.

    Attributes:
        name: the name the caller sees (and must call).
        description: its description.
        input_schema: its ``inputSchema``.
        title: its title, if listed.
        annotations: its annotations, if listed.
        source: where it comes from: ``ours``, ``agent:FILE``, ``server:NAME`` or
            ``common:SET``.
    """

    name: str
    description: str
    input_schema: Mapping[str, Any]
    title: str | None = None
    annotations: Mapping[str, Any] | None = None
    source: str = "ours"

    @property
    def ours(self) -> bool:
        """Whether the tool is one of the agent under test."""
        return self.source == "ours"

    def listing(self) -> dict[str, Any]:
        """The tool as ``tools/list`` shows it (plus ``source``), for transcripts."""
        data: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            data["title"] = self.title
        data["description"] = self.description
        data["inputSchema"] = dict(self.input_schema)
        if self.annotations:
            data["annotations"] = dict(self.annotations)
        data["source"] = self.source
        return data

    def schema(self) -> ToolSchema:
        """The tool as a model request offers it (what clients pass on: name, description,
        input schema)."""
        return ToolSchema(self.name, self.description, self.input_schema)


def _from_listed(tool: types.Tool, source: str) -> OfferedTool:
    annotations = (
        tool.annotations.model_dump(by_alias=True, exclude_none=True, mode="json")
        if tool.annotations is not None
        else None
    )
    return OfferedTool(
        name=tool.name,
        description=tool.description or "",
        input_schema=dict(tool.input_schema),
        title=tool.title,
        annotations=annotations or None,
        source=source,
    )


async def listed_tools(client: Client, source: str = "ours") -> list[OfferedTool]:
    """Every tool ``client``'s server lists (all pages), as offered tools from ``source``."""
    tools: list[OfferedTool] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.extend(_from_listed(tool, source) for tool in page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


async def agent_decoys(paths: Sequence[Path], *, prefix: bool = False) -> list[OfferedTool]:
    """The tools of other agent files, as their own server lists them.

    Raises:
        DecoyError: a file cannot be loaded or served.
    """
    found: list[OfferedTool] = []
    for path in paths:
        try:
            agent = load_agent(path)
        except (SchemaError, OSError) as exc:
            raise DecoyError(f"the decoy agent file {path} cannot be loaded: {exc}") from exc
        try:
            async with (
                AgentServer([ServedAgent(agent, path)], prefix=prefix, history=False) as server,
                Client(server.server) as client,
            ):
                found.extend(await listed_tools(client, f"agent:{path}"))
        except ExportError as exc:
            raise DecoyError(f"the decoy agent file {path} cannot be served: {exc}") from exc
    return found


async def server_decoys(
    servers: Mapping[str, McpServerConfig],
    *,
    base_dir: Path | None = None,
    timeout: float = 30.0,  # noqa: ASYNC109 - each server's start bound, applied by the probe
) -> list[OfferedTool]:
    """The tools real MCP servers list (each started once, listed, stopped; nothing called).

    Raises:
        DecoyError: a server does not start or list its tools within ``timeout``.
    """
    found: list[OfferedTool] = []
    for name, config in servers.items():
        probed = await probe_server(config, base_dir=base_dir, timeout=timeout, name=name)
        if not probed.ok:
            tail = (
                f" (its stderr: {probed.stderr_tail.strip()[-300:]})" if probed.stderr_tail else ""
            )
            raise DecoyError(f"the decoy server {name!r} cannot be listed: {probed.error}{tail}")
        found.extend(
            OfferedTool(
                name=tool.name,
                description=tool.description,
                input_schema=tool.input_schema,
                annotations=tool.annotations,
                source=f"server:{name}",
            )
            for tool in probed.tools
        )
    return found


@cache
def _common() -> dict[str, list[dict[str, Any]]]:
    text = resources.files(__package__).joinpath("common_tools.json").read_text(encoding="utf-8")
    data: dict[str, list[dict[str, Any]]] = json.loads(text)
    return data


COMMON_SETS: tuple[str, ...] = tuple(_common())
"""The names of the bundled common tool sets (``calendar``, ``mail``, ``web``, ``files``)."""


def common_decoys(sets: Sequence[str] | None = None) -> list[OfferedTool]:
    """The bundled common tools of ``sets`` (None: every set), in the order given.

    Raises:
        DecoyError: a set name is not one of :data:`COMMON_SETS`.
    """
    chosen = list(COMMON_SETS) if sets is None else list(dict.fromkeys(sets))
    unknown = [name for name in chosen if name not in COMMON_SETS]
    if unknown:
        raise DecoyError(
            f"no bundled decoy set is named {', '.join(map(repr, unknown))} "
            f"(the sets: {', '.join(COMMON_SETS)})"
        )
    return [
        OfferedTool(
            name=tool["name"],
            description=tool["description"],
            input_schema=tool["inputSchema"],
            annotations=tool.get("annotations"),
            source=f"common:{name}",
        )
        for name in chosen
        for tool in _common()[name]
    ]


def merge_offers(ours: Sequence[OfferedTool], *decoys: Sequence[OfferedTool]) -> list[OfferedTool]:
    """Our tools then the decoys, each name once (ours win, then the first decoy listed)."""
    offered: dict[str, OfferedTool] = {tool.name: tool for tool in ours}
    for group in decoys:
        for tool in group:
            offered.setdefault(tool.name, tool)
    return list(offered.values())
