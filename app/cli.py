"""The ``metaagent`` entry point.

``metaagent SUBCOMMAND …`` runs a headless subcommand (no Qt is imported); ``metaagent
install-desktop`` adds the studio's desktop launcher (no Qt either); a bare ``metaagent
[AGENT_FILE …]`` opens the studio, which needs the ``studio`` extra.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from app.studio_extra import STUDIO_MISSING, studio_installed


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch to the headless CLI, the desktop launcher's installer, or the studio."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "install-desktop":
        from app.desktop_install import main as install_desktop

        return install_desktop(args[1:])
    from mcp_export.cli import COMMANDS

    subcommands = {name.lstrip("_") for name in COMMANDS}
    if args and (args[0] in subcommands or args[0] in {"-h", "--help"}):
        from mcp_export.cli import main as cli_main

        return cli_main(args)
    if not studio_installed():
        print(STUDIO_MISSING, file=sys.stderr)
        return 2
    from app.studio import run_studio

    result: int = run_studio(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
