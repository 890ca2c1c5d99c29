"""Sampling over stateless HTTP (``--stateless``): a 2026-07-28 client samples (input-required
rounds need no session); a 2025-11-25 client cannot, whatever it offers, and is told so.

A real streamable HTTP server on loopback, the official ``mcp.Client`` with a sampling callback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.fakes.http_serving import served_over_http
from tests.fakes.mcp_clients import ScriptedSampling, write_agent

pytestmark = pytest.mark.anyio

AGENTS = pytest.mark.parametrize(
    "settings", [{}, {"model": "sampling"}], ids=["without-credentials", "sampling-model"]
)


@pytest.fixture(autouse=True)
def _no_openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def _text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def _call(agent: Path, mode: str, model: ScriptedSampling) -> types.CallToolResult:
    async with (
        served_over_http(agent, stateless=True) as url,
        Client(streamable_http_client(url), mode=mode, sampling_callback=model) as client,
    ):
        return await client.call_tool("book_flight", {"destination": "Oslo"})


@AGENTS
async def test_a_stateless_server_tells_a_2025_client_that_offers_sampling_what_to_do(
    tmp_path: Path, settings: dict[str, Any]
) -> None:
    model = ScriptedSampling()
    agent = write_agent(tmp_path / "a.agent.yaml", api_key=None, settings=settings)
    result = await _call(agent, "legacy", model)
    text = _text(result)
    assert result.is_error
    assert model.requests == []
    assert "call from a client that offers MCP sampling" not in text
    assert "--stateless" in text and "2025-11-25" in text
    assert "serve without --stateless" in text
    assert "2026-07-28 client" in text


@AGENTS
async def test_a_stateless_server_samples_a_2026_client(
    tmp_path: Path, settings: dict[str, Any]
) -> None:
    model = ScriptedSampling()
    agent = write_agent(tmp_path / "a.agent.yaml", api_key=None, settings=settings)
    result = await _call(agent, "auto", model)
    assert not result.is_error, _text(result)
    assert _text(result) == "sampled: Book a flight to Oslo for 1 passenger(s)."
