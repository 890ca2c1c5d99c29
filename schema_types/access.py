"""``settings.access``: what a shared (HTTP) server lets each caller do with this agent's tools.

::

    settings:
      access:
        rateLimit: 30/min          # tool calls each caller may start per period
        callsAtOnce: 2             # tool calls each caller may have running at once
        toolScopes:                # a tool listed and callable only with this OAuth scope
          book_flight: tools:book_flight

A caller is an OAuth token's principal, else the ``--token`` holder, else the client's address.
Served over stdio (one client, the person who launched it) none of this applies; tool scopes
need OAuth (``metaagent serve --http … --oauth-issuer …``). ``metaagent serve`` options of the
same names (``--rate-limit``, ``--calls-at-once``, ``--tool-scope``) override the file.
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from schema_types.file_model import FileModel

__all__ = ["RATE_SPELLING", "AccessSettings", "read_rate"]

RATE_SPELLING = "CALLS/PERIOD such as 30/min, 5/10s or 1000/h"
_UNITS = {"s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "hour": 3600.0}
_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d+(?:\.\d+)?)?\s*([a-z]+)\s*$")


def read_rate(text: str) -> tuple[int, float]:
    """``N/PERIOD`` → (calls, seconds): ``30/min``, ``5/10s``, ``1000/h``, ``2/1.5s``.

    Raises:
        ValueError: another spelling, no calls, or a period outside 0.1 s to a day.
    """
    match = _RATE.match(text.lower())
    unit = _UNITS.get(match.group(3)) if match else None
    if match is None or unit is None:
        raise ValueError(f"{text!r}: expected {RATE_SPELLING}")
    calls = int(match.group(1))
    seconds = float(match.group(2) or 1) * unit
    if calls < 1:
        raise ValueError(f"{text!r}: allow at least 1 call per period")
    if not 0.1 <= seconds <= 86400:
        raise ValueError(f"{text!r}: the period must be 0.1 s to one day")
    return calls, seconds


class AccessSettings(FileModel):
    """``settings.access``: per-caller limits and per-tool scopes of a shared server.

    Attributes:
        rate_limit: tool calls each caller may start per period (``30/min``); None: no limit.
        calls_at_once: tool calls each caller may have running at the same time; None: no limit.
        tool_scopes: tool name → the OAuth scope a caller's token must hold to list or call it.
    """

    rate_limit: str | None = None
    calls_at_once: int | None = Field(default=None, ge=1)
    tool_scopes: dict[str, str] = Field(default_factory=lambda: dict[str, str]())

    @field_validator("rate_limit")
    @classmethod
    def _check_rate(cls, value: str | None) -> str | None:
        if value is not None:
            read_rate(value)
        return value

    @field_validator("tool_scopes")
    @classmethod
    def _check_scopes(cls, value: dict[str, str]) -> dict[str, str]:
        for tool, scope in value.items():
            if not scope.strip() or " " in scope.strip():
                raise ValueError(f"toolScopes.{tool}: one scope, without spaces")
        return value

    @property
    def any(self) -> bool:
        """Whether anything is set."""
        return bool(self.rate_limit or self.calls_at_once or self.tool_scopes)

    def describe(self) -> str:
        """In words: ``30 calls per 60 s, 2 at once per caller; book_flight needs tools:…``."""
        parts = []
        if self.rate_limit is not None:
            calls, seconds = read_rate(self.rate_limit)
            parts.append(f"{calls} calls per {seconds:g} s")
        if self.calls_at_once is not None:
            parts.append(f"{self.calls_at_once} at once")
        limits = (", ".join(parts) + " per caller") if parts else "no limits per caller"
        needs = sorted(self.tool_scopes.items())
        scopes = "; ".join(f"{tool} needs {scope}" for tool, scope in needs)
        return f"{limits}; {scopes}" if scopes else limits
