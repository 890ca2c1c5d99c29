"""How the HTTP providers write their exchange with a model endpoint into a protocol log.

A request is recorded as it is sent: its method and URL, the headers the provider sets (those
that carry credentials masked) and its body (JSON pretty-printed). A response is recorded once
its body has been read: status, headers and the body as it came — a streamed body as its
Server-Sent Events (kind ``stream``), a JSON body pretty-printed (kind ``response``), an error
status as kind ``error``. A body whose read stopped (it broke off, went quiet, held an error
event, or the run was cancelled) is recorded with what came, and its summary says why (as it says
when only the first bytes of a body were read, as of an error page). A failure before any answer
(refused, reset, timed out) is an ``error`` entry with the reason. See ``mcp_export.protocol_log``
for the log and its bounds.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.parse
from collections.abc import Iterable

from mcp_export.protocol_log import ByteCapture, Kind, ProtocolLog, mask_headers

__all__ = ["ResponseRecord", "record_failure", "record_request"]


def record_request(
    log: ProtocolLog,
    channel: str,
    method: str,
    url: str,
    headers: Iterable[tuple[str, str]],
    body: bytes | None,
) -> None:
    """Record a request as it is sent."""
    lines = f"{method} {url}\n{mask_headers(headers)}"
    text = lines if not body else f"{lines}\n\n{_body_text(body, log.max_entry_bytes)}"
    log.record(channel, "sent", "request", text, summary=f"{method} {_path(url)}")


def record_failure(log: ProtocolLog, channel: str, exc: BaseException) -> None:
    """Record that a request got no answer, and why (``exc``, as the HTTP client raised it)."""
    reason = _reason(exc)
    log.record(channel, "received", "error", f"no answer: {reason}", summary=f"no answer: {reason}")


class ResponseRecord:
    """One response on its way in: its head now, its body as it is read, recorded once by
    ``finish``.

    Args:
        log: the log.
        channel: the endpoint.
        status: the status code.
        reason: the status's reason phrase ("" when none).
        headers: the response headers.
    """

    def __init__(
        self,
        log: ProtocolLog,
        channel: str,
        status: int,
        reason: str,
        headers: Iterable[tuple[str, str]],
    ) -> None:
        self._log = log
        self._channel = channel
        self._status = status
        self._reason = reason
        self._headers = list(headers)
        self._content_type = next(
            (value for name, value in self._headers if name.lower() == "content-type"), ""
        )
        self._at = time.time()
        self._capture = ByteCapture(log.max_entry_bytes)
        self._finished = False

    def feed(self, chunk: bytes) -> None:
        """Take in the next bytes of the body."""
        self._capture.feed(chunk)

    def finish(self, failure: BaseException | None = None, *, partial: bool = False) -> None:
        """Record the response (only the first call does).

        Args:
            failure: what stopped the read of the body, or None.
            partial: only the first bytes of the body were read, on purpose.
        """
        if self._finished:
            return
        self._finished = True
        body, omitted = self._capture.text()
        streamed = "event-stream" in self._content_type.lower()
        if not streamed and not omitted and "json" in self._content_type.lower():
            body = _pretty(body)
        status = f"{self._status} {self._reason}".strip()
        text = f"{status}\n{mask_headers(self._headers)}"
        if body:
            text = f"{text}\n\n{body}"
        kind: Kind = "error" if self._status >= 400 else "stream" if streamed else "response"
        details = [status, self._content_type.split(";")[0].strip() or "no content type"]
        if streamed:
            events = body.count("\ndata:") + body.startswith("data:")
            details.append(f"{events} event{'s' if events != 1 else ''}")
        details.append(f"{self._capture.size} bytes")
        if failure is not None:
            details.append(f"stopped: {_reason(failure)}")
        elif partial:
            details.append("only its first bytes read")
        self._log.record(
            self._channel,
            "received",
            kind,
            text,
            summary=", ".join(details),
            omitted=omitted,
            at=self._at,
        )


def _path(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "") or url


def _body_text(body: bytes, limit: int) -> str:
    text = body.decode("utf-8", "replace")
    return _pretty(text) if len(body) <= limit else text


def _pretty(text: str) -> str:
    """A JSON text indented, as it is when it is not JSON."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return json.dumps(value, indent=2, ensure_ascii=False)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, asyncio.CancelledError | GeneratorExit):
        return "cancelled"
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
