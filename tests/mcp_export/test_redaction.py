"""The one redaction every sink applies: remembered secrets, key shapes, JSON, log records, and the
chat session's events (what every consumer shows).

Each test remembers a fresh random value: remembered secrets live for the process.
"""

from __future__ import annotations

import io
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_export.cli._terminal import EventPrinter
from mcp_export.errors import ProviderAuthError
from mcp_export.providers.base import (
    ChatMessage,
    Completion,
    ModelRequest,
    ProviderEvent,
    ToolCallRequest,
    Usage,
)
from mcp_export.redact import (
    REDACTED,
    RedactingFilter,
    redact,
    redact_json,
    remember_resolved,
    remember_secret,
)
from mcp_export.server.result import answer_result, error_result
from mcp_export.session.chat import ChatSession
from mcp_export.session.events import (
    FinalAnswer,
    SessionEvent,
    SessionFailed,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from mcp_export.session.failure import failure_for
from schema_types.agent import Agent

pytestmark = pytest.mark.anyio


def fresh_secret(prefix: str = "zz") -> str:
    value = prefix + secrets.token_hex(12)
    remember_secret(value)
    return value


# --- redact -------------------------------------------------------------------------------------


def test_a_remembered_value_is_replaced_wherever_it_appears() -> None:
    secret = fresh_secret()
    text = f"Incorrect API key provided: {secret}. Key was {secret}!"
    assert redact(text) == f"Incorrect API key provided: {REDACTED}. Key was {REDACTED}!"


def test_a_remembered_value_is_replaced_in_its_url_quoted_and_json_escaped_forms() -> None:
    secret = 'pa/ss wo"rd+' + secrets.token_hex(6)
    remember_secret(secret)
    url = f"https://proxy.example/?token={quote(secret, safe='')}"
    body = json.dumps({"password": secret})
    assert secret not in redact(secret) and quote(secret, safe="") not in redact(url)
    assert json.dumps(secret)[1:-1] not in redact(body)
    assert REDACTED in redact(url) and REDACTED in redact(body)


def test_a_header_value_is_remembered_with_the_token_after_its_scheme() -> None:
    token = "tk" + secrets.token_hex(4)  # no digit rule to rely on: only remembering finds it
    remember_secret(f"Bearer {token}")
    assert redact(f"the server said: bad token {token}") == f"the server said: bad token {REDACTED}"


def test_of_settings_resolved_together_only_those_from_references_are_remembered() -> None:
    token = "tk" + secrets.token_hex(8)
    folder = "/opt/" + secrets.token_hex(8)
    written = {"TOKEN": "env://TOKEN", "AUTH": "Bearer keyring://svc/name", "DATA": folder}
    resolved = {"TOKEN": token, "AUTH": f"Bearer {token}x", "DATA": folder}
    assert remember_resolved(written, resolved) == resolved
    assert redact(f"{token} {token}x {folder}") == f"{REDACTED} {REDACTED} {folder}"


def test_short_and_empty_values_are_not_remembered() -> None:
    remember_secret("abc12")
    remember_secret("")
    remember_secret(None)
    remember_secret("   ")
    assert redact("abc12 is a short word") == "abc12 is a short word"


@pytest.mark.parametrize(
    "text",
    [
        "Authorization: Bearer 4f9a8c7e6d5b4a3928171605f4e3d2c1",
        "Incorrect API key provided: sk-proj-abcdefghijklmnop1234",
        "token ghp_abcdefghijklmnopqrstuvwxyz0123",
        "slack xoxb-1234567890-abcdefghij",
        "aws AKIAABCDEFGHIJKLMNOP here",
        "google AIzaSyA1234567890abcdefghijklmnopqrstuv",
        "Authorization: Basic dXNlcjpwYXNzd29yZDEyMzQ1Ng==",
    ],
)
def test_well_known_key_shapes_are_replaced_whoever_resolved_them(text: str) -> None:
    cleaned = redact(text)
    assert REDACTED in cleaned
    assert cleaned == redact(cleaned)  # redacting twice changes nothing more


def test_every_shape_in_a_text_is_replaced_and_only_at_a_word_start() -> None:
    text = (
        "Basic steps: use sk-abcdefghijklmnop1234, then ghp_abcdefghijklmnopqrstuvwxyz0123; "
        "not mask-abcdefghijklmnop1234 or xAKIAABCDEFGHIJKLMNOP."
    )
    assert redact(text) == (
        f"Basic steps: use {REDACTED}, then {REDACTED}; "
        "not mask-abcdefghijklmnop1234 or xAKIAABCDEFGHIJKLMNOP."
    )


@pytest.mark.parametrize(
    "text",
    [
        "Each token counts; the token limit is 4096.",
        "Token limits apply to every request",
        "basic knowledge of the Bearer authentication scheme",
        "Send a Bearer token in the Authorization header.",
        "the task-management tool and risk-assessment-framework",
        "skip-navigation-links-everywhere",
    ],
)
def test_prose_about_tokens_and_keys_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_redact_json_cleans_every_string_keys_included_and_keeps_other_values() -> None:
    secret = fresh_secret()
    value = {
        "answer": f"key {secret}",
        secret: [1, 2.5, None, True, {"deep": [secret]}],
        7: "seven",
    }
    assert redact_json(value) == {
        "answer": f"key {REDACTED}",
        REDACTED: [1, 2.5, None, True, {"deep": [REDACTED]}],
        7: "seven",
    }


# --- logging ------------------------------------------------------------------------------------


def capture_logger(name: str) -> tuple[logging.Logger, io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    handler.addFilter(RedactingFilter())
    logger = logging.getLogger(name)
    logger.handlers[:] = [handler]
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    return logger, stream


def test_the_logging_filter_redacts_messages_arguments_and_tracebacks() -> None:
    secret = fresh_secret()
    logger, stream = capture_logger(f"test.redaction.{secrets.token_hex(4)}")
    logger.warning("provider said %s (attempt %d)", f"bad key {secret}", 2)
    try:
        raise ProviderAuthError(f"refused: {secret}")
    except ProviderAuthError:
        logger.exception("the call failed")
    logger.info("stack", stack_info=True, extra={})
    output = stream.getvalue()
    assert secret not in output
    assert f"provider said bad key {REDACTED} (attempt 2)" in output
    assert f"ProviderAuthError: refused: {REDACTED}" in output


def test_a_record_whose_arguments_do_not_fit_is_left_to_the_handler() -> None:
    logger, stream = capture_logger(f"test.redaction.{secrets.token_hex(4)}")
    logging.raiseExceptions = False
    try:
        logger.warning("two %s %s", "one")  # the handler reports it; the caller goes on
    finally:
        logging.raiseExceptions = True
    logger.warning("still logging")
    assert "still logging" in stream.getvalue()


# --- the chat session: what every consumer is shown --------------------------------------------


@dataclass
class StepProvider:
    """A provider that answers each request with the next list of events (no I/O)."""

    steps: list[list[ProviderEvent]]
    requests: list[ModelRequest] = field(default_factory=list)
    name: str = "steps"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        self.requests.append(request)
        for event in self.steps.pop(0):
            yield event

    async def aclose(self) -> None:
        pass


@dataclass(frozen=True)
class Spec:
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class Outcome:
    text: str
    is_error: bool = False
    refused: bool = False
    duration_ms: float = 1.0


@dataclass
class LeakyToolbox:
    """One tool, ``env``, whose result repeats a secret (as a server printing its environment)."""

    secret: str
    received: list[dict[str, Any]] = field(default_factory=list)

    async def allowed_tools(self) -> list[Spec]:
        return [Spec("srv__env", "prints the environment", {"type": "object"})]

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None,  # noqa: ASYNC109 - the toolbox's own signature
    ) -> Outcome:
        self.received.append(arguments)
        return Outcome(f"TOKEN={self.secret}\nHOME=/home/me")


def agent() -> Agent:
    return Agent.model_validate({"settings": {"model": "openai:fake"}})


async def run(session: ChatSession, message: str) -> list[SessionEvent]:
    async with aclosing(session.run(message)) as events:
        return [event async for event in events]


async def test_a_key_split_across_stream_deltas_is_redacted_in_every_delta_and_the_answer() -> None:
    secret = fresh_secret()
    answer = f"Your key is {secret} — keep it safe."
    pieces = [answer[i : i + 3] for i in range(0, len(answer), 3)]
    provider = StepProvider(
        [[*(TextDelta(p) for p in pieces), Completion(ChatMessage("assistant", answer))]]
    )
    events = await run(ChatSession(agent(), provider=provider, model="m"), "hi")

    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert all(secret[:6] not in delta for delta in deltas)
    assert "".join(deltas) == f"Your key is {REDACTED} — keep it safe."
    final = events[-1]
    assert isinstance(final, FinalAnswer) and final.text == "".join(deltas)


async def test_text_in_other_scripts_streams_without_waiting_for_a_space() -> None:
    provider = StepProvider(
        [[TextDelta("東京は"), TextDelta("晴れです。"), Completion(ChatMessage("assistant", "x"))]]
    )
    events = await run(ChatSession(agent(), provider=provider, model="m"), "天気は？")
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["東京は", "晴れです。"]


async def test_a_tool_result_that_repeats_a_secret_is_redacted_before_the_model_sees_it() -> None:
    secret = fresh_secret()
    call = ToolCallRequest("c1", "srv__env", {"token": secret})
    provider = StepProvider(
        [
            [Completion(ChatMessage("assistant", "", tool_calls=(call,)), Usage(1, 1))],
            [TextDelta("done"), Completion(ChatMessage("assistant", "done"))],
        ]
    )
    toolbox = LeakyToolbox(secret)
    session = ChatSession(agent(), provider=provider, model="m", toolbox=toolbox)
    events = await run(session, "show the environment")

    # The tool got the arguments as the model wrote them …
    assert toolbox.received == [{"token": secret}]
    # … every event shows them and the result redacted …
    started = next(e for e in events if isinstance(e, ToolCallStarted))
    finished = next(e for e in events if isinstance(e, ToolCallFinished))
    assert started.arguments == {"token": REDACTED}
    assert finished.arguments == {"token": REDACTED}
    assert finished.result == f"TOKEN={REDACTED}\nHOME=/home/me"
    # … and the model's provider was never sent the secret in a tool result.
    tool_message = provider.requests[1].messages[-1]
    assert tool_message.role == "tool" and secret not in tool_message.content


def test_a_failure_event_carries_the_error_text_redacted() -> None:
    secret = fresh_secret()
    error = ProviderAuthError(f"the API key was refused (401): Incorrect key {secret}")
    failed = failure_for(error)
    assert isinstance(failed, SessionFailed)
    assert secret not in failed.message and REDACTED in failed.message
    assert secret not in str(error)


# --- the sinks themselves -----------------------------------------------------------------------


def test_served_results_carry_no_remembered_secret_whoever_made_their_text() -> None:
    secret = fresh_secret()
    failed = error_result(f"book_flight failed: upstream said {secret}")
    structured = {
        "answer": f"the key is {secret}",
        "toolCalls": [{"name": "t__x", "arguments": {"token": secret}, "isError": False}],
        "usage": {"inputTokens": 3, "outputTokens": 4},
        "durationMs": 12.5,
    }
    answered = answer_result(structured)
    texts = [block.text for block in [*failed.content, *answered.content]]  # type: ignore[union-attr]
    assert all(secret not in text for text in texts)
    assert answered.structured_content == {
        "answer": f"the key is {REDACTED}",
        "toolCalls": [{"name": "t__x", "arguments": {"token": REDACTED}, "isError": False}],
        "usage": {"inputTokens": 3, "outputTokens": 4},
        "durationMs": 12.5,
    }


def test_the_terminal_printer_writes_no_remembered_secret() -> None:
    secret = fresh_secret()
    out, err = io.StringIO(), io.StringIO()
    printer = EventPrinter(out, err)
    printer.handle(TextDelta(f"key {secret} "))
    printer.handle(ToolCallStarted("c1", "t__x", {"token": secret}))
    printer.handle(ToolCallFinished("c1", "t__x", {}, f"echo {secret}", True, False, 3.0))
    printer.handle(failure_for(ProviderAuthError(f"refused {secret}")))
    assert secret not in out.getvalue() + err.getvalue()
    assert out.getvalue().startswith(f"key {REDACTED}")
    assert f"error: echo {REDACTED}" in err.getvalue()


def test_the_password_of_a_url_is_redacted_and_the_rest_kept() -> None:
    text = "cannot reach postgresql://app:Never-Seen-1@db:5432/meta; also https://host/a@b"
    assert redact(text) == (
        "cannot reach postgresql://app:[redacted]@db:5432/meta; also https://host/a@b"
    )


def test_a_url_after_a_long_run_of_scheme_characters_is_redacted_in_linear_time() -> None:
    # A hex dump, base32 text or any long run of [a-z0-9+.-] before a "://" and an "@" made the
    # URL pattern try every start of the run to its end: 40 000 characters took 18 s.
    run = "0123456789abcdef" * 4_000
    text = f"{run}postgresql://app:Never-Seen-2@db/meta and {run} at https://host/a @b"
    started = time.monotonic()
    redacted = redact(text)
    assert time.monotonic() - started < 2  # a generous bound: it takes milliseconds
    assert redacted == text.replace("Never-Seen-2", REDACTED)


def test_key_shapes_far_into_a_long_text_are_redacted() -> None:
    secret = "sk-" + "A1b2C3d4" * 4
    text = "x" * 2_000_000 + f" Bearer abcdefghijklmnop1234 then {secret} and AKIA1234567890ABCDEF"
    assert redact(text) == "x" * 2_000_000 + (f" Bearer {REDACTED} then {REDACTED} and {REDACTED}")


_SHAPE_PIECES = [
    "sk-",
    "AKIA",
    "AIza",
    "ghp_",
    "github_pat_",
    "xoxb-",
    "Bearer ",
    "bearer ",
    "Basic ",
    "Token ",
    "ABCDEF0123456789",
    "abcdefgh1234",
    "_-",
    " ",
    ".",
    "é",
]


@given(st.lists(st.sampled_from(_SHAPE_PIECES), max_size=30))
def test_a_short_text_is_redacted_as_the_same_text_in_a_long_one(pieces: list[str]) -> None:
    # A short text is searched once for any shape's start; a long one per start. Both find the
    # same shapes: spaces after the text end every shape where the text's end does.
    text = "".join(pieces)
    padding = " " * 5_000
    assert redact(text) + padding == redact(text + padding)
