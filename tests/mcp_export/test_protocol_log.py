"""The protocol log itself: its bounds, the cut of a long text, masked headers, redaction, and
what ``attach`` attaches to."""

from __future__ import annotations

import secrets

import pytest

from mcp_export.protocol_log import ProtocolLog, attach, mask_headers
from mcp_export.providers.sampling import SamplingProvider


@pytest.fixture
def key() -> str:
    return "mak-" + secrets.token_hex(20)


def test_attach_passes_over_parts_that_have_no_wire() -> None:
    log = ProtocolLog()
    sampling = SamplingProvider(lambda request: None, supports_tools=False)  # type: ignore[arg-type]
    assert attach(log, None, sampling, "text") == 0


def test_text_past_the_bound_is_counted_in_bytes() -> None:
    log = ProtocolLog(max_entry_bytes=10)
    entry = log.record("model", "received", "response", "0123456789ø and more")
    assert entry.text == "0123456789\n… 11 bytes more"
    cut_in_a_character = log.record("model", "received", "response", "012345678ø")
    assert cut_in_a_character.text == "012345678\n… 2 bytes more"
    assert log.record("model", "sent", "request", "short").text == "short"


def test_a_secret_across_the_bound_is_redacted_before_the_cut(key: str) -> None:
    from mcp_export.redact import remember_secret

    remember_secret(key)
    log = ProtocolLog(max_entry_bytes=100)
    entry = log.record("model", "received", "error", "x" * 90 + key + " the end")
    assert entry.text.startswith("x" * 90 + "[redacted")
    assert key[:8] not in entry.text and "bytes more" in entry.text


def test_the_oldest_entries_go_first_past_the_bounds() -> None:
    log = ProtocolLog(max_entries=3, max_bytes=1000)
    for number in range(5):
        log.record("time", "sent", "request", f"message {number}")
    assert [e.text for e in log.entries()] == ["message 2", "message 3", "message 4"]
    assert (log.first_sequence, log.last_sequence) == (3, 5)
    assert [e.text for e in log.entries_after(3)] == ["message 3", "message 4"]
    log.record("time", "received", "response", "y" * 900)
    assert [e.sequence for e in log.entries()] == [4, 5, 6]
    log.record("time", "received", "response", "z" * 990)
    assert [e.sequence for e in log.entries()] == [7]


def test_listeners_hear_of_each_entry_until_they_unsubscribe() -> None:
    log = ProtocolLog()
    heard: list[int] = []
    unsubscribe = log.subscribe(lambda: heard.append(log.last_sequence))
    log.record("time", "sent", "request", "one")
    log.clear()
    unsubscribe()
    log.record("time", "sent", "request", "two")
    assert heard == [1, 1]
    assert [e.text for e in log.entries()] == ["two"]


def test_credential_headers_are_masked_whatever_they_hold() -> None:
    text = mask_headers(
        [
            ("Authorization", "Bearer no-key"),
            ("x-api-key", "abc"),
            ("api-key", "abc"),
            ("Proxy-Authorization", "Basic dXNlcjpwYXNz"),
            ("Cookie", "session=1"),
            ("X-Auth-Token", "t"),
            ("x-ratelimit-remaining-tokens", "9000"),
            ("Content-Type", "application/json"),
        ]
    )
    assert text.splitlines() == [
        "Authorization: Bearer [redacted]",
        "x-api-key: [redacted]",
        "api-key: [redacted]",
        "Proxy-Authorization: Basic [redacted]",
        "Cookie: [redacted]",
        "X-Auth-Token: [redacted]",
        "x-ratelimit-remaining-tokens: 9000",
        "Content-Type: application/json",
    ]


def test_an_entry_is_copied_with_its_heading() -> None:
    log = ProtocolLog()
    entry = log.record("time", "sent", "request", '{\n  "id": 1\n}', summary="tools/list (id 1)")
    heading, body = entry.as_text().split("\n", 1)
    assert heading.endswith("  time  sent  request  tools/list (id 1)")
    assert body == '{\n  "id": 1\n}'
    assert log.as_text() == entry.as_text()
