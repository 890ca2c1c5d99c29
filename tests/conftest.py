"""Test-wide set-up: Qt offscreen, anyio on asyncio, a private METAAGENT_HOME per test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def metaagent_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Every test gets its own data directory (history database, recent files, recovery copies)."""
    home = tmp_path_factory.mktemp("metaagent-home")
    monkeypatch.setenv("METAAGENT_HOME", str(home))
    yield home
