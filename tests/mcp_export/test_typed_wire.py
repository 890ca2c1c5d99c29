"""A typed tool's request on the wire of each OpenAI-compatible server kind.

Each server's ``structured_answer_streamed`` transcript (``tests/fixtures/wire``; its ``source``
names the documents the request shape comes from) is replayed by ``ReplayServer``; a typed
``ChatSession`` on that server's provider kind must send exactly the recorded
``response_format`` (the tool's outputSchema under the tool's name, no ``strict`` where the
schema does not meet strict mode; for llama.cpp's servers ``{type: json_object, schema}``, the
one form llama-cpp-python reads) and read the answer as the object: the JSON text the
transcript streamed (llama-server's is recorded from the real server, Gemma 3 270M under the
schema's grammar; the others' are documented).
"""

from __future__ import annotations

import json

import pytest

from mcp_export.providers.factory import provider_for_agent
from mcp_export.session.chat import ChatSession, run_to_result
from mcp_export.session.typed import OutputSpec
from tests.fakes.wire_replay import FIXTURES, ReplayServer, load_fixture
from tests.mcp_export.test_provider_compat import agent_for

pytestmark = pytest.mark.anyio

CASES = sorted(p.parent.name for p in FIXTURES.glob("*/structured_answer_streamed.json"))


def test_every_server_has_a_structured_output_case() -> None:
    servers = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())
    assert servers == CASES


@pytest.mark.parametrize("server", CASES)
async def test_a_typed_session_sends_the_recorded_response_format(server: str) -> None:
    fixture = load_fixture(FIXTURES / server / "structured_answer_streamed.json")
    body = fixture.exchanges[0].body
    recorded = body["response_format"]
    schema = recorded["schema"] if "schema" in recorded else recorded["json_schema"]["schema"]
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    with ReplayServer.for_server(server) as replay:
        agent = agent_for(server, replay, str(body["model"]))
        provider, model = provider_for_agent(agent)
        try:
            session = ChatSession(
                agent,
                provider=provider,
                model=model,
                output=OutputSpec(schema, "cheapest_flight"),
            )
            result = await run_to_result(session, user)
        finally:
            await provider.aclose()
        assert not replay.misses and not replay.violations, replay.report()
        (sent,) = replay.chat_requests
    assert result.error is None, result.error
    assert sent.body["response_format"] == recorded
    streamed = "".join(
        (choice.get("delta") or {}).get("content") or ""
        for line in fixture.exchanges[0].response["body_lines"]
        for part in line.split("data: ")
        if part.strip().startswith("{")
        for choice in json.loads(part).get("choices") or []
    )
    assert json.loads(result.answer) == json.loads(streamed)
