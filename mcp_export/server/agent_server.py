"""The served MCP server: one or more agent files behind the SDK's low-level ``Server``.

``AgentServer`` turns loaded agents into an MCP server whose tools are data (the agents' tool
definitions), answering both protocol eras the SDK speaks (2025-11-25 with its ``initialize``
handshake, 2026-07-28 without). What each part does:

- ``server.tools``: the tool list (names, schemas, annotations) and name clashes;
- ``server.call``: one ``tools/call`` (arguments → prompt → chat session → result);
- ``server.model``: which model answers (the agent's provider, or the client's by sampling);
- ``server.sampling``: MCP sampling in both eras, behind the provider interface;
- ``server.http``: streamable HTTP with an optional bearer token;
- ``server.stdio`` and ``server.screen``: stdio, and the check every incoming message passes
  on either transport before the SDK parses it;
- ``server.request_state``: the key that seals a 2026-07-28 sampling round trip's state.

Start-up is kept as cheap as a bare SDK server's: loading the agents and building the tool list
touch no provider SDK, no JSON-Schema validator and no tool server. Those are created on the first
call that needs them, then shared by all calls of the same agent (the agent's toolbox, its
provider); every call gets its own chat session.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from anyio.abc import AsyncResource
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from opentelemetry import trace

from mcp_export.server.access import served_tool_scopes
from mcp_export.server.http import SHUTDOWN_GRACE, serve_http
from mcp_export.server.request_state import LazyRequestStateBoundary, state_keys
from mcp_export.server.runtime import AgentRuntime, CallPolicy
from mcp_export.server.scopes import ToolScopes, granted_scopes
from mcp_export.server.stdio import robust_stdio_server
from mcp_export.server.tools import ServedAgent, ServedTool, build_catalogue
from schema_types.files.agent_file import load_agent

if TYPE_CHECKING:
    from mcp_export.history.store import HistoryStore
    from mcp_export.server.http import HttpAddress
    from mcp_export.server.limits import Limits
    from mcp_export.server.oauth import OAuthSettings
    from mcp_export.server.ops import ServerMetrics

__all__ = ["AgentServer", "ServedAgent", "load_served_agents"]

try:  # a private module of the SDK: should a later SDK move it, its middleware simply stays
    from mcp.server._otel import OpenTelemetryMiddleware
except ImportError:  # pragma: no cover
    _SPAN_MIDDLEWARE: tuple[type, ...] = ()
else:
    _SPAN_MIDDLEWARE = (OpenTelemetryMiddleware,)

logger = logging.getLogger(__name__)


def load_served_agents(paths: Sequence[str | Path]) -> list[ServedAgent]:
    """Load agent files for serving.

    Raises:
        AgentFileError: a file cannot be read or is not a valid agent (the message says where).
    """
    served: list[ServedAgent] = []
    for raw in paths:
        path = Path(raw).expanduser().resolve()
        served.append(ServedAgent(load_agent(path), path))
    return served


def _server_identity(agents: Sequence[ServedAgent]) -> tuple[str, str, str | None]:
    """serverInfo name and version, and the instructions, from the agents' metadata."""
    metas = [s.agent.metadata for s in agents]
    if len(metas) == 1:
        meta = metas[0]
        return meta.name, meta.version, meta.description or None
    name = " + ".join(m.name for m in metas)
    versions = {m.version for m in metas}
    version = metas[0].version if len(versions) == 1 else "+".join(m.version for m in metas)
    parts = [f"{m.name}: {m.description}" for m in metas if m.description]
    return name, version, "\n\n".join(parts) or None


class _AgentSdkServer(Server[Any]):
    """The SDK's low-level server, declaring the same capabilities on every transport.

    The HTTP transport and the in-memory client build the ``initialize`` answer with the
    options' defaults, which declare no tool list changes; this server announces them (see
    ``AgentServer._tools_changed``), so its defaults say so on stdio, HTTP and in memory alike.
    """

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> Any:
        """The ``initialize`` answer's options (tool list changes are announced)."""
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


NOT_INITIALIZED = (
    "Session not initialized: send an initialize request first (protocol 2025-11-25), or carry "
    "the protocol version in params._meta of every request (2026-07-28)"
)


async def _explain_not_initialized(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    """Say why a request before ``initialize`` is refused, and what to send instead.

    The SDK refuses such a request (anything but ``initialize`` and ``ping`` on a 2025-11-25
    connection) with the error a malformed request gets, "Invalid request parameters", kept
    for compatibility with its earlier versions; that sends a client looking at its arguments.
    """
    try:
        return await call_next(ctx)
    except MCPError as exc:
        if (
            exc.error.code == types.INVALID_PARAMS
            and exc.error.message == "Invalid request parameters"
            and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS
            and ctx.session.client_params is None
        ):
            raise MCPError(code=types.INVALID_REQUEST, message=NOT_INITIALIZED) from exc
        raise


def _tracing_installed() -> bool:
    """Whether OpenTelemetry tracing is set up in this process (a tracer provider installed, as
    ``opentelemetry-instrument`` or ``OTEL_PYTHON_TRACER_PROVIDER`` does)."""
    provider = trace.get_tracer_provider()
    return not isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider)


