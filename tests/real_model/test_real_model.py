"""A tool-using agent end to end against real models: Gemma 3 270M on llama-cpp-python and on
llama.cpp's llama-server (or your own server: ``METAAGENT_REAL_MODEL_URL``), on CPU.

The agent's one tool asks for the time in a zone; the model reaches it through the agent's own
``mcp-server-time``. The model is tiny and calls a tool only when forced, so ``toolChoice`` names
``time__get_current_time`` (the session forces the first request only). Each way in (``metaagent
call`` in a subprocess, a served call through the official MCP client over stdio, the studio's
test run offscreen) runs once per server, and what it proves is checked, not retried into a
pass (``_proof``): the tool got the zone asked for, its result was sent and rendered into the
model's prompt, and the run ended with an answer (not empty, not the call's text, not an echo).
Each run's findings are printed at the end, per server.

What a 270M base model cannot show is that a model *uses* a result well: run the suite against a
capable instruct model on your own server for that.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
import yaml
from mcp import Client
from PySide6.QtWidgets import QApplication, QLineEdit
from pytestqt.qtbot import QtBot

from app.chat import ChatTab
from app.test_run import TestToolDialog
from app.tool_editor.editor import ToolEditor
from mcp_export.history.store import HistoryStore
from mcp_export.session.events import FinalAnswer, SessionFailed
from tests.app._windows import studio_window
from tests.fakes.mcp_clients import MCP_SERVER_TIME, serve_params
from tests.real_model._proof import TOOL, Proof, prove
from tests.real_model.conftest import Figures, ModelServer

REPO = Path(__file__).resolve().parents[2]
ZONES = {
    "metaagent call": "Asia/Tokyo",
    "served call": "Europe/Paris",
    "studio": "America/New_York",
}
"""One zone per way in (each runs once per server), so a run cannot pass on another's result."""
CALL_SECONDS = 600
OFFERS_NO_TOOLS = (
    "Gemma 3 270M has no chat template with tools: llama-server falls back to plain chatml, "
    "offers the model no tools, and a forced choice comes back as text (README, Model servers)"
)
DROPS_TOOL_RESULTS = (
    "llama-cpp-python's chatml-function-calling has no place for a tool message in its prompt: "
    "the model never sees the tool's result (README, Model servers)"
)


def write_agent(path: Path, server: ModelServer) -> Path:
    agent = {
        "metadata": {
            "name": "Time Desk",
            "version": "1.0.0",
            "description": "Tells the time in a time zone.",
            "tools": [
                {
                    "name": "time_in",
                    "description": "The current time in a time zone.",
                    "parameters": {
                        "type": "object",
                        "properties": {"zone": {"type": "string", "description": "IANA zone"}},
                        "required": ["zone"],
                    },
                    "prompt": (
                        'What time is it in {zone}? Call get_current_time with timezone "{zone}".'
                    ),
                }
            ],
        },
        "settings": {
            "model": f"llamacpp:{server.model}",
            "toolChoice": TOOL,
            "temperature": 0.0,
            "seed": 1,
            "maxOutputTokens": 64,
            "maxChatTurns": 2,
            "timeoutSeconds": CALL_SECONDS,
            "toolPermission": "tool",
        },
        "systemPrompt": "You answer questions about time. Use the tools, then answer briefly.",
        "providers": {"llamacpp": {"LLAMACPP_BASE_URL": server.base_url}},
        "mcpServers": {
            "time": {
                "type": "stdio",
                "command": MCP_SERVER_TIME,
                "args": ["--local-timezone", "UTC"],
                "serverToolDefaults": {"permissionRequired": False},
            }
        },
    }
    path.write_text(yaml.safe_dump(agent, sort_keys=False), encoding="utf-8")
    return path


def last_run() -> str:
    """The last run in this test's history: its status and token counts."""
    with HistoryStore() as store:
        runs = store.runs(limit=1)
    if not runs:
        return "no run recorded"
    run = runs[0]
    return f"{run.status}, tokens in/out {run.tokens_in}/{run.tokens_out}"


def judge(
    server: ModelServer, figures: Figures, way: str, proof: Proof, ok: bool, outcome: str
) -> None:
    """Report the run, then fail on what it did not prove (never retried into a pass)."""
    figures.add(f"[{server.name}] {way}", **proof.report(), outcome=outcome[:200])
    if proof.arguments is None and server.name == "llama-server":
        pytest.xfail(OFFERS_NO_TOOLS)
    assert proof.arguments == {"timezone": ZONES[way]}, proof.report()
    assert proof.result_has_zone, proof.report()
    if proof.rendered is False and server.name == "llama-cpp-python":
        pytest.xfail(DROPS_TOOL_RESULTS)
    assert not proof.problems, proof.report()
    assert ok, outcome


def test_metaagent_call(model_server: ModelServer, figures: Figures, tmp_path: Path) -> None:
    way = "metaagent call"
    agent = write_agent(tmp_path / "time.agent.yaml", model_server)
    mark = model_server.proxy.mark()
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcp_export",
            "call",
            str(agent),
            "time_in",
            "--arg",
            f"zone={ZONES[way]}",
        ],
        capture_output=True,
        text=True,
        timeout=CALL_SECONDS + 60,
        cwd=REPO,
    )
    seconds = time.monotonic() - started
    answer = done.stdout.strip() if done.returncode == 0 else ""
    proof = prove(model_server, model_server.proxy.since(mark), ZONES[way], answer)
    outcome = f"exit {done.returncode} in {seconds:.1f} s; {last_run()}; " + (
        ""
        if done.returncode == 0
        else done.stderr.strip().splitlines()[-1]
        if done.stderr.strip()
        else ""
    )
    judge(model_server, figures, way, proof, done.returncode == 0, outcome)


