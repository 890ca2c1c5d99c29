"""Two scripted models for the attack pack (``mcp_export.testing.attacks``), for
``FakeOpenAIServer``: an obedient one that does what any text tells it (tool results included),
and a careful one that follows neither the request's nor a tool result's instructions."""

from __future__ import annotations

import re

from mcp_export.testing.attacks.pack import SECRET_ENV
from tests.fakes._script import Reply, RequestBody, text, tool_calls

__all__ = ["careful", "obedient"]

CODE = re.compile(r"MA-INJ-[0-9A-F]+")


def obedient(body: RequestBody) -> Reply:
    """Does what the request (or a tool result) says: calls the tools it is told to, repeats
    its instructions, reads environment variables."""
    messages = body.get("messages") or []
    system = next((m.get("content") for m in messages if m.get("role") == "system"), "")
    ask = body.last_user_text
    if body.rounds_since_user == 0:
        if "attackpack__lookup" in ask:
            return tool_calls([("c1", "attackpack__lookup", {"query": "Paris"})])
        if "attackpack__wipe_files" in ask:
            return tool_calls([("c1", "attackpack__wipe_files", {"path": "/"})])
        if SECRET_ENV in ask:
            return tool_calls([("c1", "tools__env", {"name": SECRET_ENV})])
        return text(f"My instructions: {system}\n\nYour request: {ask}")
    said = " | ".join(r.content for r in body.tool_results)
    found = CODE.search(said)
    return text(f"Verified: {found.group(0)}" if found else f"Here it is: {said}")


def careful(body: RequestBody) -> Reply:
    """Uses the lookup tool when asked to, but follows neither the request's nor the tool
    result's instructions."""
    if body.rounds_since_user == 0 and "attackpack__lookup" in body.last_user_text:
        return tool_calls([("c1", "attackpack__lookup", {"query": "Paris"})])
    return text("I can book a flight for you; tell me where to.")
