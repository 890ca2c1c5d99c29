"""``metaagent verify --lint``, run as the real console script: per-client verdicts, each finding
with its source, and an exit code CI can use (0 nothing refused, 1 refused — with --strict also
changed —, 2 a file that does not load)."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.cli import metaagent
from tests.fakes.mcp_clients import book_tool, write_agent

EXAMPLE = "resources/examples/code-reviewer.agent.yaml"


def test_a_bundled_example_passes_every_client_and_says_what_gemini_drops():
    done = metaagent("verify", "--lint", EXAMPLE)

    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    assert lines[0] == f"Client rules for {EXAMPLE}, served as 'code-reviewer' (2 tools):"
    assert lines[1:6] == [
        "✔ Claude Desktop",
        "✔ Claude Code",
        "✔ VS Code Copilot",
        "✔ Cursor",
        "✔ OpenAI function calling (clients that pass tools on to it)",
    ]
    assert lines[6].startswith("! Gemini function calling")
    assert "    review_diff (changed): uniqueItems at properties.focus:" in done.stdout
    assert "source: Gemini API Schema message" in done.stdout
    assert lines[-1].startswith("0 refused, ")


def test_strict_fails_on_what_a_client_only_changes():
    assert metaagent("verify", "--lint", "--strict", EXAMPLE).returncode == 1


def test_a_name_a_client_refuses_fails_with_the_rule_and_its_source(tmp_path: Path):
    path = write_agent(tmp_path / "desk.agent.yaml", tools=[book_tool("flights.book")])
    done = metaagent("verify", "--lint", str(path))

    assert done.returncode == 1, done.stdout + done.stderr
    assert "✘ Claude Desktop: 1 refused" in done.stdout
    assert "    flights.book (refused): the name has '.': Claude refuses" in done.stdout
    assert "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/" in done.stdout
    assert "VS Code renames it 'flights_book'" in done.stdout
    assert "microsoft/vscode src/vs/workbench/contrib/mcp/common/mcpServer.ts" in done.stdout


def test_client_and_name_narrow_the_lint_to_one_client_and_its_prefix(tmp_path: Path):
    path = write_agent(tmp_path / "desk.agent.yaml", tools=[book_tool("b" * 40)])
    short = metaagent("verify", "--lint", "--client", "cursor", "--name", "d" * 19, str(path))
    long = metaagent("verify", "--lint", "--client", "cursor", "--name", "d" * 20, str(path))

    assert short.returncode == 0 and short.stdout.splitlines()[1:] == [
        "✔ Cursor",
        "Every client takes every tool as written.",
    ]
    assert long.returncode == 1
    assert "together are 60 characters: Cursor filters the tool out at 60" in long.stdout
    assert "Claude" not in long.stdout


def test_a_file_that_does_not_load_is_exit_code_2(tmp_path: Path):
    path = tmp_path / "broken.agent.yaml"
    path.write_text("metadata: [\n", encoding="utf-8")
    done = metaagent("verify", "--lint", str(path))

    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"metaagent verify: {path}:")


def test_strict_without_lint_is_a_usage_error():
    done = metaagent("verify", "--strict", EXAMPLE)
    assert done.returncode == 2 and "--strict goes with --lint" in done.stderr
