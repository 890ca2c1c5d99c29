"""Does a chat tab keep the window responsive while a long answer streams in?

Run: ``.venv/bin/python bench/chat_stream.py [--tokens 2000] [--rate 200]``. Prints the figures;
exits 0. Not a test: the figures depend on the machine.

A ``ChatTab`` (offscreen, on a qasync loop, as in the studio) receives a ``--tokens``-token
Markdown answer streamed at ``--rate`` tokens per second by ``FakeOpenAIServer`` through the real
OpenAI provider. The model server runs in its own process, so its threads do not compete with the
window for the interpreter. Measured:

- event-loop stalls: a 5 ms precise ``QTimer`` records the gap between its ticks; a gap well over
  5 ms is time the window could not repaint or answer input (goal: max under 50 ms);
- render lag: how long each received chunk waited before the transcript showed it (the answer is
  re-rendered at most every ~40 ms, so some lag is by design), and the lag from the last chunk to
  the transcript showing the whole answer;
- render cost: the longest single Markdown re-render.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

TICK_MS = 5
STALL_GOAL_MS = 50.0


def _answer(tokens: int) -> list[str]:
    """``tokens`` pieces of a Markdown answer: paragraphs, some bold, a list now and then."""
    pieces: list[str] = []
    for i in range(tokens):
        if i % 60 == 0 and i:
            pieces.append(f"\n\n## Part {i // 60}\n\n")
        elif i % 25 == 0 and i:
            pieces.append("\n- item ")
        elif i % 7 == 0:
            pieces.append("**bold** ")
        else:
            pieces.append(f"word{i % 13} ")
    return pieces


def _serve(tokens: int, rate: float, pipe: Connection) -> None:
    from tests.fakes._script import text
    from tests.fakes.openai_server import FakeOpenAIServer

    # The fake cuts the text into ``tokens`` near-equal pieces: one streamed chunk per "token".
    answer = "".join(_answer(tokens))
    reply = text(answer, chunks=tokens, chunk_delay=1 / rate, usage=(20, tokens))
    with FakeOpenAIServer([reply]) as server:
        pipe.send(server.base_url)
        pipe.recv()  # until told to stop


class ModelProcess:
    """The fake model server in a child process."""

    def __init__(self, tokens: int, rate: float) -> None:
        context = multiprocessing.get_context("spawn")
        self._pipe, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(tokens, rate, child), daemon=True)
        self._process.start()
        self.base_url: str = self._pipe.recv()

    def stop(self) -> None:
        self._pipe.send("stop")
        self._process.join(10)


def _write_agent(folder: Path, base_url: str) -> Path:
    path = folder / "bench.agent.yaml"
    path.write_text(
        "metadata: {name: Bench, version: 1.0.0, mode: interactive}\n"
        "settings: {model: 'openai:fake-model', timeoutSeconds: 120}\n"
        f"providers: {{openai: {{OPENAI_API_KEY: sk-test, OPENAI_BASE_URL: '{base_url}'}}}}\n",
        encoding="utf-8",
    )
    return path


async def measure(base_url: str) -> dict[str, Any]:
    from PySide6.QtCore import Qt, QTimer

    from app.chat import ChatTab
    from app.chat.transcript import AssistantBlock
    from app.document.agent_document import AgentDocument
    from mcp_export.providers.base import TextDelta

    with tempfile.TemporaryDirectory() as folder:
        tab = ChatTab(AgentDocument.load(_write_agent(Path(folder), base_url)), title="bench")
        tab.resize(900, 700)
        tab.show()

        ticks: list[float] = []

        def tick() -> None:
            ticks.append(time.perf_counter())

        timer = QTimer()
        timer.setTimerType(Qt.TimerType.PreciseTimer)
        timer.timeout.connect(tick)

        arrivals: list[tuple[float, int]] = []  # (time received, text length after it)
        received = [0]
        lags: list[float] = []
        shown_upto = [0]  # index into arrivals of the first chunk not shown yet
        last_render = [0.0]
        render_costs: list[float] = []
        original = tab._on_event

        def on_rendered(length: int) -> None:
            now = time.perf_counter()
            last_render[0] = now
            while shown_upto[0] < len(arrivals) and arrivals[shown_upto[0]][1] <= length:
                lags.append((now - arrivals[shown_upto[0]][0]) * 1000)
                shown_upto[0] += 1

        def on_event(event: Any) -> None:
            if isinstance(event, TextDelta):
                received[0] += len(event.text)
                arrivals.append((time.perf_counter(), received[0]))
            original(event)
            block = tab._assistant
            if block is not None and not getattr(block, "_bench_hooked", False):
                block.rendered.connect(on_rendered)
                block.rendered.connect(lambda _n, b=block: render_costs.append(b.last_render_ms))
                block._bench_hooked = True  # type: ignore[attr-defined]

        tab._on_event = on_event  # type: ignore[method-assign]
        started = time.perf_counter()
        ticks.append(started)
        timer.start(TICK_MS)
        outcome = await tab.send("Write a long answer.")
        timer.stop()
        elapsed = time.perf_counter() - started
        await tab.aclose()
        blocks = [b for b in tab.transcript.blocks() if isinstance(b, AssistantBlock)]
        shown = blocks[0].shown_length if blocks else 0
        tab.close()
        tab.deleteLater()
    # Before the first chunk the tab sets up the provider (the SDK import, the connection):
    # reported apart; the stream is what the goal is about.
    first_chunk = arrivals[0][0] if arrivals else started
    setup = [(b - a) * 1000 for a, b in itertools.pairwise(ticks) if b <= first_chunk]
    stream = [(b - a) * 1000 for a, b in itertools.pairwise(ticks) if a >= first_chunk]
    return {
        "outcome": type(outcome).__name__,
        "elapsed_s": elapsed,
        "chunks": len(arrivals),
        "chars": received[0],
        "shown": shown,
        "setup_ms": (first_chunk - started) * 1000,
        "setup_max_gap": max(setup, default=0.0),
        "gaps": stream,
        "lags": lags,
        "final_lag": (last_render[0] - arrivals[-1][0]) * 1000 if arrivals else 0.0,
        "render_costs": render_costs,
        "renders": len(render_costs),
    }


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=200.0, help="tokens per second")
    options = parser.parse_args()

    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv)
    model = ModelProcess(options.tokens, options.rate)
    try:
        loop = qasync.QEventLoop(app)
        asyncio.set_event_loop(loop)
        with loop:
            result = loop.run_until_complete(measure(model.base_url))
    finally:
        model.stop()

    gaps, lags, costs = result["gaps"], result["lags"], result["render_costs"]
    max_stall = max(gaps) if gaps else 0.0
    verdict = "ok" if max_stall < STALL_GOAL_MS else "over"
    print(
        f"chat tab, {options.tokens} tokens at {options.rate:g} tokens/s "
        f"(offscreen, qasync, model server in another process)"
    )
    print(f"  outcome                        {result['outcome']} in {result['elapsed_s']:.2f} s")
    print(f"  chunks received / chars        {result['chunks']} / {result['chars']}")
    print(f"  chars shown at the end         {result['shown']}")
    print(
        f"  set-up before the first chunk  {result['setup_ms']:7.1f} ms"
        f"   (longest gap in it {result['setup_max_gap']:.1f} ms)"
    )
    print(
        f"  event-loop gap while streaming median {statistics.median(gaps):5.1f} ms"
        f"   p99 {_pct(gaps, 0.99):5.1f} ms   max {max_stall:5.1f} ms"
        f"   goal < {STALL_GOAL_MS:.0f} ms: {verdict}"
    )
    print(
        f"  chunk → shown lag              median {statistics.median(lags):5.1f} ms"
        f"   p95 {_pct(lags, 0.95):5.1f} ms   max {max(lags):5.1f} ms"
    )
    print(f"  last chunk → whole answer shown {result['final_lag']:6.1f} ms")
    print(
        f"  Markdown re-renders            {result['renders']}"
        f"   median {statistics.median(costs):5.2f} ms   max {max(costs):5.2f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
