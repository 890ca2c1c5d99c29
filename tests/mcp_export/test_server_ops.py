"""Liveness, readiness and metrics: the routes over real HTTP, the counts through served calls.

The routes run in a real uvicorn on a loopback port and are asked with a real HTTP client. The
calls are served by the real ``AgentServer`` to the official ``mcp.Client`` (in-process), with
the real OpenAI provider talking to ``FakeOpenAIServer`` on loopback.
"""

from __future__ import annotations

import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
import uvicorn
from mcp import Client
from prometheus_client.parser import text_string_to_metric_families
from starlette.applications import Starlette

from mcp_export.server.agent_server import AgentServer, load_served_agents
from mcp_export.server.call import run_call
from mcp_export.server.ops import (
    HEALTH_PATH,
    LATENCY_BUCKETS,
    METRICS_PATH,
    READY_PATH,
    READY_TIMEOUT,
    ServerMetrics,
    ops_routes,
)
from tests.fakes._script import hang, status, text
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio

MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])
CALLS = "metaagent_tool_calls_total"
TOKENS = "metaagent_model_tokens_total"
LATENCY = "metaagent_tool_call_duration_seconds"
RUNNING = "metaagent_tool_calls_in_progress"


@asynccontextmanager
async def _ops_server(
    metrics: ServerMetrics, ready: Callable[[], Awaitable[str | None]] | None = None
) -> AsyncIterator[str]:
    """The ops routes in a real uvicorn on a free loopback port; yields the base URL.

    The socket listens before uvicorn starts, so early requests wait in its backlog; at the end
    uvicorn is asked to stop (as ``serve_http`` stops it) and waited for, within a bound.
    """
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    port = sock.getsockname()[1]
    app = Starlette(routes=ops_routes(metrics, ready))
    config = uvicorn.Config(
        app, log_level="warning", log_config=None, lifespan="off", timeout_graceful_shutdown=2
    )
    server = uvicorn.Server(config)
    stopped = anyio.Event()

    async def serve() -> None:
        try:
            await server.serve(sockets=[sock])
        finally:
            stopped.set()

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(serve)
            try:
                yield f"http://127.0.0.1:{port}"
            finally:
                server.should_exit = True
                with anyio.fail_after(10):
                    await stopped.wait()
    finally:
        sock.close()


async def _get(url: str) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=10) as http:
        return await http.get(url)


def _metered(served: AgentServer) -> ServerMetrics:
    """Metrics of the server's calls: every ``tools/call`` runs through ``run_call`` with them,
    as ``AgentServer`` dispatches a call to its tool."""
    metrics = ServerMetrics(served.catalogue)

    async def on_call(ctx: Any, params: types.CallToolRequestParams) -> Any:
        tool = served.catalogue[params.name]
        return await run_call(ctx, tool, served.runtime(tool), params, metrics=metrics)

    served.server.add_request_handler("tools/call", types.CallToolRequestParams, on_call)
    return metrics


def _sample(metrics: ServerMetrics, name: str, **labels: str) -> float:
    value = metrics.registry.get_sample_value(name, labels)
    assert value is not None, f"no sample {name}{labels}"
    return value


def _served(path: Path) -> AgentServer:
    return AgentServer(load_served_agents([path]), history=False)


# --- the routes over HTTP ----------------------------------------------------------------------


async def test_healthz_answers_ok_while_the_process_serves() -> None:
    async with _ops_server(ServerMetrics()) as base:
        response = await _get(base + HEALTH_PATH)
    assert response.status_code == 200
    assert response.text.strip() == "ok"


async def test_readyz_is_200_when_the_check_passes_and_ready_is_the_default() -> None:
    async def ready() -> str | None:
        return None

    async with _ops_server(ServerMetrics(), ready) as base:
        checked = await _get(base + READY_PATH)
    async with _ops_server(ServerMetrics()) as base:
        default = await _get(base + READY_PATH)
    assert (checked.status_code, default.status_code) == (200, 200)
    assert checked.text.strip() == "ready"


