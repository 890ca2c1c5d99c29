"""The limits every reader of agent data shares: how deep values nest, how large a file may be.

One place for each number, so the YAML and JSON readers, the schema checks, the studio's editors
and call-argument validation all refuse the same things with the same words.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_FILE_BYTES", "MAX_NESTING", "TOO_DEEP", "nesting_depth"]

# Objects and arrays inside one another, at the most. Every reader of an agent (the schema checks,
# the studio's editors, saving, argument validation) recurses per level; real agents stay under
# 20. One limit for every load, whether the schemas are checked then (the server) or later (the
# studio).
MAX_NESTING = 100
TOO_DEEP = "the document is nested too deeply to read"

# An agent file is a few kilobytes of text; a 20 000-tool agent is about 5 MB.
MAX_FILE_BYTES = 10 * 1024 * 1024


def nesting_depth(value: Any, limit: int = MAX_NESTING) -> int:
    """How deep objects and arrays nest in ``value`` (0 for a scalar).

    Counted without recursion, in time linear in the size of ``value``, and only up to one level
    past ``limit`` (a deeper value reports ``limit + 1``).
    """
    depth = 0
    level: list[Any] = [value]
    # Level by level: each value is looked at once, and the lists grow in C (extend).
    while depth <= limit:
        below: list[Any] = []
        containers = False
        for item in level:
            if isinstance(item, dict):
                below.extend(item.values())
                containers = True
            elif isinstance(item, list | tuple):
                below.extend(item)
                containers = True
        if not containers:
            break
        depth += 1
        level = below
    return min(depth, limit + 1)
