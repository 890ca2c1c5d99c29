"""``metaagent call`` as a real subprocess records what its call cost in History: the price table
of Preferences (``prices.yaml`` in ``METAAGENT_HOME``, inherited from conftest) at the tokens the
model server reported; unknown (NULL, never 0) when the model has no price."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_export.history.store import HistoryStore
from tests.fakes._script import text
from tests.fakes.openai_server import FakeOpenAIServer
from tests.mcp_export.test_cli_call_chat import metaagent, write_agent


@pytest.mark.parametrize("priced", [True, False])
def test_a_cli_call_records_its_cost_or_unknown(
    tmp_path: Path, metaagent_home: Path, priced: bool
) -> None:
    if priced:
        (metaagent_home / "prices.yaml").write_text(
            "openai:fake-model: {input: 0.4, output: 1.6}\n", encoding="utf-8"
        )
    with FakeOpenAIServer([text("Hello Ada!", usage=(1000, 200))]) as server:
        agent = write_agent(tmp_path, server)
        done = metaagent("call", str(agent), "greet", "--arg", "who=Ada")
    assert done.returncode == 0, done.stderr
    with HistoryStore() as store:
        [run] = store.runs()
        thread = store.thread(run.thread_id or "")
    assert thread is not None
    if priced:
        assert run.cost_usd == pytest.approx((1000 * 0.4 + 200 * 1.6) / 1_000_000)
        assert thread.cost.text() == "cost $0.000720 a call, $0.0720 per 100 calls"
    else:
        assert run.cost_usd is None
        assert thread.cost.text() == "cost unknown"
