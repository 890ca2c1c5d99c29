"""``metaagent test --replay`` in a child with its network namespace cut (``unshare -rn``) and an
audit hook that counts every socket connect and name lookup, and every process started.

The child's stderr ends with ``OPENED <count> <events>``: a replay must open none and start none
(no model, no tool server, no decoy server).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.fakes.cli import ROOT

__all__ = ["NOTHING_OPENED", "replay_offline"]

NOTHING_OPENED = "OPENED 0 []"
"""How a replay's stderr ends when it opened no socket and started no process."""

_AUDITED = """
import sys
seen = []
def hook(event, args):
    if event in ("socket.connect", "socket.getaddrinfo", "socket.sendto", "subprocess.Popen",
                 "os.posix_spawn", "os.fork", "os.exec"):
        seen.append(event)
sys.addaudithook(hook)
from mcp_export.cli import main
try:
    code = main(sys.argv[1:])
finally:
    sys.stderr.write(f"\\nOPENED {len(seen)} {sorted(set(seen))}\\n")
sys.exit(code)
"""


def replay_offline(path: Path) -> subprocess.CompletedProcess[str]:
    """``metaagent test PATH --replay`` with no network, under the audit hook."""
    unshare = shutil.which("unshare")
    assert unshare is not None, "unshare (util-linux) is needed to cut the network"
    return subprocess.run(
        [unshare, "-rn", sys.executable, "-c", _AUDITED, "test", str(path), "--replay"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
