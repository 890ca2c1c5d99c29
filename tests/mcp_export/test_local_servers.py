"""Local model servers, as they say what they are: how many requests each is sent at once (within
a process and across processes), and messages that name the server and the real cause.

The fakes behave as the real servers do on the wire (``FakeOpenAIServer.like_llama_cpp_python``:
one request at a time, a new request ends the stream in progress; ``like_llama_server``: its
``/props`` says how many slots it has).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest

from mcp_export.errors import ProviderError, ProviderProtocolError, ProviderServerError
from mcp_export.providers._endpoint_lock import EndpointBusy, lock_path, one_process_at_a_time
from mcp_export.providers._server_identity import (
    escaped_arguments,
    forget_server_kinds,
    tool_results_notice,
)
from mcp_export.providers.base import (
    ChatMessage,
    Completion,
    ModelRequest,
    Provider,
    ToolSchema,
)
from mcp_export.providers.factory import provider_for_agent
from mcp_export.providers.openai_provider import forget_endpoints
from schema_types.agent import Agent
from tests.fakes import FakeOpenAIServer, text
from tests.fakes._script import Reply, RequestBody

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _forget() -> None:
    forget_endpoints()
    forget_server_kinds()


def agent(model: str, **providers: dict[str, str]) -> Agent:
    return Agent.model_validate({"settings": {"model": model}, "providers": providers})


def slow_echo(chunks: int = 6, delay: float = 0.05) -> Callable[[RequestBody], Reply]:
    return lambda body: text(body.last_user_text, chunks=chunks, chunk_delay=delay)


async def answers_of(provider: Provider, model: str, questions: list[str]) -> list[str | None]:
    answers: dict[int, str] = {}

    async def one(index: int) -> None:
        request = ModelRequest(model, (ChatMessage("user", questions[index]),))
        async for event in provider.stream(request):
            if isinstance(event, Completion):
                answers[index] = event.message.content

    try:
        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                for index in range(len(questions)):
                    group.start_soon(one, index)
    finally:
        await provider.aclose()
    return [answers.get(i) for i in range(len(questions))]


async def test_llamacpp_sends_llama_server_as_many_requests_as_it_has_slots() -> None:
    with FakeOpenAIServer.like_llama_server(
        slots=4, hold_until_in_flight=4, hold_seconds=10
    ) as server:
        configured = agent("llamacpp:gemma", llamacpp={"LLAMACPP_BASE_URL": server.base_url})
        provider, model = provider_for_agent(configured, env={})
        started = time.monotonic()
        assert await answers_of(provider, model, ["a", "b", "c", "d"]) == ["a", "b", "c", "d"]
        assert server.max_in_flight == 4
        assert time.monotonic() - started < 8  # not held until the fake's 10 s
        asked = [r.path for r in server.requests if r.method == "GET"]
    assert asked == ["/v1/models", "/props"]  # once per process, not per request


async def test_llamacpp_keeps_a_server_that_says_nothing_at_one_request() -> None:
    with FakeOpenAIServer(responder=slow_echo()) as server:  # its model list names no server
        configured = agent("llamacpp:gemma", llamacpp={"LLAMACPP_BASE_URL": server.base_url})
        provider, model = provider_for_agent(configured, env={})
        assert await answers_of(provider, model, ["one two", "three four"]) == [
            "one two",
            "three four",
        ]
        assert server.max_in_flight == 1


async def test_the_openai_kind_at_llama_cpp_python_waits_in_line() -> None:
    """The ``openai`` kind has no limit of its own; once the server says it is llama-cpp-python
    its requests go one at a time, and none is cut off by the next."""
    with FakeOpenAIServer.like_llama_cpp_python(responder=slow_echo()) as server:
        configured = agent(
            "openai:gemma", openai={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k"}
        )
        provider, model = provider_for_agent(configured, env={})
        questions = ["one two three", "four five six", "seven eight nine"]
        assert await answers_of(provider, model, questions) == questions
        assert server.max_in_flight == 1


async def test_a_setting_still_says_how_many_requests_go_at_once() -> None:
    with FakeOpenAIServer.like_llama_server(
        slots=4, hold_until_in_flight=2, hold_seconds=10
    ) as server:
        configured = agent(
            "llamacpp:gemma",
            llamacpp={"LLAMACPP_BASE_URL": server.base_url, "maxConcurrentRequests": "2"},
        )
        provider, model = provider_for_agent(configured, env={})
        assert await answers_of(provider, model, ["a", "b", "c", "d"]) == ["a", "b", "c", "d"]
        assert server.max_in_flight == 2
        assert not [r for r in server.requests if r.method == "GET"]  # nothing to learn


_ONE_CALL = textwrap.dedent(
    """
    import asyncio, json, sys
    from mcp_export.providers.base import ChatMessage, Completion, ModelRequest
    from mcp_export.providers.factory import provider_for_agent
    from schema_types.agent import Agent

    async def main():
        agent = Agent.model_validate({"settings": {"model": "llamacpp:gemma"},
            "providers": {"llamacpp": {"LLAMACPP_BASE_URL": sys.argv[1]}}})
        provider, model = provider_for_agent(agent, env={})
        try:
            request = ModelRequest(model, (ChatMessage("user", sys.argv[2]),))
            async for event in provider.stream(request):
                if isinstance(event, Completion):
                    print(json.dumps(event.message.content))
        finally:
            await provider.aclose()

    asyncio.run(main())
    """
)


def test_three_processes_at_once_each_get_their_whole_answer(tmp_path: Path) -> None:
    """Three processes against llama-cpp-python at once: before, one answered and the others'
    streams were cut off by the next one's request."""
    with FakeOpenAIServer.like_llama_cpp_python(responder=slow_echo(8, 0.1)) as server:
        environment = {**os.environ, "PYTHONPATH": str(REPO)}
        children = [
            subprocess.Popen(
                [sys.executable, "-c", _ONE_CALL, server.base_url, f"question {n} of three"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                cwd=tmp_path,
                env=environment,
            )
            for n in range(3)
        ]
        outputs = [child.communicate(timeout=120) for child in children]
        assert server.max_in_flight == 1
    for child, (_, err) in zip(children, outputs, strict=True):
        assert child.returncode == 0, err
    answers = sorted(json.loads(out) for out, _ in outputs)
    assert answers == [f"question {n} of three" for n in range(3)]


_URL = "http://127.0.0.1:9/v1"


@pytest.fixture
def another_process_holds_the_lock() -> Iterator[None]:
    """Another process holding ``_URL``'s lock, as a ``metaagent call`` would."""
    path = lock_path(_URL)
    path.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom filelock import FileLock\n"
            "lock = FileLock(sys.argv[1]); lock.acquire()\n"
            "open(sys.argv[1][:-5] + '.owner', 'w').write('4242 metaagent call a.yaml')\n"
            "print('held', flush=True); time.sleep(30)",
            str(path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        yield
    finally:
        holder.kill()
        holder.wait(timeout=10)


async def test_a_wait_for_another_process_is_bounded_and_says_who_holds_the_server(
    another_process_holds_the_lock: None,
) -> None:
    started = time.monotonic()
    with pytest.raises(EndpointBusy) as caught:
        async with one_process_at_a_time(_URL, "127.0.0.1:9 (llama-cpp-python)", wait=0.5):
            pytest.fail("the lock was held by another process")
    assert time.monotonic() - started < 3
    message = str(caught.value)
    assert "127.0.0.1:9 (llama-cpp-python) serves one request at a time" in message
    assert "process 4242 (metaagent call a.yaml)" in message


@pytest.mark.parametrize("started", [True, False], ids=["mid-answer", "before-its-first-token"])
async def test_a_stream_cut_by_another_request_names_that_cause(started: bool) -> None:
    """Another program's request ends llama-cpp-python's answer in progress: the message says
    so and names the server one way, not the base URL or its ``uvicorn`` header."""
    # Cut mid-answer, its connection breaks; cut before its first token, it ends with [DONE].
    hold: dict[str, Any] = {} if started else {"hold_until_in_flight": 2, "hold_seconds": 10.0}
    with FakeOpenAIServer.like_llama_cpp_python(responder=slow_echo(10, 0.1), **hold) as server:
        configured = agent("llamacpp:gemma", llamacpp={"LLAMACPP_BASE_URL": server.base_url})
        provider, model = provider_for_agent(configured, env={})
        caught: list[BaseException] = []

        async def ours() -> None:
            request = ModelRequest(model, (ChatMessage("user", "one two three four five six"),))
            try:
                async for _ in provider.stream(request):
                    pass
            except ProviderError as exc:
                caught.append(exc)
            finally:
                await provider.aclose()

        async def another_program() -> None:
            assert await anyio.to_thread.run_sync(lambda: server.wait_for_requests(1, 10))
            await anyio.sleep(0.3 if started else 0.0)
            async with (
                aiohttp.ClientSession() as session,
                session.post(
                    f"{server.base_url}/chat/completions",
                    json={
                        "model": "m",
                        "stream": True,
                        "messages": [{"role": "user", "content": "x"}],
                    },
                ) as response,
            ):
                await response.read()

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(ours)
                group.start_soon(another_program)
    (error,) = caught
    assert isinstance(error, ProviderProtocolError)
    message = str(error)
    assert message.startswith(f"the answer from {server.origin[7:]} (llama-cpp-python) was cut off")
    assert "serves one request at a time" in message
    assert "another request arrives" in message
    assert server.base_url not in message


async def test_llama_cpp_pythons_assertion_on_required_is_explained_once() -> None:
    with FakeOpenAIServer.like_llama_cpp_python([text("unused")]) as server:
        configured = agent("llamacpp:gemma", llamacpp={"LLAMACPP_BASE_URL": server.base_url})
        provider, model = provider_for_agent(configured, env={})
        tool = ToolSchema("time_now", "The time.", {"type": "object", "properties": {}})
        request = ModelRequest(
            model,
            (ChatMessage("user", "time?"),),
            tools=(tool,),
            parameters={"tool_choice": "required"},
        )
        try:
            with anyio.fail_after(30), pytest.raises(ProviderServerError) as caught:
                async for _ in provider.stream(request):
                    pass
        finally:
            await provider.aclose()
        assert len(server.model_requests) == 1  # not retried: the same request fails the same way
    message = str(caught.value)
    assert "(llama-cpp-python) failed with 500 and no message: an assertion failed" in message
    assert '"required" fails this way every time' in message
    assert "llama-server" in message
    assert "try again later" not in message


async def test_a_tool_result_sent_to_llama_cpp_python_gets_the_notice_once() -> None:
    """What can be known from outside: the server says it is llama-cpp-python (whose one tool
    format renders no tool message), and the arguments it returns come HTML-escaped."""
    with FakeOpenAIServer.like_llama_cpp_python([text("ok"), text("ok")]) as server:
        configured = agent("llamacpp:gemma", llamacpp={"LLAMACPP_BASE_URL": server.base_url})
        provider, model = provider_for_agent(configured, env={})
        assert await answers_of(provider, model, ["hi"]) == ["ok"]  # the server says what it is
    with_result: list[dict[str, Any]] = [
        {"role": "user", "content": "time?"},
        {"role": "assistant", "content": "", "tool_calls": []},
        {"role": "tool", "tool_call_id": "c1", "content": '{"datetime": "12:00"}'},
    ]
    assert tool_results_notice(server.base_url, with_result[:1]) is None
    notice = tool_results_notice(server.base_url, with_result)
    assert notice is not None
    assert "leaves tool results out of the model's prompt" in notice
    assert "llama-server" in notice
    assert tool_results_notice(server.base_url, with_result) is None  # once per endpoint
    assert escaped_arguments("{&#34;timezone&#34;: &#34;UTC&#34;}")
    assert not escaped_arguments('{"timezone": "UTC"}')


async def test_no_notice_for_a_server_that_renders_tool_results() -> None:
    with FakeOpenAIServer.like_llama_server([text("ok")]) as server:
        configured = agent("llamacpp:gemma", llamacpp={"LLAMACPP_BASE_URL": server.base_url})
        provider, model = provider_for_agent(configured, env={})
        assert await answers_of(provider, model, ["hi"]) == ["ok"]
    assert tool_results_notice(server.base_url, [{"role": "tool", "content": "x"}]) is None
