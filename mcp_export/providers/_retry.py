"""Bounded retries and error translation shared by the HTTP providers (OpenAI, Anthropic).

Only the opening of a request is retried (429, 5xx, connection refused): once text has streamed
to the caller a retry would repeat it, so a stream that breaks midway fails at once. Timeouts are
not retried either: the request already waited its full timeout, and the chat session has its own
wall-clock budget. The SDKs' own retry loops are switched off (``max_retries=0``) so that the
policy, the honoured ``retry-after`` (including ``0``, which the SDKs ignore) and the final error
message live in one place.

Every wait before a retry is first told to whoever listens through ``providers.steps``.
"""

from __future__ import annotations

import email.utils
import logging
import random
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import anyio

from mcp_export.errors import (
    ProviderAuthError,
    ProviderError,
    ProviderRateLimited,
    ProviderServerError,
    ProviderUnreachable,
)
from mcp_export.providers._server_identity import serves_one_at_a_time
from mcp_export.providers.steps import RetryWait, retry_listener
from mcp_export.redact import redact

__all__ = [
    "Failure",
    "RetryPolicy",
    "close_quietly",
    "open_with_retries",
    "retry_after_seconds",
    "status_failure",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait before retrying a failed request.

    Attributes:
        max_retries: retries after the first attempt (0 = no retry).
        initial_delay: seconds before the first retry; doubled each time (with up to 25% jitter)
            up to ``max_delay``.
        max_delay: the longest backoff.
        max_retry_after: a server asking to wait longer than this is not retried.
    """

    max_retries: int = 2
    initial_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0

    def delay(self, retry: int, retry_after: float | None) -> float | None:
        """Seconds to wait before retry number ``retry`` (1-based); None: do not retry."""
        if retry > self.max_retries:
            return None
        if retry_after is not None:
            return max(0.0, retry_after) if retry_after <= self.max_retry_after else None
        backoff = min(self.initial_delay * 2.0 ** (retry - 1), self.max_delay)
        return backoff * (1 - 0.25 * random.random())


@dataclass(frozen=True)
class Failure:
    """An SDK error translated: the error to raise, and whether a retry may help.

    ``reason`` is a few words for a status line (``status 503``); None lets
    ``open_with_retries`` find them (a refused connection…)."""

    error: ProviderError
    retryable: bool = False
    retry_after: float | None = None
    reason: str | None = None


async def open_with_retries(
    attempt: Callable[[], Awaitable[T]],
    translate: Callable[[Exception], Failure | None],
    policy: RetryPolicy,
) -> T:
    """Run ``attempt`` until it succeeds or the failure is final.

    Args:
        attempt: opens the request (for streams: until the response headers arrived).
        translate: maps an exception to a ``Failure``; None lets the exception through.
        policy: the retry bounds.

    Returns:
        What ``attempt`` returned.

    Raises:
        ProviderError: the translated error of the last attempt; when retries were spent the
            message says how many attempts were made.
    """
    retry = 0
    while True:
        try:
            return await attempt()
        except Exception as exc:
            failure = translate(exc)
            if failure is None:
                raise
            retry += 1
            wait = policy.delay(retry, failure.retry_after) if failure.retryable else None
            if wait is None:
                error = failure.error
                if failure.retryable and retry > 1:
                    error = type(error)(f"{error} (gave up after {retry} attempts)")
                raise error from exc
            logger.info(
                "%s; retry %d of %d in %.2f s", failure.error, retry, policy.max_retries, wait
            )
            listener = retry_listener()
            if listener is not None:
                reason = failure.reason or _short_reason(failure.error, exc)
                listener(RetryWait(reason, retry, policy.max_retries, wait, failure.error))
            await anyio.sleep(wait)


def _short_reason(error: ProviderError, exc: BaseException) -> str:
    """A few words on what failed: the connection error under ``exc`` when there is one (SDKs
    wrap it, under ``__cause__`` or aiohttp's ``os_error``), else the kind of ``error``."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, ConnectionResetError):
            return "connection reset"
        if isinstance(cause, ConnectionAbortedError | BrokenPipeError):
            return "connection closed"
        wrapped = getattr(cause, "os_error", None)
        if isinstance(wrapped, BaseException) and id(wrapped) not in seen:
            cause = wrapped
        else:
            cause = cause.__cause__ or cause.__context__
    if isinstance(error, ProviderRateLimited):
        return "rate-limited"
    if isinstance(error, ProviderServerError):
        return "server error"
    if isinstance(error, ProviderUnreachable):
        return "no answer"
    return "failed"


def status_failure(
    label: str,
    code: int,
    detail: str,
    headers: Mapping[str, str],
    *,
    key_name: str,
    model: str,
    url: str,
) -> Failure:
    """Translate an HTTP error status of a model endpoint (shared with the Anthropic provider).

    ``detail`` is the server's own text: it is redacted here (a refusal may repeat the key it was
    sent). A redirect is not followed (a POST would turn into a GET, and the key would go along
    to wherever it points): the message names the address it points to.
    """
    detail = redact(detail)
    location = headers.get("location")
    if 300 <= code < 400 and location:
        return Failure(
            ProviderError(
                f"{label} did not answer at {url} ({code}): redirected to {redact(location)}; "
                "use the address it moved to as the base URL"
            )
        )
    error: ProviderError
    if code in (401, 403):
        error = ProviderAuthError(
            f"{label}: the API key was refused ({code}): check {key_name} ({detail})"
        )
        return Failure(error)
    if code == 429:
        error = ProviderRateLimited(
            f"{label} is rate-limiting requests (429): {detail}; wait a little, or lower the "
            "request rate"
        )
        return Failure(
            error,
            retryable=True,
            retry_after=retry_after_seconds(headers),
            reason="rate-limited, status 429",
        )
    if code >= 500 and serves_one_at_a_time(url):
        return Failure(ProviderServerError(_request_failed_inside(label, code, detail)))
    if code >= 500 or code in (408, 409):
        error = ProviderServerError(f"{label} failed with {code}: {detail}; try again later")
        return Failure(
            error,
            retryable=True,
            retry_after=retry_after_seconds(headers),
            reason=f"status {code}",
        )
    if code == 404:
        return Failure(
            ProviderError(
                f"{label} answered 404 for model {model!r} at {url}: {detail}; check the model "
                "name in settings.model and the base URL"
            )
        )
    return Failure(ProviderError(f"{label} refused the request ({code}): {detail}"))


def _request_failed_inside(label: str, code: int, detail: str) -> str:
    """The message of llama-cpp-python's 5xx: an exception raised while it handled the request,
    which the same request raises again (it sheds no load), so it is not retried. A 500 without
    a message is a failed assertion: with ``chatml-function-calling`` that is how
    ``tool_choice: "required"`` (or any choice but ``auto`` or one named tool) fails."""
    if _EMPTY_MESSAGE.search(detail):
        return (
            f"{label} failed with {code} and no message: an assertion failed inside the server. "
            f'Its chatml-function-calling format takes tool_choice "auto" or one named tool, '
            f'so "required" fails this way every time: name one tool in settings.toolChoice, or '
            'run llama.cpp\'s llama-server, which takes "required" (not retried)'
        )
    return (
        f"{label} failed with {code}: {detail} — an error inside the server while handling this "
        "request, which the same request meets again; its log has the traceback (not retried)"
    )


_EMPTY_MESSAGE = re.compile(r'"message"\s*:\s*""')


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """The wait a server asks for: ``retry-after-ms``, else ``retry-after`` (seconds or a date)."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return float(milliseconds) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())


_CLOSE_WITHIN = 2.0


async def close_quietly(close: Callable[[], Awaitable[None]]) -> None:
    """Close an HTTP stream even while the task is being cancelled (bounded wait).

    A cancelled task must still release its connection at once (the server sees it close) rather
    than leave it to the garbage collector; the shield keeps an anyio cancel scope from
    cancelling the close itself, the bound keeps a stuck close from blocking the cancellation.
    """
    with anyio.move_on_after(_CLOSE_WITHIN, shield=True):
        try:
            await close()
        except Exception:  # closing a broken connection may fail: nothing left to release
            logger.debug("closing a model stream failed", exc_info=True)
