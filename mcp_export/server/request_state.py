"""The key that seals a 2026-07-28 sampling round trip's state, and the middleware that uses it.

A sampling round trip carries the conversation so far in ``requestState``; the SDK's
``RequestStateBoundary`` seals it (AES-GCM) and refuses a state this server did not mint.
``METAAGENT_STATE_KEY`` lets every instance behind one address open the others' states.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError

from mcp_export.errors import ConfigurationError

__all__ = ["STATE_KEY_VARIABLE", "LazyRequestStateBoundary", "state_keys"]

STATE_KEY_VARIABLE = "METAAGENT_STATE_KEY"
"""The environment variable holding the key(s) that seal a sampling round trip's state."""

_MIN_KEY_LENGTH = 32
_STATE_REFUSED = (
    "Invalid or expired requestState: this server cannot read the state of that round trip. It "
    "is older than 10 minutes, or another server made it: every instance behind one address "
    f"needs the same {STATE_KEY_VARIABLE}. Call the tool again without requestState to start over"
)


def state_keys(environ: Mapping[str, str]) -> list[str] | None:
    """The keys in ``METAAGENT_STATE_KEY``: the first seals, every one opens; None when unset.

    Several keys, separated by spaces, let a key be replaced without refusing the round trips
    under way: ``new old`` on every instance, then ``new`` alone after ten minutes.

    Raises:
        ConfigurationError: a key is shorter than 32 characters (the message says how to make
            one; it never repeats the value).
    """
    raw = environ.get(STATE_KEY_VARIABLE, "")
    keys = raw.split()
    if not keys:
        return None
    for position, key in enumerate(keys, start=1):
        if len(key) < _MIN_KEY_LENGTH:
            raise ConfigurationError(
                f"{STATE_KEY_VARIABLE}: key {position} has {len(key)} characters; a key needs at "
                f"least {_MIN_KEY_LENGTH} random ones. Make one with: "
                'python -c "import secrets; print(secrets.token_hex(32))"'
            )
    if len(set(keys)) != len(keys):
        raise ConfigurationError(f"{STATE_KEY_VARIABLE}: the same key is given twice")
    return keys


class LazyRequestStateBoundary:
    """The SDK's ``RequestStateBoundary``, built on the first ``tools/call``.

    It seals the conversation a 2026-07-28 sampling round trip carries in ``requestState``
    (AES-GCM), and rejects a state the server did not mint. The key is ``METAAGENT_STATE_KEY``
    when set, so every instance behind a load balancer opens the others' states; else one made
    at start-up of this process. Building it loads ``cryptography``, so that waits until a call
    needs it.
    """

    def __init__(self, audience: str, keys: list[str] | None) -> None:
        self._audience = audience
        self._keys = keys
        self._boundary: Any = None

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        if self._boundary is None:
            security = (
                RequestStateSecurity(keys=self._keys)
                if self._keys
                else RequestStateSecurity.ephemeral()
            )
            self._boundary = RequestStateBoundary(security, default_audience=self._audience)
        try:
            result: HandlerResult = await self._boundary(ctx, call_next)
        except MCPError as exc:
            if exc.error.data != {"reason": "invalid_request_state"}:
                raise
            # The SDK words the refusal alike whatever failed (its log says what); the caller
            # is told what to do about it.
            raise MCPError(
                code=exc.error.code, message=_STATE_REFUSED, data=exc.error.data
            ) from exc
        return result
