"""The raw exchange of a chat, for a person who wants to see it: a bounded log of what went to and
came from the model endpoints and the agent's tool servers, secrets masked.

Nothing is recorded unless a log is attached. The parts that talk to the outside world — the HTTP
model providers (``OpenAIProvider``, ``AnthropicProvider``) and the agent's toolbox
(``AgentToolbox``, for every connection to its MCP servers) — each have a ``protocol_log``
attribute, None by default, that :func:`attach` sets. While it is None they skip all recording,
so ``metaagent serve`` pays nothing for it.

Each entry (:class:`ProtocolEntry`) is one message as it was on the wire:

- an HTTP request to a model endpoint: its method and URL, headers and body (JSON pretty-printed);
- an HTTP response: its status, headers and body; a streamed body is its Server-Sent Events as
  they came, gathered into one entry per response (recorded when the body ended, and with what
  came before it broke off when it did);
- a JSON-RPC message to or from a tool server (pretty-printed), ``server/discover``,
  ``initialize`` and ``tools/list`` included;
- a failure that left nothing on the wire to show (a refused connection, a timeout before any
  answer) as an ``error`` entry with the reason.

Its ``channel`` is the model endpoint as the providers name it in messages (``OpenAI``,
``127.0.0.1:8080``) or the tool server's name in the agent file; ``direction`` is ``sent`` or
``received``; ``kind`` is one of :data:`KINDS`.

Secrets: every text passes :func:`mcp_export.redact.redact` (the keys this process resolved, in
any spelling, and key-shaped tokens) — so a key an endpoint repeats in an error body is masked
too — and the values of headers that carry credentials (:func:`mask_headers`) are masked
whatever they hold. A text longer than the log's ``max_entry_bytes`` is cut there and ends with
``… N bytes more``; it is redacted before it is cut, so a key that straddles the cut is not left
half visible.

The log keeps the newest ``max_entries`` entries and at most about ``max_bytes`` of text, dropping
the oldest first. Listeners (:meth:`ProtocolLog.subscribe`) are called after each entry, on the
thread that recorded it; they must be quick (a view schedules its update and returns).
"""

from __future__ import annotations

import codecs
import collections
import itertools
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final, Literal, Protocol, runtime_checkable

from mcp_export.redact import REDACTED, redact

__all__ = [
    "DIRECTIONS",
    "KINDS",
    "ByteCapture",
    "Direction",
    "Kind",
    "ProtocolEntry",
    "ProtocolLog",
    "Recording",
    "attach",
    "mask_headers",
]

Direction = Literal["sent", "received"]
Kind = Literal["request", "response", "stream", "notification", "error"]
DIRECTIONS: Final[tuple[Direction, ...]] = ("sent", "received")
KINDS: Final[tuple[Kind, ...]] = ("request", "response", "stream", "notification", "error")
"""``request`` (HTTP or JSON-RPC), ``response`` (a whole body, a JSON-RPC result), ``stream`` (a
streamed response's events), ``notification`` (JSON-RPC), ``error`` (an error status or JSON-RPC
error, or a failure with nothing on the wire)."""

# Text past the cut is still redacted this far, so a secret that straddles the cut is matched
# whole before the cut is made.
_REDACTION_MARGIN = 1024
_SUMMARY_CHARS = 200
_CREDENTIAL_HEADER = re.compile(
    r"authorization|cookie|(?:^|[-_])(?:api[-_]?key|key|token|secret|password|credentials?|"
    r"signature|auth)$",
    re.IGNORECASE,
)
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*)\s+\S")