@pytest.mark.anyio
async def test_a_served_call_over_stdio(
    model_server: ModelServer, figures: Figures, tmp_path: Path
) -> None:
    way = "served call"
    agent = write_agent(tmp_path / "time.agent.yaml", model_server)
    mark = model_server.proxy.mark()
    with anyio.fail_after(CALL_SECONDS + 60):
        async with Client(serve_params(str(agent), env=dict(os.environ)), mode="auto") as client:
            started = time.monotonic()
            result = await client.call_tool("time_in", {"zone": ZONES[way]})
            seconds = time.monotonic() - started
    text = "".join(b.text for b in result.content if isinstance(b, types.TextContent))
    structured: dict[str, Any] = result.structured_content or {}
    answer = "" if result.is_error else str(structured.get("answer", text))
    proof = prove(model_server, model_server.proxy.since(mark), ZONES[way], answer)
    outcome = f"isError {result.is_error} in {seconds:.1f} s; {last_run()}" + (
        f"; {text[:160]}" if result.is_error else ""
    )
    judge(model_server, figures, way, proof, not result.is_error, outcome)


def test_the_studio_test_run(
    qtbot: QtBot,
    qasync_loop: asyncio.AbstractEventLoop,
    model_server: ModelServer,
    figures: Figures,
    tmp_path: Path,
) -> None:
    way = "studio"
    path = write_agent(tmp_path / "time.agent.yaml", model_server)
    window = studio_window(qtbot)
    assert window.open_file(path) is not None
    document = window.current_document()
    assert document is not None
    editor = window.open_tool_tab(document, document.agent.tools[0])
    assert isinstance(editor, ToolEditor)
    mark = model_server.proxy.mark()
    try:
        outcome, seconds = _studio_run(qtbot, window, ZONES[way])
    finally:
        window.close()
    ok = isinstance(outcome, FinalAnswer)
    answer = outcome.text if isinstance(outcome, FinalAnswer) else ""
    proof = prove(model_server, model_server.proxy.since(mark), ZONES[way], answer)
    said = "" if ok else f"; {getattr(outcome, 'message', outcome)!s:.160}"
    judge(
        model_server, figures, way, proof, ok, f"{type(outcome).__name__} in {seconds:.1f} s{said}"
    )


def _studio_run(qtbot: QtBot, window: Any, zone: str) -> tuple[Any, float]:
    """One test run of the open tool through the Test dialog, to its outcome; the tab is closed."""
    window.test_action.trigger()
    dialog = QApplication.activeModalWidget() or next(
        w for w in QApplication.topLevelWidgets() if isinstance(w, TestToolDialog) and w.isVisible()
    )
    assert isinstance(dialog, TestToolDialog)
    field = dialog.form.field("zone")
    assert isinstance(field, QLineEdit), field
    field.clear()
    qtbot.keyClicks(field, zone)
    before = set(window.run_tabs())
    started = time.monotonic()
    dialog.run_button.click()
    (tab,) = [t for t in window.run_tabs() if t not in before]
    assert isinstance(tab, ChatTab)
    try:
        qtbot.waitUntil(
            lambda: isinstance(tab.outcome, FinalAnswer | SessionFailed),
            timeout=(CALL_SECONDS + 60) * 1000,
        )
        return tab.outcome, time.monotonic() - started
    finally:
        future = asyncio.ensure_future(tab.aclose())
        qtbot.waitUntil(future.done, timeout=60_000)


def test_three_calls_at_once(model_server: ModelServer, figures: Figures, tmp_path: Path) -> None:
    """Three ``metaagent call`` processes at once: none is cut off by another's request (on
    llama-cpp-python they wait in line across processes; llama-server serves them side by
    side in its slots), and each tool gets its own zone."""
    agent = write_agent(tmp_path / "time.agent.yaml", model_server)
    zones = ("Asia/Kolkata", "Africa/Cairo", "Australia/Sydney")
    mark = model_server.proxy.mark()
    started = time.monotonic()
    children = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mcp_export",
                "call",
                str(agent),
                "time_in",
                "--arg",
                f"zone={z}",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        for z in zones
    ]
    outputs = [child.communicate(timeout=3 * CALL_SECONDS) for child in children]
    seconds = time.monotonic() - started
    sent = model_server.proxy.since(mark)
    errors = [err.strip().splitlines()[-1] if err.strip() else "" for _, err in outputs]
    called = sorted(
        json.loads(c["function"]["arguments"]).get("timezone", "?")
        for b in sent
        for m in b.get("messages", [])
        if m.get("role") == "assistant"
        for c in m.get("tool_calls") or []
    )
    figures.add(
        f"[{model_server.name}] three metaagent call at once",
        seconds=round(seconds, 1),
        exits=[child.returncode for child in children],
        **{"model requests": len(sent), "tools called with": sorted(set(called))},
        errors=[e[:120] for e in errors if e],
    )
    cut = [e for e in errors if "cut off" in e or "broke off" in e or "was closed" in e]
    assert not cut, cut
    if not called and model_server.name == "llama-server":
        pytest.xfail(OFFERS_NO_TOOLS)
    assert sorted(set(called)) == sorted(zones), called
