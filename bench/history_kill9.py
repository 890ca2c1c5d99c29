"""``kill -9`` of ``metaagent serve`` with calls in flight, repeated: what the history keeps.

Run: ``.venv/bin/python bench/history_kill9.py [--rounds 20] [--in-flight 32]``. Prints a table;
exits 0 when nothing was lost in any round (1 otherwise). Not a test: the moments of the kills
and the timings depend on the machine (``tests/mcp_export/test_history_kill.py`` is the test).

Each round starts one server (raw JSON-RPC over stdio, ``tests/fakes/served_process.py``) on the
same history database, sends ``--in-flight`` calls the model never answers and a stream of calls
it answers at once, and kills the server with SIGKILL at a random moment (0–300 ms) after the
model has received every unanswered call — while answered calls are still coming and going.
Then a store opens the database, as the next start of any program would. Per round:

- the calls whose result the client received must all be recorded ``complete``, with the
  answer the client saw (nothing it was told is lost);
- every run recorded must be ``complete`` or marked interrupted: none left ``pending``;
- ``PRAGMA integrity_check`` must say ``ok``;
- the time the next open takes (replaying the killed server's write log, marking its runs).
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mcp_export.history.store import INTERRUPTED, HistoryStore  # noqa: E402
from tests.fakes._script import Reply, RequestBody, hang, text  # noqa: E402
from tests.fakes.mcp_clients import write_agent  # noqa: E402
from tests.fakes.openai_server import FakeOpenAIServer  # noqa: E402
from tests.fakes.served_process import ServedProcess  # noqa: E402

QUICK_EVERY = 0.005
"""Seconds between two answered calls while the kill is pending."""


def _slow_or_quick(body: RequestBody) -> Reply:
    return hang() if "slow-" in body.last_user_text else text(f"done: {body.last_user_text}")


@dataclass
class Round:
    """The figures of one kill."""

    sent: int
    answered: int
    answered_recorded: int
    complete: int
    interrupted: int
    pending: int
    other: int
    integrity: str
    replayed: int
    reopen_ms: float

    @property
    def lost(self) -> bool:
        """Whether anything the client was told is missing, or the file is damaged."""
        return (
            self.answered_recorded != self.answered
            or self.pending > 0
            or self.other > 0
            or self.integrity != "ok"
        )


def _one_round(
    index: int, agent: Path, model: FakeOpenAIServer, home: Path, in_flight: int, rng: random.Random
) -> Round:
    env = dict(os.environ, METAAGENT_HOME=str(home))
    env.pop("OPENAI_API_KEY", None)
    before = len(model.model_requests)
    with ServedProcess(agent, env=env, stderr=home / "serve.log") as served:
        served.initialize()
        for n in range(in_flight):
            served.call("book_flight", {"destination": f"slow-{index}-{n}"})
        if not model.wait_for_requests(before + in_flight, timeout=60):
            raise RuntimeError(f"round {index}: the server did not send every call to the model")
        quick: dict[int, str] = {}
        kill_at = time.monotonic() + rng.uniform(0.0, 0.3)
        while time.monotonic() < kill_at:
            destination = f"quick-{index}-{len(quick)}"
            quick[served.call("book_flight", {"destination": destination})] = destination
            time.sleep(QUICK_EVERY)
        served.kill()
        replies = served.replies()
    seen = {
        quick[request]: reply["result"]["content"][0]["text"]
        for request, reply in replies.items()
        if request in quick and "result" in reply
    }
    started = time.perf_counter()
    with HistoryStore(home / "history.sqlite3") as store:
        reopen_ms = (time.perf_counter() - started) * 1000
        replayed = store.replayed.applied
        runs = [
            r
            for r in store.runs(limit=1_000_000)
            if r.arguments["destination"].split("-")[1] == str(index)
        ]
    raw = sqlite3.connect(home / "history.sqlite3")
    try:
        integrity = raw.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        raw.close()
    recorded = {r.arguments["destination"]: r for r in runs}
    return Round(
        sent=in_flight + len(quick),
        answered=len(seen),
        answered_recorded=sum(
            1
            for destination, answer in seen.items()
            if destination in recorded
            and recorded[destination].status == "complete"
            and recorded[destination].answer == answer
        ),
        complete=sum(r.status == "complete" for r in runs),
        interrupted=sum(r.status == "error" and r.error == INTERRUPTED for r in runs),
        pending=sum(r.status == "pending" for r in runs),
        other=sum(r.status == "error" and r.error != INTERRUPTED for r in runs),
        integrity=integrity,
        replayed=replayed,
        reopen_ms=reopen_ms,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--in-flight", type=int, default=32)
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    rounds: list[Round] = []
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(responder=_slow_or_quick) as model:
        home = Path(tmp) / "home"
        home.mkdir()
        agent = write_agent(Path(tmp) / "a.agent.yaml", base_url=model.base_url)
        for index in range(args.rounds):
            rounds.append(_one_round(index, agent, model, home, args.in_flight, rng))
    print(f"kill -9 of metaagent serve with {args.in_flight} calls in flight, {args.rounds} rounds")
    print(
        f"  {'round':>5}{'sent':>6}{'seen':>6}{'kept':>6}{'complete':>9}{'interr.':>8}"
        f"{'pending':>8}{'other':>6}{'integrity':>10}{'replayed':>9}{'reopen ms':>10}"
    )
    for index, r in enumerate(rounds):
        print(
            f"  {index:>5}{r.sent:>6}{r.answered:>6}{r.answered_recorded:>6}{r.complete:>9}"
            f"{r.interrupted:>8}{r.pending:>8}{r.other:>6}{r.integrity:>10}{r.replayed:>9}"
            f"{r.reopen_ms:>10.1f}"
        )
    opens = [r.reopen_ms for r in rounds]
    print(
        f"  total: {sum(r.sent for r in rounds)} calls sent, {sum(r.answered for r in rounds)} "
        f"answers seen by the client, {sum(r.answered_recorded for r in rounds)} of them recorded "
        f"complete; {sum(r.complete for r in rounds)} runs complete, "
        f"{sum(r.interrupted for r in rounds)} marked interrupted, "
        f"{sum(r.pending for r in rounds)} left pending; integrity "
        f"{sum(r.integrity == 'ok' for r in rounds)}/{len(rounds)} ok"
    )
    print(
        f"  next open: median {statistics.median(opens):.1f} ms, max {max(opens):.1f} ms "
        f"(replaying {statistics.median([r.replayed for r in rounds]):.0f} logged writes, median)"
    )
    lost = [index for index, r in enumerate(rounds) if r.lost]
    print("nothing lost" if not lost else f"LOST in rounds {lost}")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
