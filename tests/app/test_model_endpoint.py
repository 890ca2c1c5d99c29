"""The Model page's model list (``list_models``): one HTTP stack with the provider, no SDK.

Against the real fake server over loopback, or a raw loopback server for the answers the fake does
not give to a model list request (a refused key, a web page, silence).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from app.pages.model_endpoint import EndpointError, list_models
from mcp_export.providers.base import ChatMessage, Completion, ModelRequest
from mcp_export.providers.factory import provider_for_agent
from schema_types.agent import Agent
from tests.fakes import FakeOpenAIServer, text

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]


def agent_at(base_url: str, key: str | None = None) -> Agent:
    settings = {"OPENAI_BASE_URL": base_url} | ({"OPENAI_API_KEY": key} if key else {})
    return Agent.model_validate(
        {"settings": {"model": "openai:fake-model"}, "providers": {"openai": settings}}
    )


@asynccontextmanager
async def raw_server(answer: bytes | None) -> AsyncIterator[str]:
    """A loopback server that answers every request with ``answer`` as it is (None: never);
    yields its base URL."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        if answer is None:
            await reader.read()  # until the client gives up
        else:
            writer.write(answer)
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
    finally:
        server.close()


def test_the_list_comes_without_the_openai_sdk_and_says_what_the_server_is() -> None:
    code = (
        "import asyncio, sys\n"
        "from app.pages.model_endpoint import list_models\n"
        "from mcp_export.providers._openai_http import server_kind\n"
        "from schema_types.agent import Agent\n"
        "from tests.fakes import FakeOpenAIServer\n"
        "with FakeOpenAIServer(models=('zeta', 'alpha'), owned_by='vllm') as server:\n"
        "    agent = Agent.model_validate({'settings': {'model': 'vllm:zeta'}, 'providers':\n"
        "        {'vllm': {'VLLM_BASE_URL': server.base_url}}})\n"
        "    print(asyncio.run(list_models(agent)), server_kind(server.base_url))\n"
        "print('openai' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["['alpha', 'zeta'] vLLM", "False"]


async def test_a_refused_key_names_the_setting() -> None:
    body = b'{"error": {"message": "Incorrect API key provided"}}'
    answer = b"HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n"
    answer += b"content-length: %d\r\n\r\n%s" % (len(body), body)
    async with raw_server(answer) as base_url:
        with pytest.raises(EndpointError) as caught:
            await list_models(agent_at(base_url, "sk-wrong"))
    assert str(caught.value) == f"{base_url} refused the key (401): check OPENAI_API_KEY"


async def test_an_answer_that_is_not_a_model_list_says_to_type_the_name() -> None:
    page = b"<html>hello</html>"
    answer = b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\n"
    answer += b"content-length: %d\r\n\r\n%s" % (len(page), page)
    async with raw_server(answer) as base_url:
        with pytest.raises(EndpointError) as caught:
            await list_models(agent_at(base_url))
    assert str(caught.value).startswith(f"{base_url} has no model list (")
    assert str(caught.value).endswith("); type the model name instead")


async def test_a_server_that_never_answers_times_out_within_the_bound() -> None:
    async with raw_server(None) as base_url:
        with pytest.raises(EndpointError) as caught:
            await asyncio.wait_for(list_models(agent_at(base_url), timeout=0.3), 10)
    assert str(caught.value) == f"{base_url} did not answer within 0.3 s"


async def test_on_a_one_request_server_the_list_waits_for_the_answer_in_progress() -> None:
    slow = text("one two three four", chunks=4, chunk_delay=0.2)
    with FakeOpenAIServer.like_llama_cpp_python([slow], models=("gemma",)) as server:
        agent = Agent.model_validate(
            {
                "settings": {"model": "llamacpp:gemma"},
                "providers": {"llamacpp": {"LLAMACPP_BASE_URL": server.base_url}},
            }
        )
        provider, model = provider_for_agent(agent)
        order: list[str] = []
        first = anyio.Event()

        async def chat() -> None:
            async for event in provider.stream(ModelRequest(model, (ChatMessage("user", "q"),))):
                first.set()
                if isinstance(event, Completion):
                    order.append("answer")

        async def listing() -> None:
            await first.wait()
            assert await list_models(agent) == ["gemma"]
            order.append("list")

        try:
            with anyio.fail_after(20):
                async with anyio.create_task_group() as group:
                    group.start_soon(chat)
                    group.start_soon(listing)
        finally:
            await provider.aclose()
    assert order == ["answer", "list"]
