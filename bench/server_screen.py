"""What checking every incoming message (``server.screen.screen``) costs, against the SDK's parse.

Run: ``.venv/bin/python bench/server_screen.py [--seconds 0.3]``. Prints a table; exits 0. Not a
test: the figures depend on the machine.

The baseline is the SDK's own parse of a message (``jsonrpc_message_adapter.validate_json``).
``screen`` runs before it over HTTP; over stdio its parse is the only one (``server.stdio``). For
valid messages it parses the bytes and checks the result against the SDK's model, then walks the
containers in the message's params (a long array only when the text holds enough brackets to
nest too deep); refused messages are parsed again to say why. Measured on messages of several
sizes and shapes, the baseline and ``screen`` in the same run; the ratio is screen / baseline,
the best of three rounds each.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import mcp_types as types  # noqa: E402

from mcp_export.server.screen import screen  # noqa: E402


def _call(arguments: object) -> bytes:
    params = {"name": "book_flight", "arguments": arguments}
    return json.dumps(
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
    ).encode()


def _nested(depth: int) -> object:
    value: object = "leaf"
    for _ in range(depth):
        value = [value]
    return value


MESSAGES: list[tuple[str, bytes]] = [
    ("ping (40 B)", b'{"jsonrpc":"2.0","id":1,"method":"ping"}'),
    ("tools/call, 2 arguments", _call({"destination": "Oslo", "passengers": 2})),
    ("tools/call, 10 KB string", _call({"destination": "x" * 10_000})),
    ("tools/call, 1 MB string", _call({"destination": "x" * 1_000_000})),
    ("tools/call, 200 small objects", _call({"rows": [{"a": i, "b": [i]} for i in range(200)]})),
    ("tools/call, nested 90 deep", _call({"tree": _nested(90)})),
    ("tools/call, 300 000 strings", _call({"stops": ["CPH"] * 300_000})),
]


def _rate(function: Callable[[bytes], object], message: bytes, seconds: float) -> float:
    """Seconds per call, the best of three rounds of about ``seconds`` each."""
    best = float("inf")
    for _ in range(3):
        count, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            for _ in range(10):
                function(message)
            count += 10
        best = min(best, elapsed / count)
    return best


def _baseline(message: bytes) -> object:
    return types.jsonrpc_message_adapter.validate_json(message, by_name=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.3)
    args = parser.parse_args()
    print(f"{'message':32} {'SDK parse':>12} {'screen':>12} {'ratio':>7}")
    for name, message in MESSAGES:
        assert screen(message) is None, name
        baseline = _rate(_baseline, message, args.seconds)
        screened = _rate(screen, message, args.seconds)
        print(
            f"{name:32} {baseline * 1e6:9.1f} µs {screened * 1e6:9.1f} µs "
            f"{screened / baseline:6.2f}×"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
