"""``metaagent improve`` as a real subprocess against ``FakeOpenAIServer`` playing both the
authoring model and the served model: a fix that passes (and ``--apply`` writes it), a fix that
breaks another case (the regression first, nothing written, exit 1), an invalid proposal repaired
once, and one invalid twice (refused with the problems, exit 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_export.history.store import HistoryStore
from tests.fakes.authoring import (
    FIX_THAT_BREAKS,
    FIX_THAT_PASSES,
    agent_file,
    authoring_and_served,
)
from tests.fakes.cli import metaagent
from tests.fakes.openai_server import FakeOpenAIServer


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IMPROVE_TEST_KEY", "sk-test")


BAD_SCHEMA = {"field": "parameters", "text": "not json at all", "reason": "a broken schema"}


def test_a_fix_that_passes_prints_the_diff_and_rates_and_apply_writes_it(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=authoring_and_served([FIX_THAT_PASSES])) as model:
        path = agent_file(tmp_path / "desk.agent.yaml", model.base_url)
        original = path.read_text(encoding="utf-8")
        done = metaagent("improve", str(path), "book_flight", "--apply")

    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert out[0] == "FAIL  book_flight / oslo  openai:fake-model"
    assert "contains[0]" in out[1]
    assert out[2] == (
        "Suggested change to prompt: The Oslo case expects the confirmation code, and the "
        "template never asks for it."
    )
    assert "--- desk.agent.yaml (now)" in out
    assert "+++ desk.agent.yaml (with the fix)" in out
    assert any(line.startswith("+") and "Give the confirmation code." in line for line in out)
    assert any(line.startswith("-") and "passenger(s)." in line for line in out)
    assert "FIXED      book_flight / oslo  openai:fake-model" in out
    assert "openai:fake-model: 1/2 → 2/2 passed" in out
    assert out[-1] == f"applied: {path} saved with the change to prompt"
    saved = path.read_text(encoding="utf-8")
    assert saved != original and "Give the confirmation code." in saved
    store = HistoryStore()  # the test's own METAAGENT_HOME, as the subprocess's
    try:
        asked = [t for t in store.threads() if t.kind == "authoring"]
        assert [t.title for t in asked] == ["improve book_flight: 1 failed case"]
        assert [m.role for m in store.messages(asked[0].id)] == ["user", "assistant"]
    finally:
        store.close()


def test_without_apply_the_file_is_untouched(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=authoring_and_served([FIX_THAT_PASSES])) as model:
        path = agent_file(tmp_path / "desk.agent.yaml", model.base_url)
        original = path.read_bytes()
        done = metaagent("improve", str(path), "book_flight", "--no-history")

    assert done.returncode == 0, done.stderr
    assert "openai:fake-model: 1/2 → 2/2 passed" in done.stdout
    assert path.read_bytes() == original
    store = HistoryStore()
    try:
        assert not [t for t in store.threads() if t.kind == "authoring"]
    finally:
        store.close()


def test_a_fix_that_breaks_another_case_shows_the_regression_first_and_is_not_written(
    tmp_path: Path,
) -> None:
    with FakeOpenAIServer(responder=authoring_and_served([FIX_THAT_BREAKS])) as model:
        path = agent_file(tmp_path / "desk.agent.yaml", model.base_url)
        original = path.read_bytes()
        done = metaagent("improve", str(path), "book_flight", "--apply")

    assert done.returncode == 1, done.stderr
    out = done.stdout.splitlines()
    rates = out.index("REGRESSED  book_flight / paris  openai:fake-model")
    assert out[rates + 1] == "FIXED      book_flight / oslo  openai:fake-model"
    assert out[rates + 2] == "openai:fake-model: 1/2 → 1/2 passed"
    assert out[-1] == "not applied: the fix makes 1 passing case fail"
    assert path.read_bytes() == original


def test_an_invalid_proposal_gets_one_repair_turn(tmp_path: Path) -> None:
    responder = authoring_and_served([BAD_SCHEMA, FIX_THAT_PASSES])
    with FakeOpenAIServer(responder=responder) as model:
        path = agent_file(tmp_path / "desk.agent.yaml", model.base_url)
        done = metaagent("improve", str(path), "book_flight")
        repair = [
            b for b in model.bodies if "change was refused" in str(b["messages"][-1]["content"])
        ]

    assert done.returncode == 0, done.stderr
    assert "Suggested change to prompt (after one repair turn): " in done.stdout
    assert len(repair) == 1
    assert "parameters: the new schema is not JSON" in repair[0]["messages"][-1]["content"]


def test_a_proposal_invalid_twice_is_refused_with_the_problems(tmp_path: Path) -> None:
    bad_type = {
        "field": "parameters",
        "text": '{"type": "object", "properties": {"destination": {"type": "strung"}}}',
        "reason": "a typo",
    }
    responder = authoring_and_served([BAD_SCHEMA, bad_type])
    with FakeOpenAIServer(responder=responder) as model:
        path = agent_file(tmp_path / "desk.agent.yaml", model.base_url)
        original = path.read_bytes()
        done = metaagent("improve", str(path), "book_flight", "--apply")

    assert done.returncode == 3
    assert "---" not in done.stdout
    assert done.stderr.startswith(
        "metaagent improve: no fix is offered: the authoring model's change was still invalid "
        "after one repair turn (parameters: the new schema is not JSON"
    )
    assert "strung" in done.stderr
    assert path.read_bytes() == original


def test_nothing_failing_exits_0_and_asks_no_authoring_model(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=authoring_and_served([])) as model:
        path = agent_file(tmp_path / "desk.agent.yaml", model.base_url)
        path.write_text(
            path.read_text(encoding="utf-8").replace("AF123", "Booked"), encoding="utf-8"
        )
        done = metaagent("improve", str(path), "book_flight")

    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "book_flight: every case passed on openai:fake-model; nothing to fix\n"


def test_an_unknown_tool_exits_2(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=authoring_and_served([])) as model:
        path = agent_file(tmp_path / "desk.agent.yaml", model.base_url)
        done = metaagent("improve", str(path), "nope")

    assert done.returncode == 2
    assert "no tool named 'nope'" in done.stderr
