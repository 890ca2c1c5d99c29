"""What kind of server an OpenAI-compatible endpoint is, and how many requests it serves at once.

Learnt from what the server says about itself, once per endpoint (base URL) in a process:

- ``GET {base}/models``: each entry's ``owned_by`` names the server (``SERVER_KINDS``);
- for llama.cpp's ``llama-server``, ``GET /props`` (at the server's root, beside ``/v1``):
  ``total_slots``, the requests it serves in parallel (``--parallel``; 4 by default), and its
  ``build_info``;
- llama-cpp-python serves one request at a time: a request that arrives while another is
  answered ends that answer (its stream stops with ``[DONE]`` and no ``finish_reason``).

The names are the ones every message uses (``127.0.0.1:8080 (llama-cpp-python)``), whether the
kind was learnt before the first request or after an error status. A probe that fails (nothing
answers yet, no model list) leaves the server unknown and is asked again after
``_RETRY_UNKNOWN`` seconds; what was learnt holds for the process (``forget_server_kinds``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import urllib.parse
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp

from mcp_export.providers._endpoint_lock import LOCK_WAIT, EndpointBusy, one_process_at_a_time

__all__ = [
    "DROPS_TOOL_RESULTS",
    "LLAMA_CPP_PYTHON",
    "LLAMA_SERVER",
    "SERVER_KINDS",
    "ServerIdentity",
    "escaped_arguments",
    "forget_server_kinds",
    "host_port",
    "identify",
    "kind_of",
    "known_identity",
    "remember_kind",
    "server_kind",
    "serves_one_at_a_time",
    "tool_results_notice",
]

LLAMA_CPP_PYTHON = "llama-cpp-python"
LLAMA_SERVER = "llama.cpp"
"""How messages name llama.cpp's own server, ``llama-server`` (its model list says
``llamacpp``)."""

SERVER_KINDS = {
    "me": LLAMA_CPP_PYTHON,
    "llamacpp": LLAMA_SERVER,
    "vllm": "vLLM",
    "library": "Ollama",
    "organization_owner": "LM Studio",
}
"""What a server's ``/models`` entries say in ``owned_by`` about the server itself, and its name.

