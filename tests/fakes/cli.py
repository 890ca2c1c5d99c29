"""``metaagent`` run as the installed console script in a subprocess, as a person runs it."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

__all__ = ["METAAGENT", "ROOT", "metaagent"]

ROOT = Path(__file__).resolve().parents[2]
METAAGENT = ROOT / ".venv" / "bin" / "metaagent"


def metaagent(
    *args: str,
    cwd: Path = ROOT,
    env: Mapping[str, str] | None = None,
    stdin: int | None = None,
    preexec_fn: Callable[[], object] | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Run ``metaagent ARGS`` (inheriting the environment unless ``env`` is given)."""
    return subprocess.run(
        [str(METAAGENT), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=None if env is None else dict(env),
        stdin=stdin,
        preexec_fn=preexec_fn,
    )
