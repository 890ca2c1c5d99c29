"""The design-time problems of a template, as the editor and ``metaagent validate`` show them."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from schema_types.template.tokens import Token

__all__ = ["Diagnostic", "Severity", "error_at"]


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
