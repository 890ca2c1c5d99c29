"""The one exception hierarchy of ``schema_types``.

::

    SchemaError                     anything this package refuses
    ├── SchemaDefinitionError       a parameters schema is invalid (or its root is not an object)
    ├── AgentFileError              an agent file cannot be read, parsed or understood
    ├── ArgumentsError              call arguments do not satisfy a tool's parameters
    └── SecretError                 a secret reference cannot be resolved

Every message says where (file, line/column or JSON path) and what is expected, so it can be shown
to a person as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


class SchemaError(Exception):
    """Base of every error raised by ``schema_types``."""


@dataclass(frozen=True)
class Problem:
    """One located problem; ``path`` is a JSON path like ``metadata.tools[0].name``, or empty."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class SchemaDefinitionError(SchemaError):
    """A parameters schema is invalid; ``problems`` lists each located problem."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(str(p) for p in self.problems) or "invalid schema")


class AgentFileError(SchemaError):
    """An agent file cannot be loaded.

    Attributes:
        file: the file (or directory) that was read.
        line: 1-based line of a syntax error, when known.
        column: 1-based column of a syntax error, when known.
        path: JSON path of a content error (``metadata.tools[1].name``), when known.
        detail: what is wrong and what is expected.
    """

    def __init__(
        self,
        file: str,
        detail: str,
        *,
        line: int | None = None,
        column: int | None = None,
        path: str | None = None,
    ) -> None:
        self.file = file
        self.detail = detail
        self.line = line
        self.column = column
        self.path = path
        where = file
        if line is not None:
            where += f":{line}" + (f":{column}" if column is not None else "")
        if path:
            where += f": {path}"
        super().__init__(f"{where}: {detail}")


class ArgumentsError(SchemaError):
    """Arguments do not validate; ``problems`` names every bad argument path."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems) or "invalid arguments")


class SecretError(SchemaError):
    """A secret reference (``env://`` or ``keyring://``) cannot be resolved."""