Read from their sources: llama-cpp-python's ``llama_cpp/server/app.py`` (``get_models``),
llama.cpp's ``tools/server`` (``{"owned_by", "llamacpp"}``), vLLM's ``ModelCard`` in
``vllm/entrypoints/openai/protocol.py``, Ollama's ``openai/openai.go`` (the namespace of the
model's name, ``library`` for the models of its own library). LM Studio is not open source: its
answers, as published, say ``organization_owner``. Other values (OpenAI's ``openai``, ``system``,
a person's name) say nothing about the server.
"""

_PROBE_SECONDS = 2.0
_RETRY_UNKNOWN = 30.0
_MAX_PROBE_BODY = 4 * 1024 * 1024


@dataclass(frozen=True)
class ServerIdentity:
    """What an endpoint said about itself.

    Attributes:
        kind: the server's name (``llama-cpp-python``, ``llama-server``, ``vLLM``…); None when
            it did not say.
        slots: how many requests it serves at once, when it says (llama-server's
            ``total_slots``), or 1 for a server that serves one at a time; None when unknown.
        build: its build as it reports it (llama-server's ``build_info``), else None.
    """

    kind: str | None = None
    slots: int | None = None
    build: str | None = None


_IDENTITIES: dict[str, tuple[ServerIdentity, float]] = {}
_PROBES: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[str, asyncio.Task[ServerIdentity]]
] = weakref.WeakKeyDictionary()


def _key(base_url: str) -> str:
    return base_url.rstrip("/")


def forget_server_kinds() -> None:
    """Forget what every endpoint said about itself (a server on the same address may be
    another one now)."""
    _IDENTITIES.clear()
    _NOTICED.clear()


def server_kind(base_url: str) -> str | None:
    """The kind of server at ``base_url`` as it showed itself in this process; None when
    unknown or not asked."""
    found = _IDENTITIES.get(_key(base_url))
    return found[0].kind if found else None


def known_identity(base_url: str) -> ServerIdentity | None:
    """What ``base_url`` said about itself in this process, if it was asked."""
    found = _IDENTITIES.get(_key(base_url))
    return found[0] if found else None


def serves_one_at_a_time(base_url: str) -> bool:
    """Whether the server at ``base_url`` is known to serve one request at a time (another
    request cuts off the answer in progress)."""
    return server_kind(base_url) == LLAMA_CPP_PYTHON


def remember_kind(base_url: str, kind: str | None) -> None:
    """Remember the kind a model list showed (what else the server said stays when the kind is
    the same)."""
    found = _IDENTITIES.get(_key(base_url))
    if found is not None and found[0].kind == kind and kind is not None:
        return
    _IDENTITIES[_key(base_url)] = (_identity(kind, None, None), time.monotonic())


DROPS_TOOL_RESULTS = (
    "llama-cpp-python's chatml-function-calling format leaves tool results out of the model's "
    "prompt (its template has no place for a tool message) and HTML-escapes the arguments of "
    "the calls it returns (&#34;): the model never sees what a tool returned. For tools, run "
    "llama.cpp's llama-server instead (llama-server -m MODEL.gguf --jinja)"
)
"""The notice for a request that sends a tool's result to llama-cpp-python."""

_NOTICED: set[str] = set()


def tool_results_notice(base_url: str, messages: Sequence[Mapping[str, Any]]) -> str | None:
    """``DROPS_TOOL_RESULTS`` for the first request to llama-cpp-python (as identified) in this
    process that carries a tool's result, else None. What can be known from outside: the server
    says it is llama-cpp-python, whose only format for tool calls (``chatml-function-calling``)
    renders no tool message; ``escaped_arguments`` tells its escaped arguments apart."""
    key = _key(base_url)
    if key in _NOTICED or server_kind(base_url) != LLAMA_CPP_PYTHON:
        return None
    if not any(m.get("role") == "tool" for m in messages):
        return None
    _NOTICED.add(key)
    return DROPS_TOOL_RESULTS


def escaped_arguments(arguments: str) -> bool:
    """Whether a call's arguments come HTML-escaped (``{&#34;zone&#34;: …}``), as
    llama-cpp-python's ``chatml-function-calling`` returns them: not JSON, and a model that
    reads them back copies the escapes."""
    return "&#34;" in arguments or "&quot;" in arguments


def kind_of(entries: list[dict[str, Any]]) -> str | None:
    """The server's name from the entries of its model list, or None."""
    for entry in entries:
        owner = entry.get("owned_by")
        if isinstance(owner, str) and owner in SERVER_KINDS:
            return SERVER_KINDS[owner]
    return None


def _identity(kind: str | None, props: dict[str, Any] | None, build: str | None) -> ServerIdentity:
    slots: int | None = None
    if kind == LLAMA_CPP_PYTHON:
        slots = 1
    elif props is not None:
        total = props.get("total_slots")
        if isinstance(total, int) and not isinstance(total, bool) and total > 0:
            slots = total
    return ServerIdentity(kind, slots, build)


async def identify(base_url: str, api_key: str | None) -> ServerIdentity:
    """What the server at ``base_url`` says it is, asked once per process (concurrent callers
    share one probe; a server that said nothing is asked again after a while). The questions
    take a few seconds at most, once no other process holds the endpoint's lock; any failure
    leaves the server unknown."""
    key = _key(base_url)
    found = _IDENTITIES.get(key)
    if found is not None and (
        found[0] != ServerIdentity() or time.monotonic() - found[1] < _RETRY_UNKNOWN
    ):
        return found[0]
    loop = asyncio.get_running_loop()
    probes = _PROBES.setdefault(loop, {})
    task = probes.get(key)
    if task is None:
        task = probes[key] = loop.create_task(_probe(key, api_key))
        task.add_done_callback(lambda _: probes.pop(key, None))
    return await asyncio.shield(task)


async def _probe(base_url: str, api_key: str | None) -> ServerIdentity:
    """Ask, holding the endpoint's lock across processes: to a server that serves one request
    at a time the questions are requests too, and would cut off another process's answer."""
    named = host_port(base_url)
    try:
        async with one_process_at_a_time(base_url, named, wait=LOCK_WAIT):
            return await _asked(base_url, api_key)
    except EndpointBusy:
        return ServerIdentity()


async def _asked(base_url: str, api_key: str | None) -> ServerIdentity:
    identity = ServerIdentity()
    headers = {"Authorization": f"Bearer {api_key or 'no-key'}", "Accept": "application/json"}
    timeout = aiohttp.ClientTimeout(total=_PROBE_SECONDS)
    with contextlib.suppress(Exception):  # what it says names it; nothing else depends on it
        async with aiohttp.ClientSession(timeout=timeout, headers=headers) as session:
            models = await _get_json(session, _with_path(base_url, "/models"))
            entries = models.get("data") if isinstance(models, dict) else None
            kind = kind_of([e for e in entries if isinstance(e, dict)]) if entries else None
            props: dict[str, Any] | None = None
            build: str | None = None
            if kind == LLAMA_SERVER:
                with contextlib.suppress(Exception):
                    said = await _get_json(session, _with_path(_server_root(base_url), "/props"))
                    if isinstance(said, dict):
                        props = said
                        info = said.get("build_info")
                        build = info if isinstance(info, str) else None
            identity = _identity(kind, props, build)
    _IDENTITIES[base_url] = (identity, time.monotonic())
    return identity


async def _get_json(session: aiohttp.ClientSession, url: str) -> object:
    async with session.get(url, allow_redirects=False) as response:
        if response.status != 200:
            raise ValueError(f"status {response.status}")
        raw = await response.content.read(_MAX_PROBE_BODY + 1)
        if len(raw) > _MAX_PROBE_BODY:
            raise ValueError("too large")
        value: object = json.loads(raw.decode("utf-8"))
        return value


def host_port(url: str) -> str:
    """``127.0.0.1:8080`` for ``http://127.0.0.1:8080/v1``: where an endpoint is, in short (any
    credentials in the URL left out)."""
    return urllib.parse.urlsplit(url).netloc.rpartition("@")[2] or url


def _with_path(base_url: str, path: str) -> str:
    base, _, query = base_url.partition("?")
    return base.rstrip("/") + path + ("?" + query if query else "")


def _server_root(base_url: str) -> str:
    """``http://host:port`` for ``http://host:port/v1``: llama-server's own routes (``/props``,
    ``/slots``, ``/apply-template``) are beside its ``/v1`` API."""
    parts = urllib.parse.urlsplit(base_url)
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
    return urllib.parse.urlunsplit(parts._replace(path=path, query=""))
