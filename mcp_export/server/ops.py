"""What an operator's tools ask of a served HTTP server: liveness, readiness and metrics.

- ``GET /healthz``: 200 ``ok`` while the process serves (a liveness probe);
- ``GET /readyz``: 200 ``ready`` when the server's readiness check passes, else 503 with the
  reason (a check that takes longer than ``READY_TIMEOUT`` seconds fails);
- ``GET /metrics``: the call metrics in Prometheus' text format.

The metrics live in a registry of the server's own (``ServerMetrics``), not in prometheus_client's
global one, so several servers in one process (and the tests) keep separate counts. Labels carry
tool names from the served catalogue and fixed words only: never arguments, prompts or secrets.

Metric names (``tool`` is the served tool's name):

- ``metaagent_tool_calls_total{tool, outcome}``: finished calls, by ``outcome``:

  - ``ok``: answered;
  - ``refused``: the caller's mistake (arguments that do not fit the schema, an unknown
    conversation id): like an HTTP 4xx, nothing for the operator to fix;
  - ``unavailable``: this server cannot run the call as it is set up or now (no model: a
    missing API key, or sampling the client does not offer; a tool whose parameters schema
    cannot be used; the history store out of reach): like an HTTP 503;
  - ``error``: the run failed (the model or an inner tool failed, or the server did): like 500;
  - ``cancelled``: the caller cancelled it.

  The server's error rate is therefore
  ``sum(rate(metaagent_tool_calls_total{outcome=~"error|unavailable"}[5m]))`` over
  ``sum(rate(metaagent_tool_calls_total{outcome!="cancelled"}[5m]))``;
- ``metaagent_tool_call_duration_seconds{tool}``: a histogram of call latency, 0.1 s to 300 s;
- ``metaagent_tool_calls_in_progress{tool}``: calls running now;
- ``metaagent_model_tokens_total{tool, type}``: model tokens, ``type`` ``input`` or ``output``
  (counts a model server did not report are not added);
- the ``process_*`` metrics of prometheus_client's process collector (CPU, memory, open files).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Literal

import anyio
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from mcp_export.redact import redact

__all__ = [
    "HEALTH_PATH",
    "LATENCY_BUCKETS",
    "METRICS_PATH",
    "READY_PATH",
    "READY_TIMEOUT",
    "REFUSALS",
    "CallMeter",
    "Outcome",
    "ServerMetrics",
    "ops_routes",
]

logger = logging.getLogger(__name__)

HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"
METRICS_PATH = "/metrics"
READY_TIMEOUT = 2.0
"""Seconds a readiness check may take; a slower one counts as not ready."""

LATENCY_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0)
"""Histogram bounds in seconds: a served call is one or more model requests, so its latency
ranges from a refusal (milliseconds) to a long tool loop (minutes)."""

Outcome = Literal["ok", "error", "cancelled", "refused", "unavailable"]
OUTCOMES: tuple[Outcome, ...] = ("ok", "error", "cancelled", "refused", "unavailable")

REFUSALS = ("rate", "at_once", "scope")
"""Why a caller's call is refused: ``server.limits`` (rate, at_once), ``server.scopes``."""

ReadyCheck = Callable[[], Awaitable[str | None]]


