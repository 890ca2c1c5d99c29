"""The agent toolbox against real MCP servers: ``mcp-server-time`` and the fake tool server."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from mcp_export.toolbox.agent_toolbox import AgentToolbox, probe_server, provider_tool_name
from schema_types.agent import McpServerConfig
from tests.fakes.processes import alive, marked, new_mark, with_mark
from tests.mcp_export.tool_servers import REPO, fake_server, make_agent, time_server

pytestmark = pytest.mark.anyio


def fake_toolbox(policy: str = "never", **kwargs: Any) -> AgentToolbox:
    return AgentToolbox(make_agent(policy, {"fake": fake_server()}), base_dir=REPO, **kwargs)


async def cancellations_seen(toolbox: AgentToolbox, count: int) -> int:
    """How many ``hang`` calls the fake server saw cancelled (waiting up to 5 s for ``count``)."""
    outcome = await toolbox.call("fake__hang_cancellations", {"count": count, "ms": 5000})
    assert not outcome.is_error, outcome.text
    return int(outcome.text)


async def server_pid(toolbox: AgentToolbox, name: str = "fake__pid") -> int:
    outcome = await toolbox.call(name, {})
    assert not outcome.is_error, outcome.text
    return int(outcome.text)


async def test_time_server_tools_are_namespaced_with_annotations() -> None:
    async with AgentToolbox(make_agent("never", {"time": time_server()})) as toolbox:
        tools = {spec.name: spec for spec in await toolbox.allowed_tools()}
        assert set(tools) == {"time__get_current_time", "time__convert_time"}
        spec = tools["time__get_current_time"]
        assert (spec.server, spec.tool) == ("time", "get_current_time")
        assert spec.annotations is not None and spec.annotations["readOnlyHint"] is True
        assert spec.input_schema["type"] == "object"
        outcome = await toolbox.call("time__get_current_time", {"timezone": "Europe/Paris"})
        assert not outcome.is_error, outcome.text
        assert outcome.structured is not None and outcome.structured["timezone"] == "Europe/Paris"
        assert "Europe/Paris" in outcome.text
        assert [s.name for s in await toolbox.tool_schemas()] == list(tools)


async def test_tool_policy_offers_only_tools_marked_permission_free() -> None:
    config = time_server() | {
        "serverToolDefaults": {"permissionRequired": False},
        "tools": {"convert_time": {"permissionRequired": True}},
    }
    async with AgentToolbox(make_agent("tool", {"time": config})) as toolbox:
        assert [s.name for s in await toolbox.allowed_tools()] == ["time__get_current_time"]
        hidden = await toolbox.hidden_tools()
        assert [(h.spec.name, h.reason) for h in hidden] == [
            ("time__convert_time", "needs permission (toolPermission: tool)")
        ]
        arguments = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
        outcome = await toolbox.call("time__convert_time", arguments)
        assert outcome.refused and outcome.is_error
        assert outcome.text == (
            "tool time__convert_time needs permission and this agent runs without asking "
            "(toolPermission: tool); mark it permissionRequired: false in the agent file "
            "to allow it"
        )
        assert not (await toolbox.call("time__get_current_time", {"timezone": "UTC"})).is_error


async def test_tool_policy_without_settings_hides_everything_without_starting_the_server() -> None:
    async with AgentToolbox(make_agent("tool", {"time": time_server()})) as toolbox:
        assert await toolbox.allowed_tools() == []
        outcome = await toolbox.call("time__get_current_time", {"timezone": "UTC"})
        assert outcome.refused
        assert toolbox.connection("time").starts == 0
        hidden = await toolbox.hidden_tools()
        assert {h.reason for h in hidden} == {"needs permission (toolPermission: tool)"}
        assert len(hidden) == 2


async def test_always_policy_offers_no_tools_and_refuses_every_call() -> None:
    config = time_server() | {"serverToolDefaults": {"permissionRequired": False}}
    async with AgentToolbox(make_agent("always", {"time": config})) as toolbox:
        assert await toolbox.allowed_tools() == []
        outcome = await toolbox.call("time__get_current_time", {"timezone": "UTC"})
        assert outcome.refused and outcome.is_error
        assert "toolPermission: always" in outcome.text
        assert toolbox.connection("time").starts == 0
        hidden = await toolbox.hidden_tools()
        assert [h.reason for h in hidden] == ["toolPermission: always hides every tool"] * 2


async def test_never_policy_offers_every_included_tool() -> None:
    config = time_server() | {"tools": {"convert_time": {"include": False}}}
    async with AgentToolbox(make_agent("never", {"time": config})) as toolbox:
        assert [s.name for s in await toolbox.allowed_tools()] == ["time__get_current_time"]
        assert [(h.spec.tool, h.reason) for h in await toolbox.hidden_tools()] == [
            ("convert_time", "excluded in the agent file")
        ]
        outcome = await toolbox.call("time__convert_time", {})
        assert outcome.refused and "excluded in the agent file" in outcome.text
        assert len(await toolbox.all_tools()) == 2


async def test_unknown_tool_is_an_error_naming_the_available_tools() -> None:
    async with AgentToolbox(make_agent("never", {"time": time_server()})) as toolbox:
        outcome = await toolbox.call("time__get_weather", {})
        assert outcome.is_error and not outcome.refused
        assert "no tool named 'time__get_weather'" in outcome.text
        assert "time__get_current_time, time__convert_time" in outcome.text


async def test_failing_tool_is_an_error_outcome_with_its_message() -> None:
    async with fake_toolbox() as toolbox:
        outcome = await toolbox.call("fake__fail", {"message": "the disk is full"})
        assert outcome.is_error and not outcome.refused
        assert "the disk is full" in outcome.text


async def test_bad_arguments_are_an_error_outcome() -> None:
    async with fake_toolbox() as toolbox:
        outcome = await toolbox.call("fake__echo", {"wrong": 1})
        assert outcome.is_error
        assert "text" in outcome.text


async def test_hanging_tool_times_out_and_the_server_still_answers() -> None:
    async with fake_toolbox() as toolbox:
        pid = await server_pid(toolbox)
        outcome = await toolbox.call("fake__hang", {}, timeout=0.5)
        assert outcome.is_error
        assert "timed out after 0.5 s" in outcome.text
        assert 400 < outcome.duration_ms < 10_000  # the call's 0.5 s limit; the tool never ends
        echo = await toolbox.call("fake__echo", {"text": "still here"})
        assert echo.structured == {"text": "still here", "pid": pid}
        # The server was told to stop the call, not just abandoned.
        assert await cancellations_seen(toolbox, 1) == 1
        # The server's stderr line reaches us through a pipe reader of its own: wait for it.
        for _ in range(200):  # at most 10 s
            if "hang: cancelled" in toolbox.connection("fake").stderr_text():
                break
            await anyio.sleep(0.05)
        assert "hang: cancelled" in toolbox.connection("fake").stderr_text()
        assert toolbox.connection("fake").starts == 1


async def test_cancelling_a_call_cancels_the_request_and_keeps_the_connection() -> None:
    async with fake_toolbox() as toolbox:
        pid = await server_pid(toolbox)
        with anyio.move_on_after(0.3) as scope:
            await toolbox.call("fake__hang", {})
        assert scope.cancelled_caught
        assert await cancellations_seen(toolbox, 1) == 1
        assert await server_pid(toolbox) == pid


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_server_exit_mid_call_is_an_error_and_the_next_call_restarts_it(mode: str) -> None:
    async with fake_toolbox(protocol_mode=mode) as toolbox:
        first = await server_pid(toolbox)
        outcome = await toolbox.call("fake__crash", {"code": 7})
        assert outcome.is_error
        assert "stopped during the call to crash" in outcome.text
        assert "crash: exiting with 7" in outcome.text  # the server's stderr tail
        second = await server_pid(toolbox)
        assert second != first
        assert not alive(first)
        assert toolbox.connection("fake").starts == 2


async def test_server_killed_while_idle_is_restarted_by_the_next_call() -> None:
    async with fake_toolbox() as toolbox:
        first = await server_pid(toolbox)
        os.kill(first, signal.SIGKILL)
        with anyio.fail_after(10):
            await toolbox.connection("fake").wait_stopped()
        outcome = await toolbox.call("fake__echo", {"text": "back"})
        assert not outcome.is_error, outcome.text
        assert outcome.structured is not None and outcome.structured["pid"] != first


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_twenty_concurrent_calls_share_one_server_without_crossed_results(mode: str) -> None:
    results: dict[int, Any] = {}
    async with fake_toolbox(protocol_mode=mode) as toolbox:

        async def one(index: int) -> None:
            # The first uses are concurrent too: the server must still start once.
            outcome = await toolbox.call("fake__slow_echo", {"text": f"call {index}", "ms": 50})
            results[index] = outcome

        async with anyio.create_task_group() as group:
            for index in range(20):
                group.start_soon(one, index)
        assert toolbox.connection("fake").starts == 1
    assert all(not o.is_error for o in results.values())
    assert {i: o.structured["text"] for i, o in results.items()} == {
        i: f"call {i}" for i in range(20)
    }
    assert len({o.structured["pid"] for o in results.values()}) == 1


async def test_aclose_leaves_no_child_process() -> None:
    mark = new_mark()
    servers = {"fake": with_mark(fake_server(), mark), "time": with_mark(time_server(), mark)}
    toolbox = AgentToolbox(make_agent("never", servers), base_dir=REPO)
    assert len(await toolbox.allowed_tools()) > 2
    pid = await server_pid(toolbox)
    assert len(marked(mark)) == 2
    await toolbox.aclose()
    assert not alive(pid)
    assert marked(mark) == set()
    outcome = await toolbox.call("fake__pid", {})
    assert outcome.is_error and "shut down" in outcome.text


async def test_a_listing_cut_short_leaves_the_start_running_for_the_next_use() -> None:
    mark = new_mark()
    agent = make_agent("never", {"fake": with_mark(fake_server(), mark)})
    async with AgentToolbox(agent, base_dir=REPO) as toolbox:
        # A caller cancelled outright does not stop the start.
        with anyio.CancelScope() as scope:
            scope.cancel()
            await toolbox.allowed_tools()
        # The server needs ~0.5 s to start; this caller can wait half of its 0.2 s.
        with anyio.move_on_after(0.2):
            assert await toolbox.allowed_tools() == []
        assert "is still starting: no answer to" in toolbox.server_errors["fake"]
        # The start goes on in the background: later listings do not wait for it...
        assert await toolbox.allowed_tools() == []
        # ...and once it is up (waited for here through the connection itself), calls use it:
        # the same server, started once.
        with anyio.fail_after(30):
            await toolbox.connection("fake").client()
        outcome = await toolbox.call("fake__echo", {"text": "late"})
        assert not outcome.is_error, outcome.text
        assert toolbox.connection("fake").starts == 1
        assert len(marked(mark)) == 1
    assert marked(mark) == set()


async def test_a_server_that_cannot_start_is_reported_and_the_others_still_work() -> None:
    broken = fake_server("--stderr", "missing API key", "--exit-on-start", "3")
    agent = make_agent("never", {"broken": broken, "time": time_server()})
    async with AgentToolbox(agent, base_dir=REPO) as toolbox:
        names = [s.name for s in await toolbox.allowed_tools()]
        assert names == ["time__get_current_time", "time__convert_time"]
        error = toolbox.server_errors["broken"]
        assert "could not start" in error and "missing API key" in error
        outcome = await toolbox.call("broken__echo", {"text": "x"})
        assert outcome.is_error and "missing API key" in outcome.text


async def test_server_runs_in_the_agent_directory_with_its_env_merged() -> None:
    config = fake_server() | {"env": {"TOOLBOX_MARK": "set by the agent"}}
    async with AgentToolbox(make_agent("never", {"fake": config}), base_dir=REPO) as toolbox:
        assert (await toolbox.call("fake__cwd", {})).text == str(REPO)
        assert (
            await toolbox.call("fake__env", {"name": "TOOLBOX_MARK"})
        ).text == "set by the agent"
        # Merged over this process's environment, not replacing it.
        assert (await toolbox.call("fake__env", {"name": "METAAGENT_HOME"})).text != ""


async def test_env_references_are_resolved_and_a_missing_one_is_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TOOLBOX_SECRET", "s3cret")
    monkeypatch.delenv("TOOLBOX_MISSING", raising=False)
    good = fake_server() | {"env": {"TOKEN": "env://TOOLBOX_SECRET"}}
    bad = fake_server() | {"env": {"TOKEN": "env://TOOLBOX_MISSING"}}
    agent = make_agent("never", {"good": good, "bad": bad})
    async with AgentToolbox(agent, base_dir=REPO) as toolbox:
        assert (await toolbox.call("good__env", {"name": "TOKEN"})).text == "s3cret"
        outcome = await toolbox.call("bad__env", {"name": "TOKEN"})
        assert outcome.is_error
        assert "could not start" in outcome.text and "env://TOOLBOX_MISSING" in outcome.text


async def test_image_content_is_summarized_for_the_model() -> None:
    async with fake_toolbox() as toolbox:
        outcome = await toolbox.call("fake__image", {})
        assert outcome.text == "a pixel\n[image/png, 68 bytes]"


async def test_names_providers_refuse_are_sanitized_and_still_route() -> None:
    agent = make_agent("never", {"my.tools v2": fake_server()})
    async with AgentToolbox(agent, base_dir=REPO) as toolbox:
        names = [spec.name for spec in await toolbox.allowed_tools()]
        assert all(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", n) for n in names)
        echo = next(n for n in names if "__echo" in n)
        outcome = await toolbox.call(echo, {"text": "routed"})
        assert outcome.structured is not None and outcome.structured["text"] == "routed"


def test_provider_tool_names_are_deterministic_unique_and_short() -> None:
    assert provider_tool_name("time", "convert_time") == "time__convert_time"
    dotted, underscored = provider_tool_name("a.b", "t"), provider_tool_name("a_b", "t")
    assert dotted != underscored == "a_b__t"
    assert dotted == provider_tool_name("a.b", "t")
    long = provider_tool_name("server", "x" * 100)
    assert len(long) == 64 and long != provider_tool_name("server", "x" * 101)


async def test_probe_lists_the_time_server_tools() -> None:
    mark = new_mark()
    result = await probe_server(McpServerConfig.model_validate(with_mark(time_server(), mark)))
    assert result.ok, result.error
    assert [t.name for t in result.tools] == ["get_current_time", "convert_time"]
    assert result.tools[0].annotations is not None
    assert result.tools[0].annotations["readOnlyHint"] is True
    assert result.server_name == "mcp-time"
    assert marked(mark) == set()


async def test_probe_of_a_failing_command_reports_its_stderr() -> None:
    script = "import sys; print('boom', file=sys.stderr); sys.exit(3)"
    result = await probe_server(McpServerConfig(command=sys.executable, args=["-c", script]))
    assert not result.ok
    assert result.error is not None and "could not start" in result.error
    assert "boom" in result.error
    assert result.stderr_tail == "boom"


async def test_probe_of_a_missing_command_says_so() -> None:
    result = await probe_server(McpServerConfig(command="/nonexistent/mcp-server"))
    assert not result.ok
    assert result.error is not None and "command not found: /nonexistent/mcp-server" in result.error


async def test_probe_gives_up_on_a_server_that_never_answers() -> None:
    mark = new_mark()
    script = "import time; time.sleep(60)"
    config = McpServerConfig.model_validate(
        with_mark({"command": sys.executable, "args": ["-c", script]}, mark)
    )
    with anyio.fail_after(10):
        result = await probe_server(config, timeout=0.5)
    assert not result.ok
    assert "did not answer initialize within 0.5 s" in (result.error or "")
    assert marked(mark) == set()


@pytest.fixture
def http_server() -> Iterator[str]:
    """The fake tool server over streamable HTTP on a port it chose, listening before it says it."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.tool_server", "--http", "0"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 30)
        line = process.stdout.readline() if ready else ""
        if not line.strip().isdigit():
            raise RuntimeError(f"the fake HTTP tool server did not start: {line!r}")
        yield f"http://127.0.0.1:{int(line)}/mcp"
    finally:
        process.terminate()
        process.wait(10)


async def test_streamable_http_server_tools_are_called(http_server: str) -> None:
    agent = make_agent("never", {"web": {"type": "streamable-http", "url": http_server}})
    async with AgentToolbox(agent) as toolbox:
        outcome = await toolbox.call("web__echo", {"text": "over http"})
        assert outcome.structured is not None and outcome.structured["text"] == "over http"
        failed = await toolbox.call("web__fail", {"message": "nope"})
        assert failed.is_error and "nope" in failed.text
