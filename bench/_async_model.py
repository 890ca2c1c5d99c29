"""A lean Chat Completions model for the concurrency benchmarks: asyncio, one process, no threads.

Run as ``python bench/_async_model.py DELAY``: prints the port, then answers every
``POST …/chat/completions`` after ``DELAY`` seconds with a streamed answer (``answer to <the last
user message>``, or ``{"answer": "answer to …"}`` when the request has a ``response_format``, in
two ``delta.content`` chunks, a ``finish_reason`` chunk, a usage chunk,
``[DONE]``), on kept-alive HTTP/1.1 connections, until killed. ``GET /stats`` answers with the
``time.monotonic()`` times at which requests arrived and were answered since the last such
request (JSON ``{"arrived": […], "answered": […]}``): when a server under test sent its model
requests.

Why not the tests' ``FakeOpenAIServer``: it is a thread per connection, and on this 2-core machine
50 requests at once cost it ~90 ms of its own before answering (50 plain HTTP requests with a
200 ms delay: 292 ms against it, 208 ms against this one). A real model endpoint answers
concurrent requests in parallel; the concurrency benchmarks measure our side, so their model must
not be the bottleneck. Everything the provider reads is what the real API sends. It accepts
thousands of connections at once (listen backlog 4096, the open-files limit raised to its hard
limit): ``bench/server_concurrency_wide.py`` measures it alone at 1024 requests at once.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from typing import Any

__all__ = ["AsyncModelProcess"]


def _event(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def _answer(body: bytes) -> bytes:
    try:
        request = json.loads(body)
        messages = request.get("messages") or []
        said = next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), "")
        typed = "response_format" in request
    except (ValueError, AttributeError):
        said, typed = "", False
    text = f"answer to {said}"
    if typed:  # a structured-output request: the answer as the object {"answer": …}
        text = json.dumps({"answer": text})
    half = len(text) // 2

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "fake-model",
            "choices": [choice],
        }

    usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    return b"".join(
        [
            _event(chunk({"role": "assistant", "content": text[:half]})),
            _event(chunk({"content": text[half:]})),
            _event(chunk({}, "stop")),
            _event({**chunk({}), "choices": [], "usage": usage}),
            b"data: [DONE]\n\n",
        ]
    )


_ARRIVED: list[float] = []
_ANSWERED: list[float] = []


def _stats() -> bytes:
    """The monotonic times requests arrived and were answered since the last ``GET /stats``."""
    payload = json.dumps({"arrived": _ARRIVED, "answered": _ANSWERED}).encode()
    _ARRIVED.clear()
    _ANSWERED.clear()
    return b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (
        len(payload),
        payload,
    )


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            if head.startswith(b"GET /stats"):
                writer.write(_stats())
                await writer.drain()
                continue
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            body = await reader.readexactly(length) if length else b""
            _ARRIVED.append(time.monotonic())
            await asyncio.sleep(delay)
            payload = _answer(body)
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"content-length: %d\r\n\r\n%s" % (len(payload), payload)
            )
            _ANSWERED.append(time.monotonic())
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def _serve(delay: float) -> None:
    server = await asyncio.start_server(
        lambda r, w: _handle(r, w, delay), "127.0.0.1", 0, backlog=4096
    )
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


class AsyncModelProcess:
    """This model in a child process; ``base_url`` ends in ``/v1``."""

    def __init__(self, delay: float) -> None:
        self._process = subprocess.Popen(self._command(delay), stdout=subprocess.PIPE, text=True)
        assert self._process.stdout is not None
        port = int(self._process.stdout.readline())
        self.base_url = f"http://127.0.0.1:{port}/v1"

    def _command(self, delay: float) -> list[str]:
        """The child's command line: it prints the port, then serves until killed."""
        return [sys.executable, __file__, str(delay)]

    def stop(self) -> None:
        self._process.kill()
        self._process.wait(10)


if __name__ == "__main__":
    from _proc import raise_file_limit

    raise_file_limit()
    asyncio.run(_serve(float(sys.argv[1])))
