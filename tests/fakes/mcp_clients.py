"""What the served-server tests play on the client side: agent files, a scripted client model.

- ``write_agent``: a real ``*.agent.yaml`` file, built from a few keyword arguments (a fake model
  endpoint, tools, the agent's own MCP servers…), loaded by the server as any other file.
- ``ScriptedSampling``: a ``sampling_callback`` for ``mcp.Client`` that plays the client's model:
  each ``sampling/createMessage`` (2025-11-25) or embedded input request (2026-07-28) is answered
  by a function of the request, and every request is kept for assertions.
- ``ProgressLog``: a ``progress_callback`` that keeps what it received.
- ``serve_command``: the argv that launches ``python -m mcp_export serve`` in a subprocess.
- ``initialize_request`` / ``read_answers`` / ``start_raw_session`` / ``tool_call_request``: the
  raw JSON-RPC a client writes to a served process's stdin, and a reader that notes when each
  answer arrives on its stdout.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import mcp_types as types
import yaml
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import StdioServerParameters

__all__ = [
    "MCP_SERVER_TIME",
    "ProgressLog",
    "ScriptedSampling",
    "book_tool",
    "initialize_request",
    "read_answers",
    "sampled_text",
    "sampled_tool_use",
    "serve_command",
    "serve_params",
    "start_raw_session",
    "time_server",
    "tool_call_request",
    "write_agent",
]

REPO = Path(__file__).resolve().parents[2]
MCP_SERVER_TIME = str(Path(sys.executable).with_name("mcp-server-time"))
"""The reference time server installed next to this interpreter."""


def book_tool(name: str = "book_flight", **overrides: Any) -> dict[str, Any]:
    """A tool definition with a required string, an integer with a minimum and a default."""
    tool: dict[str, Any] = {
        "name": name,
        "description": "Books a flight for a traveller.",
        "parameters": {
            "type": "object",
            "properties": {
                "destination": {"type": "string", "description": "Where to fly."},
                "passengers": {"type": "integer", "minimum": 1, "default": 1},
            },
            "required": ["destination"],
        },
        "prompt": "Book a flight to {destination} for {passengers} passenger(s).",
    }
    tool.update(overrides)
    return tool


def write_agent(
    path: Path,
    *,
    name: str = "Travel Desk",
    version: str = "1.0.0",
    description: str = "Plans and books trips.",
    tools: Sequence[Mapping[str, Any]] | None = None,
    model: str | None = "openai:fake-model",
    base_url: str | None = None,
    api_key: str | None = "sk-test",
    system_prompt: str | None = None,
    mcp_servers: Mapping[str, Any] | None = None,
    tool_permission: str | None = None,
    settings: Mapping[str, Any] | None = None,
) -> Path:
    """Write an agent file and return its path.

    ``base_url`` points the ``openai`` provider at a fake model server; ``api_key`` None leaves
    the key out (so the agent has no credentials unless the environment has one).
    """
    data: dict[str, Any] = {
        "metadata": {
            "name": name,
            "version": version,
            "description": description,
            "tools": list(tools) if tools is not None else [book_tool()],
        },
        "settings": {},
    }
    if model is not None:
        data["settings"]["model"] = model
    if tool_permission is not None:
        data["settings"]["toolPermission"] = tool_permission
    data["settings"].update(settings or {})
    provider: dict[str, str] = {}
    if api_key is not None:
        provider["OPENAI_API_KEY"] = api_key
    if base_url is not None:
        provider["OPENAI_BASE_URL"] = base_url
    if provider:
        data["providers"] = {"openai": provider}
    if system_prompt is not None:
        data["systemPrompt"] = system_prompt
    if mcp_servers is not None:
        data["mcpServers"] = dict(mcp_servers)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def time_server(permission_required: bool = False) -> dict[str, Any]:
    """An ``mcpServers`` entry for the reference time server (UTC as local time)."""
    return {
        "type": "stdio",
        "command": MCP_SERVER_TIME,
        "args": ["--local-timezone", "UTC"],
        "serverToolDefaults": {"permissionRequired": permission_required},
    }


def sampled_text(text: str, *, model: str = "client-model") -> types.CreateMessageResult:
    """The client model's plain answer."""
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=text),
        model=model,
        stop_reason="endTurn",
    )


