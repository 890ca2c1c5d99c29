"""Whether the studio's packages (the ``studio`` extra) are here, and what to say when not.

Imports no Qt: the ``metaagent`` entry point and ``metaagent install-desktop`` both ask before
anything loads PySide6.
"""

from __future__ import annotations

import importlib.util

__all__ = ["STUDIO_MISSING", "studio_installed"]

STUDIO_MISSING = (
    "metaagent: the studio is not installed here (it needs the 'studio' extra: PySide6 and "
    "qasync).\n"
    "Add it with:  pip install 'meta-agent-studio[studio]'\n"
    "         or:  uv tool install 'meta-agent-studio[studio]'  /  "
    "pipx install --force 'meta-agent-studio[studio]'\n"
    "(installed from a wheel? name that file instead: 'meta_agent_studio-….whl[studio]')\n"
    "Every subcommand works without it: `metaagent --help` lists them (serve, test, export…)."
)
"""What a bare ``metaagent`` says when the studio's packages are missing."""

_STUDIO_MODULES = ("PySide6", "qasync")


def studio_installed() -> bool:
    """Whether the studio's packages can be imported (looked up without importing them)."""
    return all(importlib.util.find_spec(name) is not None for name in _STUDIO_MODULES)
