"""No resolved key reaches a sink: the history database, stderr, stdout, served results.

A provider (or a proxy) that repeats the request's key — in a 401 body (``Incorrect API key
provided: Bearer …``) or in an answer — is run against every surface of the runtime as a person
or a client meets it: ``metaagent call`` and ``metaagent chat`` as subprocesses, and ``metaagent
serve`` as a subprocess driven by the official MCP client over stdio. The key comes from
``env://`` or from ``keyring://`` (a real keyring backend the subprocesses load, see
``tests.fakes.file_keyring``). Then every file under the data folder (the history database with
its ``-wal``/``-shm``), every captured stream and every result is searched for the key.

The key has no well-known shape (``mak-…``, not ``sk-…``): only the redaction of the values the
runtime resolved can catch it, not a pattern.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
import yaml
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from mcp_export.errors import ProviderAuthError
from mcp_export.history.store import HistoryStore
from mcp_export.providers.base import ChatMessage, ModelRequest
from mcp_export.providers.factory import provider_for_agent
from schema_types.agent import Agent
from tests.fakes._script import Reply, status, text
from tests.fakes._server import FakeModelServer
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.file_keyring import file_keyring_env
from tests.fakes.mcp_clients import REPO, book_tool, serve_command
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio

KEY_VARIABLE = "LEAK_TEST_KEY"
KEYRING_ENTRY = ("metaagent-test", "model-key")


def refusal() -> Reply:
    """A 401 whose message repeats the credential header as it was sent."""
    return status(401, message="Incorrect API key provided", echo_credentials=True)


def echoed_answer() -> Reply:
    """An answer that ends with the key, split across stream chunks like any answer."""
    return text("Your key is ", chunks=9, echo_credentials=True)


@pytest.fixture
def key() -> str:
    return "mak-" + secrets.token_hex(20)


def write_agent(folder: Path, provider: str, base_url: str, reference: str) -> Path:
    if provider == "openai":
        settings = {"OPENAI_API_KEY": reference, "OPENAI_BASE_URL": base_url}
        model = "openai:fake-model"
    else:
        settings = {"ANTHROPIC_API_KEY": reference, "ANTHROPIC_BASE_URL": base_url}
        model = "anthropic:claude-test"
    data: dict[str, Any] = {
        "metadata": {"name": "Leaky", "tools": [book_tool()]},
        "settings": {"model": model, "maxChatTurns": 2},
        "providers": {provider: settings},
    }
    path = folder / "leaky.agent.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def key_environment(source: str, key: str, folder: Path) -> tuple[str, dict[str, str]]:
    """The agent file's reference to the key, and the environment that resolves it."""
    if source == "env":
        return f"env://{KEY_VARIABLE}", {KEY_VARIABLE: key}
    # The keyring file lives outside the data folder that is searched.
    return (
        "keyring://" + "/".join(KEYRING_ENTRY),
        file_keyring_env(folder / "keyring.json", {KEYRING_ENTRY: key}),
    )


def run_cli(
    args: list[str], env: Mapping[str, str], stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_export", *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        cwd=REPO,
        env=dict(env),
        check=False,
    )


def files_under(folder: Path) -> Iterator[Path]:
    return (path for path in folder.rglob("*") if path.is_file())


def result_text(result: types.CallToolResult) -> str:
    texts = [b.text for b in result.content if isinstance(b, types.TextContent)]
    return "\n".join(texts) + json.dumps(result.structured_content or {})


@pytest.mark.parametrize("source", ["env", "keyring"])
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_a_key_the_provider_repeats_reaches_no_file_stream_or_result(
    tmp_path: Path, metaagent_home: Path, key: str, provider: str, source: str
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    reference, key_env = key_environment(source, key, work)
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
    }
    env |= key_env | {"PYTHONIOENCODING": "utf-8"}
    fake: type[FakeModelServer] = FakeOpenAIServer if provider == "openai" else FakeAnthropicServer
    script = [refusal(), echoed_answer()] * 2 + [refusal(), echoed_answer()]
    outputs: list[str] = []
    with fake(script) as server:
        agent = write_agent(work, provider, server.base_url, reference)  # type: ignore[attr-defined]

        for answer_expected in (False, True):
            call = run_cli(["call", str(agent), "book_flight", "--arg", "destination=Oslo"], env)
            assert call.returncode == (0 if answer_expected else 1), call.stderr
            outputs += [call.stdout, call.stderr]
        refused = outputs[1]
        assert "the API key was refused (401)" in refused and "[redacted]" in refused
        assert outputs[2].startswith("Your key is [redacted]")

        chat = run_cli(["chat", str(agent), "--new"], env, stdin="hello\nhello again\n")
        assert chat.returncode == 0, chat.stderr
        outputs += [chat.stdout, chat.stderr]
        assert "the API key was refused (401)" in chat.stderr
        assert "Your key is [redacted]" in chat.stdout

        stderr_path = work / "serve.stderr"
        command = serve_command(str(agent), "--log-level", "debug")
        params = StdioServerParameters(command=command[0], args=command[1:], cwd=str(REPO), env=env)
        with stderr_path.open("w", encoding="utf-8") as errlog, anyio.fail_after(60):
            async with Client(stdio_client(params, errlog=errlog)) as client:
                failed = await client.call_tool("book_flight", {"destination": "Oslo"})
                answered = await client.call_tool("book_flight", {"destination": "Rome"})
        assert failed.is_error and "the API key was refused (401)" in result_text(failed)
        assert not answered.is_error
        assert result_text(answered).startswith("Your key is [redacted]")
        outputs += [result_text(failed), result_text(answered)]
        outputs.append(stderr_path.read_text(encoding="utf-8"))
        assert server.pending_replies == 0
        # The provider really was sent the key, and really repeated it.
        assert all(key in (server.api_key_sent(r.headers) or "") for r in server.model_requests)

    leaks = [i for i, output in enumerate(outputs) if key in output]
    assert leaks == [], f"the key reached outputs {leaks}"
    searched = list(files_under(metaagent_home))
    assert any(path.name.endswith(".db") or ".sqlite" in path.name for path in searched), searched
    leaking_files = [str(path) for path in searched if key.encode() in path.read_bytes()]
    assert leaking_files == []
    # The history did record the runs, with the key replaced.
    with HistoryStore() as store:
        runs = store.runs()
        messages = [m for thread in store.threads() for m in store.messages(thread.id)]
    assert len(runs) >= 4
    assert any("Bearer [redacted]" in (run.error or "") for run in runs)
    assert any("Your key is [redacted]" in (run.answer or "") for run in runs)
    assert any("Your key is [redacted]" in message.content for message in messages)


