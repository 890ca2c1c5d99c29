"""``metaagent draft`` against a real model: Gemma 3 270M on each server (llama-cpp-python and
llama-server, or your own with ``METAAGENT_REAL_MODEL_URL``), on CPU.

The authoring model is the agent's own (``llamacpp:gemma-3-270m``): the draft request carries
the draft schema as ``response_format: {type: json_object, schema}``, which the server turns into
a grammar, so even this tiny base model writes an object of the draft's shape. Whether what it
writes passes validation is another matter: a 270M base model may well fail, and then the refusal
must be clear (exit 1, every message quoted, the file untouched), never a traceback or half a
tool. The figures (seconds, exit code, whether it validated, model requests) are printed at the
end of the run.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import yaml

from tests.fakes.cli import metaagent
from tests.real_model.conftest import Figures, ModelServer

DRAFT_SECONDS = 800
SENTENCE = "Tell the capital city of a country."


def write_agent(path: Path, base_url: str, model: str) -> Path:
    agent = {
        "metadata": {"name": "Geo Desk", "description": "Answers questions about places."},
        "settings": {
            "model": f"llamacpp:{model}",
            "temperature": 0.2,
            "seed": 1,
            "maxOutputTokens": 700,
            "timeoutSeconds": DRAFT_SECONDS // 2,
        },
        "providers": {"llamacpp": {"LLAMACPP_BASE_URL": base_url}},
    }
    path.write_text(yaml.safe_dump(agent, sort_keys=False), encoding="utf-8")
    return path


def test_a_tool_drafted_on_the_real_model_validates_or_is_refused_clearly(
    model_server: ModelServer, figures: Figures, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "geo.agent.yaml", model_server.base_url, model_server.model)
    before = agent.read_bytes()
    mark = model_server.mark()
    started = time.perf_counter()
    done = metaagent(
        "draft", str(agent), SENTENCE, "--write", env=dict(os.environ), timeout=DRAFT_SECONDS
    )
    seconds = round(time.perf_counter() - started, 1)
    log = model_server.since(mark)
    validated = done.returncode == 0
    figures.add(
        f"[{model_server.name}] draft a tool from a sentence",
        seconds=seconds,
        exit=done.returncode,
        validated=validated,
        repaired="after one repair turn" in done.stderr,
        **log,
    )
    if not validated:
        figures.add(
            f"[{model_server.name}] draft a tool from a sentence",
            refusal=done.stderr.strip()[-400:],
        )
    assert "Traceback" not in done.stderr
    assert done.returncode in (0, 1), done.stderr
    if validated:
        tools = yaml.safe_load(agent.read_text(encoding="utf-8"))["metadata"]["tools"]
        assert len(tools) == 1 and 3 <= len(tools[0]["tests"]) <= 6
        assert metaagent("validate", "--strict", str(agent)).returncode == 0
    else:
        assert done.stdout == ""
        assert agent.read_bytes() == before
        assert (
            f"metaagent draft: the authoring model (llamacpp:{model_server.model})" in done.stderr
        )
        assert (
            "does not pass validation, even after one repair turn; nothing was added" in done.stderr
            or "gave no draft" in done.stderr
        )