class ServerMetrics:
    """The call metrics of one served server, in a Prometheus registry of its own.

    Args:
        tools: the served tool names; their series start at 0, so a rate is defined before
            the first call of each.
    """

    def __init__(self, tools: Iterable[str] = ()) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        ProcessCollector(registry=self.registry)
        self._calls = Counter(
            "metaagent_tool_calls",
            "Finished tool calls, by tool and outcome.",
            ["tool", "outcome"],
            registry=self.registry,
        )
        self._latency = Histogram(
            "metaagent_tool_call_duration_seconds",
            "Time from a tool call's arrival to its answer.",
            ["tool"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self._running = Gauge(
            "metaagent_tool_calls_in_progress",
            "Tool calls running now.",
            ["tool"],
            registry=self.registry,
        )
        self._tokens = Counter(
            "metaagent_model_tokens",
            "Model tokens used by tool calls, by tool and type (input or output).",
            ["tool", "type"],
            registry=self.registry,
        )
        self._refusals = Counter(
            "metaagent_caller_refusals",
            "Tool calls refused to a caller, by reason: rate (over its calls per period), "
            "at_once (over its calls at once), scope (its token lacks the tool's scope).",
            ["reason"],
            registry=self.registry,
        )
        for reason in REFUSALS:
            self._refusals.labels(reason)
        for tool in tools:
            for outcome in OUTCOMES:
                self._calls.labels(tool, outcome)
            self._latency.labels(tool)
            self._running.labels(tool)
            self._tokens.labels(tool, "input")
            self._tokens.labels(tool, "output")

    def start_call(self, tool: str) -> CallMeter:
        """Count a call of ``tool`` as running; the meter records how it ends."""
        self._running.labels(tool).inc()
        return CallMeter(self, tool)

    def call_finished(
        self,
        tool: str,
        outcome: Outcome,
        seconds: float,
        tokens_in: int | None = None,
        tokens_out: int | None = None,
    ) -> None:
        """Record a finished call (a token count that is None was not reported)."""
        self._calls.labels(tool, outcome).inc()
        self._latency.labels(tool).observe(seconds)
        self.tokens_used(tool, tokens_in, tokens_out)

    def tokens_used(self, tool: str, tokens_in: int | None, tokens_out: int | None) -> None:
        """Add model tokens used by a call of ``tool`` (None: not reported, nothing added)."""
        if tokens_in:
            self._tokens.labels(tool, "input").inc(tokens_in)
        if tokens_out:
            self._tokens.labels(tool, "output").inc(tokens_out)

    def refused(self, reason: str) -> None:
        """Count a call refused to its caller (``REFUSALS``: rate, at_once, scope)."""
        self._refusals.labels(reason).inc()

    def exposition(self) -> bytes:
        """The registry in Prometheus' text format."""
        return generate_latest(self.registry)

    def _call_ended(self, tool: str) -> None:
        self._running.labels(tool).dec()


class CallMeter:
    """One running call: the tokens of its model turns as they finish, then its outcome.

    Tokens are added per turn, so a call that fails after some turns still counts them.
    """

    def __init__(self, metrics: ServerMetrics, tool: str) -> None:
        self._metrics = metrics
        self._tool = tool
        self._started = time.perf_counter()
        self._done = False

    def turn_finished(self, tokens_in: int | None, tokens_out: int | None) -> None:
        """A model turn of this call ended, with the counts its model server reported."""
        self._metrics.tokens_used(self._tool, tokens_in, tokens_out)

    def discard(self) -> None:
        """The request ended without ending the call (a round that waits for the client's
        model): it is no longer running here, and counted when a later request ends it."""
        if not self._done:
            self._done = True
            self._metrics._call_ended(self._tool)

    def finish(self, outcome: Outcome) -> None:
        """The call ended with ``outcome``; only the first finish counts."""
        if self._done:
            return
        self._done = True
        self._metrics._call_ended(self._tool)
        self._metrics.call_finished(self._tool, outcome, time.perf_counter() - self._started)


async def _healthz(request: Request) -> Response:
    return PlainTextResponse("ok\n")


def _readyz(ready: ReadyCheck) -> Callable[[Request], Awaitable[Response]]:
    async def readyz(request: Request) -> Response:
        try:
            with anyio.fail_after(READY_TIMEOUT):
                reason = await ready()
        except TimeoutError:
            reason = f"the readiness check took longer than {READY_TIMEOUT:g} s"
        except Exception as exc:
            logger.warning("readiness check failed", exc_info=True)
            reason = f"the readiness check failed: {exc}"
        if reason is None:
            return PlainTextResponse("ready\n")
        text = redact(reason)
        return PlainTextResponse(f"not ready: {text}\n", status_code=503)

    return readyz


def _metrics_endpoint(metrics: ServerMetrics) -> Callable[[Request], Awaitable[Response]]:
    async def metrics_text(request: Request) -> Response:
        return Response(metrics.exposition(), media_type=CONTENT_TYPE_LATEST)

    return metrics_text


async def _always_ready() -> str | None:
    return None


def ops_routes(metrics: ServerMetrics, ready: ReadyCheck | None = None) -> list[Route]:
    """The open routes of an HTTP server: ``/healthz``, ``/readyz`` and ``/metrics`` (GET).

    Args:
        metrics: the server's metrics, served at ``/metrics``.
        ready: the readiness check: None when the server can take calls, else the reason it
            cannot (say, the history store cannot be reached). Default: always ready.
    """
    return [
        Route(HEALTH_PATH, _healthz, methods=["GET"]),
        Route(READY_PATH, _readyz(ready or _always_ready), methods=["GET"]),
        Route(METRICS_PATH, _metrics_endpoint(metrics), methods=["GET"]),
    ]
