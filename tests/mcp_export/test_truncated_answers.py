"""An answer cut off at the token limit (Chat Completions ``finish_reason: length``, the Messages
API's ``stop_reason: max_tokens``) is flagged wherever the answer goes: a notice in the trace,
the served result's ``_meta`` (``stopReason``, ``truncated``) and a note after its text,
``metaagent call``'s exit code 3 with a note on stderr, and a test case, which fails on it unless
it says ``truncated: null`` (or ``true``: it must be cut off).

Real parts: the OpenAI and Anthropic providers against their fake HTTP servers, the served MCP
server through the official client, ``metaagent call`` / ``metaagent test`` as subprocesses.
"""

from __future__ import annotations

import json
from contextlib import aclosing
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from mcp_export.providers.factory import provider_for_agent
from mcp_export.server.agent_server import AgentServer, load_served_agents
from mcp_export.server.result import RUN_META, TRUNCATED_NOTE
from mcp_export.session.chat import ChatSession
from mcp_export.session.events import FinalAnswer, Notice, SessionEvent
from schema_types.files.agent_file import load_agent
from tests.fakes._script import Reply, RequestBody, text
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.cli import metaagent
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio

HALF = "Booked AF123 to Oslo, leaving at"


def _cut_off(body: RequestBody) -> Reply:
    return text(HALF, usage=(20, 8), finish_reason="length")


def _agent(tmp_path: Path, base_url: str, tests: list[dict[str, Any]] | None = None) -> Path:
    return write_agent(
        tmp_path / "desk.agent.yaml",
        base_url=base_url,
        tools=[book_tool(tests=tests or [])],
        settings={"maxOutputTokens": 8},
    )


async def _session_events(path: Path) -> list[SessionEvent]:
    agent = load_agent(path)
    provider, model = provider_for_agent(agent)
    session = ChatSession(agent, provider=provider, model=model)
    try:
        with anyio.fail_after(30):
            async with aclosing(session.run("Book Oslo.")) as events:
                return [event async for event in events]
    finally:
        await provider.aclose()


async def test_the_session_flags_a_cut_off_answer_in_its_trace(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=_cut_off) as model:
        events = await _session_events(_agent(tmp_path, model.base_url))

    final = events[-1]
    assert isinstance(final, FinalAnswer), final
    assert (final.text, final.stop_reason, final.truncated) == (HALF, "max_tokens", True)
    assert [e.text for e in events if isinstance(e, Notice)] == [
        "the answer was cut off at the token limit (settings.maxOutputTokens = 8): it is "
        "incomplete (stop reason: max_tokens)"
    ]


async def test_an_anthropic_answer_cut_off_at_max_tokens_is_flagged(tmp_path: Path) -> None:
    with FakeAnthropicServer([text(HALF, finish_reason="max_tokens")]) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml", model="anthropic:claude-test", base_url=None, api_key=None
        )
        data = path.read_text(encoding="utf-8")
        path.write_text(
            data
            + "providers:\n  anthropic:\n    ANTHROPIC_API_KEY: sk-ant-test\n"
            + f"    ANTHROPIC_BASE_URL: {model.base_url}\n",
            encoding="utf-8",
        )
        events = await _session_events(path)

    final = events[-1]
    assert isinstance(final, FinalAnswer), final
    assert final.truncated
    assert any(isinstance(e, Notice) and "cut off at the token limit" in e.text for e in events)


async def test_not_cut_off_answers_carry_their_stop_reason_and_no_note(tmp_path: Path) -> None:
    with FakeOpenAIServer([text("Booked AF123.")]) as model:
        path = _agent(tmp_path, model.base_url)
        async with (
            AgentServer(load_served_agents([path]), history=False) as served,
            Client(served.server) as client,
        ):
            result = await client.call_tool("book_flight", {"destination": "Oslo"})

    assert [b.text for b in result.content if isinstance(b, types.TextContent)] == ["Booked AF123."]
    trace = (result.meta or {})[RUN_META]
    assert (trace["stopReason"], trace["truncated"]) == ("end_turn", False)


async def test_a_served_answer_cut_off_says_so_in_its_meta_and_its_text(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=_cut_off) as model:
        path = _agent(tmp_path, model.base_url)
        async with (
            AgentServer(load_served_agents([path]), history=False) as served,
            Client(served.server) as client,
        ):
            result = await client.call_tool("book_flight", {"destination": "Oslo"})

    assert not result.is_error
    texts = [b.text for b in result.content if isinstance(b, types.TextContent)]
    assert texts == [HALF, TRUNCATED_NOTE]
    assert result.structured_content is not None
    assert result.structured_content["answer"] == HALF
    trace = (result.meta or {})[RUN_META]
    assert (trace["stopReason"], trace["truncated"]) == ("max_tokens", True)
    assert trace["notes"] == [TRUNCATED_NOTE]


def test_metaagent_call_prints_the_cut_off_answer_and_exits_3(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=_cut_off) as model:
        path = _agent(tmp_path, model.base_url)
        done = metaagent("call", str(path), "book_flight", "--arg", "destination=Oslo")

    assert done.returncode == 3, done.stderr
    assert done.stdout == HALF + "\n"
    assert (
        "note: the answer was cut off at the token limit (settings.maxOutputTokens = 8)"
        in done.stderr
    )


def test_a_case_fails_on_a_cut_off_answer_unless_it_allows_one(tmp_path: Path) -> None:
    cases = [
        {"name": "plain", "arguments": {"destination": "Oslo"}, "expect": {"contains": ["AF123"]}},
        {
            "name": "allowed",
            "arguments": {"destination": "Oslo"},
            "expect": {"contains": ["AF123"], "truncated": None},
        },
        {"name": "wanted", "arguments": {"destination": "Oslo"}, "expect": {"truncated": True}},
    ]
    report = tmp_path / "report.json"
    with FakeOpenAIServer(responder=_cut_off) as model:
        path = _agent(tmp_path, model.base_url, tests=cases)
        done = metaagent("test", str(path), "--json", str(report))

    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[1].startswith("FAIL      book_flight / plain  ")
    assert lines[2] == (
        "    truncated: the answer was cut off at the token limit (stop reason max_tokens): it is "
        "incomplete; raise settings.maxOutputTokens, or set truncated: null to allow it"
    )
    assert lines[3].startswith("PASS      book_flight / allowed  ")
    assert lines[4].startswith("PASS      book_flight / wanted  ")
    cells = json.loads(report.read_text(encoding="utf-8"))["cells"]
    runs = {cell["case"]: cell["runs"][0] for cell in cells}
    assert (runs["plain"]["stopReason"], runs["plain"]["truncated"]) == ("max_tokens", True)
    assert runs["allowed"]["answer"] == HALF