@dataclass(frozen=True, slots=True)
class ProtocolEntry:
    """One message of the exchange, as it was on the wire (redacted, maybe cut).

    Attributes:
        sequence: its number in its log (1 for the first entry ever recorded).
        time: when it was sent or began to arrive (seconds since the epoch).
        channel: the model endpoint (``OpenAI``, ``127.0.0.1:8080``) or the tool server's name.
        direction: ``sent`` or ``received``.
        kind: one of ``KINDS``.
        summary: one line that says what it is (``POST /v1/chat/completions``,
            ``tools/call (id 3)``, ``200 OK, text/event-stream``).
        text: the message itself.
    """

    sequence: int
    time: float
    channel: str
    direction: Direction
    kind: Kind
    summary: str
    text: str

    def clock(self) -> str:
        """``12:03:04.123``: its time of day, local."""
        millis = int(self.time * 1000) % 1000
        return f"{time.strftime('%H:%M:%S', time.localtime(self.time))}.{millis:03d}"

    def heading(self) -> str:
        """``12:03:04.123  OpenAI  sent  request  POST /v1/chat/completions``: one line that
        says what the entry is."""
        return f"{self.clock()}  {self.channel}  {self.direction}  {self.kind}  {self.summary}"

    def as_text(self) -> str:
        """The heading, then the message: how an entry is copied."""
        return f"{self.heading()}\n{self.text}"


