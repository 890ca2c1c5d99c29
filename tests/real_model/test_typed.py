"""A typed tool against real models: Gemma 3 270M on llama-cpp-python and on llama.cpp's
llama-server (or your own server: ``METAAGENT_REAL_MODEL_URL``), on CPU.

The tool declares a small ``outputSchema``; the agent has no inner tools, so every request
carries the schema as ``response_format: {type: json_object, schema}``, which both servers turn
into a grammar: even this tiny base model can only write an object of that shape. The
served call (the official MCP client over stdio, which itself validates ``structuredContent``
against the listed outputSchema) must answer a valid object. The figures (seconds, model
requests, whether a repair turn was needed, tokens generated, the object) are printed at the end
of the run, per server.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
import yaml
from mcp import Client

from mcp_export.server.typed_result import TRACE_META
from schema_types.output_schema import output_problems
from tests.fakes.mcp_clients import serve_params
from tests.real_model.conftest import Figures, ModelServer

CALL_SECONDS = 600
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "maxLength": 30},
        "country": {"type": "string", "maxLength": 30},
        "capital": {"type": "boolean"},
    },
    "required": ["city", "country", "capital"],
}


def write_agent(path: Path, server: ModelServer) -> Path:
    agent = {
        "metadata": {
            "name": "Geo Desk",
            "tools": [
                {
                    "name": "locate",
                    "description": "Where a city is, as data.",
                    "parameters": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}},
                        "required": ["city"],
                    },
                    "prompt": "In which country is {city}? Is it the capital?",
                    "outputSchema": SCHEMA,
                }
            ],
        },
        "settings": {
            "model": f"llamacpp:{server.model}",
            "temperature": 0.2,
            "seed": 1,
            "maxOutputTokens": 96,
            "maxChatTurns": 2,
            "timeoutSeconds": CALL_SECONDS,
        },
        "systemPrompt": "You answer questions about places.",
        "providers": {"llamacpp": {"LLAMACPP_BASE_URL": server.base_url}},
    }
    path.write_text(yaml.safe_dump(agent, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.anyio
async def test_a_typed_tool_answers_a_valid_object_on_the_real_model(
    model_server: ModelServer, figures: Figures, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "geo.agent.yaml", model_server)
    with anyio.fail_after(CALL_SECONDS + 60):
        async with Client(serve_params(str(agent), env=dict(os.environ)), mode="auto") as client:
            await client.list_tools()
            mark = model_server.mark()
            started = time.monotonic()
            result = await client.call_tool("locate", {"city": "Oslo"})
            seconds = time.monotonic() - started
    text = "".join(b.text for b in result.content if isinstance(b, types.TextContent))
    trace: dict[str, Any] = (result.meta or {}).get(TRACE_META) or {}
    figures.add(
        f"[{model_server.name}] typed call (mcp.Client, stdio)",
        seconds=round(seconds, 1),
        is_error=result.is_error,
        turns=trace.get("turns"),
        repaired=(trace.get("output") or {}).get("repaired"),
        **model_server.since(mark),
        answer=text[:120],
    )
    assert not result.is_error, text
    assert result.structured_content is not None
    assert output_problems(SCHEMA, result.structured_content) == []
