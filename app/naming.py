"""Names made unique by a number: ``base``, ``base_2``, ``base_3``…"""

from __future__ import annotations

import re
from collections.abc import Container

__all__ = ["numbered_name"]


def numbered_name(base: str, taken: Container[str]) -> str:
    """The first of ``base``, ``base_2``, ``base_3``… not in ``taken``.

    A trailing ``_N`` of ``base`` is replaced, so a copy of ``name_2`` is ``name_3``, not
    ``name_2_2``.
    """
    if base not in taken:
        return base
    stem = re.sub(r"_\d+$", "", base)
    number = 2
    while f"{stem}_{number}" in taken:
        number += 1
    return f"{stem}_{number}"
