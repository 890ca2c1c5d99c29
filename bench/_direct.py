"""The model request made directly, exactly as ``OpenAIProvider`` makes it: the baseline that the
overhead benchmarks subtract (the provider's own ``ChatCompletionsHTTP``: the same aiohttp
session, headers, body encoding and stream decoding), so the difference is our own cost and not a
different transport.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from mcp_export.providers._openai_http import ChatCompletionsHTTP, StreamSeen

__all__ = ["DirectModel"]


class DirectModel:
    """Requests to ``base_url`` (key ``sk-bench``, no retries)."""

    def __init__(self, base_url: str) -> None:
        self.http = ChatCompletionsHTTP(base_url, "sk-bench", timeout=60.0)

    async def stream(self, body: dict[str, Any]) -> AsyncIterator[object]:
        """Open a streamed Chat Completions request with ``body``; its chunks as decoded JSON."""
        return self.http.events(await self.http.open(body), StreamSeen())

    async def close(self) -> None:
        await self.http.aclose()
