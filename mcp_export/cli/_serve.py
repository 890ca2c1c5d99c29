"""``metaagent serve AGENT_FILE…``: serve agents as an MCP server (stdio, or ``--http``).

stdout is the MCP protocol (stdio): everything this command says goes to stderr, through
``logging`` at ``--log-level``. This module imports the server, and with it the mcp SDK: the
command line imports it only to run ``serve`` (or to list every command's help).

Tool names: each agent's tools keep their names; with several agent files a name defined twice is
refused at start-up, unless ``--prefix`` names every tool ``<agent-slug>__<tool>`` (the agent's
name in lower case with dashes: ``travel-desk__book_flight``).

Access over HTTP: ``--token`` for one person (a shared secret), or OAuth for a team: the server
is then a protected resource of the authorization server ``--oauth-issuer`` and checks every
access token's signature (or asks the issuer, ``--oauth-introspect``), issuer, audience
(``--oauth-resource``), expiry and scopes (``--oauth-scope``).

Saying no per caller over HTTP: ``--rate-limit CALLS/PERIOD`` and ``--calls-at-once N`` per
caller (429 with ``Retry-After`` over them), ``--tool-scope TOOL=SCOPE`` (with OAuth: a token
without SCOPE neither lists nor calls TOOL); they override the agent files'
``settings.access`` (``server.access``).

Stopping over HTTP: Ctrl-C stops at once; SIGTERM (a supervisor's stop) first lets the calls
under way finish for up to ``--shutdown-grace`` seconds, refusing new ones (``server.http``).
Over stdio, the end of stdin first lets the requests already read be answered, for up to the same
grace (``server.stdio``).

Exit codes: 0 the client closed the connection (or Ctrl-C, or SIGTERM over HTTP), 1 the server
failed while running, 2 usage errors and anything refused at start-up (an agent file, a tool-name
clash, an address exposed without a token, an authorization server that cannot be reached).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable
from typing import TypeVar

import anyio

from mcp_export.errors import ConfigurationError, HistoryError
from mcp_export.redact import RedactingFilter, remember_environment_references, remember_secret
from mcp_export.server.access import served_limits
from mcp_export.server.agent_server import AgentServer, load_served_agents
from mcp_export.server.collector import tune_for_serving
from mcp_export.server.http import (
    SHUTDOWN_GRACE,
    TOKEN_ENV,
    check_exposure,
    parse_http_address,
    resource_url,
)
from mcp_export.server.limits import parse_rate
from mcp_export.server.oauth import CLIENT_SECRET_ENV, ISSUER_TIMEOUT, OAuthSettings
from mcp_export.server.scopes import ToolScopes, parse_tool_scope
from schema_types.errors import AgentFileError

__all__ = ["register", "run"]

LOG_LEVELS = ("debug", "info", "warning", "error", "critical")

logger = logging.getLogger("mcp_export.serve")
_T = TypeVar("_T")


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
    oauth = parser.add_argument_group(
        "OAuth (with --http)",
        "Serve as an OAuth 2.1 protected resource: clients send access tokens issued by an "
        "authorization server (Keycloak, Entra ID, Auth0, Okta…) for this server's URL.",
    )
    oauth.add_argument(
        "--oauth-issuer",
        metavar="URL",
        help="the authorization server's issuer URL (its metadata is read at start-up); "
        "excludes --token",
    )
    oauth.add_argument(
        "--oauth-resource",
        metavar="URL",
        help="this server's URL as clients reach it, the audience tokens must be issued for "
        "(default: the served http://HOST:PORT/mcp)",
    )
    oauth.add_argument(
        "--oauth-scope",
        metavar="SCOPE",
        action="append",
        default=[],
        help="a scope every token must hold (repeat for several); others get 403",
    )
    oauth.add_argument(
        "--oauth-introspect",
        action="store_true",
        help="ask the issuer's introspection endpoint about each token (opaque tokens) instead "
        "of checking JWT signatures here; needs --oauth-client-id",
    )
    oauth.add_argument(
        "--oauth-client-id",
        metavar="ID",
        help=f"this server's client id at the issuer, for introspection; its secret comes from "
        f"the {CLIENT_SECRET_ENV} environment variable only",
    )
    oauth.add_argument(
        "--oauth-timeout",
        metavar="SECONDS",
        type=_issuer_timeout,
        help="how long one request to the authorization server (metadata, keys, introspection) "
        f"may take, from connecting to its last byte (default: {ISSUER_TIMEOUT:g})",
    )
    limits = parser.add_argument_group(
        "Saying no per caller (with --http)",
        "A caller is an OAuth token's principal, else the --token holder, else the client's "
        "address. A tool call over a limit is answered 429 with Retry-After; refusals are "
        "counted in /metrics (metaagent_caller_refusals_total).",
    )
    limits.add_argument(
        "--rate-limit",
        metavar="CALLS/PERIOD",
        type=_rate,
        help="tool calls each caller may start per period: 30/min, 5/10s, 1000/h",
    )
    limits.add_argument(
        "--calls-at-once",
        metavar="N",
        type=_at_once,
        help="tool calls each caller may have running at the same time",
    )
    limits.add_argument(
        "--tool-scope",
        metavar="TOOL=SCOPE",
        action="append",
        default=[],
        type=_tool_scope,
        help="with --oauth-issuer: TOOL is listed and callable only for tokens holding SCOPE "
        "(repeat for several tools), e.g. book_flight=tools:book_flight",
    )
    parser.add_argument(
        "--stateless",
        action="store_true",
        help="with --http: keep no sessions, so any instance behind a load balancer can answer "
        "any request (both protocol eras; no server-to-client requests in the middle of a call)",
    )
    parser.add_argument(
        "--shutdown-grace",
        metavar="SECONDS",
        type=_grace,
        help="with --http: on SIGTERM, how long the calls under way may take to finish while "
        "new calls are refused and /readyz answers 503; keep it under the supervisor's wait "
        "before it kills (Kubernetes: terminationGracePeriodSeconds). Over stdio: once stdin "
        "ends, how long the requests already read may take to be answered. 0 stops at once, "
        f"as Ctrl-C does (default: {SHUTDOWN_GRACE:g})",
    )
    parser.add_argument(
        "--store",
        metavar="URL",
        help="keep history and conversations in this store: a SQLite file path or "
        "postgresql://user@host/db (default: history.sqlite3 in the data folder)",
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


def _grace(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 <= seconds <= 3600:
        raise argparse.ArgumentTypeError(f"expected 0 to 3600 seconds, got {text}")
    return seconds


def _option_value(option: str, parse: Callable[[str], _T]) -> Callable[[str], _T]:
    """An argparse ``type`` reading ``option``'s value with ``parse``, its error said without
    the option and value argparse repeats."""

    def value(text: str) -> _T:
        try:
            return parse(text)
        except ConfigurationError as exc:
            raise argparse.ArgumentTypeError(
                str(exc).removeprefix(f"{option} {text!r}: ")
            ) from None

    return value


_rate = _option_value("--rate-limit", parse_rate)
_tool_scope = _option_value("--tool-scope", parse_tool_scope)


def _at_once(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of calls, 1 or more: {text!r}")
    return int(text)


def _issuer_timeout(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 < seconds <= 300:
        raise argparse.ArgumentTypeError(
            f"expected more than 0 and at most 300 seconds, got {text}"
        )
    return seconds


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


_HTTP_ONLY = (
    ("token", "--token"),
    ("oauth_issuer", "--oauth-issuer"),
    ("oauth_resource", "--oauth-resource"),
    ("oauth_scope", "--oauth-scope"),
    ("oauth_introspect", "--oauth-introspect"),
    ("oauth_client_id", "--oauth-client-id"),
    ("oauth_timeout", "--oauth-timeout"),
    ("stateless", "--stateless"),
    ("rate_limit", "--rate-limit"),
    ("calls_at_once", "--calls-at-once"),
    ("tool_scope", "--tool-scope"),
)


def _oauth_settings(args: argparse.Namespace, token: str | None) -> OAuthSettings | str | None:
    """The OAuth settings the flags ask for (None: no OAuth), or what is wrong with them."""
    if args.oauth_issuer is None:
        others = [
            flag
            for name, flag in _HTTP_ONLY
            if name.startswith("oauth_") and name != "oauth_issuer" and getattr(args, name)
        ]
        if others:
            return f"{others[0]} only applies with --oauth-issuer URL"
        return None
    if args.token:
        return (
            "--token and --oauth-issuer exclude each other: --token for one person, OAuth for "
            "a team"
        )
    if token:
        return (
            f"--oauth-issuer: unset the {TOKEN_ENV} environment variable; a shared token and "
            "OAuth exclude each other"
        )
    for flag, url in (
        ("--oauth-issuer", args.oauth_issuer),
        ("--oauth-resource", args.oauth_resource),
    ):
        if url is not None and not url.startswith(("https://", "http://")):
            return f"{flag} {url!r}: expected an http(s) URL"
    secret = os.environ.get(CLIENT_SECRET_ENV) or None
    if args.oauth_introspect and not (args.oauth_client_id and secret):
        return (
            "--oauth-introspect needs this server's client credentials at the issuer: "
            f"--oauth-client-id ID and the secret in the {CLIENT_SECRET_ENV} environment variable"
        )
    if secret:
        remember_secret(secret)
    return OAuthSettings(
        issuer=args.oauth_issuer,
        resource=args.oauth_resource,
        scopes=tuple(args.oauth_scope),
        introspect=args.oauth_introspect,
        client_id=args.oauth_client_id,
        client_secret=secret,
        timeout=ISSUER_TIMEOUT if args.oauth_timeout is None else args.oauth_timeout,
    )


def run(args: argparse.Namespace) -> int:
    """Run ``serve`` with parsed arguments; returns the exit code."""
    _configure_logging(args.log_level)

    if args.http is None:
        for name, flag in _HTTP_ONLY:
            if getattr(args, name):
                return _refuse(f"{flag} only applies with --http (stdio needs no such setting)")
    if args.store is not None and args.no_history:
        return _refuse("--store and --no-history exclude each other: keep the history or not")
    token: str | None = None
    address = None
    oauth: OAuthSettings | None = None
    if args.http is not None:
        token = args.token or os.environ.get(TOKEN_ENV) or None
        settings = _oauth_settings(args, token)
        if isinstance(settings, str):
            return _refuse(settings)
        oauth = settings
        if args.tool_scope and oauth is None:
            return _refuse(
                "--tool-scope needs --oauth-issuer: scopes come from the callers' OAuth access "
                "tokens (a --token holder may use every tool)"
            )
        try:
            address = parse_http_address(args.http)
            check_exposure(address, token, oauth=oauth)
            if oauth is not None and oauth.resource is None:
                resource_url(address, address.port, oauth)
        except ConfigurationError as exc:
            return _refuse(str(exc))

    try:
        agents = load_served_agents(args.agent_files)
        server = AgentServer(
            agents,
            prefix=args.prefix,
            sampling=not args.no_sampling,
            history=args.store if args.store is not None else not args.no_history,
            tool_scopes=ToolScopes(dict(args.tool_scope)),
        )
        limits = served_limits(agents, rate_limit=args.rate_limit, calls_at_once=args.calls_at_once)
    except AgentFileError as exc:
        return _refuse(f"cannot load the agent file: {exc}")
    except ConfigurationError as exc:
        return _refuse(str(exc))
    if args.store is not None:
        try:
            server.policy.history.open_now()  # a store named but out of reach: say so now
        except HistoryError as exc:
            return _refuse(str(exc))
    for served in agents:
        remember_environment_references(served.agent)
    if address is not None and oauth is None and server.tool_scopes.needed:
        logger.warning(
            "settings.access.toolScopes apply only to OAuth callers: without --oauth-issuer "
            "every caller may list and call every tool (%s)",
            server.tool_scopes.describe(),
        )

    grace = SHUTDOWN_GRACE if args.shutdown_grace is None else args.shutdown_grace

    async def main() -> None:
        async with server:
            if address is None:
                await server.run_stdio(shutdown_grace=grace)
            else:
                await server.run_http(
                    address,
                    token=token,
                    log_level=args.log_level,
                    on_ready=_announce,
                    oauth=oauth,
                    stateless=args.stateless,
                    shutdown_grace=grace,
                    limits=limits,
                )

    tune_for_serving()
    try:
        anyio.run(main)
    except KeyboardInterrupt:
        return 0
    except ConfigurationError as exc:  # the HTTP port is taken, the issuer unreachable…
        return _refuse(str(exc))
    except Exception:  # top of the command: report, exit non-zero
        logger.exception("the server stopped on an unexpected error")
        return 1
    return 0
