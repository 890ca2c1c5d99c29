"""Secret references: env:// and keyring:// resolution, literal-secret detection, keyring storage.

The keyring tests install a real keyring backend (an in-memory one defined here) with
``keyring.set_keyring``, as an application with its own store would.
"""

from __future__ import annotations

from collections.abc import Iterator

import keyring
import keyring.backend
import keyring.errors
import pytest

from schema_types.agent import Agent, McpServerConfig
from schema_types.errors import SecretError
from schema_types.secrets import (
    find_literal_secrets,
    is_reference,
    looks_secret,
    resolve_secret,
    store_secret_in_keyring,
)

MOVE_IT = (
    "holds a literal secret; move it to the keyring (keyring://…) or an environment variable "
    "(env://…)"
)


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A keyring that keeps its entries in a dict."""

    priority = 1

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.entries.pop((service, username), None)


class LockedKeyring(MemoryKeyring):
    """A keyring whose store is locked, as a desktop keyring is before the person unlocks it."""

    def get_password(self, service: str, username: str) -> str | None:
        raise keyring.errors.KeyringError("the collection is locked")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise keyring.errors.PasswordSetError("the collection is locked")


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture
def locked_keyring() -> Iterator[LockedKeyring]:
    previous = keyring.get_keyring()
    backend = LockedKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


def test_references_are_recognised():
    assert is_reference("env://OPENAI_API_KEY")
    assert is_reference("keyring://metaagent/openai")
    assert not is_reference("http://localhost:11434/v1")
    assert not is_reference("sk-proj-abc")
    assert not is_reference(None)


def test_env_reference_resolves_from_the_environment(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    assert resolve_secret("env://OPENAI_API_KEY") == "sk-test"


def test_unset_env_reference_says_which_variable(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    with pytest.raises(SecretError) as caught:
        resolve_secret("env://OPENAI_API_KEY")

    assert str(caught.value) == "OPENAI_API_KEY is not set (env://OPENAI_API_KEY)"


def test_unset_env_reference_names_the_key_it_was_for(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("TEAM_OPENAI", raising=False)

    with pytest.raises(SecretError) as caught:
        resolve_secret("env://TEAM_OPENAI", key_name="OPENAI_API_KEY")

    assert (
        str(caught.value) == "TEAM_OPENAI is not set (env://TEAM_OPENAI), needed for OPENAI_API_KEY"
    )


def test_empty_env_variable_is_an_error(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "")

    with pytest.raises(SecretError) as caught:
        resolve_secret("env://OPENAI_API_KEY")

    assert str(caught.value) == "OPENAI_API_KEY is set but empty (env://OPENAI_API_KEY)"


def test_env_reference_without_a_name_is_an_error():
    with pytest.raises(SecretError) as caught:
        resolve_secret("env://", key_name="OPENAI_API_KEY")

    assert str(caught.value) == "env:// needs a variable name, as in env://OPENAI_API_KEY"


def test_plain_values_are_returned_as_they_are():
    assert resolve_secret("http://localhost:11434/v1") == "http://localhost:11434/v1"
    assert resolve_secret("") == ""


def test_keyring_reference_resolves_from_the_keyring(memory_keyring: MemoryKeyring):
    memory_keyring.entries[("metaagent", "openai")] = "sk-from-keyring"

    assert resolve_secret("keyring://metaagent/openai") == "sk-from-keyring"


def test_keyring_entry_name_may_contain_slashes(memory_keyring: MemoryKeyring):
    memory_keyring.entries[("metaagent", "team/openai")] = "sk-team"

    assert resolve_secret("keyring://metaagent/team/openai") == "sk-team"


def test_missing_keyring_entry_says_how_to_store_it(memory_keyring: MemoryKeyring):
    with pytest.raises(SecretError) as caught:
        resolve_secret("keyring://metaagent/openai", key_name="OPENAI_API_KEY")

    assert str(caught.value) == (
        "no keyring entry metaagent/openai (keyring://metaagent/openai), needed for "
        "OPENAI_API_KEY: store the key with the studio or `keyring set metaagent openai`"
    )


def test_keyring_failure_is_a_secret_error_with_the_reason(locked_keyring: LockedKeyring):
    with pytest.raises(SecretError) as caught:
        resolve_secret("keyring://metaagent/openai")

    assert str(caught.value) == (
        "cannot read keyring://metaagent/openai: the keyring failed (the collection is locked)"
    )


def test_malformed_keyring_reference_is_an_error():
    with pytest.raises(SecretError) as caught:
        resolve_secret("keyring://metaagent")

    assert str(caught.value) == (
        "keyring://metaagent is not a keyring reference: write keyring://service/name"
    )


def test_storing_a_secret_returns_its_reference(memory_keyring: MemoryKeyring):
    reference = store_secret_in_keyring("metaagent", "openai", "sk-stored")

    assert reference == "keyring://metaagent/openai"
    assert memory_keyring.entries == {("metaagent", "openai"): "sk-stored"}
    assert resolve_secret(reference) == "sk-stored"


def test_storing_in_a_locked_keyring_is_a_secret_error(locked_keyring: LockedKeyring):
    with pytest.raises(SecretError) as caught:
        store_secret_in_keyring("metaagent", "openai", "sk-stored")

    assert str(caught.value) == (
        "the keyring could not store metaagent/openai: the collection is locked"
    )


def test_a_service_name_with_a_slash_cannot_form_a_reference():
    with pytest.raises(SecretError) as caught:
        store_secret_in_keyring("meta/agent", "openai", "sk-stored")

    assert str(caught.value) == (
        "cannot store a secret as keyring://meta/agent/openai: the service must be a non-empty "
        "name without '/', and the entry name non-empty"
    )


@pytest.mark.parametrize(
    ("name", "value", "secret"),
    [
        ("OPENAI_API_KEY", "sk-abc", True),
        ("GOOGLE_API_KEY", "AIzaSyExample", True),
        ("GITHUB_TOKEN", "whatever", True),
        ("BEDROCK_SECRET_ACCESS_KEY", "abc", True),
        ("DB_PASSWORD", "hunter2", True),
        ("Authorization", "Bearer abc", True),
        ("X-Api-Key", "abc", True),
        ("ANYTHING", "sk-proj-abcdefghijklmnop1234", True),
        ("OPENAI_API_KEY", "env://OPENAI_API_KEY", False),
        ("OPENAI_API_KEY", "keyring://metaagent/openai", False),
        ("OPENAI_API_KEY", "", False),
        ("Authorization", "Bearer env://GITHUB_TOKEN", False),
        ("OPENAI_BASE_URL", "http://localhost:11434/v1", False),
        ("MAX_TOKENS", "1000", False),
        ("OLLAMA_HOST", "localhost", False),
    ],
)
def test_what_looks_like_a_literal_secret(name: str, value: str, secret: bool):
    assert looks_secret(name, value) is secret


def test_literal_secrets_are_found_in_providers_server_env_and_headers():
    agent = Agent(
        providers={
            "openai": {
                "OPENAI_API_KEY": "sk-abc",
                "OPENAI_BASE_URL": "https://api.openai.com/v1",
            },
            "anthropic": {"ANTHROPIC_API_KEY": "env://ANTHROPIC_API_KEY"},
        },
        mcp_servers={
            "github": McpServerConfig(
                command="github-mcp", env={"GITHUB_TOKEN": "ghp_x", "LOG_LEVEL": "debug"}
            ),
            "search": McpServerConfig(
                type="streamable-http",
                url="https://search.example.com/mcp",
                headers={"Authorization": "Bearer abc", "Accept": "application/json"},
            ),
        },
    )

    assert [str(problem) for problem in find_literal_secrets(agent)] == [
        f"providers.openai.OPENAI_API_KEY: {MOVE_IT}",
        f"mcpServers.github.env.GITHUB_TOKEN: {MOVE_IT}",
        f"mcpServers.search.headers.Authorization: {MOVE_IT}",
    ]


def test_an_agent_with_only_references_has_no_literal_secrets():
    agent = Agent(providers={"openai": {"OPENAI_API_KEY": "env://OPENAI_API_KEY"}})

    assert find_literal_secrets(agent) == []


def test_a_reference_after_a_word_resolves_in_place(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")

    assert resolve_secret("Bearer env://GITHUB_TOKEN") == "Bearer ghp_secret"
    assert resolve_secret("see http://example.com/env://x") == "see http://example.com/env://x"


def test_an_unset_reference_after_a_word_is_an_error(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)

    with pytest.raises(SecretError) as caught:
        resolve_secret("Bearer env://GITHUB_TOKEN", key_name="Authorization")

    assert str(caught.value) == (
        "GITHUB_TOKEN is not set (env://GITHUB_TOKEN), needed for Authorization"
    )
