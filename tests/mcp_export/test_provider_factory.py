"""Which provider an agent gets, with which credentials; and the package's import cost."""

from __future__ import annotations

import secrets
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_export.errors import ConfigurationError, CredentialsMissing, ProviderUnreachable
from mcp_export.providers.anthropic_provider import AnthropicProvider
from mcp_export.providers.base import ChatMessage, Completion, ModelRequest, Provider
from mcp_export.providers.factory import SamplingRequired, credentials_available, provider_for_agent
from mcp_export.providers.openai_provider import OpenAIProvider
from mcp_export.providers.sampling import SamplingProvider, SamplingRequest, SamplingResponse
from mcp_export.redact import REDACTED, redact
from schema_types.agent import Agent
from tests.fakes import FakeAnthropicServer, FakeOpenAIServer, text
from tests.fakes.ports import refused_origin

ROOT = Path(__file__).resolve().parents[2]


def agent(model: str | None, **providers: dict[str, str]) -> Agent:
    return Agent.model_validate({"settings": {"model": model}, "providers": providers})


def test_no_model_says_what_to_set() -> None:
    with pytest.raises(ConfigurationError) as caught:
        provider_for_agent(agent(None), env={})
    assert (
        str(caught.value) == "the agent has no model: set settings.model, e.g. openai:gpt-4.1-mini"
    )


def test_a_missing_openai_key_names_the_variable_and_the_reference() -> None:
    with pytest.raises(CredentialsMissing) as caught:
        provider_for_agent(agent("openai:gpt-4.1-mini"), env={})
    assert str(caught.value) == "OPENAI_API_KEY is not set (env://OPENAI_API_KEY)"


def test_a_reference_to_an_unset_variable_names_both() -> None:
    configured = agent("openai:gpt-4.1-mini", openai={"OPENAI_API_KEY": "env://WORK_KEY"})
    with pytest.raises(CredentialsMissing) as caught:
        provider_for_agent(configured, env={"OPENAI_API_KEY": "sk-not-this-one"})
    assert str(caught.value) == "WORK_KEY is not set (env://WORK_KEY), needed for OPENAI_API_KEY"


def test_the_process_environment_is_the_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    provider, model = provider_for_agent(agent("openai:gpt-4.1-mini"))
    assert isinstance(provider, OpenAIProvider)
    assert (provider.name, provider.base_url, model) == (
        "openai",
        "https://api.openai.com/v1",
        "gpt-4.1-mini",
    )


@pytest.mark.anyio
async def test_the_configured_key_and_base_url_reach_the_server() -> None:
    with FakeOpenAIServer([text("hi")], api_key="sk-work") as server:
        configured = agent(
            "openai:fake-model",
            openai={"OPENAI_API_KEY": "env://WORK_KEY", "OPENAI_BASE_URL": server.base_url},
        )
        provider, model = provider_for_agent(configured, env={"WORK_KEY": "sk-work"})
        try:
            events = [
                e async for e in provider.stream(ModelRequest(model, (ChatMessage("user", "x"),)))
            ]
        finally:
            await provider.aclose()
    assert isinstance(events[-1], Completion)
    assert events[-1].message.content == "hi"
    assert server.bodies[0]["model"] == "fake-model"


def test_ollama_defaults_to_the_local_server_and_needs_no_key() -> None:
    provider, model = provider_for_agent(agent("ollama:llama3.2:3b"), env={})
    assert isinstance(provider, OpenAIProvider)
    assert (provider.name, provider.base_url, model) == (
        "ollama",
        "http://localhost:11434/v1",
        "llama3.2:3b",
    )


