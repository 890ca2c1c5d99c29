"""How much the chat loop costs on top of the model and the tools it calls.

Run: ``.venv/bin/python bench/runtime_overhead.py [--sessions 1000] [--batch 50]``. Prints a
table; exits 0. Not a test: the figures depend on the machine.

1. Overhead per session. Each session asks the model once (it calls one tool), runs the tool,
   and asks again (it answers). The model is ``FakeOpenAIServer`` answering at once, in its own
   process so its threads do not share our interpreter; the tool is ``echo`` of the fake stdio
   MCP tool server. The same two model requests made directly with the provider's own aiohttp
   request (``bench/_direct.py``) plus the same tool call made directly with ``mcp.Client`` are
   the baseline, interleaved with the
   sessions; the difference is the loop's own cost (event queue, task, message bookkeeping, the
   provider's translation, the toolbox's routing). Also measured: the same sessions writing the
   history store, and the pure loop with a scripted in-memory provider and toolbox (no I/O).
2. Concurrency. 50 sessions at once against a model that takes 200 ms per request; the whole
   batch should take under 1.3 × 200 ms. The model is ``bench/_async_model.py`` (asyncio, its own
   process: the threaded test fake is itself slower than the goal at 50 requests at once).
   Baselines in the same run: 50 plain HTTP requests (aiohttp, no SDK: the floor), 50 sessions on
   an in-memory model, and, when the ``openai`` package is installed (it is no dependency), the
   same 50 requests through ``AsyncOpenAI`` with its defaults.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from _async_model import AsyncModelProcess  # noqa: E402

from mcp_export.history.store import HistoryStore  # noqa: E402
from mcp_export.providers.base import (  # noqa: E402
    ChatMessage,
    Completion,
    ModelRequest,
    ProviderEvent,
    TextDelta,
    ToolCallRequest,
    Usage,
)
from mcp_export.providers.openai_provider import OpenAIProvider  # noqa: E402
from mcp_export.session.chat import ChatSession, run_to_result  # noqa: E402
from mcp_export.toolbox.agent_toolbox import AgentToolbox  # noqa: E402
from schema_types.agent import Agent  # noqa: E402

MODEL_DELAY = 0.2
TOOL = "fake__echo"
SYSTEM = "You are a benchmark agent."


# --- the fake model, in its own process ------------------------------------------------------


def _respond(body: Any) -> Any:
    from tests.fakes._script import text, tool_calls

    if body.rounds_since_user == 0 and body.get("tools"):
        return tool_calls([("call_1", TOOL, {"text": body.last_user_text})], usage=(50, 8))
    return text("done", usage=(60, 2))


def _serve(pipe: Connection) -> None:
    from tests.fakes.openai_server import FakeOpenAIServer

    with FakeOpenAIServer(responder=_respond) as server:
        pipe.send(server.base_url)
        pipe.recv()  # until told to stop


class ModelProcess:
    """A ``FakeOpenAIServer`` running in a child process."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")
        self._pipe, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child,), daemon=True)
        self._process.start()
        self.base_url: str = self._pipe.recv()

    def stop(self) -> None:
        self._pipe.send("stop")
        self._process.join(10)


# --- figures ---------------------------------------------------------------------------------


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


@dataclass
class Row:
    label: str
    values_ms: list[float]

    def line(self) -> str:
        median = statistics.median(self.values_ms)
        p99 = percentile(self.values_ms, 0.99)
        return f"  {self.label:<52} {median:9.3f} {p99:9.3f}"


def print_rows(title: str, rows: list[Row]) -> None:
    print(f"\n{title}")
    print(f"  {'':<52} {'median ms':>9} {'p99 ms':>9}")
    for row in rows:
        print(row.line())


def fake_tool_server() -> dict[str, Any]:
    return {
        "command": sys.executable,
        "args": ["-m", "tests.fakes.tool_server"],
        "cwd": str(REPO),
        "serverToolDefaults": {"permissionRequired": False},
    }


def make_agent(base_url: str, *, tools: bool) -> Agent:
    return Agent.model_validate(
        {
            "systemPrompt": SYSTEM,
            "settings": {"model": "openai:fake-model", "toolPermission": "tool"},
            "providers": {"openai": {"OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": base_url}},
            "mcpServers": {"fake": fake_tool_server()} if tools else {},
        }
    )


# --- 1a. sessions vs the same requests made directly --------------------------------------------