async def test_readyz_is_503_with_the_reason_and_no_password_of_a_store_url() -> None:
    async def ready() -> str | None:
        return "the store postgresql://app:hunter2-pw@db:5432/meta cannot be reached"

    async with _ops_server(ServerMetrics(), ready) as base:
        response = await _get(base + READY_PATH)
    assert response.status_code == 503
    assert "cannot be reached" in response.text
    assert "postgresql://app:[redacted]@db:5432/meta" in response.text
    assert "hunter2" not in response.text


async def test_a_readiness_check_that_raises_is_503_and_the_server_keeps_serving() -> None:
    async def ready() -> str | None:
        raise OSError("connection refused")

    async with _ops_server(ServerMetrics(), ready) as base:
        failed = await _get(base + READY_PATH)
        alive = await _get(base + HEALTH_PATH)
    assert failed.status_code == 503
    assert "connection refused" in failed.text
    assert alive.status_code == 200


async def test_a_readiness_check_slower_than_the_bound_is_503_within_it() -> None:
    async def ready() -> str | None:
        await anyio.sleep(60)
        return None

    async with _ops_server(ServerMetrics(), ready) as base:
        started = time.monotonic()
        response = await _get(base + READY_PATH)
        elapsed = time.monotonic() - started
    assert response.status_code == 503
    assert "took longer than" in response.text
    assert READY_TIMEOUT <= elapsed < READY_TIMEOUT + 5


async def test_metrics_are_prometheus_text_with_every_tool_at_zero_before_its_first_call() -> None:
    async with _ops_server(ServerMetrics(["book_flight"])) as base:
        response = await _get(base + METRICS_PATH)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=")
    families = {f.name: f for f in text_string_to_metric_families(response.text)}
    calls = {
        s.labels["outcome"]: s.value
        for s in families["metaagent_tool_calls"].samples
        if s.name == CALLS
    }
    assert calls == {"ok": 0, "error": 0, "cancelled": 0, "refused": 0, "unavailable": 0}
    buckets = [
        float(s.labels["le"])
        for s in families[LATENCY].samples
        if s.name == LATENCY + "_bucket" and s.labels["le"] != "+Inf"
    ]
    assert buckets == list(LATENCY_BUCKETS)
    assert "process_resident_memory_bytes" in families


async def test_other_methods_and_paths_are_not_served() -> None:
    async with _ops_server(ServerMetrics()) as base, httpx2.AsyncClient(timeout=10) as http:
        posted = await http.post(base + HEALTH_PATH)
        missing = await http.get(base + "/metrics/extra")
    assert (posted.status_code, missing.status_code) == (405, 404)


def test_two_servers_in_one_process_keep_separate_counts() -> None:
    first, second = ServerMetrics(["t"]), ServerMetrics(["t"])
    first.call_finished("t", "ok", 0.5, 10, 2)
    assert _sample(first, CALLS, tool="t", outcome="ok") == 1
    assert _sample(second, CALLS, tool="t", outcome="ok") == 0


# --- counts of served calls ----------------------------------------------------------------------


