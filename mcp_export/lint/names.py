"""Per-client rules on tool names, descriptions and the number of tools.

Each rule cites where it comes from; a limit that could not be traced to a client's docs or
source is not checked here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from mcp_export.lint.model import Finding, LintClient, LintTool

__all__ = ["CLIENT_RULES", "ListRule"]

ListRule = Callable[[Sequence[LintTool], str], list[Finding]]
"""A client's rules: the served tools and the server's name in the client → findings."""

# --- Sources ----------------------------------------------------------------------------------

ANTHROPIC_NAME_SOURCE = (
    "Anthropic Messages API, tools[].name: 'Must match the regex ^[a-zA-Z0-9_-]{1,64}$' "
    "(https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use)"
)
CLAUDE_CODE_PREFIX_SOURCE = (
    "Claude Code names MCP tools mcp__<server>__<tool> "
    "(https://docs.anthropic.com/en/docs/claude-code/iam, MCP permission rules); the name "
    "sent to the model is held to the Anthropic API's 64-character rule "
    "(https://github.com/sparfenyuk/mcp-proxy/issues/45)"
)
VSCODE_SERVER_SOURCE = (
    "microsoft/vscode src/vs/workbench/contrib/mcp/common/mcpServer.ts (toolInvalidCharRe "
    "/[^a-z0-9_-]/gi replaced by '_'; a tool without a description gets '<empty>'; the tool id "
    "is (prefix + name).slice(0, McpToolName.MaxLength)) and mcpTypes.ts (McpToolName: "
    "Prefix 'mcp_', MaxPrefixLen 18, MaxLength 64)"
)
VSCODE_COUNT_SOURCE = (
    "VS Code docs, Use tools in chat: 'A chat request can have a maximum of 128 tools enabled "
    "at a time' (https://code.visualstudio.com/docs/copilot/chat/chat-tools)"
)
CURSOR_NAME_SOURCE = (
    "Cursor's MCP settings warning 'Combined server and tool name length (N) exceeds 60 "
    "characters', the tool filtered out (quoted in https://github.com/awslabs/mcp/issues/1283 "
    "and https://github.com/ComposioHQ/composio/issues/2788, where a combined length of 60 "
    "is refused)"
)
CURSOR_COUNT_SOURCE = (
    "Cursor docs, Model Context Protocol, limitations: 'Cursor currently only sends the first "
    "40 tools to the Agent' (https://docs.cursor.com/context/model-context-protocol; reported "
    "in https://github.com/modelcontextprotocol/.github/discussions/360)"
)
OPENAI_NAME_SOURCE = (
    "OpenAI API reference, tools[].function.name: 'Must be a-z, A-Z, 0-9, or contain "
    "underscores and dashes, with a maximum length of 64' "
    "(https://platform.openai.com/docs/api-reference/chat/create; openai/openai-python "
    "src/openai/types/shared_params/function_definition.py)"
)
OPENAI_DESCRIPTION_SOURCE = (
    "OpenAI API error string_above_max_length: \"Invalid 'tools[N].function.description': "
    'string too long. Expected a string with maximum length 1024" '
    "(https://github.com/getsentry/sentry-mcp/issues/106)"
)
OPENAI_COUNT_SOURCE = (
    "OpenAI API reference, tools: 'A max of 128 functions are supported' "
    "(https://platform.openai.com/docs/api-reference/chat/create)"
)
GEMINI_NAME_SOURCE = (
    "Gemini API FunctionDeclaration.name: 'Must be a-z, A-Z, 0-9, or contain underscores and "
    "dashes, with a maximum length of 63' (googleapis/googleapis "
    "google/ai/generativelanguage/v1beta/content.proto)"
)

_API_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_GEMINI_NAME = re.compile(r"[A-Za-z0-9_-]{1,63}")
_NOT_API_CHARACTER = re.compile(r"[^A-Za-z0-9_-]")
_VSCODE_INVALID = re.compile(r"[^a-z0-9_-]", re.IGNORECASE)

VSCODE_NAME_ROOM = 64 - 18
"""Characters of a tool name VS Code keeps whatever the server's prefix (64 minus the longest
prefix, 18)."""
CURSOR_COMBINED_LIMIT = 60
CURSOR_TOOL_LIMIT = 40
VSCODE_TOOL_LIMIT = 128
OPENAI_TOOL_LIMIT = 128
OPENAI_DESCRIPTION_LIMIT = 1024


def _bad_characters(name: str, pattern: re.Pattern[str]) -> str:
    return "".join(sorted(set(pattern.findall(name))))


def _claude_desktop(tools: Sequence[LintTool], server: str) -> list[Finding]:
    found: list[Finding] = []
    for tool in tools:
        if _API_NAME.fullmatch(tool.name):
            continue
        bad = _bad_characters(tool.name, _NOT_API_CHARACTER)
        why = f"has {bad!r}" if bad else f"is {len(tool.name)} characters long"
        found.append(
            Finding(
                "claude-desktop",
                tool.name,
                "name",
                "error",
                f"the name {why}: Claude refuses tool names outside 1 to 64 letters, digits, "
                "'_' and '-'; rename the tool",
                ANTHROPIC_NAME_SOURCE,
            )
        )
    return found


def claude_code_name(server: str, tool: str) -> str:
    """The name Claude Code gives a server's tool."""
    return f"mcp__{_NOT_API_CHARACTER.sub('_', server)}__{tool}"