async def measure_overhead(base_url: str, sessions: int) -> list[Row]:
    from _direct import DirectModel
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    agent = make_agent(base_url, tools=True)
    provider = OpenAIProvider("sk-bench", base_url)
    toolbox = AgentToolbox(agent, base_dir=REPO)
    scratch = tempfile.TemporaryDirectory(prefix="metaagent-bench-")
    history = HistoryStore(Path(scratch.name) / "history.sqlite3")
    raw_model = DirectModel(base_url)  # the request as the provider makes it

    async def create(**body: Any) -> Any:
        return await raw_model.stream(body)

    server = fake_tool_server()
    raw_tools = Client(
        StdioServerParameters(command=server["command"], args=server["args"], cwd=server["cwd"])
    )
    tools_json = [
        {
            "type": "function",
            "function": {
                "name": s.name,
                "description": s.description,
                "parameters": s.input_schema,
            },
        }
        for s in await toolbox.allowed_tools()
    ]

    async def session_once(index: int, store: HistoryStore | None) -> None:
        session = ChatSession(
            agent,
            provider=provider,
            model="fake-model",
            toolbox=toolbox,
            history=store,
            thread_kind="served",
        )
        result = await run_to_result(session, f"message {index}")
        assert result.error is None and result.answer == "done", result.error

    async def raw_once(index: int) -> None:
        said = f"message {index}"
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": said},
        ]
        stream = await create(
            model="fake-model",
            messages=messages,
            tools=tools_json,
            stream=True,
            stream_options={"include_usage": True},
        )
        arguments = ""
        async for chunk in stream:
            for choice in chunk["choices"]:
                for call in choice["delta"].get("tool_calls") or ():
                    arguments += call["function"].get("arguments") or ""
        result = await raw_tools.call_tool("echo", {"text": said})
        content = result.content[0].text if result.content else ""  # type: ignore[union-attr]
        messages += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": TOOL, "arguments": arguments},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": content},
        ]
        stream = await create(
            model="fake-model",
            messages=messages,
            tools=tools_json,
            stream=True,
            stream_options={"include_usage": True},
        )
        async for _ in stream:
            pass

    async def timed(run: Callable[..., Awaitable[None]], *args: Any) -> float:
        started = time.perf_counter()
        await run(*args)
        return (time.perf_counter() - started) * 1000

    raw_ms: list[float] = []
    session_ms: list[float] = []
    recorded_ms: list[float] = []
    async with raw_tools:
        for index in range(30):  # warm up: imports, connections, caches
            await session_once(index, None)
            await session_once(index, history)
            await raw_once(index)
        for index in range(sessions):
            raw_ms.append(await timed(raw_once, index))
            session_ms.append(await timed(session_once, index, None))
            recorded_ms.append(await timed(session_once, index, history))
    await toolbox.aclose()
    await provider.aclose()
    await raw_model.close()
    history.close()
    scratch.cleanup()
    pairs = [s - r for s, r in zip(session_ms, raw_ms, strict=True)]
    recorded_pairs = [s - r for s, r in zip(recorded_ms, raw_ms, strict=True)]
    return [
        Row("raw: 2 model requests + 1 mcp.Client tool call", raw_ms),
        Row("session: the same through ChatSession", session_ms),
        Row("session + history store (SQLite)", recorded_ms),
        Row("overhead: session - raw, per pair", pairs),
        Row("overhead with history: session - raw, per pair", recorded_pairs),
    ]


# --- 1b. the pure loop, no I/O ----------------------------------------------------------------


class InstantProvider:
    """Answers at once (or after ``delay`` seconds): a tool call to a question, else "done"."""

    name = "instant"

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        if self.delay:
            await asyncio.sleep(self.delay)
        if request.messages[-1].role == "user" and request.tools:
            call = ToolCallRequest("call_1", "echo", {"text": request.messages[-1].content})
            yield Completion(ChatMessage("assistant", "", tool_calls=(call,)), Usage(50, 8))
        else:
            yield TextDelta("done")
            yield Completion(ChatMessage("assistant", "done"), Usage(60, 2))

    async def aclose(self) -> None:
        pass


@dataclass(frozen=True)
class _Spec:
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class _Outcome:
    text: str
    is_error: bool = False
    refused: bool = False
    duration_ms: float = 0.0


class InstantToolbox:
    async def allowed_tools(self) -> list[_Spec]:
        return [_Spec("echo", "Echoes.", {"type": "object"})]

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None,  # noqa: ASYNC109
    ) -> _Outcome:
        return _Outcome(str(arguments["text"]))


