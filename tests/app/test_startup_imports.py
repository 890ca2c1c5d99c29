"""What the studio's start imports before its window is shown with an agent in it.

The studio runs as a real process (``run_studio`` offscreen, an example agent on its command
line, a temporary home); when the window is shown it reports which modules were loaded. The
first paint waits for every import before it, so what no view needs yet stays out: the schema
validator (``jsonschema``, whose import is a tenth of a second) and the SDKs of MCP and the
providers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "resources" / "examples" / "travel-desk.agent.yaml"

CHILD = """
import json, os, sys
from app.studio import run_studio

NAMES = ("jsonschema", "mcp", "openai", "anthropic", "aiohttp")

def on_shown(window):
    print(json.dumps(sorted(name for name in NAMES if name in sys.modules)), flush=True)
    os._exit(0)

run_studio(sys.argv[1:], on_shown=on_shown)
"""


def test_the_studio_is_shown_with_an_agent_before_jsonschema_or_any_sdk_is_imported(
    tmp_path: Path,
) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path))
    env.pop("METAAGENT_HOME", None)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(EXAMPLE)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.splitlines()[-1]) == []
