"""What the command line's entry points import before a command needs more."""

from __future__ import annotations

import subprocess
import sys


def test_the_cli_and_the_agent_file_load_neither_the_mcp_sdk_nor_a_provider_sdk() -> None:
    code = (
        "import sys, mcp_export.cli, schema_types.files.agent_file;"
        "print(sorted(m for m in ('mcp', 'openai', 'anthropic', 'aiohttp', 'PySide6', 'ruamel')"
        " if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_serve_over_stdio_loads_no_oauth_token_library() -> None:
    # PyJWT (and the parts of cryptography it loads) checks OAuth access tokens over HTTP; a
    # stdio cold start never does.
    code = (
        "import sys, mcp_export.cli._serve;"
        "print(sorted(m for m in ('jwt', 'cryptography.hazmat.primitives.asymmetric.rsa')"
        " if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
