"""One redaction for every text that leaves the runtime: no resolved secret reaches a sink.

A provider or a proxy may repeat the request's ``Authorization`` header in an error body
(``Incorrect API key provided: Bearer sk-…``); a tool server may print its environment. Such a text
travels on into history rows, log lines, MCP results, the terminal and the studio. Every place
where a secret is resolved calls :func:`remember_secret` with its value, and every sink passes its
text through :func:`redact`, which replaces

- each remembered value (as written, URL-quoted and JSON-escaped; for a header value such as
  ``Bearer abc…`` the token after the scheme word too),
- the credential after ``Bearer`` / ``Basic`` / ``Token`` when it looks like one (16 characters or
  more of token alphabet, with a digit among them), and
- well-known key shapes (``sk-…``, ``ghp_…``, ``github_pat_…``, ``xoxb-…``, ``AKIA…``, ``AIza…``)
  whatever their origin, and
- the password of a URL that carries one (``postgresql://user:PASSWORD@host/db``)

with ``[redacted]``. The shapes are case-sensitive and need a long token, so prose ("each token
counts", "basic knowledge", "a Bearer authentication scheme") is left alone.

A value shorter than :data:`MIN_SECRET_LENGTH` is not remembered: replacing every ``abc`` in a
transcript would destroy the text and protect nothing. The remembered values live for the process
(they are what this process resolved); :func:`redact` is safe to call from any thread.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

if TYPE_CHECKING:
    from schema_types.agent import Agent

__all__ = [
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "RedactingFilter",
    "redact",
    "redact_json",
    "remember_environment_references",
    "remember_resolved",
    "remember_secret",
]

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 8

_TOKEN = r"[A-Za-z0-9._~+/=\-]"
_SHAPES = re.compile(
    rf"(?P<scheme>\b(?:Bearer|bearer|Basic|Token)\s+)(?={_TOKEN}*\d){_TOKEN}{{16,}}"
    r"|\bsk-[A-Za-z0-9_\-]{16,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}"
    r"|\bgithub_pat_\w{20,}"
    r"|\bxox[abprs]-[\w\-]{10,}"
    r"|\bAKIA[0-9A-Z]{16}\b"
    r"|\bAIza[0-9A-Za-z_\-]{35}"
)
# Every shape starts with one of these. The regex engine scans for a pattern that opens with one
# literal character at memory speed, and tries an alternation (or a pattern that opens with a word
# boundary) at every position, about 60 ns a character: one scan per first character, then the
# whole shape tried only where one of them starts, keeps a 20 MB text to a fraction of a second.
_SHAPE_STARTS = tuple(
    re.compile(start)
    for start in (
        r"B(?:earer|asic)",
        r"bearer",
        r"Token",
        r"sk-",
        r"g(?:h[pousr]_|ithub_pat_)",
        r"xox[abprs]-",
        r"A(?:KIA|Iza)",
    )
)
# Any of the starts, in one pattern: a short text that holds none of them (most do) is done after
# one scan instead of one per start. A long text is scanned per start all the same (see above).
_ANY_SHAPE_START = re.compile("|".join(start.pattern for start in _SHAPE_STARTS))
_SHORT = 4096
# A URL's password: found from each "://" (a scheme of at most 32 characters before it, user and
# password of bounded length after it), so no text makes the search quadratic.
_URL_SCHEME_END = re.compile(r"[a-z][a-z0-9+.\-]*\Z", re.IGNORECASE)
_URL_USERINFO = re.compile(r"(?P<user>[^\s/:@]{0,256}):[^\s@/]{1,1024}@")
_ENV_REFERENCE = re.compile(r"(?<!\S)env://([A-Za-z_][A-Za-z0-9_]*)")
_SCHEME_VALUE = re.compile(r"^(?:Bearer|bearer|Basic|Token|token)\s+(\S+)$")

_lock = threading.Lock()
_known: frozenset[str] = frozenset()
_known_pattern: re.Pattern[str] | None = None


def _forms(value: str) -> set[str]:
    """The spellings under which ``value`` may show up in a text."""
    cores = {value}
    scheme = _SCHEME_VALUE.match(value)
    if scheme:
        cores.add(scheme.group(1))
    forms: set[str] = set()
    for core in cores:
        forms.add(core)
        forms.add(quote(core, safe=""))
        forms.add(json.dumps(core, ensure_ascii=True)[1:-1])
        forms.add(json.dumps(core, ensure_ascii=False)[1:-1])
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


def remember_secret(value: str | None) -> None:
    """Record a resolved secret so that :func:`redact` removes it from every later text.

    Args:
        value: the secret as resolved (an API key, a token, a header value such as
            ``Bearer abc…``); ``None``, empty and short values are ignored.
    """
    global _known, _known_pattern
    if not value or not value.strip():
        return
    forms = _forms(value.strip())
    if not forms or forms <= _known:
        return
    with _lock:
        known = _known | forms
        # Longest first, so a value that contains another is replaced whole.
        alternatives = sorted(known, key=len, reverse=True)
        _known_pattern = re.compile("|".join(re.escape(form) for form in alternatives))
        _known = known


def remember_resolved(written: Mapping[str, str], resolved: Mapping[str, str]) -> dict[str, str]:
    """Remember the values of ``resolved`` that came through a reference, and return them.

    For settings resolved as a group (an MCP server's ``env`` or ``headers``): a value that
    resolution changed (``env://TOKEN``, ``Bearer keyring://…``) is a secret; one written as it is
    (``PATH``, ``LOG_LEVEL``) is not, and remembering it would redact it from every text.

    Args:
        written: the values as the agent file writes them.
        resolved: the same keys with the references resolved.

    Returns:
        ``resolved``, as a dict.
    """
    for key, value in resolved.items():
        if written.get(key) != value:
            remember_secret(value)
    return dict(resolved)


def remember_environment_references(agent: Agent) -> None:
    """Remember the values of every ``env://`` reference of ``agent``, without using them.

    A served agent resolves its keys at the first call; what a client sends before that (a
    refused line is logged) must already be redacted. Only environment references are read here:
    ``keyring://`` ones are remembered when they are resolved, as the keyring is slow to load.

    Args:
        agent: the agent about to be served.
    """
    groups = [*agent.providers.values()]
    for server in agent.mcp_servers.values():
        groups += [server.env, server.headers]
    for values in groups:
        for value in values.values():
            for name in _ENV_REFERENCE.findall(value):
                remember_secret(os.environ.get(name))


def _replace_shape(match: re.Match[str]) -> str:
    scheme = match.group("scheme")
    return f"{scheme}{REDACTED}" if scheme else REDACTED


def redact(text: str) -> str:
    """``text`` with every remembered secret and every key-shaped token replaced by ``[redacted]``.

    Args:
        text: any text bound for a file, a log, a result or the screen.

    Returns:
        The text, unchanged when it holds nothing secret.
    """
    if not text:
        return text
    pattern = _known_pattern
    if pattern is not None:
        text = pattern.sub(REDACTED, text)
    if "://" in text and "@" in text:
        text = _without_url_passwords(text)
    if len(text) < _SHORT and _ANY_SHAPE_START.search(text) is None:
        return text
    starts = sorted({found.start() for start in _SHAPE_STARTS for found in start.finditer(text)})
    pieces: list[str] = []
    done = 0
    for at in starts:
        match = _SHAPES.match(text, at) if at >= done else None
        if match is not None:
            pieces += (text[done:at], _replace_shape(match))
            done = match.end()
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


def _without_url_passwords(text: str) -> str:
    """``text`` with the password of each ``scheme://user:password@`` replaced."""
    pieces: list[str] = []
    done = 0
    at = text.find("://")
    while at >= 0:
        after = at + 3
        if _URL_SCHEME_END.search(text, max(0, at - 32), at):
            userinfo = _URL_USERINFO.match(text, after)
            if userinfo is not None:
                pieces += (text[done:after], userinfo["user"], f":{REDACTED}@")
                done = userinfo.end()
        at = text.find("://", max(after, done))
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


def redact_json(value: Any) -> Any:
    """A copy of a JSON-like value with :func:`redact` applied to every string in it (keys too).

    Mappings become dicts and sequences (other than strings and bytes) lists; other values are
    returned as they are.
    """
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {
            (redact(key) if isinstance(key, str) else key): redact_json(item)
            for key, item in value.items()
        }
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        return [redact_json(item) for item in value]
    return value


class RedactingFilter(logging.Filter):
    """A logging filter that redacts each record's message, traceback and stack text in place.

    Install it on a handler (``handler.addFilter(RedactingFilter())``): a handler's filters see
    the records of every logger that propagates to it, a logger's filters only its own.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact ``record``; always keeps it."""
        try:
            message = record.getMessage()
        except Exception:  # arguments that do not fit the format: the handler reports it
            return True
        cleaned = redact(message)
        if cleaned != message:
            record.msg = cleaned
            record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True
