"""``metaagent draft``: a scripted authoring model (``FakeOpenAIServer``) drafts a tool from a
sentence; the CLI is judged by what it prints, its exit codes and the agent file's bytes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml

from mcp_export.history.store import HistoryStore
from tests.fakes.cli import metaagent
from tests.fakes.drafting import BAD_DRAFT, GOOD_DRAFT, SENTENCE, draft_reply
from tests.fakes.openai_server import FakeOpenAIServer

AGENT = """\
# Travel desk: kept by hand, comments and all.
metadata:
  name: Travel Desk
  description: Plans trips.
  tools:
    - name: book_flight   # the first tool
      description: Books a flight.
      parameters:
        type: object
        properties:
          destination: {{type: string}}
        required: [destination]
      prompt: Book a flight to {{destination}}.
settings:
  model: openai:fake-model
providers:
  openai:
    OPENAI_API_KEY: env://DRAFT_TEST_KEY
    OPENAI_BASE_URL: {base_url}
"""


def _agent(tmp_path: Path, base_url: str) -> Path:
    path = tmp_path / "travel.agent.yaml"
    path.write_text(AGENT.format(base_url=base_url), encoding="utf-8")
    return path


def _env() -> dict[str, str]:
    return {**os.environ, "DRAFT_TEST_KEY": "sk-draft-test-0123456789abcdef"}


def test_a_good_draft_is_printed_and_the_file_is_left_alone(tmp_path: Path) -> None:
    with FakeOpenAIServer([draft_reply(GOOD_DRAFT)]) as server:
        path = _agent(tmp_path, server.base_url)
        before = path.read_bytes()
        done = metaagent("draft", str(path), SENTENCE, env=_env())
        body = server.bodies[0]
    assert done.returncode == 0, done.stderr
    printed = yaml.safe_load(done.stdout)
    assert printed["name"] == "convert_temperature"
    assert len(printed["tests"]) == 4
    assert "not written (pass --write" in done.stderr
    assert path.read_bytes() == before
    assert SENTENCE in body["messages"][1]["content"]
    assert "book_flight" in body["messages"][1]["content"]
    assert body["response_format"]["json_schema"]["name"] == "tool_draft"


def test_write_adds_the_tool_and_keeps_the_rest_of_the_file(tmp_path: Path) -> None:
    with FakeOpenAIServer([draft_reply(GOOD_DRAFT)]) as server:
        path = _agent(tmp_path, server.base_url)
        done = metaagent("draft", str(path), SENTENCE, "--write", env=_env())
    assert done.returncode == 0, done.stderr
    assert f"added to {path}" in done.stderr
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# Travel desk: kept by hand, comments and all.\n")
    assert "- name: book_flight   # the first tool" in text
    assert "env://DRAFT_TEST_KEY" in text
    tools = yaml.safe_load(text)["metadata"]["tools"]
    assert [t["name"] for t in tools] == ["book_flight", "convert_temperature"]
    assert tools[1]["tests"] == GOOD_DRAFT["tests"]
    checked = metaagent("validate", "--strict", str(path), env=_env())
    assert checked.returncode == 0, checked.stderr


def test_an_invalid_draft_gets_one_repair_turn_with_the_messages(tmp_path: Path) -> None:
    with FakeOpenAIServer([draft_reply(BAD_DRAFT), draft_reply(GOOD_DRAFT)]) as server:
        path = _agent(tmp_path, server.base_url)
        done = metaagent("draft", str(path), SENTENCE, env=_env())
        repair = server.bodies[1]["messages"][-1]["content"]
    assert done.returncode == 0, done.stderr
    assert "after one repair turn" in done.stderr
    assert "prompt: line 1, column 28: unknown placeholder {unit}" in repair
    assert "tests: no case must fail" in repair


def test_an_invalid_draft_twice_is_refused_quoting_the_messages(tmp_path: Path) -> None:
    with FakeOpenAIServer([draft_reply(BAD_DRAFT), draft_reply(BAD_DRAFT)]) as server:
        path = _agent(tmp_path, server.base_url)
        before = path.read_bytes()
        done = metaagent("draft", str(path), SENTENCE, "--write", env=_env())
        asked = len(server.bodies)
    assert done.returncode == 1
    assert asked == 2
    assert done.stdout == ""
    assert "does not pass validation, even after one repair turn; nothing was added" in done.stderr
    assert "prompt: line 1, column 28: unknown placeholder {unit}" in done.stderr
    assert 'prompt: required parameter "to" is never used in the prompt' in done.stderr
    assert path.read_bytes() == before


def test_the_exchange_is_in_history_and_the_key_nowhere(tmp_path: Path) -> None:
    with FakeOpenAIServer([draft_reply(GOOD_DRAFT)]) as server:
        path = _agent(tmp_path, server.base_url)
        done = metaagent("draft", str(path), SENTENCE, env=_env())
    assert done.returncode == 0, done.stderr
    store = HistoryStore()
    threads = store.threads(kind="authoring")
    assert [t.title for t in threads] == [f"draft a tool: {SENTENCE}"]
    messages = store.messages(threads[0].id)
    assert [m.role for m in messages] == ["user", "assistant"]
    assert json.loads(messages[1].content or "")["name"] == "convert_temperature"
    assert "sk-draft-test" not in done.stdout + done.stderr


def test_bad_input_exits_2_and_says_what_to_set(tmp_path: Path) -> None:
    path = _agent(tmp_path, "http://127.0.0.1:9/v1")
    env = {k: v for k, v in _env().items() if k != "DRAFT_TEST_KEY"}
    missing_key = metaagent("draft", str(path), SENTENCE, env=env)
    assert missing_key.returncode == 2
    assert "no authoring model: DRAFT_TEST_KEY is not set" in missing_key.stderr
    unknown = metaagent("draft", str(path), SENTENCE, "--model", "nowhere:x", env=_env())
    assert unknown.returncode == 2
    assert "does not name a known provider" in unknown.stderr
    empty = metaagent("draft", str(path), "  ", env=_env())
    assert empty.returncode == 2 and "the sentence is empty" in empty.stderr
    absent = metaagent("draft", str(tmp_path / "none.agent.yaml"), SENTENCE, env=_env())
    assert absent.returncode == 2
