"""A tool-using agent end to end against a real model: Gemma 3 270M on llama-cpp-python, on CPU.

The agent's one tool asks for the time in a zone; the model reaches it through the agent's own
``mcp-server-time``. The model is tiny and calls a tool only when forced, so ``toolChoice`` names
``time__get_current_time`` (the session forces the first request only). Each way in runs the same
agent file to an answer that used the tool: ``metaagent call`` in a subprocess, a served call
through the official MCP client over stdio, and the studio's test run (offscreen). The figures
(seconds, model requests, turns, tokens/s from the server's own log) are printed at the end of
the run.
"""

from __future__ import annotations

import asyncio
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
from tests.real_model.conftest import Figures, LlamaRun

REPO = Path(__file__).resolve().parents[2]
TOOL = "time__get_current_time"
ZONES = ("Asia/Tokyo", "Europe/Paris", "America/New_York")
"""Each way in tries these in turn until one answer comes: after its tool call the model often
ends its answer at once (llama-cpp-python's chatml-function-calling template has no place for a
``tool`` message, so the model never reads the tool's result, and this tiny model then mostly
stops), which the session reports as an empty answer."""
CALL_SECONDS = 600


def write_agent(path: Path, base_url: str) -> Path:
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
                    "prompt": "Call get_current_time for {zone}.",
                }
            ],
        },
        "settings": {
            "model": "llamacpp:gemma-3-270m",
            "toolChoice": TOOL,
            "temperature": 0.7,
            "seed": 1,
            "maxOutputTokens": 64,
            "maxChatTurns": 2,
            "timeoutSeconds": CALL_SECONDS,
            "toolPermission": "tool",
        },
        "systemPrompt": "You answer questions about time. Use the tools, then answer briefly.",
        "providers": {"llamacpp": {"LLAMACPP_BASE_URL": base_url}},
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


def history_figures() -> dict[str, Any]:
    """The last run in this test's history: its outcome, turns and tool calls."""
    with HistoryStore() as store:
        runs = store.runs(limit=1)
        if not runs:
            return {"history": "no run recorded"}
        run = runs[0]
        messages = store.messages(run.thread_id) if run.thread_id else []
    return {
        "status": run.status,
        "turns": sum(1 for m in messages if m.role == "assistant" and m.status == "complete"),
        "tool calls": sum(1 for m in messages if m.role == "tool"),
        "tokens in/out": f"{run.tokens_in}/{run.tokens_out}",
        "answer": (run.answer or run.error or "")[:120],
    }


def test_metaagent_call_answers_after_the_tool(
    llama: LlamaRun, figures: Figures, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "time.agent.yaml", llama.server.base_url)
    for attempt, zone in enumerate(ZONES, 1):
        mark = llama.mark()
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
                f"zone={zone}",
            ],
            capture_output=True,
            text=True,
            timeout=CALL_SECONDS + 60,
            cwd=REPO,
        )
        seconds = time.monotonic() - started
        figures.add(
            "metaagent call",
            attempt=attempt,
            seconds=round(seconds, 1),
            exit=done.returncode,
            **llama.since(mark),
            **history_figures(),
        )
        if done.returncode == 0:
            break
    assert done.returncode == 0, f"stdout: {done.stdout}\nstderr: {done.stderr}"
    assert f"→ {TOOL}" in done.stderr or f"-> {TOOL}" in done.stderr, done.stderr
    assert " ok" in done.stderr, done.stderr
    assert done.stdout.strip()


@pytest.mark.anyio
async def test_a_served_call_over_stdio_answers_after_the_tool(
    llama: LlamaRun, figures: Figures, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "time.agent.yaml", llama.server.base_url)
    with anyio.fail_after(len(ZONES) * (CALL_SECONDS + 60)):
        async with Client(serve_params(str(agent), env=dict(os.environ)), mode="auto") as client:
            for attempt, zone in enumerate(ZONES, 1):
                mark = llama.mark()
                started = time.monotonic()
                result = await client.call_tool("time_in", {"zone": zone})
                seconds = time.monotonic() - started
                figures.add(
                    "served call (mcp.Client, stdio)",
                    attempt=attempt,
                    seconds=round(seconds, 1),
                    is_error=result.is_error,
                    **llama.since(mark),
                    **history_figures(),
                )
                if not result.is_error:
                    break
    text = "".join(b.text for b in result.content if isinstance(b, types.TextContent))
    structured: dict[str, Any] = result.structured_content or {}
    assert not result.is_error, text
    calls = structured.get("toolCalls") or []
    assert calls and calls[0]["name"] == TOOL, structured
    assert structured.get("answer", "").strip()


def test_the_studio_test_run_answers_after_the_tool(
    qtbot: QtBot,
    qasync_loop: asyncio.AbstractEventLoop,
    llama: LlamaRun,
    figures: Figures,
    tmp_path: Path,
) -> None:
    path = write_agent(tmp_path / "time.agent.yaml", llama.server.base_url)
    window = studio_window(qtbot)
    assert window.open_file(path) is not None
    document = window.current_document()
    assert document is not None
    editor = window.open_tool_tab(document, document.agent.tools[0])
    assert isinstance(editor, ToolEditor)
    try:
        for attempt, zone in enumerate(ZONES, 1):
            outcome = _studio_run(qtbot, window, zone, llama)
            figures.add(
                "studio test run (offscreen)",
                attempt=attempt,
                **outcome.pop("figures"),
                **llama.since(outcome.pop("mark")),
            )
            if isinstance(outcome["outcome"], FinalAnswer):
                break
        answer = outcome["outcome"]
        assert isinstance(answer, FinalAnswer), getattr(answer, "message", answer)
        assert answer.tool_calls and answer.tool_calls[0].name == TOOL
        assert not answer.tool_calls[0].is_error, answer.tool_calls[0].result
        assert answer.text.strip()
    finally:
        window.close()


def _studio_run(qtbot: QtBot, window: Any, zone: str, llama: LlamaRun) -> dict[str, Any]:
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
    mark = llama.mark()
    started = time.monotonic()
    dialog.run_button.click()
    (tab,) = [t for t in window.run_tabs() if t not in before]
    assert isinstance(tab, ChatTab)
    try:
        qtbot.waitUntil(
            lambda: isinstance(tab.outcome, FinalAnswer | SessionFailed),
            timeout=(CALL_SECONDS + 60) * 1000,
        )
        outcome = tab.outcome
        shown = (
            outcome.text[:120]
            if isinstance(outcome, FinalAnswer)
            else getattr(outcome, "message", "")[:160]
        )
        return {
            "outcome": outcome,
            "mark": mark,
            "figures": {
                "seconds": round(time.monotonic() - started, 1),
                "turns": tab.stats.turns,
                "outcome": type(outcome).__name__,
                "answer": shown,
            },
        }
    finally:
        future = asyncio.ensure_future(tab.aclose())
        qtbot.waitUntil(future.done, timeout=60_000)
