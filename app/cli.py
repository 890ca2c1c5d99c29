"""The ``metaagent`` entry point.

``metaagent SUBCOMMAND …`` runs a headless subcommand (no Qt is imported); a bare
``metaagent [AGENT_FILE …]`` opens the studio.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch to the headless CLI or start the studio."""
    args = list(sys.argv[1:] if argv is None else argv)
    from mcp_export.cli import COMMANDS

    subcommands = {name.lstrip("_") for name in COMMANDS}
    if args and (args[0] in subcommands or args[0] in {"-h", "--help"}):
        from mcp_export.cli import main as cli_main

        return cli_main(args)
    from app.studio import run_studio

    return run_studio(args)


if __name__ == "__main__":
    sys.exit(main())
