"""Typed tools as callers meet them: through MCP sampling (an instruction, then the check, in
both protocol eras), as a prompt (toolsAsPrompts tells the client's model the expected output),
and in the terminal (``metaagent call`` prints the checked object)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from mcp_export.providers.factory import provider_for_agent
from mcp_export.server.agent_server import AgentServer, load_served_agents
from mcp_export.server.prompts import ROLE_META
from mcp_export.session.chat import ChatSession
from mcp_export.session.events import FinalAnswer, OutputChecked
from mcp_export.session.typed import OutputSpec
from schema_types.files.agent_file import load_agent
from tests.fakes._script import text
from tests.fakes.cli import metaagent
from tests.fakes.mcp_clients import ScriptedSampling, book_tool, sampled_text, write_agent
from tests.fakes.openai_server import FakeOpenAIServer
from tests.mcp_export.test_typed_calls import FLIGHTS, GOOD, WRONG

pytestmark = pytest.mark.anyio

MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])


@pytest.fixture(autouse=True)
def _no_openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def _text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


@MODES
async def test_a_sampled_typed_call_is_told_the_schema_checked_and_repaired(
    tmp_path: Path, mode: str
) -> None:
    answers = iter([f"```json\n{json.dumps(WRONG)}\n```", json.dumps(GOOD)])

    def respond(params: types.CreateMessageRequestParams) -> Any:
        return sampled_text(next(answers))

    model = ScriptedSampling(respond)
    path = write_agent(
        tmp_path / "a.agent.yaml",
        api_key=None,
        system_prompt="You book trips.",
        tools=[book_tool(outputSchema=FLIGHTS)],
    )
    async with (
        AgentServer(load_served_agents([path]), history=False) as served,
        Client(served.server, mode=mode, sampling_callback=model) as client,
    ):
        await client.list_tools()
        result = await client.call_tool("book_flight", {"destination": "Oslo"})
    assert not result.is_error, _text(result)
    assert result.structured_content == GOOD
    first, second = model.requests[0], model.requests[-1]
    assert first.system_prompt is not None
    assert first.system_prompt.startswith("You book trips.\n\nAnswer with one JSON value only")
    assert json.dumps(FLIGHTS) in first.system_prompt
    last = second.messages[-1].content
    assert isinstance(last, types.TextContent)
    assert "cheapest.price: -1 is less than the minimum of 0" in last.text


@MODES
async def test_a_typed_tool_as_a_prompt_tells_the_expected_output(
    tmp_path: Path, mode: str
) -> None:
    path = write_agent(
        tmp_path / "a.agent.yaml",
        system_prompt="You book trips.",
        tools=[book_tool(outputSchema=FLIGHTS)],
        settings={"toolsAsPrompts": True},
    )
    async with (
        AgentServer(load_served_agents([path]), history=False) as served,
        Client(served.server, mode=mode) as client,
    ):
        got = await client.get_prompt("book_flight", {"destination": "Oslo"})
    system, instruction, prompt = got.messages
    assert isinstance(system.content, types.TextContent)
    assert system.content.text == "You book trips."
    assert isinstance(instruction.content, types.TextContent)
    assert instruction.content.text.startswith("Answer with one JSON value only")
    assert json.dumps(FLIGHTS) in instruction.content.text
    assert instruction.content.meta == {ROLE_META: "system"}
    assert isinstance(prompt.content, types.TextContent)
    assert prompt.content.text == "Book a flight to Oslo for 1 passenger(s)."


def test_metaagent_call_prints_the_checked_object_and_says_the_repair(tmp_path: Path) -> None:
    with FakeOpenAIServer([text(json.dumps(WRONG)), text(json.dumps(GOOD))]) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml",
            base_url=model.base_url,
            tools=[book_tool(outputSchema=FLIGHTS)],
        )
        done = metaagent("call", str(path), "book_flight", "--arg", "destination=Oslo")
    assert done.returncode == 0, done.stderr
    assert done.stdout == json.dumps(GOOD) + "\n"
    assert "metaagent call: the answer does not fit the outputSchema:" in done.stderr
    assert "cheapest.price: -1 is less than the minimum of 0" in done.stderr


async def test_a_key_the_model_repeats_in_a_typed_answer_is_redacted_everywhere(
    tmp_path: Path,
) -> None:
    key = "test-key-TYPED-0123456789abcdef"
    leaked = {"cheapest": {"flight": key, "price": -1}}
    fixed = {"cheapest": {"flight": key, "price": 1}, "count": 1}
    with FakeOpenAIServer([text(json.dumps(leaked)), text(json.dumps(fixed))]) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml",
            base_url=model.base_url,
            api_key=key,
            tools=[book_tool(outputSchema=FLIGHTS)],
        )
        agent = load_agent(path)
        provider, name = provider_for_agent(agent)
        try:
            session = ChatSession(
                agent, provider=provider, model=name, output=OutputSpec(FLIGHTS, "book_flight")
            )
            events = [event async for event in session.run("Book Oslo.")]
        finally:
            await provider.aclose()
    checks = [e for e in events if isinstance(e, OutputChecked)]
    assert [c.ok for c in checks] == [False, True]
    assert key not in repr(checks)
    final = events[-1]
    assert isinstance(final, FinalAnswer) and final.output is not None
    assert key not in final.text and key not in repr(final.output)
