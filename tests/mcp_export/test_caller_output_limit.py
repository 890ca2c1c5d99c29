"""A caller model's answer is bounded (``settings.callers.maxOutputTokens``): a local server has
no output limit of its own.

llama.cpp's ``llama-server`` generates a request without ``max_tokens`` until the model stops
or the slot's context is full (``n_predict`` -1; measured 2026-11-28 with Gemma 3 270M: 424
tokens in 80 s and still going). A caller request is not streamed to such a server, so a model
that never stops never answers. The fake server below answers a caller request only when it
carries an output limit, and otherwise never, as that server does for a model that rambles.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_export.testing.callers import CallerResult
from mcp_export.testing.run import run_matrix, select_cases
from schema_types.files.agent_file import load_agent
from tests.fakes._script import Reply, RequestBody, caller, hang, text
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio

ASK = "Book a flight to Lisbon for two people"
_picks = caller(
    {"book_flight": {"destination": "LIS", "passengers": 2}},
    answer=lambda body: text("Booked AF123."),
)


def _generates_until_told_to_stop(body: RequestBody) -> Reply:
    if body.get("max_tokens") is None:
        return hang()
    return _picks(body)


async def _caller_run(
    tmp_path: Path, callers: dict[str, Any]
) -> tuple[CallerResult, dict[str, Any]]:
    tool = book_tool(tests=[{"name": "words", "ask": ASK}])
    with FakeOpenAIServer(responder=_generates_until_told_to_stop) as model:
        path = write_agent(
            tmp_path / "desk.agent.yaml",
            base_url=model.base_url,
            tools=[tool],
            settings={"timeoutSeconds": 3, "maxOutputTokens": 64, "callers": callers},
        )
        agent = load_agent(path)
        started = time.monotonic()
        with anyio.fail_after(20):
            matrix = await run_matrix(agent, path, select_cases(agent))
        assert time.monotonic() - started < 3, "the caller request waited for its time limit"
        asked = model.bodies[0]
    (result,) = matrix.results
    assert isinstance(result, CallerResult)
    return result, asked


async def test_a_caller_request_carries_an_output_limit_by_default(tmp_path: Path) -> None:
    result, asked = await _caller_run(tmp_path, {"decoys": []})

    assert result.turn is not None and result.turn.error is None, result.turn
    assert result.pick is not None and [c.name for c in result.turn.calls] == ["book_flight"]
    assert asked["max_tokens"] == 1024


async def test_callers_max_output_tokens_sets_the_caller_requests_limit(tmp_path: Path) -> None:
    result, asked = await _caller_run(tmp_path, {"decoys": [], "maxOutputTokens": 200})

    assert result.turn is not None and result.turn.error is None, result.turn
    assert asked["max_tokens"] == 200
