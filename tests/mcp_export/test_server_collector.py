"""The served server's collector settings: start-up frozen, the young generation collected less."""

from __future__ import annotations

import gc
import subprocess
from pathlib import Path

from mcp_export.server.collector import YOUNG_THRESHOLD, tune_for_serving
from tests.fakes.mcp_clients import REPO, serve_command, write_agent


def test_tuning_freezes_what_exists_and_raises_only_the_young_threshold() -> None:
    before = gc.get_threshold()
    try:
        tune_for_serving()
        frozen = gc.get_freeze_count()
        after = gc.get_threshold()
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
    assert frozen > 10_000  # the imported SDKs at the least
    assert after == (YOUNG_THRESHOLD, before[1], before[2])


def test_the_serve_command_serves_with_the_tuned_collector(tmp_path: Path) -> None:
    agent = write_agent(tmp_path / "a.agent.yaml")
    done = subprocess.run(
        serve_command(str(agent), "--log-level", "debug"),
        input="",  # stdin closed at once: the stdio server starts, then ends
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    (line,) = [x for x in done.stderr.splitlines() if "collector:" in x]
    assert f"collected every {YOUNG_THRESHOLD}" in line
    frozen = int(line.rsplit("collector: ", 1)[1].split()[0])
    assert frozen > 10_000