@pytest.mark.anyio
async def test_ollama_not_running_says_so() -> None:
    with refused_origin() as origin:
        url = f"{origin}/v1"
        configured = agent("ollama:llama3.2", ollama={"OLLAMA_BASE_URL": url})
        provider, model = provider_for_agent(configured, env={})
        assert isinstance(provider, OpenAIProvider)
        provider = OpenAIProvider(None, provider.base_url, name=provider.name, max_retries=0)
        with pytest.raises(ProviderUnreachable) as caught:
            async for _ in provider.stream(ModelRequest(model, (ChatMessage("user", "x"),))):
                pass
        await provider.aclose()
    assert str(caught.value) == f"nothing answers at {url} — is Ollama running?"


def test_an_openai_compatible_server_may_be_configured_with_the_openai_names() -> None:
    configured = agent("ollama:llama3.2", ollama={"OPENAI_BASE_URL": "http://gpu-box:11434/v1"})
    provider, _ = provider_for_agent(configured, env={})
    assert isinstance(provider, OpenAIProvider)
    assert provider.base_url == "http://gpu-box:11434/v1"


def test_another_providers_key_is_never_borrowed_from_the_environment() -> None:
    with pytest.raises(CredentialsMissing) as caught:
        provider_for_agent(agent("openrouter:openai/gpt-4o"), env={"OPENAI_API_KEY": "sk-openai"})
    assert str(caught.value) == "OPENROUTER_API_KEY is not set (env://OPENROUTER_API_KEY)"


def test_vllm_needs_a_base_url() -> None:
    with pytest.raises(ConfigurationError, match=r"vllm needs a base URL: set providers\.vllm"):
        provider_for_agent(agent("vllm:qwen"), env={})
    provider, _ = provider_for_agent(agent("vllm:qwen"), env={"VLLM_BASE_URL": "http://h:8000/v1"})
    assert isinstance(provider, OpenAIProvider)
    assert provider.base_url == "http://h:8000/v1"


def test_anthropic_gets_its_own_provider_and_key() -> None:
    configured = agent(
        "anthropic:claude-sonnet-4-5", anthropic={"ANTHROPIC_API_KEY": "env://ANTHROPIC_API_KEY"}
    )
    provider, model = provider_for_agent(configured, env={"ANTHROPIC_API_KEY": "sk-ant"})
    assert isinstance(provider, AnthropicProvider)
    assert (provider.name, model) == ("anthropic", "claude-sonnet-4-5")
    with pytest.raises(CredentialsMissing) as caught:
        provider_for_agent(configured, env={})
    assert str(caught.value) == "ANTHROPIC_API_KEY is not set (env://ANTHROPIC_API_KEY)"


def test_a_plain_value_in_the_agent_is_used_as_it_is() -> None:
    configured = agent("openai:gpt-4.1", openai={"OPENAI_API_KEY": "sk-literal"})
    assert credentials_available(configured, env={})


@pytest.mark.parametrize("model", ["gpt-4.1", "acme:model", "openai:"])
def test_an_unknown_provider_lists_the_known_ones(model: str) -> None:
    with pytest.raises(ConfigurationError, match=r"provider among openai, anthropic, ollama"):
        provider_for_agent(agent(model), env={})


def test_sampling_without_a_sampler_is_sampling_required() -> None:
    with pytest.raises(SamplingRequired) as caught:
        provider_for_agent(agent("sampling"), env={})
    assert isinstance(caught.value, ConfigurationError)
    assert "set settings.model to a provider model" in str(caught.value)


def test_sampling_with_a_sampler_gives_a_sampling_provider() -> None:
    async def sampler(request: SamplingRequest, /) -> SamplingResponse:
        return SamplingResponse("ok")

    provider, model = provider_for_agent(
        agent("sampling"), env={}, sampler=sampler, sampling_tools=True
    )
    assert isinstance(provider, SamplingProvider)
    assert provider.supports_tools
    assert model == "sampling"


@pytest.mark.parametrize(
    ("model", "env", "expected"),
    [
        ("openai:gpt-4.1", {"OPENAI_API_KEY": "sk"}, True),
        ("openai:gpt-4.1", {}, False),
        ("ollama:llama3.2", {}, True),
        ("sampling", {}, False),
        (None, {}, False),
    ],
)
def test_credentials_available(model: str | None, env: dict[str, Any], expected: bool) -> None:
    assert credentials_available(agent(model), env=env) is expected


