"""Package exports loaded on first use (PEP 562), for ``schema_types`` and ``mcp_export``.

A package lists where each public name lives; ``__getattr__`` imports that module when the name is
first asked for and keeps the value in the package, so later lookups are plain attribute reads.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from typing import Any

__all__ = ["LazyExports"]


class LazyExports:
    """The public names of ``package`` and the module each comes from."""

    def __init__(self, package: str, where: Mapping[str, str]) -> None:
        self._package = package
        self._where = where

    def get(self, name: str) -> Any:
        """The value of ``name``, imported now if needed (a package's ``__getattr__``).

        Raises:
            AttributeError: the package has no such name.
        """
        module = self._where.get(name)
        if module is None:
            raise AttributeError(f"module {self._package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[self._package], name, value)
        return value

    def names(self) -> list[str]:
        """What the package offers (a package's ``__dir__``)."""
        return sorted({*vars(sys.modules[self._package]), *self._where})
