"""Secret references in agent files: ``env://NAME`` and ``keyring://service/name``.

An agent file names where a key lives, never the key itself::

    providers:
      openai: {OPENAI_API_KEY: env://OPENAI_API_KEY, OPENAI_BASE_URL: http://localhost:11434/v1}
      anthropic: {ANTHROPIC_API_KEY: keyring://metaagent/anthropic}

:func:`resolve_secret` turns a reference into its value when a provider or server starts (a plain
value such as a base URL is returned as it is); :func:`find_literal_secrets` flags keys written
into the file so the studio can offer to move them to the keyring (:func:`store_secret_in_keyring`).
The ``keyring`` package is imported only when a keyring reference is used: it picks its backend
at import time, which is slow and needs a desktop session on some systems.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from schema_types.errors import Problem, SecretError
from schema_types.json_text import format_path

if TYPE_CHECKING:
    from schema_types.agent import Agent

__all__ = [
    "ENV_SCHEME",
    "KEYRING_SCHEME",
    "LITERAL_SECRET_MESSAGE",
    "find_literal_secrets",
    "is_reference",
    "looks_secret",
    "resolve_secret",
    "store_secret_in_keyring",
]

ENV_SCHEME = "env://"
KEYRING_SCHEME = "keyring://"
LITERAL_SECRET_MESSAGE = (
    "holds a literal secret; move it to the keyring (keyring://…) or an environment variable "
    "(env://…)"
)

# Names of values that hold credentials: FOO_KEY, API_KEY, *TOKEN* (not MAX_TOKENS), *SECRET*,
# *PASSWORD*, and the HTTP headers that carry them.
_SECRET_NAME = re.compile(
    r"(^|[_\-])KEY$|APIKEY|API[_\-]KEY|TOKEN(?!S)|SECRET|PASSWORD|PASSWD|CREDENTIAL|"
    r"^AUTHORIZATION$|^COOKIE$",
)
# Values that are keys whatever they are called (OpenAI/Anthropic, GitHub, Slack, AWS).
_SECRET_VALUE = re.compile(
    r"^(sk-[A-Za-z0-9_\-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|"
    r"github_pat_\w{20,}|xox[abprs]-[\w\-]{10,}|AKIA[0-9A-Z]{16})$"
)
# A header may carry a reference after a scheme word: ``Authorization: Bearer env://TOKEN``.
_REFERENCE_INSIDE = re.compile(r"(?<!\S)(?:env|keyring)://\S+")


def is_reference(value: object) -> bool:
    """Whether ``value`` is an ``env://`` or ``keyring://`` reference (not the secret itself)."""
    return isinstance(value, str) and value.startswith((ENV_SCHEME, KEYRING_SCHEME))


def looks_secret(key_name: str, value: str) -> bool:
    """Whether a value called ``key_name`` is a literal credential that belongs elsewhere.

    Args:
        key_name: the value's name (``OPENAI_API_KEY``, a header name…).
        value: the value as written in the file.

    Returns:
        True for a non-empty value that is not a reference, when either its name says it is a
        credential or it has the shape of a well-known key (``sk-…``, ``ghp_…``).
    """
    if not value or is_reference(value) or _REFERENCE_INSIDE.search(value):
        return False
    return bool(_SECRET_NAME.search(key_name.upper()) or _SECRET_VALUE.match(value.strip()))


def resolve_secret(value: str, *, key_name: str = "") -> str:
    """The value a reference stands for; a plain value is returned as it is.

    A reference may also follow a word and a space, as HTTP headers need it:
    ``Bearer env://GITHUB_TOKEN`` resolves to ``Bearer`` and the variable's value.

    Args:
        value: ``env://NAME``, ``keyring://service/name``, such a reference after a word
            (``Bearer env://TOKEN``), or a plain value (a base URL…).
        key_name: what the value is for (``OPENAI_API_KEY``), named in error messages.

    Returns:
        The secret (or the plain value).

    Raises:
        SecretError: the variable is not set, the keyring has no such entry, or the keyring
            cannot be used; the message says which and how to fix it.
    """
    if value.startswith(ENV_SCHEME):
        return _resolve_env(value[len(ENV_SCHEME) :], key_name)
    if value.startswith(KEYRING_SCHEME):
        return _resolve_keyring(value[len(KEYRING_SCHEME) :], key_name)
    if " " in value or "\t" in value:
        return _REFERENCE_INSIDE.sub(lambda m: resolve_secret(m.group(), key_name=key_name), value)
    return value