def test_importing_the_providers_does_not_import_the_sdks() -> None:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import mcp_export.providers"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()}
    heavy = sorted(
        name for name in imported if name.split(".")[0] in ("openai", "anthropic", "httpx2")
    )
    assert "mcp_export.providers" in imported
    assert heavy == []


@pytest.mark.parametrize("written", ["env://TEAM_KEY", None])
def test_every_key_the_factory_resolves_is_redacted_from_then_on(written: str | None) -> None:
    value = "team" + secrets.token_hex(10)  # no well-known shape: only remembering catches it
    settings = {"OPENAI_API_KEY": written} if written else {}
    configured = agent("openai:gpt-4.1-mini", openai=settings)
    environment = {"TEAM_KEY": value} if written else {"OPENAI_API_KEY": value}
    assert redact(f"refused {value}") == f"refused {value}"
    provider_for_agent(configured, env=environment)
    assert redact(f"refused {value}") == f"refused {REDACTED}"


# --- endpoint settings and the llamacpp / azure kinds -------------------------------------------


async def answers_of(provider: Provider, model: str, questions: list[str]) -> list[str]:
    """The answers to ``questions`` asked at once, in order."""
    answers: dict[int, str] = {}

    async def one(index: int) -> None:
        async for event in provider.stream(
            ModelRequest(model, (ChatMessage("user", questions[index]),))
        ):
            if isinstance(event, Completion):
                answers[index] = event.message.content

    try:
        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                for index in range(len(questions)):
                    group.start_soon(one, index)
    finally:
        await provider.aclose()
    return [answers[i] for i in range(len(questions))]


@pytest.mark.anyio
async def test_llamacpp_is_local_keyless_and_one_request_at_a_time_by_default() -> None:
    slow = lambda body: text(body.last_user_text, chunks=4, chunk_delay=0.05)  # noqa: E731
    with FakeOpenAIServer.like_llama_cpp_python(responder=slow) as server:
        configured = agent("llamacpp:qwen", llamacpp={"LLAMACPP_BASE_URL": server.base_url})
        provider, model = provider_for_agent(configured, env={})
        assert (provider.name, model) == ("llamacpp", "qwen")
        answers = await answers_of(provider, model, ["one two three", "four five six"])
        assert server.max_in_flight == 1
    # That server cuts off a stream in progress when another starts: both whole means in line.
    assert answers == ["one two three", "four five six"]
    default, _ = provider_for_agent(agent("llamacpp:qwen"), env={})
    assert isinstance(default, OpenAIProvider)
    assert default.base_url == "http://localhost:8080/v1"


