"""Tool servers that misbehave: each is an unavailable server or an error result with the reason,
the healthy server beside it keeps serving, and no wait overruns its limit.

The healthy server is the real ``mcp-server-time``; the faulty one is ``tests.fakes.tool_server``
in one of its fault modes (or a command, or an HTTP address, where nothing answers).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest

from mcp_export.toolbox.agent_toolbox import AgentToolbox, probe_server
from mcp_export.toolbox.connection import DEFAULT_STARTUP_TIMEOUT
from mcp_export.toolbox.outcome import MAX_RESULT_CHARS
from mcp_export.toolbox.server_io import STDERR_TAIL_BYTES
from schema_types.agent import McpServerConfig
from tests.fakes.ports import refused_origin
from tests.fakes.processes import marked, new_mark, with_mark
from tests.mcp_export.tool_servers import REPO, fake_server, make_agent, time_server

pytestmark = pytest.mark.anyio

# The start-up limit of the servers in these tests, the runtime's default: a healthy server here
# needs 1–2 s (importing the SDK), about 3 s with two at once on a busy machine.
STARTUP = DEFAULT_STARTUP_TIMEOUT
# Each tool call's limit: a 2 MB result takes up to ~2 s to make and read on a busy machine.
CALL = 10.0
# Every step below is bounded by the limits above; this bounds a whole case (the longest: a
# start that times out, its back-off, a second start, a few calls).
CASE_LIMIT = 60.0
TIME_CALL = ("time__get_current_time", {"timezone": "UTC"})


@pytest.fixture
def refused_url() -> Iterator[str]:
    """An address where the port is taken but nobody listens: connections are refused."""
    with refused_origin() as origin:
        yield f"{origin}/mcp"


@dataclass(frozen=True)
class Fault:
    """One way a tool server misbehaves, and what the toolbox must make of it.

    ``unavailable``: the server offers no tools and ``server_errors`` (and a call to one of its
    tools) says ``expect``. ``error``: calling ``call`` is an error result that says ``expect``.
    ``hidden``: the server serves, but the tool ``call`` names is hidden and refused with
    ``expect``. ``works``: the fault does not keep the server from answering ``call`` correctly.
    """

    config: dict[str, Any]
    kind: Literal["unavailable", "error", "hidden", "works"]
    expect: str
    call: tuple[str, dict[str, Any]] = ("faulty__echo", {"text": "hello"})
    settings: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())


FAULTS = {
    "exits at start": Fault(
        fake_server("--stderr", "missing API key", "--exit-on-start", "3"),
        "unavailable",
        "missing API key",
    ),
    "never initializes": Fault(
        fake_server("--never-initialize"),
        "unavailable",
        f"did not answer initialize within {STARTUP:g} s",
    ),
    "never answers tools/list": Fault(
        fake_server("--hang-tools-list"),
        "unavailable",
        f"answered initialize but not tools/list within {STARTUP:g} s",
    ),
    "answers tools/list with garbage": Fault(
        fake_server("--garbage-tools-list"),
        "unavailable",
        "could not list its tools: its answer does not follow the MCP schema: "
        "tools: Input should be a valid list",
    ),
    "lists a tool whose inputSchema is invalid": Fault(
        fake_server("--invalid-schema-tool"),
        "hidden",
        "its inputSchema is not a valid JSON Schema: properties.x.type: ",
        call=("faulty__broken", {"x": "a"}),
    ),
    "dies mid-call": Fault(
        fake_server(),
        "error",
        "stopped during the call to crash (connection closed)",
        call=("faulty__crash", {"code": 9}),
    ),
    "writes non-JSON to stdout": Fault(fake_server("--garbage-stdout"), "works", "hello"),
    "floods stderr": Fault(fake_server("--flood-stderr", "64"), "works", "hello"),
    "hangs on a call past the call limit": Fault(
        fake_server(),
        "error",
        f"tool faulty__hang timed out after {CALL:.1f} s",
        ("faulty__hang", {}),
    ),
    "returns a huge result": Fault(
        fake_server(),
        "error",
        f"more than the {MAX_RESULT_CHARS:,} a tool result may have",
        call=("faulty__huge", {"mb": 2}),
    ),
    "command not found": Fault(
        {"command": "/nonexistent/mcp-server"},
        "unavailable",
        "could not start: command not found: /nonexistent/mcp-server",
    ),
    "HTTP server refuses the connection": Fault(
        {"type": "streamable-http", "url": "REFUSED"},
        "unavailable",
        "nothing answers there (ConnectError",
    ),
}


@pytest.mark.parametrize("fault", FAULTS.values(), ids=list(FAULTS))
async def test_a_faulty_tool_server_is_reported_and_the_healthy_one_keeps_serving(
    fault: Fault, refused_url: str
) -> None:
    mark = new_mark()
    config = fault.config
    if config.get("url") == "REFUSED":
        config = config | {"url": refused_url}
    elif config.get("type", "stdio") == "stdio":
        config = with_mark(config, mark)
    servers = {"time": with_mark(time_server(), mark), "faulty": config}
    agent = make_agent("never", servers)
    toolbox = AgentToolbox(agent, base_dir=REPO, startup_timeout=STARTUP, call_timeout=CALL)
    with anyio.fail_after(CASE_LIMIT):
        async with toolbox:
            names = {spec.name for spec in await toolbox.allowed_tools()}
            assert {"time__get_current_time", "time__convert_time"} <= names
            name, arguments = fault.call
            if fault.kind == "unavailable":
                assert not any(n.startswith("faulty__") for n in names)
                assert fault.expect in toolbox.server_errors["faulty"]
                outcome = await toolbox.call(name, arguments)
                assert outcome.is_error and fault.expect in outcome.text
            elif fault.kind == "hidden":
                assert "faulty__echo" in names and name not in names
                hidden = {h.spec.name: h.reason for h in await toolbox.hidden_tools()}
                assert fault.expect in hidden[name]
                outcome = await toolbox.call(name, arguments)
                assert outcome.refused and fault.expect in outcome.text
                assert (await toolbox.call("faulty__echo", {"text": "ok"})).text == "ok"
            else:
                assert "faulty__echo" in names
                outcome = await toolbox.call(name, arguments)
                assert outcome.is_error is (fault.kind == "error"), outcome.text[:500]
                assert fault.expect in outcome.text
            healthy = await toolbox.call(*TIME_CALL)
            assert not healthy.is_error, healthy.text
            assert len(toolbox.connection("faulty").stderr_text()) <= STDERR_TAIL_BYTES
    assert marked(mark) == set()


async def test_a_flooded_stderr_keeps_only_its_last_bytes() -> None:
    agent = make_agent("never", {"faulty": fake_server("--flood-stderr", "16")})
    async with AgentToolbox(agent, base_dir=REPO) as toolbox:
        with anyio.fail_after(CASE_LIMIT):
            outcome = await toolbox.call("faulty__crash", {"code": 5})
        assert outcome.is_error
        tail = toolbox.connection("faulty").stderr_text()
        assert len(tail) <= STDERR_TAIL_BYTES
        assert tail.endswith("flood: over\ncrash: exiting with 5")


async def test_a_huge_result_is_cut_with_what_the_model_still_gets() -> None:
    agent = make_agent("never", {"faulty": fake_server()})
    async with AgentToolbox(agent, base_dir=REPO) as toolbox:
        with anyio.fail_after(CASE_LIMIT):
            outcome = await toolbox.call("faulty__huge", {"mb": 1})
        assert outcome.is_error and outcome.structured is None
        assert outcome.text.startswith("x" * MAX_RESULT_CHARS + "\n[cut: faulty__huge returned ")
        assert "1,048,576 characters" in outcome.text


def next_try(text: str) -> float:
    """The seconds until the next try, as a call to an unavailable server is told them."""
    found = re.search(r"it is tried again on its first use after (\d+\.\d) s", text)
    assert found is not None, text
    return float(found.group(1))


async def test_a_server_past_its_startup_limit_is_tried_again_after_a_backoff(
    tmp_path: Path,
) -> None:
    silent = tmp_path / "silent"
    silent.touch()
    agent = make_agent("never", {"flaky": fake_server("--silent-while", str(silent))})
    async with AgentToolbox(agent, base_dir=REPO, startup_timeout=STARTUP) as toolbox:
        connection = toolbox.connection("flaky")
        with anyio.fail_after(CASE_LIMIT):
            assert await toolbox.allowed_tools() == []
            error = toolbox.server_errors["flaky"]
            assert f"did not answer initialize within {STARTUP:g} s, its start-up limit" in error
            # Until the back-off is over no call pays for another start: it is told when.
            outcome = await toolbox.call("flaky__echo", {"text": "x"})
            assert outcome.is_error and error in outcome.text
            assert 0 < next_try(outcome.text) <= STARTUP
            assert await toolbox.allowed_tools() == []
            assert connection.starts == 1
            silent.unlink()
            # Lets the back-off pass: the behaviour under test is how long it lasts.
            await anyio.sleep(next_try(outcome.text) + 0.1)
            names = [spec.name for spec in await toolbox.allowed_tools()]
            assert "flaky__echo" in names
            assert connection.starts == 2
            assert "flaky" not in toolbox.server_errors


async def test_the_backoff_doubles_with_each_failed_start_in_a_row() -> None:
    agent = make_agent("never", {"broken": fake_server("--exit-on-start", "3")})
    async with AgentToolbox(agent, base_dir=REPO, startup_timeout=1.0) as toolbox:
        with anyio.fail_after(CASE_LIMIT):
            assert await toolbox.allowed_tools() == []
            first = next_try((await toolbox.call("broken__echo", {})).text)
            assert first <= 1.0
            await anyio.sleep(first + 0.1)  # lets the back-off pass
            assert await toolbox.allowed_tools() == []
            second = next_try((await toolbox.call("broken__echo", {})).text)
            assert 1.0 < second <= 2.0
            assert toolbox.connection("broken").starts == 2


async def test_the_probe_names_a_tool_whose_input_schema_is_invalid() -> None:
    config = McpServerConfig.model_validate(fake_server("--invalid-schema-tool"))
    with anyio.fail_after(CASE_LIMIT):
        result = await probe_server(config, base_dir=REPO)
    assert result.ok, result.error
    problems = {tool.name: tool.schema_problem for tool in result.tools}
    assert problems["echo"] is None
    assert problems["broken"] is not None
    assert problems["broken"].startswith(
        "its inputSchema is not a valid JSON Schema: properties.x.type"
    )
