"""``metaagent schema`` prints the shipped agent-file schema, nothing else."""

from __future__ import annotations

import subprocess
import sys

from schema_types.agent_schema import shipped_schema_text


def test_metaagent_schema_prints_the_shipped_schema():
    done = subprocess.run(
        [sys.executable, "-m", "mcp_export", "schema"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout == shipped_schema_text()
    assert done.stderr == ""
