"""``metaagent serve AGENT_FILE…``: serve agents as an MCP server (stdio, or ``--http``).

stdout is the MCP protocol (stdio): everything this command says goes to stderr, through
``logging`` at ``--log-level``. This module imports the server, and with it the mcp SDK: the
command line imports it only to run ``serve`` (or to list every command's help).

Tool names: each agent's tools keep their names; with several agent files a name defined twice is
refused at start-up, unless ``--prefix`` names every tool ``<agent-slug>__<tool>`` (the agent's
name in lower case with dashes: ``travel-desk__book_flight``).

Exit codes: 0 the client closed the connection (or Ctrl-C), 1 the server failed while running,
2 usage errors and anything refused at start-up (an agent file, a tool-name clash, an address
exposed without a token).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

import anyio

from mcp_export.errors import ConfigurationError
from mcp_export.redact import RedactingFilter, remember_environment_references
from mcp_export.server.agent_server import AgentServer, load_served_agents
from mcp_export.server.http import TOKEN_ENV, check_exposure, parse_http_address
from schema_types.errors import AgentFileError

__all__ = ["register", "run"]

LOG_LEVELS = ("debug", "info", "warning", "error", "critical")

logger = logging.getLogger("mcp_export.serve")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``serve`` subcommand."""
    parser = subparsers.add_parser(
        "serve",
        help="serve agents' tools as an MCP server (stdio, or streamable HTTP)",
        description=(
            "Serve the tools of one or more agent files as one MCP server. Over stdio by default "
            "(for MCP clients that launch the server); --http serves streamable HTTP on "
            "127.0.0.1. Logs go to stderr."
        ),
    )
    parser.add_argument(
        "agent_files", nargs="+", metavar="AGENT_FILE", help="the agent files to serve"
    )
    parser.add_argument(
        "--http",
        metavar="[HOST:]PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp (HOST defaults to 127.0.0.1; "
        "PORT 0 picks a free port, logged at start-up)",
    )
    parser.add_argument(
        "--token",
        help="with --http: the bearer token clients must send (Authorization: Bearer TOKEN); "
        "default: the METAAGENT_TOKEN environment variable, which keeps it out of process lists",
    )
    parser.add_argument(
        "--prefix",
        action="store_true",
        help="name every tool <agent-slug>__<tool> (for agents whose tool names clash)",
    )
    parser.add_argument(
        "--no-sampling",
        action="store_true",
        help="never ask the client's model (MCP sampling), even when an agent has no credentials",
    )
    parser.add_argument(
        "--no-history", action="store_true", help="do not record calls in the history database"
    )
    parser.add_argument(
        "--log-level", choices=LOG_LEVELS, default="warning", help="what to log on stderr"
    )
    parser.set_defaults(func=run)


def _configure_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


def _announce(url: str) -> None:
    # Always said, whatever the log level: with port 0 it is the only way to learn the port.
    sys.stderr.write(f"metaagent serve: serving MCP over streamable HTTP at {url}\n")
    sys.stderr.flush()


def _refuse(message: str) -> int:
    sys.stderr.write(f"metaagent serve: {message}\n")
    return 2


def run(args: argparse.Namespace) -> int:
    """Run ``serve`` with parsed arguments; returns the exit code."""
    _configure_logging(args.log_level)

    if args.token and args.http is None:
        return _refuse("--token only applies with --http (stdio needs no token)")
    token: str | None = None
    address = None
    if args.http is not None:
        token = args.token or os.environ.get(TOKEN_ENV) or None
        try:
            address = parse_http_address(args.http)
            check_exposure(address, token)
        except ConfigurationError as exc:
            return _refuse(str(exc))

    try:
        agents = load_served_agents(args.agent_files)
        server = AgentServer(
            agents,
            prefix=args.prefix,
            sampling=not args.no_sampling,
            history=not args.no_history,
        )
    except AgentFileError as exc:
        return _refuse(f"cannot load the agent file: {exc}")
    except ConfigurationError as exc:
        return _refuse(str(exc))
    for served in agents:
        remember_environment_references(served.agent)

    async def main() -> None:
        async with server:
            if address is None:
                await server.run_stdio()
            else:
                await server.run_http(
                    address, token=token, log_level=args.log_level, on_ready=_announce
                )

    try:
        anyio.run(main)
    except KeyboardInterrupt:
        return 0
    except ConfigurationError as exc:  # e.g. the HTTP port is taken
        return _refuse(str(exc))
    except Exception:  # top of the command: report, exit non-zero
        logger.exception("the server stopped on an unexpected error")
        return 1
    return 0
