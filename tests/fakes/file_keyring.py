"""A keyring backend that keeps its entries in a JSON file, for tests that run subprocesses.

A subprocess cannot share the in-memory keyring of the test process; keyring itself picks the
backend named by ``PYTHON_KEYRING_BACKEND`` when it starts. Point a subprocess at this one::

    env = file_keyring_env(tmp_path / "keyring.json", {("metaagent", "openai"): "sk-…"})
    subprocess.run([...], env=os.environ | env, cwd=REPO)   # REPO on the path: tests.fakes imports

The file is ``METAAGENT_TEST_KEYRING``; keep it outside any folder a test searches for leaked keys.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

import keyring.backend
import keyring.errors

__all__ = ["FileKeyring", "file_keyring_env"]

KEYRING_FILE_ENV = "METAAGENT_TEST_KEYRING"


class FileKeyring(keyring.backend.KeyringBackend):
    """Entries ``{"service/name": password}`` in the JSON file ``$METAAGENT_TEST_KEYRING``."""

    priority = 1  # keyring reads it on the class: high enough to be usable

    @staticmethod
    def _path() -> Path:
        return Path(os.environ[KEYRING_FILE_ENV])

    def _entries(self) -> dict[str, str]:
        path = self._path()
        if not path.exists():
            return {}
        loaded: dict[str, str] = json.loads(path.read_text(encoding="utf-8"))
        return loaded

    def get_password(self, service: str, username: str) -> str | None:
        return self._entries().get(f"{service}/{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        entries = self._entries()
        entries[f"{service}/{username}"] = password
        self._path().parent.mkdir(parents=True, exist_ok=True)
        self._path().write_text(json.dumps(entries), encoding="utf-8")

    def delete_password(self, service: str, username: str) -> None:
        entries = self._entries()
        if entries.pop(f"{service}/{username}", None) is None:
            raise keyring.errors.PasswordDeleteError(f"{service}/{username} is not set")
        self._path().write_text(json.dumps(entries), encoding="utf-8")


def file_keyring_env(path: Path, entries: Mapping[tuple[str, str], str]) -> dict[str, str]:
    """Write ``entries`` to ``path``; the environment variables that make a subprocess use them."""
    path.write_text(
        json.dumps({f"{service}/{name}": value for (service, name), value in entries.items()}),
        encoding="utf-8",
    )
    return {
        "PYTHON_KEYRING_BACKEND": f"{FileKeyring.__module__}.{FileKeyring.__qualname__}",
        KEYRING_FILE_ENV: str(path),
    }