class ProtocolLog:
    """A bounded, append-only log of the raw exchange (see the module docstring).

    Args:
        max_entries: the most entries kept; older ones are dropped.
        max_entry_bytes: the longest text an entry keeps (UTF-8 bytes); the rest is counted.
        max_bytes: about the most text kept over all entries; older entries are dropped.
    """

    def __init__(
        self,
        *,
        max_entries: int = 5000,
        max_entry_bytes: int = 256 * 1024,
        max_bytes: int = 32 * 1024 * 1024,
    ) -> None:
        if max_entries < 1 or max_entry_bytes < 1 or max_bytes < 1:
            raise ValueError("a protocol log's bounds must be positive")
        self.max_entries = max_entries
        self.max_entry_bytes = max_entry_bytes
        self.max_bytes = max_bytes
        self._entries: collections.deque[ProtocolEntry] = collections.deque()
        self._size = 0
        self._numbers = itertools.count(1)
        self._last = 0
        self._lock = threading.Lock()
        self._listeners: list[Callable[[], None]] = []

    def record(
        self,
        channel: str,
        direction: Direction,
        kind: Kind,
        text: str,
        *,
        summary: str | None = None,
        omitted: int = 0,
        at: float | None = None,
    ) -> ProtocolEntry:
        """Add one message; it is redacted and cut to ``max_entry_bytes`` here.

        Args:
            channel: the endpoint or tool server.
            direction: ``sent`` or ``received``.
            kind: one of ``KINDS``.
            text: the message as on the wire.
            summary: one line for a list (redacted too); None for the text's first line.
            omitted: bytes that followed ``text`` on the wire and were not kept (a capture's
                ``omitted``), counted in the ``… N bytes more`` line.
            at: when it was sent or began to arrive; None for now.

        Returns:
            The entry as kept.
        """
        kept = _cut(text, self.max_entry_bytes, omitted)
        line = _one_line(summary if summary is not None else _first_line(text))
        with self._lock:
            entry = ProtocolEntry(
                next(self._numbers),
                time.time() if at is None else at,
                channel,
                direction,
                kind,
                redact(line),
                kept,
            )
            self._entries.append(entry)
            self._last = entry.sequence
            self._size += len(kept)
            while len(self._entries) > self.max_entries or (
                self._size > self.max_bytes and len(self._entries) > 1
            ):
                self._size -= len(self._entries.popleft().text)
            listeners = list(self._listeners)
        for listener in listeners:
            listener()
        return entry

    def entries(self) -> list[ProtocolEntry]:
        """The entries kept, oldest first."""
        with self._lock:
            return list(self._entries)

    def entries_after(self, sequence: int) -> list[ProtocolEntry]:
        """The entries kept whose ``sequence`` is greater than ``sequence``, oldest first."""
        with self._lock:
            if self._last <= sequence:
                return []
            newer: list[ProtocolEntry] = []
            for entry in reversed(self._entries):
                if entry.sequence <= sequence:
                    break
                newer.append(entry)
        newer.reverse()
        return newer

    @property
    def last_sequence(self) -> int:
        """The ``sequence`` of the newest entry ever recorded (0 before the first)."""
        return self._last

    @property
    def first_sequence(self) -> int:
        """The ``sequence`` of the oldest entry kept (``last_sequence + 1`` when empty)."""
        with self._lock:
            return self._entries[0].sequence if self._entries else self._last + 1

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Drop every entry (numbering goes on); listeners are told."""
        with self._lock:
            self._entries.clear()
            self._size = 0
            listeners = list(self._listeners)
        for listener in listeners:
            listener()

    def as_text(self) -> str:
        """Every entry kept, as copied (``ProtocolEntry.as_text``), separated by blank lines."""
        return "\n\n".join(entry.as_text() for entry in self.entries())

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener()`` after each new entry and after ``clear``; returns the function
        that unsubscribes it."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe


@runtime_checkable
class Recording(Protocol):
    """A part of the runtime that can record its exchange into a log (see :func:`attach`)."""

    protocol_log: ProtocolLog | None


def attach(log: ProtocolLog | None, *parts: object) -> int:
    """Let each of ``parts`` that talks to the outside world record into ``log`` (None: stop).

    The parts that record are the HTTP model providers (OpenAI-compatible, Anthropic) and the
    agent's toolbox; anything else (None, a provider with no wire of its own such as MCP
    sampling) is passed over.

    Args:
        log: the log, or None to stop recording.
        parts: a provider, a toolbox, None…

    Returns:
        How many of ``parts`` record into ``log`` now.
    """
    count = 0
    for part in parts:
        if isinstance(part, Recording):
            part.protocol_log = log
            count += 1
    return count


def mask_headers(headers: Iterable[tuple[str, str]]) -> str:
    """Header lines (``Name: value``), with the value of each header that carries credentials
    (``Authorization``, ``x-api-key``, ``api-key``, cookies, tokens…) masked: its scheme word
    kept (``Bearer [redacted]``), the rest replaced."""
    lines: list[str] = []
    for name, value in headers:
        if _CREDENTIAL_HEADER.search(name):
            scheme = _SCHEME.match(value)
            value = f"{scheme.group(1)} {REDACTED}" if scheme else REDACTED
        lines.append(f"{name}: {value}")
    return "\n".join(lines)


class ByteCapture:
    """The bytes of one body as they pass, up to a bound (plus a margin for redaction); the rest
    is only counted.

    Args:
        limit: the entry's ``max_entry_bytes``: bytes kept (and a margin more).
    """

    def __init__(self, limit: int) -> None:
        self._room = limit + _REDACTION_MARGIN
        self._parts: list[bytes] = []
        self._kept = 0
        self.omitted = 0
        """Bytes that went by and were not kept."""

    def feed(self, chunk: bytes) -> None:
        """Take in the next bytes of the body."""
        room = self._room - self._kept
        if room <= 0:
            self.omitted += len(chunk)
            return
        if len(chunk) > room:
            self.omitted += len(chunk) - room
            chunk = chunk[:room]
        self._parts.append(bytes(chunk))
        self._kept += len(chunk)

    @property
    def size(self) -> int:
        """Every byte that went by."""
        return self._kept + self.omitted

    def text(self) -> tuple[str, int]:
        """The kept bytes as text (UTF-8; bytes that are not show as ``�``), and how many bytes
        were left out (``omitted``, with a character cut in half at the bound)."""
        data = b"".join(self._parts)
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        text = decoder.decode(data, final=self.omitted == 0)
        return text, self.omitted + len(decoder.getstate()[0])


def _cut(text: str, limit: int, omitted: int) -> str:
    """``text`` redacted and cut to ``limit`` UTF-8 bytes, with ``… N bytes more`` when it was
    longer (``omitted`` bytes already left out counted too)."""
    if len(text) > limit + _REDACTION_MARGIN:
        rest = text[limit + _REDACTION_MARGIN :]
        omitted += len(rest.encode("utf-8", "replace"))
        text = text[: limit + _REDACTION_MARGIN]
    text = redact(text)
    if len(text) * 4 > limit:  # a character is at most 4 bytes: shorter texts always fit
        data = text.encode("utf-8", "replace")
        if len(data) > limit:
            text = data[:limit].decode("utf-8", "ignore")  # a character cut in half goes too
            omitted += len(data) - len(text.encode("utf-8"))
    if omitted:
        text = f"{text}\n… {omitted} bytes more"
    return text


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line
    return ""


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _SUMMARY_CHARS else line[: _SUMMARY_CHARS - 1] + "…"
