"""Filling a served tool's prompt template without holding up the event loop.

The template engine is linear in the template, but a template of hundreds of kilobytes still
takes a good part of a second to cut into tokens and pair its sections the first time it is
filled, and every request the server answers (other tools, ``ping``) would wait for it. A prompt
past a few kilobytes is therefore filled in a worker thread; a short one, the usual case, inline,
where it costs well under a millisecond.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import anyio

from mcp_export.server.tools import ServedTool
from schema_types.tool_prompt import filled_prompt

__all__ = ["INLINE_PROMPT_CHARS", "fill_prompt"]

#: The longest prompt template filled on the event loop (a few milliseconds at most to tokenize).
INLINE_PROMPT_CHARS = 4096


async def fill_prompt(tool: ServedTool, arguments: Mapping[str, Any]) -> str:
    """The prompt ``tool`` submits for ``arguments`` (already validated).

    Returns:
        The filled template, as :func:`schema_types.tool_prompt.filled_prompt` gives it.
    """
    definition = tool.definition
    fill = partial(filled_prompt, definition, arguments)
    if len(definition.prompt) <= INLINE_PROMPT_CHARS:
        return fill()
    return await anyio.to_thread.run_sync(fill)
