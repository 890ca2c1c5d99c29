"""What the HTTP providers read off the wire, bounded, and how they describe what came back.

Both HTTP providers (OpenAI-compatible, Anthropic) expect a stream of Server-Sent Events. What
arrives instead is often something else: a proxy's HTML page, a JSON body from a server that
ignored ``stream``, an empty 200, one event of 20 MB. This module holds the two things they share
for that:

- ``BodyTap`` watches the raw bytes of one response body: it keeps the first bytes (to say what
  the body was when it held no events) and stops the read with ``AnswerTooLarge`` when one event
  (the bytes up to a blank line) passes ``MAX_EVENT_BYTES`` or the whole body
  ``MAX_ANSWER_BYTES``. Without the bounds one huge event is buffered (by a decoder that joins
  its pieces over and over) until the read times out, and looks like a stall.
- ``describe_body`` and ``error_detail`` put a body into words for a message (``an HTML page
  titled '502 Bad Gateway'``, ``an empty body``, the ``error.message`` of a JSON error), redacted:
  bodies are outside text and may repeat the request's key.
"""

from __future__ import annotations

import json
import re

from mcp_export.redact import redact

__all__ = [
    "MAX_ANSWER_BYTES",
    "MAX_EVENT_BYTES",
    "PREVIEW_BYTES",
    "AnswerTooLarge",
    "BodyTap",
    "describe_body",
    "error_detail",
    "size_text",
]

MAX_EVENT_BYTES = 8 * 1024 * 1024
"""The largest event read from a stream. Chat Completions and Messages events carry a token or a
piece of tool arguments: a few hundred bytes, a whole tool call at most."""
MAX_ANSWER_BYTES = 64 * 1024 * 1024
"""The most bytes read from one answer's stream (a 100 000-token answer is ~20 MB of events)."""
PREVIEW_BYTES = 4096
"""How much of a body is kept to describe it."""

_SNIPPET = 200
# Where an event ends: a line end followed by an empty line (LF, CR or CRLF line ends).
_EVENT_ENDS = (b"\n\n", b"\r\r", b"\n\r")
_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


class AnswerTooLarge(Exception):
    """A stream passed one of ``BodyTap``'s bounds; the message says which, in words."""


def size_text(count: int) -> str:
    """``8 MiB``, ``64 MiB``, ``512 KiB``: a byte count as a person reads it."""
    if count >= 1024 * 1024 and count % (1024 * 1024) == 0:
        return f"{count // (1024 * 1024)} MiB"
    if count >= 1024 and count % 1024 == 0:
        return f"{count // 1024} KiB"
    return f"{count} bytes"


class BodyTap:
    """Watches one response body's bytes as they are read (see the module docstring).

    Args:
        max_event: the largest event allowed, in bytes.
        max_total: the most bytes allowed in the whole body.
    """

    def __init__(self, max_event: int = MAX_EVENT_BYTES, max_total: int = MAX_ANSWER_BYTES) -> None:
        self.max_event = max_event
        self.max_total = max_total
        self.total = 0
        self._event = 0
        self._last = b""
        self._preview = bytearray()

    @property
    def preview(self) -> bytes:
        """The first ``PREVIEW_BYTES`` of the body."""
        return bytes(self._preview)

    @property
    def complete_preview(self) -> bool:
        """Whether ``preview`` is the whole body read so far."""
        return self.total <= PREVIEW_BYTES

    def feed(self, chunk: bytes) -> None:
        """Count ``chunk``.

        Raises:
            AnswerTooLarge: the chunk makes an event or the body pass its bound.
        """
        if not chunk:
            return
        if len(self._preview) < PREVIEW_BYTES:
            self._preview += chunk[: PREVIEW_BYTES - len(self._preview)]
        self.total += len(chunk)
        if self.total > self.max_total:
            raise AnswerTooLarge(
                f"the answer passed {size_text(self.max_total)} before it ended; stopped reading"
            )
        # The previous chunk's last byte joins this one: an event end may straddle the two.
        window = self._last + chunk
        end = max(window.rfind(separator) for separator in _EVENT_ENDS)
        self._event = self._event + len(chunk) if end < 0 else len(window) - end - 2
        self._last = chunk[-1:]
        if self._event > self.max_event:
            raise AnswerTooLarge(
                f"one event of the stream passed {size_text(self.max_event)}; stopped reading"
            )


def describe_body(preview: bytes, content_type: str = "", *, complete: bool = True) -> str:
    """A body in a few words: ``an HTML page titled '…'``, ``an empty body``, ``an error: …``.

    Args:
        preview: the body, or its first bytes.
        content_type: the response's ``content-type`` header ("" when absent).
        complete: whether ``preview`` is the whole body (a cut JSON text is not parsed).
    """
    text = preview.decode("utf-8", errors="replace").strip()
    kind = content_type.split(";", 1)[0].strip().lower()
    if not text:
        return "an empty body"
    if "html" in kind or text.startswith("<"):
        found = _TITLE.search(preview)
        title = " ".join(found.group(1).decode("utf-8", errors="replace").split()) if found else ""
        return redact(f"an HTML page titled {title[:_SNIPPET]!r}" if title else "an HTML page")
    if complete and text[0] in "{[":
        try:
            body: object = json.loads(text)
        except ValueError:
            pass
        else:
            message = _error_message(body)
            if message:
                return redact(f"an error: {message}")
            return redact(f"a JSON body ({_snippet(text)})")
    label = f"a {kind} body" if kind else "a body"
    return redact(f"{label} ({_snippet(text)})")


def error_detail(raw: bytes, code: int) -> str:
    """What an error status's body says: its ``error.message`` (or ``message``), else its text in
    a few words; redacted."""
    text = raw.decode("utf-8", errors="replace").strip()
    if not text:
        return f"HTTP {code} with an empty body"
    try:
        body: object = json.loads(text)
    except ValueError:
        if text.startswith("<"):
            return describe_body(raw) + " (a web server or proxy answered, not the API)"
        return redact(text[:300])
    message = _error_message(body)
    return redact(message if message else text[:300])


def _error_message(body: object) -> str | None:
    error = body.get("error", body) if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) and message else None


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= _SNIPPET else flat[: _SNIPPET - 1] + "…")
