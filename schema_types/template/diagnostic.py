"""The design-time problems of a template, as the editor and ``metaagent validate`` show them."""

from __future__ import annotations

import enum
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from schema_types.template.tokens import Token

__all__ = ["Diagnostic", "Severity", "error_at", "grouped", "line_starts", "location"]


class Severity(enum.Enum):
    """How bad a diagnostic is: an ERROR renders literally, a WARNING renders fine."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One design-time problem of a template.

    Attributes:
        severity: ERROR or WARNING.
        code: errors ``unknown-placeholder`` (also for a section's path),
            ``unterminated-brace``, ``stray-brace``, ``invalid-placeholder``,
            ``unclosed-section``, ``unopened-section-end``, ``section-mismatch``; warnings
            ``always-has-value`` (a section or fallback whose path always has a value) and
            ``unused-required``.
        message: a sentence that can be shown to the person as it is.
        start: offset of the offending text; ``len(template)`` for ``unused-required``.
        end: offset just past it; ``len(template)`` for ``unused-required``.
    """

    severity: Severity
    code: str
    message: str
    start: int
    end: int


def error_at(code: str, message: str, token: Token) -> Diagnostic:
    """An ERROR diagnostic spanning ``token``."""
    return Diagnostic(Severity.ERROR, code, message, token.start, token.end)


def line_starts(text: str) -> list[int]:
    """The offset where each line of ``text`` starts (for :func:`location`)."""
    starts = [0]
    position = text.find("\n")
    while position >= 0:
        starts.append(position + 1)
        position = text.find("\n", position + 1)
    return starts


def location(starts: Sequence[int], offset: int) -> tuple[int, int]:
    """The 1-based ``(line, column)`` of ``offset``, given :func:`line_starts` of the text.

    Columns count code points; a search of the sorted starts, so a template of one long line or
    of many short ones costs the same.
    """
    line = bisect_right(starts, offset) - 1
    return line + 1, offset - starts[line] + 1


def grouped(diagnostics: Iterable[Diagnostic]) -> list[tuple[Diagnostic, int]]:
    """Each distinct problem once: its first diagnostic and how many share its message.

    A template that repeats one mistake (ten thousand ``{?x}`` never closed) is one problem to
    the person, reported where it first occurs with the count of the others.

    Args:
        diagnostics: diagnostics in template order, as ``diagnose`` gives them.

    Returns:
        ``(first, count)`` per distinct ``(severity, code, message)``, in the order of the first.
    """
    first: dict[tuple[Severity, str, str], Diagnostic] = {}
    counts: dict[tuple[Severity, str, str], int] = {}
    for diagnostic in diagnostics:
        key = (diagnostic.severity, diagnostic.code, diagnostic.message)
        if key in counts:
            counts[key] += 1
        else:
            first[key] = diagnostic
            counts[key] = 1
    return [(first[key], count) for key, count in counts.items()]