@MODES
async def test_an_answered_call_counts_as_ok_with_its_latency_and_tokens(
    tmp_path: Path, mode: str
) -> None:
    with FakeOpenAIServer([text("Booked.", usage=(40, 7))]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with _served(path) as served:
            metrics = _metered(served)
            async with Client(served.server, mode=mode) as client:
                result = await client.call_tool("book_flight", {"destination": "Oslo"})
    assert not result.is_error
    assert _sample(metrics, CALLS, tool="book_flight", outcome="ok") == 1
    assert _sample(metrics, TOKENS, tool="book_flight", type="input") == 40
    assert _sample(metrics, TOKENS, tool="book_flight", type="output") == 7
    assert _sample(metrics, LATENCY + "_count", tool="book_flight") == 1
    assert 0 < _sample(metrics, LATENCY + "_sum", tool="book_flight") < 30
    assert _sample(metrics, RUNNING, tool="book_flight") == 0


async def test_bad_arguments_count_as_refused_and_a_failing_model_as_error(
    tmp_path: Path,
) -> None:
    with FakeOpenAIServer([status(400, message="model not found")]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with _served(path) as served:
            metrics = _metered(served)
            async with Client(served.server, mode="legacy") as client:
                refused = await client.call_tool("book_flight", {"destination": 7})
                failed = await client.call_tool("book_flight", {"destination": "Oslo"})
    assert refused.is_error and failed.is_error
    assert _sample(metrics, CALLS, tool="book_flight", outcome="refused") == 1
    assert _sample(metrics, CALLS, tool="book_flight", outcome="error") == 1
    assert _sample(metrics, CALLS, tool="book_flight", outcome="ok") == 0
    assert _sample(metrics, RUNNING, tool="book_flight") == 0


async def test_a_call_no_model_can_run_counts_as_unavailable_apart_from_the_callers_mistakes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = write_agent(
        tmp_path / "a.agent.yaml", api_key=None, tools=[book_tool(conversation=True)]
    )
    async with _served(path) as served:
        metrics = _metered(served)
        async with Client(served.server, mode="legacy") as client:
            bad_arguments = await client.call_tool("book_flight", {"destination": 7})
            no_history = await client.call_tool(
                "book_flight", {"destination": "Oslo", "conversation_id": "made-up"}
            )
            no_model = await client.call_tool("book_flight", {"destination": "Oslo"})
        async with _ops_server(metrics) as base:
            exposition = (await _get(base + METRICS_PATH)).text
    assert bad_arguments.is_error and no_history.is_error and no_model.is_error
    assert isinstance(no_model.content[0], types.TextContent)
    assert "book_flight cannot run: no model: " in no_model.content[0].text
    assert _sample(metrics, CALLS, tool="book_flight", outcome="refused") == 2
    assert _sample(metrics, CALLS, tool="book_flight", outcome="unavailable") == 1
    assert _sample(metrics, CALLS, tool="book_flight", outcome="error") == 0
    assert 'metaagent_tool_calls_total{outcome="unavailable",tool="book_flight"} 1.0' in exposition


@MODES
async def test_a_cancelled_call_counts_as_cancelled_and_no_longer_runs(
    tmp_path: Path, mode: str
) -> None:
    with FakeOpenAIServer([hang()]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with _served(path) as served:
            metrics = _metered(served)
            async with Client(served.server, mode=mode) as client:
                async with anyio.create_task_group() as group:
                    group.start_soon(client.call_tool, "book_flight", {"destination": "Oslo"})
                    assert await anyio.to_thread.run_sync(model.wait_for_requests, 1, 10.0)
                    assert _sample(metrics, RUNNING, tool="book_flight") == 1
                    group.cancel_scope.cancel()
                # The abandoned model request is the cancelled call unwinding; the next call's
                # whole model round trip outlasts the rest of that unwinding.
                assert await anyio.to_thread.run_sync(model.wait_for_disconnect, 1, 10.0)
                model.enqueue(text("after the cancel"))
                with anyio.fail_after(10):
                    again = await client.call_tool("book_flight", {"destination": "Rome"})
    assert not again.is_error
    assert _sample(metrics, CALLS, tool="book_flight", outcome="cancelled") == 1
    assert _sample(metrics, CALLS, tool="book_flight", outcome="ok") == 1
    assert _sample(metrics, RUNNING, tool="book_flight") == 0
    assert _sample(metrics, CALLS, tool="book_flight", outcome="error") == 0


async def test_the_metrics_text_names_tools_but_never_arguments(tmp_path: Path) -> None:
    secret_like = "passport X1234567 for Oslo"
    with FakeOpenAIServer([text("Booked.", usage=(3, 2))]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with _served(path) as served:
            metrics = _metered(served)
            async with Client(served.server, mode="legacy") as client:
                await client.call_tool("book_flight", {"destination": secret_like})
            async with _ops_server(metrics) as base:
                exposition = (await _get(base + METRICS_PATH)).text
    assert 'tool="book_flight"' in exposition
    assert "X1234567" not in exposition
    assert "sk-test" not in exposition
