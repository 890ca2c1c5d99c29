"""Agent files every command must refuse, run through the real ``metaagent`` in a subprocess.

Each command that loads an agent (validate, render, serve, export) refuses these the same way:
one located message on stderr, a non-zero exit, no traceback, within a bounded time. The paths
that once hung ``validate`` (a named pipe, ``/dev/zero``) run with a time limit and an address
space limit, so a regression fails here instead of stalling or exhausting the machine.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
from pathlib import Path

import pytest

from tests.fakes.cli import metaagent as run_cli

GOOD = "resources/examples/code-reviewer.agent.yaml"
NOT_A_FILE = "not a regular file: save the agent as a *.agent.yaml file and give that file's path"

CYCLE = (
    "metadata:\n"
    "  name: Loop\n"
    "  tools:\n"
    "    - name: lookup\n"
    "      parameters:\n"
    "        type: object\n"
    "        properties:\n"
    "          a: {$ref: '#/$defs/x'}\n"
    "        $defs:\n"
    "          x: {$ref: '#/$defs/y'}\n"
    "          y: {$ref: '#/$defs/x'}\n"
    "      prompt: Look up {a}.\n"
)
CYCLE_MESSAGE = (
    ':10:21: metadata.tools[0].parameters.$defs.x.$ref: the reference "#/$defs/y" leads back '
    "here without descending into a property or an item ($defs.x → $defs.y → $defs.x), so "
    "validating a value would never end: make one of these references point to a schema "
    "outside the loop"
)


def _limited() -> None:
    # Runs in the child: 2 GB of address space at most, so reading without end fails quickly.
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def metaagent(*args: str, stdin: int | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, stdin=stdin, preexec_fn=_limited)


def test_validate_refuses_a_named_pipe_without_waiting_for_a_writer(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe.agent.yaml"
    os.mkfifo(pipe)

    done = metaagent("validate", str(pipe), GOOD)

    assert (done.returncode, done.stdout) == (1, f"ok: {GOOD} (2 tools)\n")
    assert done.stderr == f"error: {pipe}: is a named pipe (FIFO), {NOT_A_FILE}\n"


def test_validate_refuses_dev_zero_without_reading_it() -> None:
    done = metaagent("validate", "/dev/zero")

    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"error: /dev/zero: is a character device, {NOT_A_FILE}\n"


def test_a_reference_loop_is_refused_by_every_command_that_loads_the_agent(
    tmp_path: Path,
) -> None:
    # validate once said "ok" to this file, and render then died of a RecursionError.
    agent = tmp_path / "loop.agent.yaml"
    agent.write_text(CYCLE, encoding="utf-8")
    located = f"{agent}{CYCLE_MESSAGE}"

    validate = metaagent("validate", str(agent))
    render = metaagent("render", str(agent), "lookup", "--arg", "a=1")
    serve = metaagent("serve", str(agent), stdin=subprocess.DEVNULL)
    export = metaagent("export", str(agent), "--client", "json")

    assert (validate.returncode, validate.stdout, validate.stderr) == (1, "", f"error: {located}\n")
    assert (render.returncode, render.stdout) == (1, "")
    assert render.stderr == f"metaagent render: {located}\n"
    for done in (serve, export):
        assert done.returncode != 0
        assert located in done.stderr
        assert "Traceback" not in done.stderr


def test_validate_reports_each_tool_of_a_tsagent_file_that_holds_them_where_nothing_reads(
    tmp_path: Path,
) -> None:
    (tmp_path / "tsagent.json").write_text(
        json.dumps({"metadata": {"name": "Old"}, "tools": [{"name": "a b"}, {"name": "c d"}]}),
        encoding="utf-8",
    )
    where = tmp_path / "tsagent.json"

    done = metaagent("validate", str(tmp_path))

    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines() == [
        f"error: {where}:1:40: tools: tools are not read here: an agent's tools go under "
        "metadata (metadata.tools); move this list there",
        f"error: {where}:1:50: tools[0].name: tool name 'a b' is not valid for MCP: use 1 to "
        "128 letters, digits, '_', '-' or '.'",
        f"error: {where}:1:67: tools[1].name: tool name 'c d' is not valid for MCP: use 1 to "
        "128 letters, digits, '_', '-' or '.'",
    ]


@pytest.mark.parametrize("kind", ["directory", "named pipe"])
def test_validate_names_a_tsagent_prompt_md_that_is_not_a_file(tmp_path: Path, kind: str) -> None:
    (tmp_path / "tsagent.json").write_text('{"metadata": {"name": "Old"}}', encoding="utf-8")
    prompt = tmp_path / "prompt.md"
    if kind == "directory":
        prompt.mkdir()
    else:
        os.mkfifo(prompt)
    shown = "a directory" if kind == "directory" else "a named pipe (FIFO)"

    done = metaagent("validate", str(tmp_path))

    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"error: {prompt}: is {shown}, not a regular file: a tsagent directory's prompt.md is a "
        "text file holding the system prompt\n"
    )
