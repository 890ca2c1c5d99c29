"""The base of every model read from an agent file: unknown keys kept, camelCase in the file."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = ["FileModel"]


class FileModel(BaseModel):
    """A part of an agent file.

    Keys it does not know are kept (``extra="allow"``) so files written by other tools survive a
    load/save round trip; Python names are snake_case, the file's are camelCase (aliases).
    """

    model_config = ConfigDict(
        extra="allow",
        alias_generator=to_camel,
        populate_by_name=True,
        validate_assignment=True,
    )

    def to_data(self) -> dict[str, Any]:
        """The plain-JSON form as written to a file (aliases, unset fields left out)."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)
