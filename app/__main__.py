"""``python -m app [AGENT_FILE …]``: the studio, as ``metaagent`` starts it."""

from __future__ import annotations

import sys

from app.cli import main

if __name__ == "__main__":
    sys.exit(main())
