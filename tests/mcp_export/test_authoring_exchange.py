"""The authoring model: which model answers, one question answered in a JSON Schema (checked and
repaired once by the typed-run machinery), recorded in History and the protocol log, keys
redacted. The model is ``FakeOpenAIServer``; History is a real SQLite store."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from mcp_export.authoring.exchange import AuthoringAnswer, AuthoringConversation, authoring_model
from mcp_export.errors import ConfigurationError, CredentialsMissing
from mcp_export.history.store import open_store
from mcp_export.protocol_log import ProtocolLog
from schema_types.files.agent_file import load_agent
from tests.fakes._script import text
from tests.fakes.mcp_clients import write_agent
from tests.fakes.openai_server import FakeOpenAIServer

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "count": {"type": "integer"}},
    "required": ["name", "count"],
}


def _agent(tmp_path: Path, base_url: str, **options: Any) -> Any:
    path = write_agent(tmp_path / "a.agent.yaml", base_url=base_url, **options)
    return load_agent(path), path


async def _ask(conversation: AuthoringConversation, question: str) -> AuthoringAnswer:
    async with conversation:
        return await conversation.ask(question)


def test_an_answer_in_the_schema_is_returned_and_recorded(tmp_path: Path) -> None:
    with FakeOpenAIServer([text(json.dumps({"name": "x", "count": 2}))]) as server:
        agent, path = _agent(tmp_path, server.base_url)
        store = open_store(tmp_path / "h.sqlite")
        log = ProtocolLog()
        conversation = AuthoringConversation(
            authoring_model(agent),
            system="You write tools.",
            schema=SCHEMA,
            schema_name="thing",
            title="draft a tool: count things",
            history=store,
            agent_path=str(path),
            protocol_log=log,
        )
        answer = asyncio.run(_ask(conversation, "Count things."))
        body = server.bodies[0]
    assert answer.ok and answer.value == {"name": "x", "count": 2}
    assert not answer.repaired
    assert body["messages"][0] == {"role": "system", "content": "You write tools."}
    assert body["response_format"]["type"] == "json_schema"
    threads = [t for t in store.threads() if t.id == conversation.thread_id]
    assert threads and threads[0].kind == "authoring"
    assert threads[0].title == "draft a tool: count things"
    roles = [m.role for m in store.messages(conversation.thread_id or "")]
    assert roles == ["user", "assistant"]
    entries = log.entries()
    assert any(e.kind == "request" for e in entries)
    assert all("sk-test" not in e.text for e in entries)


def test_an_answer_outside_the_schema_is_repaired_once_then_refused(tmp_path: Path) -> None:
    bad = text(json.dumps({"name": "x"}))
    with FakeOpenAIServer([bad, bad]) as server:
        agent, _ = _agent(tmp_path, server.base_url)
        conversation = AuthoringConversation(
            authoring_model(agent), system="s", schema=SCHEMA, schema_name="thing", title="t"
        )
        answer = asyncio.run(_ask(conversation, "Count things."))
        repair = server.bodies[1]["messages"][-1]["content"]
    assert not answer.ok and answer.repaired
    assert answer.error == (
        "its answer does not fit the thing schema even after one repair turn: "
        "count: required property is missing"
    )
    assert "does not match the required JSON Schema" in repair


def test_the_chosen_model_wins_over_the_agents_own(tmp_path: Path) -> None:
    with FakeOpenAIServer([text(json.dumps({"name": "x", "count": 1}))]) as server:
        agent, _ = _agent(tmp_path, server.base_url)
        model = authoring_model(agent, "openai:other-model")
        asyncio.run(
            _ask(
                AuthoringConversation(
                    model, system="s", schema=SCHEMA, schema_name="thing", title="t"
                ),
                "q",
            )
        )
        sent = server.bodies[0]["model"]
    assert model.label == "openai:other-model"
    assert sent == "other-model"


def test_a_missing_model_or_key_says_what_to_set(tmp_path: Path) -> None:
    agent, _ = _agent(tmp_path, "http://127.0.0.1:9/v1", model=None)
    with pytest.raises(ConfigurationError, match="Preferences"):
        authoring_model(agent)
    agent, _ = _agent(tmp_path, "http://127.0.0.1:9/v1", model="sampling")
    with pytest.raises(ConfigurationError, match="cannot be 'sampling'"):
        authoring_model(agent)
    agent, _ = _agent(tmp_path, "http://127.0.0.1:9/v1", api_key=None)
    with pytest.raises(CredentialsMissing, match="OPENAI_API_KEY"):
        authoring_model(agent, env={})
