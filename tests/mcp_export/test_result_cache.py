"""Cached results of a tool that declares ``cache: {ttlSeconds: N}``: the real OpenAI provider
against ``FakeOpenAIServer`` (which counts the model requests), the official ``mcp.Client``
in-process, the history in a real SQLite file and a real PostgreSQL database.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from mcp_export.history.store import HistoryStore
from mcp_export.server.agent_server import AgentServer, load_served_agents
from mcp_export.server.cache import CACHE_META
from mcp_export.server.history import CACHED_TITLE
from mcp_export.server.result import RUN_META
from tests.fakes._script import Reply, RequestBody, status, text
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio
pytest_plugins = ["tests.fakes.postgres"]

CACHED = {"ttlSeconds": 600}


def _numbered() -> Any:
    """A responder whose answers are numbered, so a fresh answer never equals a kept one."""
    count = 0

    def reply(body: RequestBody) -> Reply:
        nonlocal count
        count += 1
        return text(f"answer {count}: {body.last_user_text}", usage=(10, 2))

    return reply


def _text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


def _agent(path: Path, base_url: str, **tool: Any) -> Path:
    return write_agent(path, base_url=base_url, tools=[book_tool(cache=CACHED, **tool)])


async def _calls(path: Path, history: str, *arguments: dict[str, Any]) -> list[Any]:
    async with (
        AgentServer(load_served_agents([path]), history=history) as served,
        Client(served.server) as client,
    ):
        return [await client.call_tool("book_flight", a) for a in arguments]


async def test_a_second_call_with_the_same_arguments_is_answered_from_the_cache(
    tmp_path: Path, store_location: str
) -> None:
    with FakeOpenAIServer(responder=_numbered()) as model:
        path = _agent(tmp_path / "a.agent.yaml", model.base_url)
        # The default of passengers written out is the same call.
        first, second = await _calls(
            path, store_location, {"destination": "Oslo"}, {"destination": "Oslo", "passengers": 1}
        )
        assert len(model.model_requests) == 1
    assert not first.is_error and not second.is_error
    assert _text(second) == _text(first) == "answer 1: Book a flight to Oslo for 1 passenger(s)."
    assert second.structured_content == first.structured_content
    assert CACHE_META not in (first.meta or {})
    hit = second.meta[CACHE_META]
    assert hit["hit"] is True and hit["ageSeconds"] >= 0
    assert hit["threadId"] == first.meta["io.metaagent/threadId"]
    trace = second.meta[RUN_META]
    assert trace["cached"] is True and trace["turns"] == 0
    assert trace["usage"]["inputTokens"] == 0
    assert trace["answeredBy"] == first.meta[RUN_META]
    with HistoryStore(store_location) as store:
        hit_run, fresh_run = store.runs(tool_name="book_flight")
        hit_thread = store.thread(hit_run.thread_id or "")
        fresh_thread = store.thread(fresh_run.thread_id or "")
    assert (hit_run.status, hit_run.answer) == ("complete", _text(first))
    assert (hit_run.tokens_in, hit_run.tokens_out, hit_run.tool_calls) == (0, 0, 0)
    assert (fresh_run.tokens_in, fresh_run.tokens_out) == (10, 2)
    assert hit_thread is not None and hit_thread.title.startswith(CACHED_TITLE)
    assert fresh_thread is not None and not fresh_thread.title.startswith(CACHED_TITLE)


async def test_different_arguments_are_not_answered_from_the_cache(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=_numbered()) as model:
        path = _agent(tmp_path / "a.agent.yaml", model.base_url)
        oslo, rome, two = await _calls(
            path,
            str(tmp_path / "h.db"),
            {"destination": "Oslo"},
            {"destination": "Rome"},
            {"destination": "Oslo", "passengers": 2},
        )
        assert len(model.model_requests) == 3
    assert [_text(r)[:8] for r in (oslo, rome, two)] == ["answer 1", "answer 2", "answer 3"]
    assert all(CACHE_META not in (r.meta or {}) for r in (oslo, rome, two))


async def test_an_answer_is_not_given_after_its_ttl(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=_numbered()) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml",
            base_url=model.base_url,
            tools=[book_tool(cache={"ttlSeconds": 0.3})],
        )
        async with (
            AgentServer(load_served_agents([path]), history=str(tmp_path / "h.db")) as served,
            Client(served.server) as client,
        ):
            first = await client.call_tool("book_flight", {"destination": "Oslo"})
            kept = await client.call_tool("book_flight", {"destination": "Oslo"})
            await anyio.sleep(0.4)
            later = await client.call_tool("book_flight", {"destination": "Oslo"})
        assert len(model.model_requests) == 2
    assert _text(kept) == _text(first)
    assert _text(later).startswith("answer 2") and CACHE_META not in (later.meta or {})


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("prompt", "Book one flight to {destination} for {passengers} passenger(s)."),
        ("description", "Books a flight for a traveller, cheapest first."),
        ("model", "openai:other-model"),
        ("systemPrompt", "Answer in French."),
        ("temperature", 0.5),
    ],
)
async def test_an_edit_of_what_decides_the_answer_is_not_answered_from_the_cache(
    tmp_path: Path, field: str, value: Any
) -> None:
    history = str(tmp_path / "h.db")
    with FakeOpenAIServer(responder=_numbered(), models=("fake-model", "other-model")) as model:
        path = tmp_path / "a.agent.yaml"
        _agent(path, model.base_url)
        [before] = await _calls(path, history, {"destination": "Oslo"})
        if field in ("prompt", "description"):
            _agent(path, model.base_url, **{field: value})
        elif field == "model":
            write_agent(path, base_url=model.base_url, model=value, tools=[book_tool(cache=CACHED)])
        elif field == "systemPrompt":
            write_agent(
                path, base_url=model.base_url, system_prompt=value, tools=[book_tool(cache=CACHED)]
            )
        else:
            write_agent(
                path,
                base_url=model.base_url,
                settings={field: value},
                tools=[book_tool(cache=CACHED)],
            )
        [after, again] = await _calls(
            path, history, {"destination": "Oslo"}, {"destination": "Oslo"}
        )
        assert len(model.model_requests) == 2
    assert _text(before).startswith("answer 1")
    assert _text(after).startswith("answer 2") and CACHE_META not in (after.meta or {})
    assert _text(again) == _text(after) and again.meta[CACHE_META]["hit"]


async def test_an_unchanged_agent_file_rewritten_still_hits(tmp_path: Path) -> None:
    history = str(tmp_path / "h.db")
    with FakeOpenAIServer(responder=_numbered()) as model:
        path = _agent(tmp_path / "a.agent.yaml", model.base_url)
        [first] = await _calls(path, history, {"destination": "Oslo"})
        # Another server (a restart) on the same file and history.
        _agent(path, model.base_url, title="Flight booking")
        [second] = await _calls(path, history, {"destination": "Oslo"})
        assert len(model.model_requests) == 1
    assert _text(second) == _text(first) and second.meta[CACHE_META]["hit"]


async def test_a_conversation_tool_never_uses_the_cache(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=_numbered()) as model:
        path = _agent(tmp_path / "a.agent.yaml", model.base_url, conversation=True)
        first, second = await _calls(
            path, str(tmp_path / "h.db"), {"destination": "Oslo"}, {"destination": "Oslo"}
        )
        assert len(model.model_requests) == 2
    assert _text(first).startswith("answer 1") and _text(second).startswith("answer 2")
    assert CACHE_META not in (second.meta or {})


async def test_an_error_is_never_cached(tmp_path: Path) -> None:
    with FakeOpenAIServer([status(400), text("Booked.")]) as model:
        path = _agent(tmp_path / "a.agent.yaml", model.base_url)
        failed, answered, kept = await _calls(
            path,
            str(tmp_path / "h.db"),
            {"destination": "Oslo"},
            {"destination": "Oslo"},
            {"destination": "Oslo"},
        )
        assert len(model.model_requests) == 2
    assert failed.is_error
    assert not answered.is_error and _text(answered) == "Booked."
    assert _text(kept) == "Booked." and kept.meta[CACHE_META]["hit"]


async def test_two_instances_on_one_postgresql_store_share_a_hit(
    tmp_path: Path, postgres_url: str
) -> None:
    with FakeOpenAIServer(responder=_numbered()) as model:
        path = _agent(tmp_path / "a.agent.yaml", model.base_url)
        async with (
            AgentServer(load_served_agents([path]), history=postgres_url) as one,
            AgentServer(load_served_agents([path]), history=postgres_url) as other,
            Client(one.server) as first_client,
            Client(other.server) as other_client,
        ):
            first = await first_client.call_tool("book_flight", {"destination": "Oslo"})
            shared = await other_client.call_tool("book_flight", {"destination": "Oslo"})
        assert len(model.model_requests) == 1
    assert _text(shared) == _text(first) and (shared.meta or {})[CACHE_META]["hit"]


async def test_a_server_that_does_not_read_the_cache_asks_the_model(tmp_path: Path) -> None:
    history = str(tmp_path / "h.db")
    with FakeOpenAIServer(responder=_numbered()) as model:
        path = _agent(tmp_path / "a.agent.yaml", model.base_url)
        await _calls(path, history, {"destination": "Oslo"})
        async with (
            AgentServer(load_served_agents([path]), history=history, read_cache=False) as served,
            Client(served.server) as client,
        ):
            fresh = await client.call_tool("book_flight", {"destination": "Oslo"})
        assert len(model.model_requests) == 2
    assert _text(fresh).startswith("answer 2") and CACHE_META not in (fresh.meta or {})


def test_a_cache_ttl_must_be_positive(tmp_path: Path) -> None:
    from pydantic import ValidationError

    from schema_types.agent import ToolDefinition

    with pytest.raises(ValidationError, match="greater than 0"):
        ToolDefinition.model_validate({"name": "t", "cache": {"ttlSeconds": 0}})
    assert ToolDefinition.model_validate({"name": "t", "cache": {"ttlSeconds": 5}}).cache


async def test_test_cases_do_not_read_the_cache_unless_asked(tmp_path: Path) -> None:
    from mcp_export.testing.run import run_matrix, select_cases
    from schema_types.files.agent_file import load_agent

    history = str(tmp_path / "h.db")
    case = {"name": "oslo", "arguments": {"destination": "Oslo"}, "expect": {"contains": ["Oslo"]}}
    with FakeOpenAIServer(responder=_numbered()) as model:
        path = _agent(tmp_path / "a.agent.yaml", model.base_url, tests=[case])
        [served] = await _calls(path, history, {"destination": "Oslo"})
        agent = load_agent(path)
        with HistoryStore(history) as store:
            plain = await run_matrix(agent, path, select_cases(agent), history=store)
            assert len(model.model_requests) == 2
            asked = await run_matrix(
                agent, path, select_cases(agent), history=store, read_cache=True
            )
            assert len(model.model_requests) == 2
    [fresh] = plain.results
    [kept] = asked.results
    assert fresh.passed and fresh.outcome.text.startswith("answer 2")
    assert kept.passed and kept.outcome.text == _text(served)
