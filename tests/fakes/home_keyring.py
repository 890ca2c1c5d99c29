"""A keyring found through HOME, as a person's own keyring is: for servers a client launches.

A client passes a stdio server little more than HOME and PATH, so a test keyring chosen by an
environment variable (``tests.fakes.file_keyring``) never reaches it. This one is chosen by
keyring's own config file, ``$HOME/.config/python_keyring/keyringrc.cfg``, and keeps its entries
in ``keyring-entries.json`` beside it: any process with that HOME sees the same keyring::

    use_home_keyring(home, {("metaagent-studio", "travel-desk-openai"): "sk-…"})
    # a process started with HOME=home resolves keyring://metaagent-studio/travel-desk-openai

The config's ``keyring-path`` puts the repository on the path, so the backend imports anywhere.
Keep ``home`` outside any folder a test searches for leaked keys.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from tests.fakes.file_keyring import FileKeyring

__all__ = ["HomeKeyring", "use_home_keyring"]

REPO = Path(__file__).resolve().parents[2]
_ENTRIES = "keyring-entries.json"


def _folder(home: Path) -> Path:
    return home / ".config" / "python_keyring"


class HomeKeyring(FileKeyring):
    """Entries ``{"service/name": password}`` in ``keyring-entries.json`` beside the config."""

    @staticmethod
    def _path() -> Path:
        return _folder(Path.home()) / _ENTRIES


def use_home_keyring(home: Path, entries: Mapping[tuple[str, str], str]) -> None:
    """Make ``HomeKeyring`` the keyring of every process whose HOME is ``home``, holding
    ``entries``."""
    folder = _folder(home)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "keyringrc.cfg").write_text(
        "[backend]\n"
        f"default-keyring = {HomeKeyring.__module__}.{HomeKeyring.__qualname__}\n"
        f"keyring-path = {REPO}\n",
        encoding="utf-8",
    )
    (folder / _ENTRIES).write_text(
        json.dumps({f"{service}/{name}": value for (service, name), value in entries.items()}),
        encoding="utf-8",
    )
