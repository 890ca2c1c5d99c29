"""A scripted model that is both the authoring model and the served model of an improve run.

Requests whose system prompt is the improve prompt get the next of ``proposals`` (each a JSON
object, or raw text for a broken answer); every other request is a served call of
``book_flight``, answered by what its rendered template asks: a template that asks for the
confirmation code gets ``Booked AF123.``, one that asks for *only* the code gets ``AF123``, any
other gets ``Booked.``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.fakes._script import Reply, RequestBody, Responder, text
from tests.fakes.mcp_clients import book_tool, write_agent

__all__ = ["CASES", "FIX_THAT_BREAKS", "FIX_THAT_PASSES", "agent_file", "authoring_and_served"]

CASES: list[dict[str, Any]] = [
    {"name": "oslo", "arguments": {"destination": "Oslo"}, "expect": {"contains": ["AF123"]}},
    {"name": "paris", "arguments": {"destination": "Paris"}, "expect": {"contains": ["Booked"]}},
]

FIX_THAT_PASSES: dict[str, str] = {
    "field": "prompt",
    "text": "Book a flight to {destination} for {passengers} passenger(s). "
    "Give the confirmation code.",
    "reason": "The Oslo case expects the confirmation code, and the template never asks for it.",
}

FIX_THAT_BREAKS: dict[str, str] = {
    "field": "prompt",
    "text": "Give only the code of a flight to {destination}.",
    "reason": "Asking for the code alone makes the model name it.",
}


def agent_file(path: Path, base_url: str) -> Path:
    """An agent whose ``book_flight`` fails ``oslo`` and passes ``paris`` on this model; its key
    is ``env://IMPROVE_TEST_KEY`` (set it), so the agent can be saved."""
    return write_agent(
        path, base_url=base_url, api_key="env://IMPROVE_TEST_KEY", tools=[book_tool(tests=CASES)]
    )


def served(body: RequestBody) -> Reply:
    """The served model: answers by what the rendered template asks."""
    asked = body.last_user_text
    if "only the code" in asked:
        return text("AF123", usage=(20, 2))
    if "confirmation code" in asked:
        return text("Booked AF123.", usage=(20, 4))
    return text("Booked.", usage=(20, 2))


def authoring_and_served(
    proposals: Sequence[dict[str, Any] | str], *, delay: float = 0.0
) -> Responder:
    """The responder: the next proposal for each authoring request, else :func:`served`
    (after ``delay`` seconds, the served model's own latency)."""
    queue = [p if isinstance(p, str) else json.dumps(p) for p in proposals]
    lock = threading.Lock()

    def respond(body: RequestBody) -> Reply:
        messages = body.get("messages") or []
        system = messages[0].get("content") if messages else ""
        if isinstance(system, str) and system.startswith("You improve one tool"):
            with lock:
                answer = queue.pop(0) if queue else "no more proposals scripted"
            return text(answer, usage=(200, 40))
        reply = served(body)
        return reply.delayed(delay) if delay else reply

    return respond
