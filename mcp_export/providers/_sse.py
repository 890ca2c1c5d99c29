"""Server-Sent Events decoded from raw chunks, as the OpenAI SDK decodes them: the ``data:`` lines
of an event joined by newlines, comments (``:``) skipped, an event dispatched at its blank line."""

from __future__ import annotations

import re

__all__ = ["EventDecoder"]

_LINE_END = re.compile(rb"\r\n|\r|\n")


class EventDecoder:
    """Server-Sent Events from raw chunks: each dispatched event's ``data``.

    The part of a line still to come is kept as a list of pieces, joined only once its line end
    arrives: an event sent in ten thousand small chunks costs its size, not its size squared.
    """

    def __init__(self) -> None:
        self._pending: list[bytes] = []
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[str]:
        """The data of the events that ``chunk`` completes."""
        if b"\n" not in chunk and b"\r" not in chunk:
            if chunk:
                self._pending.append(chunk)
            return []
        pending = b"".join([*self._pending, chunk])
        held = b"\r" if pending.endswith(b"\r") else b""  # maybe half of a CRLF still coming
        lines = _LINE_END.split(pending[: len(pending) - len(held)])
        rest = lines.pop() + held
        self._pending = [rest] if rest else []
        return self._lines(lines)

    def finish(self) -> list[str]:
        """The data of what is left once the stream ended (an event without its blank line)."""
        last = b"".join(self._pending).rstrip(b"\r")
        self._pending = []
        return self._lines([last, b""] if last else [b""])

    def _lines(self, lines: list[bytes]) -> list[str]:
        events: list[str] = []
        for raw in lines:
            if not raw:
                if self._data:
                    events.append("\n".join(self._data))
                    self._data = []
                continue
            line = raw.decode("utf-8")
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            if name == "data":
                self._data.append(value[1:] if value.startswith(" ") else value)
        return events