@pytest.mark.anyio
async def test_unlimited_lifts_the_kinds_default_limit() -> None:
    with FakeOpenAIServer(hold_until_in_flight=3, hold_seconds=10) as server:
        configured = agent(
            "llamacpp:qwen",
            llamacpp={"LLAMACPP_BASE_URL": server.base_url, "maxConcurrentRequests": "unlimited"},
        )
        provider, model = provider_for_agent(configured, env={})
        started = time.monotonic()
        assert await answers_of(provider, model, ["a", "b", "c"]) == ["a", "b", "c"]
        assert server.max_in_flight == 3
    assert time.monotonic() - started < 8  # not held until the fake's 10 s


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["ollama", "anthropic"])
async def test_stream_false_reaches_either_provider(kind: str) -> None:
    fake = FakeOpenAIServer if kind == "ollama" else FakeAnthropicServer
    with fake([text("whole")]) as server:
        names = {"OLLAMA_BASE_URL": server.base_url} if kind == "ollama" else {}
        if kind == "anthropic":
            names = {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-ant-test"}
        configured = agent(f"{kind}:m", **{kind: {**names, "stream": "false"}})
        provider, model = provider_for_agent(configured, env={})
        assert await answers_of(provider, model, ["q"]) == ["whole"]
        assert server.bodies[0]["stream"] is False


@pytest.mark.parametrize(
    ("name", "value", "allowed"),
    [
        ("stream", "yes", 'expected "true" or "false", got "yes"'),
        ("maxConcurrentRequests", "0", 'expected a whole number of at least 1, or "unlimited"'),
        ("maxConcurrentRequests", "-2", 'or "unlimited", got "-2"'),
        ("maxConcurrentRequests", "lots", 'or "unlimited", got "lots"'),
    ],
)
def test_a_bad_endpoint_setting_names_the_setting_and_what_it_takes(
    name: str, value: str, allowed: str
) -> None:
    configured = agent("ollama:llama3.2", ollama={name: value})
    with pytest.raises(ConfigurationError) as caught:
        provider_for_agent(configured, env={})
    assert str(caught.value).startswith(f"providers.ollama.{name}: ")
    assert allowed in str(caught.value)


@pytest.mark.anyio
async def test_an_azure_deployment_gets_its_key_in_api_key_and_an_api_version() -> None:
    with FakeOpenAIServer.like_azure(
        [text("hi")], api_version="2024-10-21", api_key="az-k"
    ) as fake:
        deployment = f"{fake.origin}/openai/deployments/gpt-4o"
        configured = agent("azure:gpt-4o", azure={"AZURE_OPENAI_ENDPOINT": deployment})
        provider, model = provider_for_agent(configured, env={"AZURE_OPENAI_API_KEY": "az-k"})
        assert await answers_of(provider, model, ["q"]) == ["hi"]
        (request,) = fake.model_requests
    assert request.path == "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21"
    assert request.headers["api-key"] == "az-k"
    assert "authorization" not in request.headers


@pytest.mark.anyio
async def test_an_azure_resource_address_means_its_v1_api_without_a_version() -> None:
    with FakeOpenAIServer.like_azure([text("hi")], api_key="az-k") as fake:
        configured = agent("azure:my-deployment", azure={"AZURE_OPENAI_ENDPOINT": fake.origin})
        provider, model = provider_for_agent(configured, env={"AZURE_OPENAI_API_KEY": "az-k"})
        assert isinstance(provider, OpenAIProvider)
        assert provider.base_url == f"{fake.origin}/openai/v1"
        assert await answers_of(provider, model, ["q"]) == ["hi"]
        (request,) = fake.model_requests
    assert request.path == "/openai/v1/chat/completions"
    assert request.body["model"] == "my-deployment"


def test_azure_needs_its_endpoint_and_key() -> None:
    with pytest.raises(CredentialsMissing, match=r"^AZURE_OPENAI_API_KEY is not set"):
        provider_for_agent(agent("azure:gpt-4o"), env={})
    with pytest.raises(ConfigurationError, match=r"set providers\.azure\.AZURE_OPENAI_ENDPOINT"):
        provider_for_agent(agent("azure:gpt-4o"), env={"AZURE_OPENAI_API_KEY": "k"})


@pytest.mark.anyio
async def test_a_set_api_version_goes_with_every_request() -> None:
    version = "2025-04-01-preview"
    with FakeOpenAIServer.like_azure([text("hi")], api_version=version, api_key="k") as fake:
        configured = agent(
            "azure:gpt-4o",
            azure={
                "AZURE_OPENAI_ENDPOINT": f"{fake.origin}/openai/deployments/gpt-4o",
                "AZURE_OPENAI_API_VERSION": version,
            },
        )
        provider, model = provider_for_agent(configured, env={"AZURE_OPENAI_API_KEY": "k"})
        assert await answers_of(provider, model, ["q"]) == ["hi"]
        (request,) = fake.model_requests
    assert request.path.endswith(f"/gpt-4o/chat/completions?api-version={version}")
