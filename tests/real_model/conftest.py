"""``make test-real-model`` only: these tests run when ``METAAGENT_REAL_MODEL=1`` is set.

They run against two real servers, each serving Gemma 3 270M on loopback: llama-cpp-python
(``tests.real_model._llamacpp``, ``--chat_format chatml-function-calling``) and llama.cpp's own
``llama-server --jinja`` (``tests.real_model._llama_server``), both built or reused before pytest
starts (a build takes longer than any test timeout). With ``METAAGENT_REAL_MODEL_URL`` set (an
OpenAI-compatible base URL, e.g. ``http://127.0.0.1:8080/v1`` of your own ``llama-server``) the
same tests run against that server alone, with ``METAAGENT_REAL_MODEL_NAME`` as the model (else
the first one its model list names). They take minutes on a CPU, so ``make test`` never collects
them.

``model_server`` is one server per parameter for the whole run, behind a ``RecordingProxy`` (what
the runtime sent, as it went over the wire); ``figures`` collects what each run showed and
proved, printed at the end: per server and way in, the tool's arguments, whether its result was
sent and rendered into the model's prompt, and what the answer is.
"""

from __future__ import annotations

import json
import os
import re
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.app.conftest import _collect_on_the_gui_thread, qasync_loop
from tests.real_model._llama_server import LlamaCppServer, ensure_llama_server
from tests.real_model._llamacpp import LLAMA_CPP_VERSION, LlamaServer, ensure_model, prepare
from tests.real_model._proxy import RecordingProxy

__all__ = ["Figures", "ModelServer", "_collect_on_the_gui_thread", "qasync_loop"]

ENABLED = os.environ.get("METAAGENT_REAL_MODEL") == "1"
if not ENABLED:
    collect_ignore_glob = ["test_*.py"]

_PROMPT_EVAL = re.compile(r"prompt eval time =\s+([\d.]+) ms /\s+(\d+) tokens")
_EVAL = re.compile(r"(?<!prompt )\beval time =\s+([\d.]+) ms /\s+(\d+) (?:runs|tokens)")
"""Both servers' timing lines: llama-cpp-python's ``llama_perf_context_print`` (``N runs``) and
llama-server's ``print_timing`` (``N tokens``)."""

YOURS = os.environ.get("METAAGENT_REAL_MODEL_URL", "").rstrip("/")
SERVERS = ["yours"] if YOURS else ["llama-cpp-python", "llama-server"]


@dataclass
class ModelServer:
    """A running model server as the tests see it.

    Attributes:
        name: ``llama-cpp-python``, ``llama-server`` or ``yours``.
        base_url: the proxy's base URL (what agents are given).
        upstream: the server's own base URL.
        model: the model name to ask for.
        proxy: what was sent through ``base_url``.
        log: the server's log (None for your own server).
        about: what the report says of the server (version, command line, model).
    """

    name: str
    base_url: str
    upstream: str
    model: str
    proxy: RecordingProxy
    log: Path | None = None
    about: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())

    def mark(self) -> tuple[int, int]:
        """Where the recording and the server's log end now (requests, bytes)."""
        return self.proxy.mark(), self.log.stat().st_size if self.log else 0

    def since(self, mark: tuple[int, int]) -> dict[str, Any]:
        """Model requests sent (the proxy) and tokens generated and per second (the server's
        timing lines in its log, when there is a log) since ``mark``."""
        figures: dict[str, Any] = {"model requests": len(self.proxy.since(mark[0]))}
        if self.log is None:
            return figures
        with self.log.open("rb") as log:
            log.seek(mark[1])
            text = log.read().decode("utf-8", "replace")
        for what, pattern in (("generation", _EVAL), ("prompt", _PROMPT_EVAL)):
            timings = [(float(ms), int(n)) for ms, n in pattern.findall(text)]
            ms = sum(ms for ms, _ in timings)
            tokens = sum(n for _, n in timings)
            if what == "generation":
                figures["tokens generated"] = tokens
            figures[f"tokens/s ({what})"] = round(tokens / ms * 1000, 1) if ms else None
        return figures

    @property
    def origin(self) -> str:
        return self.upstream.removesuffix("/v1")

    def post(self, path: str, body: dict[str, Any], *, upstream: bool = True) -> Any:
        """``POST`` JSON to the server (bypassing the proxy: a check, not the runtime)."""
        request = urllib.request.Request(
            (self.origin if upstream else self.proxy.origin) + path,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "Authorization": "Bearer no-key"},
        )
        with urllib.request.urlopen(request, timeout=600) as answer:
            return json.load(answer)


@dataclass
class Figures:
    rows: dict[str, dict[str, Any]] = field(default_factory=lambda: dict[str, dict[str, Any]]())
    servers: dict[str, dict[str, Any]] = field(default_factory=lambda: dict[str, dict[str, Any]]())

    def add(self, part: str, **values: Any) -> None:
        self.rows.setdefault(part, {}).update(values)


FIGURES = Figures()


@pytest.fixture(scope="session", params=SERVERS)
def model_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ModelServer]:
    name: str = request.param
    log = tmp_path_factory.mktemp(name) / "server.log"
    if name == "yours":
        with RecordingProxy(YOURS.removesuffix("/v1")) as proxy:
            model = os.environ.get("METAAGENT_REAL_MODEL_NAME") or _first_model(YOURS)
            yours: dict[str, Any] = {"base URL": YOURS, "model": model}
            FIGURES.servers[name] = yours
            yield ModelServer(name, proxy.base_url, YOURS, model, proxy, None, yours)
        return
    server: LlamaServer | LlamaCppServer
    if name == "llama-cpp-python":
        python, gguf = prepare()
        server = LlamaServer(python, gguf, log=log)
        version = f"llama-cpp-python {LLAMA_CPP_VERSION}"
    else:
        gguf = ensure_model()
        server = LlamaCppServer(ensure_llama_server(), gguf, log=log)
        version = server.version().splitlines()[0]
    with server, RecordingProxy(server.origin) as proxy:
        about: dict[str, Any] = {
            "server": version,
            "command": server.command_line(gguf.name),
            "ready in s": round(server.started_in or 0.0, 1),
            "log": str(log),
        }
        FIGURES.servers[name] = about
        yield ModelServer(name, proxy.base_url, server.base_url, "gemma-3-270m", proxy, log, about)


def _first_model(base_url: str) -> str:
    with urllib.request.urlopen(f"{base_url}/models", timeout=10) as answer:
        listed = json.load(answer)
    return str(listed["data"][0]["id"])


@pytest.fixture(scope="session")
def figures() -> Figures:
    return FIGURES


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not FIGURES.rows:
        return
    write = terminalreporter.write_line
    terminalreporter.section("real model: Gemma 3 270M Q4_K_M on CPU, each run once")
    for name, about in FIGURES.servers.items():
        write(f"[{name}] " + "; ".join(f"{k}: {v}" for k, v in about.items()))
    for part, values in FIGURES.rows.items():
        write(f"{part}:")
        for key, value in values.items():
            write(f"    {key}: {value}")