def _claude_code(tools: Sequence[LintTool], server: str) -> list[Finding]:
    found: list[Finding] = []
    for tool in tools:
        full = claude_code_name(server, tool.name)
        if _API_NAME.fullmatch(full):
            continue
        bad = _bad_characters(tool.name, _NOT_API_CHARACTER)
        if bad:
            why = f"the name has {bad!r}, which"
        else:
            why = f"{full} is {len(full)} characters, more than the 64"
        found.append(
            Finding(
                "claude-code",
                tool.name,
                "name-after-prefix",
                "error",
                f"{why} the Anthropic API allows in a tool name; shorten the tool or the "
                f"server name (--name; {server!r} now)",
                CLAUDE_CODE_PREFIX_SOURCE,
            )
        )
    return found


def _vscode(tools: Sequence[LintTool], server: str) -> list[Finding]:
    found: list[Finding] = []
    for tool in tools:
        bad = _bad_characters(tool.name, _VSCODE_INVALID)
        if bad:
            renamed = _VSCODE_INVALID.sub("_", tool.name)
            found.append(
                Finding(
                    "vscode",
                    tool.name,
                    "name-characters",
                    "warning",
                    f"VS Code renames it {renamed!r} (names may only hold a-z, 0-9, '_' and "
                    f"'-'; it has {bad!r})",
                    VSCODE_SERVER_SOURCE,
                )
            )
        if len(tool.name) > VSCODE_NAME_ROOM:
            found.append(
                Finding(
                    "vscode",
                    tool.name,
                    "name-length",
                    "warning",
                    f"the name is {len(tool.name)} characters: VS Code keeps the first 64 of "
                    f"its prefix (up to 18) and the name, so past {VSCODE_NAME_ROOM} it may be "
                    "cut, and two tools cut alike collide",
                    VSCODE_SERVER_SOURCE,
                )
            )
        if not tool.description.strip():
            found.append(
                Finding(
                    "vscode",
                    tool.name,
                    "description",
                    "warning",
                    "no description: VS Code shows '<empty>' to the model and warns that tools "
                    "must be described to be called",
                    VSCODE_SERVER_SOURCE,
                )
            )
    if len(tools) > VSCODE_TOOL_LIMIT:
        found.append(_too_many("vscode", len(tools), VSCODE_TOOL_LIMIT, VSCODE_COUNT_SOURCE))
    return found


def _cursor(tools: Sequence[LintTool], server: str) -> list[Finding]:
    found: list[Finding] = []
    for tool in tools:
        combined = len(server) + len(tool.name)
        if combined >= CURSOR_COMBINED_LIMIT:
            found.append(
                Finding(
                    "cursor",
                    tool.name,
                    "name-after-prefix",
                    "error",
                    f"server name {server!r} and tool name together are {combined} characters: "
                    f"Cursor filters the tool out at {CURSOR_COMBINED_LIMIT}; shorten either "
                    "(--name sets the server's)",
                    CURSOR_NAME_SOURCE,
                )
            )
    if len(tools) > CURSOR_TOOL_LIMIT:
        found.append(
            Finding(
                "cursor",
                None,
                "tool-count",
                "warning",
                f"{len(tools)} tools: Cursor sends only the first {CURSOR_TOOL_LIMIT} to its "
                "agent (with every other server's tools counted too); split the agent",
                CURSOR_COUNT_SOURCE,
            )
        )
    return found


def _openai(tools: Sequence[LintTool], server: str) -> list[Finding]:
    found: list[Finding] = []
    for tool in tools:
        if not _API_NAME.fullmatch(tool.name):
            found.append(
                Finding(
                    "openai",
                    tool.name,
                    "name",
                    "error",
                    "the API refuses the request: function names are 1 to 64 letters, digits, "
                    "'_' and '-'; rename the tool",
                    OPENAI_NAME_SOURCE,
                )
            )
        if len(tool.description) > OPENAI_DESCRIPTION_LIMIT:
            found.append(
                Finding(
                    "openai",
                    tool.name,
                    "description-length",
                    "error",
                    f"the description is {len(tool.description)} characters: the API refuses "
                    f"more than {OPENAI_DESCRIPTION_LIMIT}; move detail into the parameters' "
                    "descriptions",
                    OPENAI_DESCRIPTION_SOURCE,
                )
            )
    if len(tools) > OPENAI_TOOL_LIMIT:
        found.append(_too_many("openai", len(tools), OPENAI_TOOL_LIMIT, OPENAI_COUNT_SOURCE))
    return found


def _gemini_names(tools: Sequence[LintTool], server: str) -> list[Finding]:
    return [
        Finding(
            "gemini",
            tool.name,
            "name",
            "error",
            "function names are 1 to 63 letters, digits, '_' and '-'; rename the tool",
            GEMINI_NAME_SOURCE,
        )
        for tool in tools
        if not _GEMINI_NAME.fullmatch(tool.name)
    ]


def _too_many(client: LintClient, count: int, limit: int, source: str) -> Finding:
    return Finding(
        client,
        None,
        "tool-count",
        "error",
        f"{count} tools: more than the {limit} a request may carry (other servers' tools "
        "count too); split the agent",
        source,
    )


CLIENT_RULES: dict[LintClient, ListRule] = {
    "claude-desktop": _claude_desktop,
    "claude-code": _claude_code,
    "vscode": _vscode,
    "cursor": _cursor,
    "openai": _openai,
    "gemini": _gemini_names,
}
