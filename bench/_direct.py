"""The model request made directly, exactly as ``OpenAIProvider`` makes it: the baseline that the
overhead benchmarks subtract (the SDK's aiohttp client, ``post`` with the body as JSON-ready dicts,
chunks back as decoded JSON), so the difference is our own cost and not a different transport.
"""

from __future__ import annotations

from typing import Any

from openai import AsyncOpenAI, AsyncStream, DefaultAioHttpClient

__all__ = ["DirectModel"]


class DirectModel:
    """An SDK client for ``base_url`` (key ``sk-bench``, no retries)."""

    def __init__(self, base_url: str) -> None:
        self.client = AsyncOpenAI(
            api_key="sk-bench", base_url=base_url, max_retries=0, http_client=DefaultAioHttpClient()
        )

    async def stream(self, body: dict[str, Any]) -> AsyncStream[object]:
        """Open a streamed Chat Completions request with ``body``."""
        opened: AsyncStream[object] = await self.client.post(
            "/chat/completions",
            body=body,
            cast_to=object,
            stream=True,
            stream_cls=AsyncStream[object],
        )
        return opened

    async def close(self) -> None:
        await self.client.close()
