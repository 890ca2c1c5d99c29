"""A caller case's run beside the matrix: what the caller did, and both transcripts.

:func:`caller_html` heads a caller cell's details: the step that failed (or that every step
passed), the caller model and the model that served its call, the tools it called with the
arguments it filled, and whether those were valid and as the case expects. The transcript of a
caller run is two (:func:`caller_transcript_html` here, put together by
:func:`app.test_cases.transcript.caller_transcript_for`): first the caller's request (its system
prompt and the request), its reply, and the whole tool list the request offered (ours and the
decoys, each as ``tools/list`` gives it); then our served call, from the history, when the
caller's call got that far. Everything shown passes the runtime's one ``redact``.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from app.test_cases.caller_cells import STEP_WORDS, step_text
from app.test_cases.matrix_cells import format_ms
from mcp_export.redact import redact

if TYPE_CHECKING:
    from mcp_export.testing.callers.runner import CallerResult

__all__ = ["caller_html", "caller_transcript_html", "not_served_html"]

_COLOURS = {False: ("#2e7d32", "#c62828"), True: ("#8fd694", "#ff9c94")}


def _pre(text: str) -> str:
    return f'<pre style="white-space: pre-wrap">{html.escape(text, quote=False)}</pre>'


def _json(value: Any) -> str:
    return redact(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def _yes_no(value: bool | None, *, dark: bool) -> str:
    if value is None:
        return "—"
    passing, failing = _COLOURS[dark]
    return f'<b style="color:{passing if value else failing}">{"yes" if value else "no"}</b>'


def caller_html(result: CallerResult, *, dark: bool = False) -> str:
    """What the caller did in one run, as rich text (pure: tested without widgets)."""
    from mcp_export.testing.callers.rates import left_recording

    passing, failing = _COLOURS[dark]
    pick = result.pick
    replay_left = left_recording(result)
    if result.step is None:
        step = f'<b style="color:{passing}">every step passed</b>'
    else:
        words = STEP_WORDS.get(result.step, result.step)
        if replay_left:
            words = step_text(result) or words  # the replay's doing, not the caller's
        step = f'failed at <b style="color:{failing}">{html.escape(words)}</b>'
    parts = [
        f"<p><b>Caller case</b>: {step} · caller <b>{html.escape(result.model)}</b> · served "
        f"by <b>{html.escape(result.served_model or '—')}</b></p>"
    ]
    if pick is not None:
        wanted = "none of ours" if pick.wanted == "none" else pick.wanted
        parts.append(f"<p>Expected: <b>{html.escape(wanted)}</b></p>")
    turn = result.turn
    if turn is not None:
        facts = [format_ms(turn.duration_ms), f"{len(turn.tools)} tools offered"]
        usage = turn.usage
        if usage.input_tokens is not None and usage.output_tokens is not None:
            facts.append(f"tokens {usage.input_tokens} in / {usage.output_tokens} out")
        parts.append(f"<p><i>The caller's request: {html.escape(' · '.join(facts))}</i></p>")
        if turn.error is not None and replay_left:
            parts.append(
                "<p><b>The replay left its recording</b>: nothing was asked of the caller "
                "(Re-record it)</p>" + _pre(redact(turn.error))
            )
        elif turn.error is not None:
            parts.append("<p><b>The caller's request failed</b></p>" + _pre(redact(turn.error)))
        elif not turn.calls:
            parts.append(
                "<p><b>It called no tool; it answered</b></p>"
                + _pre(redact(turn.text) or "(empty)")
            )
        for call in turn.calls:
            parts.append(f"<p>→ it called <b>{html.escape(call.name)}</b></p>")
            if call.arguments_error is not None:
                parts.append(_pre(f"(arguments that cannot be read: {call.arguments_error})"))
            else:
                parts.append(_pre(_json(call.arguments)))
    if pick is not None and pick.call is not None:
        parts.append(
            f"<p>Arguments valid: {_yes_no(pick.arguments_valid, dark=dark)} · as the case "
            f"expects: {_yes_no(pick.arguments_expected, dark=dark)}</p>"
        )
    return "".join(parts)


def _compact(value: Any) -> str:
    return redact(json.dumps(value, ensure_ascii=False, default=str))


def _tool_html(tool: Mapping[str, Any]) -> str:
    """One offered tool: its name, title and source, its description, then its input schema
    and annotations as compact JSON (the list stays one screen per few tools)."""
    name = html.escape(str(tool.get("name", "?")))
    source = tool.get("source")
    title = f" — {html.escape(str(tool['title']))}" if tool.get("title") else ""
    origin = f" <i>({html.escape(str(source))})</i>" if source else ""
    lines = [f"<p>• <b>{name}</b>{title}{origin}<br>"]
    lines.append(html.escape(redact(str(tool.get("description", "")))) or "<i>(no description)</i>")
    lines.append("</p>")
    rest = {k: v for k, v in tool.items() if k not in ("name", "title", "source", "description")}
    for key, value in rest.items():
        lines.append(
            f"<p><code>{html.escape(key)}</code>: <code>{html.escape(_compact(value))}</code></p>"
        )
    return "".join(lines)


def caller_transcript_html(transcript: Mapping[str, Any]) -> str:
    """The caller's request and reply (``CallerTurn.transcript()``) as rich text."""
    request = transcript.get("request")
    reply = transcript.get("reply")
    request = request if isinstance(request, Mapping) else {}
    reply = reply if isinstance(reply, Mapping) else {}
    tools = request.get("tools")
    tools = tools if isinstance(tools, list) else []
    model = html.escape(str(transcript.get("model", "")))
    parts = [
        f"<h3>1 · The caller model {model}</h3>",
        "<p><b>System prompt</b></p>" + _pre(redact(str(request.get("system", "")))),
        "<p><b>The request (user)</b></p>" + _pre(redact(str(request.get("user", "")))),
        "<p><b>Its reply</b></p>",
    ]
    if reply.get("error"):
        parts.append(_pre("The request failed: " + redact(str(reply["error"]))))
    if reply.get("text"):
        parts.append(_pre(redact(str(reply["text"]))))
    calls = reply.get("toolCalls")
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, Mapping):
            parts.append(f"<p>→ <b>{html.escape(str(call.get('name', '?')))}</b></p>")
            parts.append(_pre(_json({k: v for k, v in call.items() if k != "name"})))
    if not reply.get("text") and not calls and not reply.get("error"):
        parts.append("<p><i>(an empty reply)</i></p>")
    # The list comes after the reply, as long as it is: the request carried all of it.
    parts.append(
        f"<p><b>The tool list it was offered with the request</b> ({len(tools)} tools, ours "
        "first, then the decoys)</p>"
    )
    parts += [_tool_html(tool) for tool in tools if isinstance(tool, Mapping)]
    names = request.get("toolNames")
    if not tools and isinstance(names, list) and names:
        # Only the names were kept with this run: the whole list is not at hand.
        parts[-1] = f"<p><b>The tools offered with the request</b> ({len(names)}, by name)</p>"
        parts.append(_pre(", ".join(str(name) for name in names)))
    return "".join(parts)


def not_served_html(step: str | None) -> str:
    """Why a caller run's call was not served: the step its reply failed at (None: it did what
    the case expects, which was no call of ours)."""
    if step is None:
        return "<p><i>Not served: the case expects no call of ours, and none was made.</i></p>"
    words = STEP_WORDS.get(step, step)
    return f"<p><i>Not served: the caller's reply failed at {html.escape(words)}.</i></p>"
