"""What the test harness promises the tests: the shared fakes, and settings that hold on a busy
machine."""

from __future__ import annotations

import errno
import socket
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, settings

from tests.fakes.ports import refused_origin


def test_a_refused_origin_keeps_its_port_from_everyone_else_and_refuses_connections() -> None:
    with refused_origin() as origin:
        port = urlsplit(origin).port
        assert port is not None and port > 0
        # Another program that wants this number cannot have it while the test runs...
        for host in ("127.0.0.1", "0.0.0.0"):
            with socket.socket() as other, pytest.raises(OSError) as taken:
                other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                other.bind((host, port))
            assert taken.value.errno == errno.EADDRINUSE
        # ...and a client is turned away at once rather than left waiting.
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=10).close()


def test_hypothesis_properties_are_not_timed() -> None:
    # A property that chooses only its number of examples inherits this (tests/conftest.py).
    assert settings().deadline is None
    assert HealthCheck.too_slow in settings().suppress_health_check