def _for(key_name: str, name: str) -> str:
    return f", needed for {key_name}" if key_name and key_name != name else ""


def _resolve_env(name: str, key_name: str) -> str:
    if not name:
        raise SecretError(f"env:// needs a variable name, as in env://{key_name or 'API_KEY'}")
    found = os.environ.get(name)
    if found is None:
        raise SecretError(f"{name} is not set (env://{name}){_for(key_name, name)}")
    if not found:
        raise SecretError(f"{name} is set but empty (env://{name}){_for(key_name, name)}")
    return found


def _split_keyring(rest: str) -> tuple[str, str]:
    service, _, name = rest.partition("/")
    if not service or not name:
        raise SecretError(
            f"keyring://{rest} is not a keyring reference: write keyring://service/name"
        )
    return service, name


def _resolve_keyring(rest: str, key_name: str) -> str:
    service, name = _split_keyring(rest)
    reference = f"keyring://{service}/{name}"
    try:
        import keyring  # only for a keyring reference: see the top
        import keyring.errors
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise SecretError(f"cannot read {reference}: the keyring package is missing") from exc
    try:
        found = keyring.get_password(service, name)
    except keyring.errors.KeyringError as exc:
        raise SecretError(f"cannot read {reference}: the keyring failed ({exc})") from exc
    if found is None:
        raise SecretError(
            f"no keyring entry {service}/{name} ({reference}){_for(key_name, name)}: store the "
            f"key with the studio or `keyring set {service} {name}`"
        )
    return str(found)


def store_secret_in_keyring(service: str, name: str, value: str) -> str:
    """Store a secret in the system keyring.

    Args:
        service: the keyring service (``metaagent``); may not contain ``/``.
        name: the entry name within the service (``openai``, ``OPENAI_API_KEY``).
        value: the secret.

    Returns:
        The reference to write into the agent file: ``keyring://service/name``.

    Raises:
        SecretError: the names cannot form a reference, or the keyring refused to store it.
    """
    if not service or "/" in service or not name:
        raise SecretError(
            f"cannot store a secret as keyring://{service}/{name}: the service must be a "
            "non-empty name without '/', and the entry name non-empty"
        )
    import keyring  # only to store a secret: see the top
    import keyring.errors

    try:
        keyring.set_password(service, name, value)
    except keyring.errors.KeyringError as exc:
        raise SecretError(f"the keyring could not store {service}/{name}: {exc}") from exc
    return f"{KEYRING_SCHEME}{service}/{name}"


def find_literal_secrets(agent: Agent) -> list[Problem]:
    """Every credential written literally into the agent, by JSON path.

    Checks provider values and the ``env`` and ``headers`` of MCP servers.

    Args:
        agent: the agent to check.

    Returns:
        Problems such as ``providers.openai.OPENAI_API_KEY: holds a literal secret; move it to
        the keyring (keyring://…) or an environment variable (env://…)``; ``[]`` when clean.
    """
    problems: list[Problem] = []
    for provider, values in agent.providers.items():
        problems += [
            Problem(format_path(("providers", provider, key)), LITERAL_SECRET_MESSAGE)
            for key, value in values.items()
            if looks_secret(key, value)
        ]
    for server_name, server in agent.mcp_servers.items():
        for section, entries in (("env", server.env), ("headers", server.headers)):
            problems += [
                Problem(
                    format_path(("mcpServers", server_name, section, key)), LITERAL_SECRET_MESSAGE
                )
                for key, value in entries.items()
                if looks_secret(key, value)
            ]
    return problems