def _without_tracing(middleware: list[Any]) -> list[Any]:
    """The SDK's middleware without its OpenTelemetry span per message.

    The SDK puts it on every server (a no-op until a tracer provider is installed) and says to
    drop it from the list to opt out: without a provider its span bookkeeping is a share of the
    event loop's time under many concurrent calls (docs/reference/benchmarks.md); with one installed
    it stays.
    """
    return [m for m in middleware if not isinstance(m, _SPAN_MIDDLEWARE)]


class AgentServer(AsyncResource):
    """An MCP server serving the tools of one or more agents.

    Use it as an async context manager (or call ``aclose``) so the agents' tool servers and
    model connections are closed at the end.

    Args:
        agents: the agents to serve, in order (their tools are listed in that order).
        prefix: serve every tool as ``<agent-slug>__<tool>`` (see ``server.tools``).
        sampling: allow the client's model through MCP sampling when an agent's own provider
            has no credentials (``--no-sampling`` turns this off).
        history: record every call in this history store; a str: the location of a store
            (passed on unchanged, opened on the first call); True: the default store in
            METAAGENT_HOME (opened on the first call); False/None: no history.
        tool_scopes: the scope each restricted tool needs in a caller's OAuth token, besides
            the agent files' ``settings.access.toolScopes`` (``server.access``); a caller
            without it neither lists nor calls the tool (nor gets it as a prompt).

    The tools of agents with ``settings.toolsAsPrompts`` are served as prompts too
    (``server.prompts``); a server with no such agent does not offer prompts. A sampling round
    trip's state is sealed under ``METAAGENT_STATE_KEY`` when it is set (``server.request_state``).

    Raises:
        ToolNameClash: two agents define the same tool name and ``prefix`` is false.
        ToolScopesError: ``tool_scopes`` names a tool that is not served.
        ConfigurationError: a tool cannot be served as written, or ``METAAGENT_STATE_KEY`` is
            not a usable key.
    """

    def __init__(
        self,
        agents: Sequence[ServedAgent],
        *,
        prefix: bool = False,
        sampling: bool = True,
        history: HistoryStore | bool | str | None = True,
        tool_scopes: ToolScopes | None = None,
        read_cache: bool = True,
    ) -> None:
        if not agents:
            raise ValueError("serve at least one agent")
        self.agents = list(agents)
        self.catalogue: dict[str, ServedTool] = build_catalogue(self.agents, prefix=prefix)
        self.tool_scopes = served_tool_scopes(
            self.catalogue, tool_scopes.needed if tool_scopes is not None else None
        )
        self.tool_scopes.check(self.catalogue)
        keys = state_keys(os.environ)
        self.policy = CallPolicy(sampling=sampling, history=history, read_cache=read_cache)
        self._runtimes = {id(s): AgentRuntime(s, self.policy) for s in self.agents}
        name, version, instructions = _server_identity(self.agents)
        self.server: Server[Any] = _AgentSdkServer(
            name,
            version=version,
            instructions=instructions,
            on_call_tool=self._on_call_tool,
        )
        # Registered this way (not on_list_tools=) because it answers wire JSON, not a model.
        self.server.add_request_handler(
            "tools/list", types.PaginatedRequestParams, self._on_list_tools
        )
        if not _tracing_installed():
            self.server.middleware = _without_tracing(self.server.middleware)
        self.server.middleware.append(_explain_not_initialized)
        self.server.middleware.append(LazyRequestStateBoundary(name, keys))
        self._listing_cache: dict[str, Any] | None = None
        self.metrics: ServerMetrics | None = None
        self.prompt_names = [
            served_name
            for served_name, tool in self.catalogue.items()
            if tool.owner.agent.settings.tools_as_prompts
        ]
        if self.prompt_names:
            self.server.add_request_handler(
                "prompts/list", types.PaginatedRequestParams, self._on_list_prompts
            )
            self.server.add_request_handler(
                "prompts/get", types.GetPromptRequestParams, self._on_get_prompt
            )

    def initialization_options(self) -> Any:
        """The ``initialize`` answer's options (tool list changes are announced)."""
        return self.server.create_initialization_options()

    def runtime(self, tool: ServedTool) -> AgentRuntime:
        """The shared per-agent state (toolbox, provider) behind ``tool``."""
        return self._runtimes[id(tool.owner)]

    # --- handlers -------------------------------------------------------------------------------

    async def _on_list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> dict[str, Any]:
        cached = self._listing_cache
        if cached is None:
            # Wire JSON, not models: the SDK checks the result against the protocol version's
            # schema anyway, and skipping a model round trip keeps the first listing quick.
            tools = [
                tool.listing(self.runtime(tool).inner_tools) for tool in self.catalogue.values()
            ]
            # The fields ListToolsResult would add (2026-07-28 requires them; 2025-11-25 drops
            # them): not cacheable, as the list changes once inner tools are known.
            cached = self._listing_cache = {
                "ttlMs": 0,
                "cacheScope": "private",
                "tools": tools,
                "resultType": "complete",
            }
        if self.tool_scopes.needed:
            granted = granted_scopes(ctx.request)
            allowed = [t for t in cached["tools"] if self.tool_scopes.allows(t["name"], granted)]
            return cached | {"tools": allowed}
        return cached

    def _refuse_scope(self, ctx: ServerRequestContext[Any], name: str) -> bool:
        """Whether the caller's token lacks ``name``'s scope (then the refusal is counted)."""
        if self.tool_scopes.allows(name, granted_scopes(ctx.request)):
            return False
        logger.warning("refused a call of %s: the caller's token lacks its scope", name)
        if self.metrics is not None:
            self.metrics.refused("scope")
        return True

    async def _on_call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        tool = self.catalogue.get(params.name)
        if tool is None or self._refuse_scope(ctx, params.name):
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        # The call pipeline loads with the first call: start-up stays a bare SDK server's.
        from mcp_export.server.call import run_call

        runtime = self.runtime(tool)
        known = runtime.inner_tools
        result = await run_call(ctx, tool, runtime, params, metrics=self.metrics)
        if runtime.inner_tools != known:
            await self._tools_changed(ctx)
        return result

    async def _on_list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        # Loaded with the first prompt request, as the call pipeline is with the first call.
        from mcp_export.server.prompts import list_prompts

        granted = granted_scopes(ctx.request)
        return list_prompts(
            {
                name: self.catalogue[name]
                for name in self.prompt_names
                if self.tool_scopes.allows(name, granted)
            }
        )

    async def _on_get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        from mcp_export.server.prompts import get_prompt

        tool = self.catalogue.get(params.name) if params.name in self.prompt_names else None
        if tool is None or self._refuse_scope(ctx, params.name):
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"Unknown prompt: {params.name} (prompts/list names the prompts served)",
            )
        return await get_prompt(tool, params.arguments)

    async def _tools_changed(self, ctx: ServerRequestContext[Any]) -> None:
        """The agent's inner tools became known: derived annotations may differ now."""
        self._listing_cache = None
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return  # 2026-07-28 announces changes only on subscriptions/listen streams
        try:
            await ctx.session.send_tool_list_changed()
        except Exception:  # a notification that cannot be sent must not fail the call
            logger.debug("could not announce the tool list change", exc_info=True)

    # --- running --------------------------------------------------------------------------------

    async def run_stdio(self, *, shutdown_grace: float = SHUTDOWN_GRACE) -> None:
        """Serve over stdin/stdout until the client closes stdin (or stops reading stdout).

        Args:
            shutdown_grace: once stdin has ended, how long the requests already read may take to
                be answered before the server stops (``server.stdio``).
        """
        try:
            async with robust_stdio_server(grace=shutdown_grace) as (read_stream, write_stream):
                await self.server.run(read_stream, write_stream, self.initialization_options())
        except* BrokenPipeError:  # nobody reads the answers any more: an end, not a crash
            logger.warning("the client closed the server's stdout; stopping")

    async def run_http(
        self,
        address: HttpAddress,
        *,
        token: str | None,
        log_level: str = "warning",
        on_ready: Callable[[str], None] | None = None,
        oauth: OAuthSettings | None = None,
        stateless: bool = False,
        shutdown_grace: float = SHUTDOWN_GRACE,
        limits: Limits | None = None,
    ) -> None:
        """Serve over streamable HTTP until cancelled or stopped by a signal (see
        ``server.http.serve_http``, which also says what SIGTERM and ``shutdown_grace`` do,
        and what ``limits`` do).

        Besides ``/mcp``: ``/healthz``, ``/readyz`` (ready once the history store answers, until
        shutdown starts) and ``/metrics`` (the calls of this process, ``server.ops``).
        """
        # HTTP only: stdio stays lean.
        from mcp_export.server.ops import READY_PATH, ServerMetrics, ops_routes

        self.metrics = ServerMetrics(self.catalogue)
        await serve_http(
            self.server,
            address,
            token=token,
            log_level=log_level,
            on_ready=on_ready,
            oauth=oauth,
            stateless=stateless,
            extra_routes=ops_routes(self.metrics, self._ready),
            ready_path=READY_PATH,
            shutdown_grace=shutdown_grace,
            limits=limits,
            on_refused=self.metrics.refused,
        )

    async def _ready(self) -> str | None:
        """Why this server cannot take calls now, or None: its history store must answer."""
        return await anyio.to_thread.run_sync(self.policy.history.problem)

    async def aclose(self) -> None:
        """Close every agent's tool servers, model connections and the history store."""
        with anyio.CancelScope(shield=True):
            for runtime in self._runtimes.values():
                await runtime.aclose()
            await self.policy.aclose()
