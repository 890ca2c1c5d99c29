"""What the command line's entry points import before a command needs more."""

from __future__ import annotations

import subprocess
import sys


def _loaded(imports: str, modules: tuple[str, ...]) -> str:
    """Which of ``modules`` a fresh interpreter has loaded after ``import IMPORTS``, as printed."""
    code = f"import sys, {imports}; print(sorted(m for m in {modules!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_the_cli_and_the_agent_file_load_neither_the_mcp_sdk_nor_a_provider_sdk() -> None:
    modules = ("mcp", "openai", "anthropic", "aiohttp", "PySide6", "ruamel")
    assert _loaded("mcp_export.cli, schema_types.files.agent_file", modules) == "[]"


def test_serve_over_stdio_loads_no_oauth_token_library() -> None:
    # PyJWT (and the parts of cryptography it loads) checks OAuth access tokens over HTTP; a
    # stdio cold start never does.
    modules = ("jwt", "cryptography.hazmat.primitives.asymmetric.rsa")
    assert _loaded("mcp_export.cli._serve", modules) == "[]"


def test_the_hints_load_neither_the_tokenizer_nor_the_protocol_types_before_they_count() -> None:
    # Loading the vocabulary costs a few tenths of a second and the protocol's types half a
    # second: the studio counts only once a Tests tab is shown, the CLI only for `hints`.
    modules = ("tiktoken", "mcp_types.methods")
    assert _loaded("mcp_export.cli._hints, mcp_export.hints", modules) == "[]"


def test_serve_loads_no_tokenizer() -> None:
    assert _loaded("mcp_export.cli._serve, mcp_export.server.agent_server", ("tiktoken",)) == "[]"


def test_history_reads_caller_runs_without_the_mcp_sdk_or_the_test_runner() -> None:
    # The studio's History opens a caller case's run on its window's thread: the reading of the
    # tool list a run offered is shared with the runner's, from a module that loads neither
    # the MCP SDK (seconds) nor the test runner that pulls it in.
    modules = ("mcp", "mcp_types", "openai", "mcp_export.testing", "mcp_export.server")
    assert _loaded("mcp_export.history.caller_rows, app.history.caller_runs", modules) == "[]"