async def measure_pure_loop(sessions: int) -> list[Row]:
    agent = Agent.model_validate({"systemPrompt": SYSTEM})
    provider, toolbox = InstantProvider(), InstantToolbox()
    values: list[float] = []
    for index in range(sessions + 100):
        started = time.perf_counter()
        session = ChatSession(agent, provider=provider, model="m", toolbox=toolbox)
        result = await run_to_result(session, f"m{index}")
        elapsed = (time.perf_counter() - started) * 1000
        assert result.answer == "done"
        if index >= 100:
            values.append(elapsed)
    return [Row("in-memory provider + toolbox (pure loop cost)", values)]


# --- 2. concurrency ---------------------------------------------------------------------------


async def measure_batch(base_url: str, size: int, rounds: int) -> list[tuple[str, float]]:
    import importlib

    import aiohttp

    agent = make_agent(base_url, tools=False)
    provider = OpenAIProvider("sk-bench", base_url)
    raw: Any = None
    try:
        openai = importlib.import_module("openai")
    except ImportError:
        pass
    else:
        raw = openai.AsyncOpenAI(api_key="sk-bench", base_url=base_url, max_retries=0)
    messages: Any = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "m"}]

    async def one_session(index: int) -> None:
        session = ChatSession(agent, provider=provider, model="fake-model")
        result = await run_to_result(session, f"m{index}")
        assert result.answer == f"answer to m{index}", result.error

    async def one_raw(index: int) -> None:
        assert raw is not None
        stream = await raw.chat.completions.create(
            model="fake-model",
            messages=messages,
            stream=True,
            stream_options={"include_usage": True},
        )
        async for _ in stream:
            pass

    http = aiohttp.ClientSession()
    payload = {
        "model": "fake-model",
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
    }

    async def one_http(index: int) -> None:
        headers = {"authorization": "Bearer sk-bench"}
        url = f"{base_url}/chat/completions"
        async with http.post(url, json=payload, headers=headers) as response:
            async for _ in response.content:
                pass

    async def batch(run: Callable[[int], Awaitable[None]]) -> float:
        started = time.perf_counter()
        await asyncio.gather(*(run(i) for i in range(size)))
        return (time.perf_counter() - started) * 1000

    in_memory = InstantProvider(delay=MODEL_DELAY)

    async def one_in_memory(index: int) -> None:
        session = ChatSession(agent, provider=in_memory, model="m")
        result = await run_to_result(session, f"m{index}")
        assert result.answer == "done", result.error

    runs: dict[str, Callable[[int], Awaitable[None]]] = {"http": one_http, "session": one_session}
    if raw is not None:
        runs["sdk"] = one_raw
    for run in runs.values():  # warm up: imports, connection pools
        await batch(run)
    batches: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):  # interleaved, so a busy moment on the machine hits all of them
        for name, run in runs.items():
            batches[name].append(await batch(run))
    memory_batches = [await batch(one_in_memory) for _ in range(rounds)]
    await provider.aclose()
    if raw is not None:
        await raw.close()
    await http.close()
    median = {name: statistics.median(values) for name, values in batches.items()}
    rows = [(f"{size} plain HTTP requests at once (aiohttp, no SDK)", median["http"])]
    if "sdk" in median:
        rows.append((f"{size} SDK requests at once (AsyncOpenAI defaults)", median["sdk"]))
    else:
        print("   (the openai package is not installed: no AsyncOpenAI baseline)")
    rows += [
        (f"{size} sessions at once, OpenAI provider", median["session"]),
        (f"{size} sessions at once, in-memory 200 ms model", statistics.median(memory_batches)),
    ]
    return rows


async def main(sessions: int, batch_size: int) -> None:
    print(f"chat loop overhead ({sessions} sessions each: model → 1 tool call → model → answer)")
    fast = ModelProcess()
    try:
        rows = await measure_overhead(fast.base_url, sessions)
    finally:
        fast.stop()
    print_rows("1. per session, fake model in another process, fake stdio tool server", rows)
    print_rows("   pure loop, no I/O", await measure_pure_loop(sessions))

    slow = AsyncModelProcess(MODEL_DELAY)
    try:
        batches = await measure_batch(slow.base_url, batch_size, rounds=7)
    finally:
        slow.stop()
    goal = 1.3 * MODEL_DELAY * 1000
    print(
        f"\n2. concurrency: a model that takes {MODEL_DELAY * 1000:.0f} ms per request "
        f"(median of 7 batches; bench/_async_model.py)"
    )
    for label, value in batches:
        verdict = "ok" if value < goal else "over"
        print(f"  {label:<52} {value:9.1f} ms  goal < {goal:.0f} ms: {verdict}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=50)
    options = parser.parse_args()
    asyncio.run(main(options.sessions, options.batch))
