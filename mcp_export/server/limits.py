"""Per-caller limits of the served HTTP server: calls per period and calls at once.

A shared server answers whoever holds a good token; one busy caller should not take every model
request and tool process from the others. ``CallerLimits`` counts the ``tools/call`` requests of
each caller and refuses one over its limit with HTTP **429** and ``Retry-After`` (the seconds
until the oldest call in the period leaves it; 1 for calls at once), with a JSON-RPC error body
naming the limit: the SDK's client (and any client that reads a refused POST's JSON-RPC error)
shows that message, and a client or proxy that reads only the status knows to wait.

The caller is the OAuth token's principal (client id, issuer and subject), else, with the
one-person token (``--token``), that token's holder (one caller), else the client's address.
Only ``tools/call`` is limited: listing, pings and the handshake cost nothing worth counting,
and a client that cannot list cannot tell the user why.

``parse_rate`` reads the command line's spelling (``30/min``, ``5/10s``, ``1000/h``).
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import mcp_types as types
import pydantic_core

from mcp_export.errors import ConfigurationError
from mcp_export.server.http_gates import (
    MCP_PATH,
    ASGIApp,
    Message,
    Receive,
    Scope,
    Send,
    admitted,
    json_reply,
)
from schema_types.access import read_rate

__all__ = [
    "RATE_LIMITED",
    "CallerLimits",
    "Limits",
    "LimitsError",
    "caller_of",
    "parse_rate",
]

logger = logging.getLogger(__name__)

RATE_LIMITED = -32029
"""The JSON-RPC error code of a call refused by a limit (JSON-RPC leaves -32000 to -32099 to
servers; 429 is the HTTP status that goes with it)."""


class LimitsError(ConfigurationError):
    """A limit is spelled wrong or out of range."""


@dataclass(frozen=True)
class Limits:
    """What each caller may do.

    Attributes:
        calls: tool calls a caller may start per ``period`` (None: no such limit).
        period: the sliding period of ``calls``, in seconds.
        at_once: tool calls a caller may have running at the same time (None: no limit).
    """

    calls: int | None = None
    period: float = 60.0
    at_once: int | None = None

    @property
    def any(self) -> bool:
        """Whether any limit is set."""
        return self.calls is not None or self.at_once is not None

    def describe(self) -> str:
        """The limits in words (``30 calls per 60 s, 2 at once per caller``)."""
        parts = []
        if self.calls is not None:
            parts.append(f"{self.calls} calls per {self.period:g} s")
        if self.at_once is not None:
            parts.append(f"{self.at_once} at once")
        return (", ".join(parts) + " per caller") if parts else "no limits"


def parse_rate(text: str) -> tuple[int, float]:
    """``N/PERIOD`` → (calls, seconds), as ``settings.access.rateLimit`` spells it.

    Raises:
        LimitsError: another spelling, no calls, or a period outside 0.1 s to a day.
    """
    try:
        return read_rate(text)
    except ValueError as exc:
        raise LimitsError(f"--rate-limit {exc}") from None


def caller_of(scope: Scope, *, shared_token: bool) -> str:
    """Who is calling: the OAuth principal, the shared token's holder, or the client address."""
    user = scope.get("user")
    token = getattr(user, "access_token", None)
    if token is not None:
        issuer = (token.claims or {}).get("iss")
        return f"oauth:{issuer}|{token.client_id}|{token.subject}"
    if shared_token:
        return "token"
    client = scope.get("client")
    return f"address:{client[0]}" if client else "address:unknown"


class _Caller:
    __slots__ = ("running", "started")

    def __init__(self) -> None:
        self.started: deque[float] = deque()
        self.running = 0


class CallerLimits:
    """ASGI middleware: each caller's ``tools/call`` POSTs within ``limits``, else 429.

    Sits after the message screen (the body is one screened JSON-RPC message) and after the
    authentication middleware (``scope["user"]`` names the OAuth principal).

    Args:
        app: the app behind the gate.
        limits: the limits of each caller.
        shared_token: the server checks the one-person token (every caller is its holder).
        refused: called with ``"rate"`` or ``"at_once"`` for each refusal (the metrics).
        clock: monotonic seconds (the tests' and the benchmark's own clock may stand in).
    """

    def __init__(
        self,
        app: ASGIApp,
        limits: Limits,
        *,
        shared_token: bool = False,
        refused: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._app = app
        self._limits = limits
        self._shared_token = shared_token
        self._refused = refused
        self._clock = clock
        self._callers: dict[str, _Caller] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["path"] != MCP_PATH
            or scope["method"] != "POST"
            or not admitted(scope, ())
        ):
            await self._app(scope, receive, send)
            return
        first = await receive()
        body = first.get("body", b"") if first["type"] == "http.request" else b""
        request_id = _call_id(body) if not first.get("more_body", False) else None
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return first
            return await receive()

        if request_id is None:
            await self._app(scope, replay, send)
            return
        key = caller_of(scope, shared_token=self._shared_token)
        caller = self._callers.get(key) or self._callers.setdefault(key, _Caller())
        refusal = self._over(caller)
        if refusal is not None:
            reason, message, wait = refusal
            self._forget_if_idle(key, caller)
            await self._refuse(send, reason, message, wait, request_id[0])
            return
        caller.running += 1
        try:
            await self._app(scope, replay, send)
        finally:
            caller.running -= 1
            self._forget_if_idle(key, caller)

    def _over(self, caller: _Caller) -> tuple[str, str, int] | None:
        """Why this call is refused (reason, message, seconds to wait), or None: it is counted."""
        limits = self._limits
        if limits.at_once is not None and caller.running >= limits.at_once:
            return (
                "at_once",
                f"Too many calls at once: this server runs at most {limits.at_once} tool "
                "call(s) of one caller at the same time; wait for one to finish and call again",
                1,
            )
        if limits.calls is None:
            return None
        now = self._clock()
        started = caller.started
        while started and started[0] <= now - limits.period:
            started.popleft()
        if len(started) >= limits.calls:
            wait = max(1, math.ceil(started[0] + limits.period - now))
            return (
                "rate",
                f"Too many calls: this server takes at most {limits.calls} tool call(s) of one "
                f"caller per {limits.period:g} s; call again in {wait} s",
                wait,
            )
        started.append(now)
        return None

    def _forget_if_idle(self, key: str, caller: _Caller) -> None:
        """Drop a caller with nothing to remember, so the table holds the active ones only."""
        if caller.running or (
            caller.started and caller.started[-1] > self._clock() - self._limits.period
        ):
            return
        self._callers.pop(key, None)

    async def _refuse(
        self, send: Send, reason: str, message: str, wait: int, request_id: str | int | None
    ) -> None:
        logger.warning("refused a tool call (429): %s", message)
        if self._refused is not None:
            self._refused(reason)
        error = types.JSONRPCError(
            jsonrpc="2.0",
            id=request_id,
            error=types.ErrorData(
                code=RATE_LIMITED,
                message=message,
                data={"limit": reason, "retryAfter": wait},
            ),
        )
        body = error.model_dump_json(by_alias=True, exclude_unset=True).encode()
        await json_reply(send, 429, body, (b"retry-after", str(wait).encode()))


def _call_id(body: bytes) -> tuple[str | int | None] | None:
    """``(id,)`` when ``body`` is a ``tools/call`` request, else None."""
    if b"tools/call" not in body:
        return None  # the common case, without parsing
    try:
        message = pydantic_core.from_json(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    if "id" not in message:
        return None
    request_id = message["id"]
    return (request_id if isinstance(request_id, str | int) else None,)
