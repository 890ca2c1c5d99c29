"""What one real run proves, from what went over the wire and what the server says it rendered.

``prove(server, sent, zone, answer)`` reads the requests a run sent (``RecordingProxy``) and asks
the server itself:

- **tool called with**: the arguments of the tool call the runtime sent back in its follow-up
  request (the call as the model made it and the tool received it);
- **result sent**: the ``tool`` message of that follow-up request, and whether it holds the tool's
  result (the time in the zone asked for);
- **result rendered**: whether the server put that result into the model's prompt.
  llama-server shows its prompt (``POST /apply-template``); any other server is asked the same
  follow-up twice (whole, 1 token), once with the result made longer: a prompt that holds the
  result grows, one that drops it (llama-cpp-python's ``chatml-function-calling``) does not;
- **answer**: what the run ended with, named for what it is: empty, the call's own text, an echo
  of the question or the result, or an answer.
"""

from __future__ import annotations

import copy
import difflib
import json
from dataclasses import dataclass, field
from typing import Any

from tests.real_model.conftest import ModelServer

__all__ = ["TOOL", "Proof", "classify", "prove"]

TOOL = "time__get_current_time"
_PADDING = " (" + "and that is the time there, as the clock in that zone shows it; " * 6 + ")"


@dataclass
class Proof:
    arguments: dict[str, Any] | None = None
    result: str | None = None
    result_has_zone: bool = False
    rendered: bool | None = None
    rendered_how: str = ""
    answer_kind: str = ""
    answer: str = ""
    requests: int = 0
    problems: list[str] = field(default_factory=lambda: list[str]())

    def report(self) -> dict[str, Any]:
        return {
            "model requests": self.requests,
            "tool called with": json.dumps(self.arguments) if self.arguments else "no tool call",
            "result sent": " ".join((self.result or "nothing").split())[:100],
            "result rendered": f"{self.rendered} ({self.rendered_how})",
            "answer": f"{self.answer_kind}: {self.answer[:120]!r}",
            "verdict": "; ".join(self.problems) or "proved",
        }


def prove(server: ModelServer, sent: list[dict[str, Any]], zone: str, answer: str) -> Proof:
    proof = Proof(requests=len(sent))
    follow_up = next((b for b in sent if any(_is_tool(m) for m in b.get("messages", []))), None)
    if follow_up is None:
        proof.problems.append("no request carried a tool result (the tool was never called)")
    else:
        messages = follow_up["messages"]
        calls = [
            c for m in messages if m.get("role") == "assistant" for c in m.get("tool_calls") or []
        ]
        if calls:
            raw = calls[0].get("function", {}).get("arguments", "")
            try:
                parsed = json.loads(raw)
                proof.arguments = parsed if isinstance(parsed, dict) else {"(not an object)": raw}
            except ValueError:
                proof.arguments = {"(not JSON)": raw}
        if proof.arguments != {"timezone": zone}:
            proof.problems.append(f"the tool got {proof.arguments}, not timezone={zone}")
        result = next(m for m in messages if _is_tool(m))
        proof.result = _text(result.get("content"))
        proof.result_has_zone = zone in proof.result
        if not proof.result_has_zone:
            proof.problems.append("the result sent does not hold the zone asked for")
        proof.rendered, proof.rendered_how = _rendered(server, follow_up, proof.result)
        if proof.rendered is False:
            proof.problems.append("the server left the tool's result out of the model's prompt")
    question = next(
        (
            _text(m.get("content"))
            for b in sent[:1]
            for m in b.get("messages", [])
            if m.get("role") == "user"
        ),
        "",
    )
    proof.answer = answer
    proof.answer_kind = classify(answer, question, proof.result or "")
    if proof.answer_kind != "an answer":
        proof.problems.append(f"the run ended with {proof.answer_kind}")
    return proof


def classify(answer: str, question: str, result: str) -> str:
    """What an answer is: empty, the call's text, an echo, or an answer."""
    text = answer.strip()
    if not text:
        return "an empty answer"
    lowered = text.lower()
    if (
        TOOL in text
        or "functions." in lowered
        or "&#34;" in text
        or '{"timezone"' in text.replace(" ", "")
        or "<tool_call>" in lowered
    ):
        return "the call's text"
    first = text.splitlines()[0]
    if (
        text in question
        or (len(question) > 10 and question.strip() in text)
        or _like(first, question)
    ):
        return "an echo of the question"
    if result and (text in result or result.strip() in text):
        return "an echo of the result"
    return "an answer"


def _like(line: str, question: str) -> bool:
    """Whether ``line`` is the question again with a few words changed."""
    return difflib.SequenceMatcher(None, line.lower(), question.lower()).ratio() > 0.6


def _rendered(
    server: ModelServer, follow_up: dict[str, Any], result: str
) -> tuple[bool | None, str]:
    if server.name == "llama-server":
        try:
            said = server.post("/apply-template", {"messages": follow_up["messages"]})
        except Exception as exc:
            return None, f"/apply-template failed: {exc}"
        prompt = str(said.get("prompt", ""))
        key = _key_of(result)
        where = "in" if key in prompt else "not in"
        return key in prompt, f"/apply-template: {len(prompt)} characters, result {where} it"
    longer = copy.deepcopy(follow_up["messages"])
    for message in longer:
        if _is_tool(message):
            message["content"] = _text(message.get("content")) + _PADDING
    try:
        counts = [_prompt_tokens(server, messages) for messages in (follow_up["messages"], longer)]
    except Exception as exc:
        return None, f"prompt tokens not known: {exc}"
    if None in counts:
        return None, "the server reports no prompt tokens"
    grew = counts[1] != counts[0]
    return grew, f"prompt tokens {counts[0]} → {counts[1]} with a longer result"


def _prompt_tokens(server: ModelServer, messages: list[dict[str, Any]]) -> int | None:
    body = {"model": server.model, "messages": messages, "max_tokens": 1, "stream": False}
    said = server.post("/v1/chat/completions", body)
    usage = said.get("usage") or {}
    tokens = usage.get("prompt_tokens")
    return tokens if isinstance(tokens, int) else None


def _key_of(result: str) -> str:
    """A piece of the result that a rendering keeps as it is (its first line of JSON)."""
    try:
        parsed = json.loads(result)
    except ValueError:
        return result.strip()[:40]
    if isinstance(parsed, dict) and isinstance(parsed.get("datetime"), str):
        return str(parsed["datetime"])
    return result.strip()[:40]


def _is_tool(message: dict[str, Any]) -> bool:
    return message.get("role") == "tool"


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""
