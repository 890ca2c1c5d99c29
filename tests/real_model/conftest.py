"""``make test-real-model`` only: these tests run when ``METAAGENT_REAL_MODEL=1`` is set.

They need the llama-cpp-python server and the Gemma 3 270M model of ``tests.real_model._llamacpp``
(built or reused by ``python -m tests.real_model._llamacpp`` before pytest starts: a build takes
longer than any test timeout) and take minutes on a CPU, so ``make test`` never collects them.

``llama`` is one server for the whole run (on a free loopback port, its log in the run's
temporary directory); ``figures`` collects what each part measured, printed at the end of the run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.app.conftest import _collect_on_the_gui_thread, qasync_loop
from tests.real_model._llamacpp import LlamaServer, prepare

__all__ = ["Figures", "LlamaRun", "_collect_on_the_gui_thread", "qasync_loop"]

ENABLED = os.environ.get("METAAGENT_REAL_MODEL") == "1"
if not ENABLED:
    collect_ignore_glob = ["test_*.py"]

_EVAL = re.compile(r"^llama_perf_context_print:\s+eval time =\s+([\d.]+) ms /\s+(\d+) runs", re.M)
_PROMPT = re.compile(
    r"^llama_perf_context_print: prompt eval time =\s+([\d.]+) ms /\s+(\d+) tokens", re.M
)
_POST = re.compile(r'"POST /v1/chat/completions HTTP/1.1" (\d+)')


@dataclass
class LlamaRun:
    """The running server, and what its log says about a stretch of the run."""

    server: LlamaServer

    def mark(self) -> int:
        """Where the log ends now (bytes)."""
        return self.server.log_path.stat().st_size

    def since(self, mark: int) -> dict[str, Any]:
        """Model requests and generation speed in the log since ``mark``."""
        with self.server.log_path.open("rb") as log:
            log.seek(mark)
            text = log.read().decode("utf-8", "replace")
        evals = [(float(ms), int(n)) for ms, n in _EVAL.findall(text)]
        prompts = [(float(ms), int(n)) for ms, n in _PROMPT.findall(text)]
        eval_ms = sum(ms for ms, _ in evals)
        prompt_ms = sum(ms for ms, _ in prompts)
        statuses = _POST.findall(text)
        return {
            "model requests": len(statuses),
            "statuses": ",".join(statuses),
            "tokens generated": sum(n for _, n in evals),
            "tokens/s (generation)": round(sum(n for _, n in evals) / eval_ms * 1000, 1)
            if eval_ms
            else None,
            "tokens/s (prompt)": round(sum(n for _, n in prompts) / prompt_ms * 1000, 1)
            if prompt_ms
            else None,
        }


@dataclass
class Figures:
    rows: dict[str, dict[str, Any]] = field(default_factory=lambda: dict[str, dict[str, Any]]())
    server: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())

    def add(self, part: str, **values: Any) -> None:
        self.rows.setdefault(part, {}).update(values)


FIGURES = Figures()


@pytest.fixture(scope="session")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaRun]:
    python, model = prepare()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with LlamaServer(python, model, log=log) as server:
        FIGURES.server = {
            "command": server.command_line(model.name),
            "ready in s": round(server.started_in or 0.0, 1),
            "log": str(log),
        }
        yield LlamaRun(server)


@pytest.fixture(scope="session")
def figures() -> Figures:
    return FIGURES


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not FIGURES.rows:
        return
    write = terminalreporter.write_line
    terminalreporter.section("real model: llama-cpp-python 0.3.36, Gemma 3 270M Q4_K_M, CPU")
    for key, value in FIGURES.server.items():
        write(f"{key}: {value}")
    for part, values in FIGURES.rows.items():
        shown = "; ".join(f"{k} {v}" for k, v in values.items())
        write(f"{part}: {shown}")
