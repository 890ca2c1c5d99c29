"""Where Meta Agent Studio keeps its data: one directory for the studio and the served server.

``$METAAGENT_HOME`` when set (tests and portable set-ups use it), else the platform's user data
directory (``~/.local/share/metaagent-studio`` on Linux). The history database, studio settings,
recovery copies and remembered test values all live here, so ``metaagent serve`` and the studio
see the same history.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["APP_DIR_NAME", "data_dir"]

APP_DIR_NAME = "metaagent-studio"


def data_dir() -> Path:
    """The data directory (not created here)."""
    home = os.environ.get("METAAGENT_HOME")
    if home:
        return Path(home).expanduser()
    import platformdirs

    return platformdirs.user_data_path(APP_DIR_NAME, appauthor=False)
