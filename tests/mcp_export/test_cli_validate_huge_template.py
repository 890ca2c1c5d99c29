"""``metaagent validate`` and ``render`` on a prompt of 100 000 section tags that pair with nothing.

``{?x}`` 50 000 times then ``{/y}`` 50 000 times (400 KB): two distinct problems, each reported
once with its line and column in the prompt and how many places repeat it, in seconds (the
timeout bounds the run; pairing the tags used to take minutes).
"""

from __future__ import annotations

from pathlib import Path

from tests.fakes.cli import metaagent
from tests.fakes.hostile_agent import plan_tool, write_json_agent

TAGS = 50_000


def _agent(tmp_path: Path) -> Path:
    prompt = "Plan a trip.\n" + "{?x}" * TAGS + "{/y}" * TAGS + "\nTo {destination}."
    return write_json_agent(tmp_path / "hostile.agent.json", plan_tool(prompt))


def test_validate_reports_each_distinct_problem_once_with_its_place_and_count(
    tmp_path: Path,
) -> None:
    path = _agent(tmp_path)

    done = metaagent("validate", str(path), timeout=60)

    assert (done.returncode, done.stdout) == (0, f"ok: {path} (1 tool)\n")
    assert done.stderr.splitlines() == [
        f"warning: {path}: metadata.tools[0].prompt: line 2, column 1: unclosed section {{?x}}:"
        " write {/x} where it ends (and 49 999 more like it)",
        f"warning: {path}: metadata.tools[0].prompt: line 2, column {4 * TAGS + 1}: {{/y}} does"
        " not close the open section {?x}: write {/x} to close it (and 49 999 more like it)",
    ]


def test_render_keeps_the_unpaired_tags_as_written(tmp_path: Path) -> None:
    path = _agent(tmp_path)

    done = metaagent("render", str(path), "plan", "--arg", "destination=Oslo", timeout=60)

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Plan a trip.\n" + "{?x}" * TAGS + "{/y}" * TAGS + "\nTo Oslo.\n"