LEAKY_SERVER = (
    "import os, sys; sys.stderr.write('starting with SERVER_TOKEN=' + os.environ['SERVER_TOKEN']"
    " + '\\n'); sys.stderr.flush(); sys.exit(3)"
)


def test_a_tool_server_that_prints_its_secret_reaches_no_stream_or_file(
    tmp_path: Path, metaagent_home: Path, key: str
) -> None:
    with FakeOpenAIServer([text("No tools today.")]) as server:
        agent = write_agent(tmp_path, "openai", server.base_url, "env://MODEL_KEY")
        data = yaml.safe_load(agent.read_text(encoding="utf-8"))
        data["mcpServers"] = {
            "srv": {
                "type": "stdio",
                "command": sys.executable,
                "args": ["-c", LEAKY_SERVER],
                "env": {"SERVER_TOKEN": f"env://{KEY_VARIABLE}"},
                "serverToolDefaults": {"permissionRequired": False},
            }
        }
        agent.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        env = dict(os.environ, PYTHONIOENCODING="utf-8")
        env |= {"MODEL_KEY": "model-" + secrets.token_hex(8), KEY_VARIABLE: key}
        call = run_cli(["call", str(agent), "book_flight", "--arg", "destination=Oslo"], env)
        chat = run_cli(["chat", str(agent), "-m", "hello", "--new"], env)
    outputs = [call.stdout, call.stderr, chat.stdout, chat.stderr]
    assert "SERVER_TOKEN=" in call.stderr + chat.stderr  # what the server said was shown …
    assert [i for i, output in enumerate(outputs) if key in output] == []  # … redacted
    leaking_files = [str(p) for p in files_under(metaagent_home) if key.encode() in p.read_bytes()]
    assert leaking_files == []


def test_a_refused_request_line_that_carries_a_key_is_logged_without_it(
    tmp_path: Path, key: str
) -> None:
    # The key is resolved when the served agent starts, so the log line naming the refused
    # request must not repeat it, nor a bearer token of any shape.
    with FakeOpenAIServer([]) as server:
        agent = write_agent(tmp_path, "openai", server.base_url, f"env://{KEY_VARIABLE}")
        env = dict(os.environ, PYTHONIOENCODING="utf-8", **{KEY_VARIABLE: key})
        line = f'{{"k": "{key}", "Authorization": "Bearer sk-{"a1" * 12}"\n'
        served = subprocess.run(
            serve_command(str(agent)),
            input=line,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=60,
            cwd=REPO,
            env=env,
            check=False,
        )
    assert served.returncode == 0, served.stderr
    assert "Parse error" in served.stdout
    assert "refused" in served.stderr.lower() or "parse error" in served.stderr.lower()
    assert key not in served.stderr + served.stdout
    assert "sk-a1a1" not in served.stderr + served.stdout


async def test_an_azure_key_sent_as_api_key_and_repeated_in_a_refusal_is_redacted(
    key: str,
) -> None:
    with FakeOpenAIServer.like_azure([refusal()]) as server:
        agent = Agent.model_validate(
            {
                "settings": {"model": "azure:gpt-4o"},
                "providers": {"azure": {"AZURE_OPENAI_ENDPOINT": f"{server.origin}/openai/v1"}},
            }
        )
        provider, model = provider_for_agent(agent, env={"AZURE_OPENAI_API_KEY": key})
        try:
            with pytest.raises(ProviderAuthError) as caught:
                async for _ in provider.stream(ModelRequest(model, (ChatMessage("user", "x"),))):
                    pass
        finally:
            await provider.aclose()
        assert server.model_requests[0].headers["api-key"] == key
    message = str(caught.value)
    assert key not in message
    assert message.endswith(
        ": the API key was refused (401): check AZURE_OPENAI_API_KEY (Incorrect API key "
        "provided: [redacted])"
    )