def sampled_tool_use(
    calls: Sequence[tuple[str, str, dict[str, Any]]], *, model: str = "client-model"
) -> types.CreateMessageResultWithTools:
    """The client model's answer asking for tools: ``(id, name, input)`` triples."""
    return types.CreateMessageResultWithTools(
        role="assistant",
        content=[types.ToolUseContent(type="tool_use", id=i, name=n, input=a) for i, n, a in calls],
        model=model,
        stop_reason="toolUse",
    )


Answer = types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData


def _last_text(params: types.CreateMessageRequestParams) -> str:
    for message in reversed(params.messages):
        blocks = message.content if isinstance(message.content, list) else [message.content]
        texts = [b.text for b in blocks if isinstance(b, types.TextContent)]
        if message.role == "user" and texts:
            return "".join(texts)
    return ""


def _tool_results(params: types.CreateMessageRequestParams) -> list[types.ToolResultContent]:
    found: list[types.ToolResultContent] = []
    for message in params.messages:
        blocks = message.content if isinstance(message.content, list) else [message.content]
        found.extend(b for b in blocks if isinstance(b, types.ToolResultContent))
    return found


@dataclass
class ScriptedSampling:
    """A client-side model for sampling: ``respond(params)`` answers each request.

    The default answers ``sampled: <last user text>``; ``tool_round`` builds a responder that
    asks for tools once, then answers with what they returned.
    """

    respond: Callable[[types.CreateMessageRequestParams], Answer] | None = None
    requests: list[types.CreateMessageRequestParams] = field(default_factory=list)

    async def __call__(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> Answer:
        self.requests.append(params)
        if self.respond is not None:
            return self.respond(params)
        return sampled_text(f"sampled: {_last_text(params)}")

    @staticmethod
    def tool_round(calls: Sequence[tuple[str, str, dict[str, Any]]]) -> ScriptedSampling:
        """Ask for ``calls`` on a fresh question, then answer ``done: <results>``."""

        def respond(params: types.CreateMessageRequestParams) -> Answer:
            results = _tool_results(params)
            if not results:
                return sampled_tool_use(calls)
            texts = [
                "".join(b.text for b in r.content if isinstance(b, types.TextContent))
                for r in results
            ]
            return sampled_text("done: " + " | ".join(texts))

        return ScriptedSampling(respond)


@dataclass
class ProgressLog:
    """A ``progress_callback`` keeping ``(progress, total, message)`` in arrival order."""

    updates: list[tuple[float, float | None, str | None]] = field(default_factory=list)

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.updates.append((progress, total, message))

    @property
    def messages(self) -> list[str]:
        """The messages received."""
        return [m or "" for _, _, m in self.updates]


def serve_command(*args: str) -> list[str]:
    """``python -m mcp_export serve ARGS…`` with this interpreter."""
    return [sys.executable, "-m", "mcp_export", "serve", *args]


def serve_params(*args: str, env: Mapping[str, str] | None = None) -> StdioServerParameters:
    """``StdioServerParameters`` launching ``python -m mcp_export serve ARGS…`` from the repo."""
    command = serve_command(*args)
    return StdioServerParameters(
        command=command[0], args=command[1:], cwd=str(REPO), env=dict(env) if env else None
    )


def initialize_request(client_name: str) -> dict[str, Any]:
    """The raw JSON-RPC ``initialize`` (id 1, protocol 2025-11-25) from a client named so."""
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": client_name, "version": "1"},
        },
    }


def read_answers(stdout: IO[bytes], arrived: dict[Any, float]) -> None:
    """Note in ``arrived`` the monotonic time each answer (by id) is read from ``stdout``."""
    for line in stdout:
        arrived[json.loads(line).get("id")] = time.monotonic()


def start_raw_session(process: subprocess.Popen[bytes], client_name: str) -> dict[Any, float]:
    """Start reading ``process``'s answers in a thread, then write ``initialize`` (id 1) and
    ``notifications/initialized`` to its stdin; the answers' arrival times (by id), filling."""
    assert process.stdin is not None and process.stdout is not None
    arrived: dict[Any, float] = {}
    threading.Thread(target=read_answers, args=(process.stdout, arrived), daemon=True).start()
    process.stdin.write(json.dumps(initialize_request(client_name)).encode() + b"\n")
    process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    process.stdin.flush()
    return arrived


def tool_call_request(request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The raw JSON-RPC ``tools/call`` of tool ``name`` with ``arguments``."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
