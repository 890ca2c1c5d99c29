"""``python -m mcp_export SUBCOMMAND …``: the headless CLI."""

from __future__ import annotations

import sys

from mcp_export.cli import main

if __name__ == "__main__":
    sys.exit(main())
