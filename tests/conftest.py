"""Test-wide set-up: Qt offscreen, anyio on asyncio, a private METAAGENT_HOME per test, and
Hypothesis settings that do not depend on how busy the machine is."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# Hypothesis's per-example deadline and its "too slow" health check time the machine, not the
# code: on a loaded box a property fails for an example that is fine. The number of examples
# (``max_examples``) is what each property chooses; how long they take is not tested.
settings.register_profile("metaagent", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("metaagent")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _fresh_endpoints() -> Iterator[None]:
    """What a provider learns about an endpoint lasts for the process; fake servers reuse ports,
    so each test starts with nothing learnt (a later server on the same port is another one)."""
    yield
    from mcp_export.providers.openai_provider import forget_endpoints

    forget_endpoints()


@pytest.fixture(autouse=True)
def metaagent_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Every test gets its own data directory (history database, recent files, recovery copies)."""
    home = tmp_path_factory.mktemp("metaagent-home")
    monkeypatch.setenv("METAAGENT_HOME", str(home))
    yield home
