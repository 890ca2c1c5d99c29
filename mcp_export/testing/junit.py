"""A matrix run as JUnit XML, written as a stream in one pass over the results.

One ``<testsuite>`` per model, one ``<testcase>`` per case run (``classname`` is ``agent.tool``;
with repeats the name ends ``[2/3]``), a ``<failure>`` whose message is the first failed
expectation and whose text lists them all with the answer; a call that failed where an answer
was expected is an ``<error>``; the answer is the case's ``<system-out>``.

Caller cases have a suite per caller model (``MODEL (caller)``) whose ``<properties>`` are the
caller model's rates (``pickedRight`` = ``3/4``…); a failed run's ``type`` is the step that
failed (``wrong tool``, ``invalid arguments``…) and its text shows what the caller called.

Every suite's ``<properties>`` say what its runs cost (``cost``, ``costPerCall``,
``costPer100Calls``: ``$0.00123``, ``≥ $0.00123`` when a part is unknown, or ``unknown``), and
each ``<testcase>``'s what that run cost and the version of the tool it ran (``fingerprint``).

Each suite's counts are made before it is written, so the cost grows with the number of
results, not its square.

XML 1.0 cannot carry every character an answer or a name may hold: control characters other
than tab, newline and carriage return (an ANSI colour code's ESC, NUL), half of a surrogate pair,
U+FFFE and U+FFFF. :func:`xml_safe` writes each as its escape in text (``\\x1b``, ``\\ud83d``), so
the report stays readable by every JUnit reader and says what was there.
"""

from __future__ import annotations

import json
import re
from io import TextIOBase
from pathlib import Path
from xml.sax.saxutils import XMLGenerator
from xml.sax.xmlreader import AttributesImpl

from mcp_export.testing.callers.rates import CallerRates, rates_of
from mcp_export.testing.callers.runner import CallerResult
from mcp_export.testing.cost import cell_cost, run_cost, served_model
from mcp_export.testing.run import CaseResult, MatrixResult

__all__ = ["class_prefix", "write_junit", "xml_attrs", "xml_safe"]

_SLUG = re.compile(r"[^A-Za-z0-9_-]+")
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _escape(found: re.Match[str]) -> str:
    code = ord(found.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def xml_safe(text: str) -> str:
    """``text`` with each character XML 1.0 cannot carry written as its escape (``\\x1b``)."""
    return _NOT_XML.sub(_escape, text)


def class_prefix(agent_name: str) -> str:
    """The agent's name as the first part of a ``<testcase>``'s ``classname`` (``agent.tool``):
    runs of anything but letters, digits, ``_`` and ``-`` as one ``_``; ``agent`` when none
    is left."""
    return _SLUG.sub("_", agent_name).strip("_") or "agent"


def _case_name(result: CaseResult, repeat: int) -> str:
    """The name of one run in a report: the case's, with ``[attempt/repeat]`` when repeated."""
    return result.case if repeat == 1 else f"{result.case} [{result.attempt}/{repeat}]"


def write_junit(matrix: MatrixResult, path: Path) -> None:
    """Write the JUnit XML of ``matrix`` to ``path``.

    Raises:
        OSError: the file cannot be written.
    """
    with path.open("w", encoding="utf-8", newline="\n") as stream:
        _write(matrix, stream)


def _write(matrix: MatrixResult, stream: TextIOBase) -> None:
    agent = class_prefix(matrix.agent_name)
    order = {key: index for index, key in enumerate(matrix.cases)}
    ordinary = [(t, c) for t, c in matrix.cases if (t, c) not in matrix.caller_cases]
    by_model: dict[str, list[CaseResult]] = {model: [] for model in matrix.models if ordinary}
    by_model |= {_suite(model, True): [] for model in matrix.caller_models}
    for result in matrix.results:
        by_model.setdefault(_suite(result.model, _is_caller(result)), []).append(result)
    suites: list[tuple[str, list[CaseResult], dict[str, str]]] = []
    for model, runs in by_model.items():
        runs.sort(key=lambda r: (order.get((r.tool, r.case), 0), r.attempt))
        suites.append((model, runs, _counts(runs)))
    totals = {
        key: str(sum(int(counts[key]) for _, _, counts in suites))
        for key in ("tests", "failures", "errors", "skipped")
    }
    totals["time"] = _seconds(sum(r.outcome.duration_ms for r in matrix.results) / 1000)
    xml = XMLGenerator(stream, encoding="utf-8", short_empty_elements=True)
    xml.startDocument()
    xml.startElement("testsuites", xml_attrs(name=f"{matrix.agent_name} test cases", **totals))
    for model, runs, counts in suites:
        stream.write("\n  ")
        xml.startElement("testsuite", xml_attrs(name=model, **counts))
        values = _cost_values(matrix, runs)
        if runs and _is_caller(runs[0]):
            values |= _rates(rates_of(runs[0].model, runs))
        _write_properties(xml, stream, values, "\n    ")
        for result in runs:
            stream.write("\n    ")
            _write_case(xml, stream, result, f"{agent}.{result.tool}", matrix)
        stream.write("\n  ")
        xml.endElement("testsuite")
    stream.write("\n")
    xml.endElement("testsuites")
    stream.write("\n")
    xml.endDocument()


def _write_case(
    xml: XMLGenerator, stream: TextIOBase, result: CaseResult, classname: str, matrix: MatrixResult
) -> None:
    xml.startElement(
        "testcase",
        xml_attrs(
            name=_case_name(result, matrix.repeat),
            classname=classname,
            time=_seconds(result.outcome.duration_ms / 1000),
        ),
    )
    values = {"cost": run_cost(matrix.prices, result).text()}
    version = matrix.versions.get((result.tool, served_model(result)))
    if version is not None:
        values["fingerprint"] = version.fingerprint
    _write_properties(xml, stream, values, "\n      ")
    if result.failures:
        first = result.failures[0]
        kind = "error" if _is_error(result) else "failure"
        lines = [str(f) for f in result.failures]
        step = result.step if isinstance(result, CallerResult) else None
        if isinstance(result, CallerResult) and step is not None:
            lines = [f"step failed: {step}", *lines, "", *_caller_lines(result)]
        stream.write("\n      ")
        xml.startElement(kind, xml_attrs(message=str(first), type=step or first.expectation))
        xml.characters(xml_safe("\n".join([*lines, "", "answer:", result.outcome.text])))
        xml.endElement(kind)
    stream.write("\n      ")
    xml.startElement("system-out", xml_attrs())
    xml.characters(xml_safe(result.outcome.text))
    xml.endElement("system-out")
    stream.write("\n    ")
    xml.endElement("testcase")


def _is_caller(result: CaseResult) -> bool:
    return isinstance(result, CallerResult)


def _suite(model: str, caller: bool) -> str:
    return f"{model} (caller)" if caller else model


def _caller_lines(result: CallerResult) -> list[str]:
    """What the caller was offered and what it called, for a failure's text."""
    turn = result.turn
    if turn is None:
        return []
    offered = ", ".join(tool.name for tool in turn.tools)
    calls = [
        f"{c.name} {json.dumps(c.arguments, ensure_ascii=False, default=str)}" for c in turn.calls
    ]
    return [
        f"caller {turn.model} was asked: {turn.ask}",
        f"offered: {offered}",
        f"it called: {'; '.join(calls) or 'nothing'}",
        f"it said: {turn.text}" if turn.text else "it said nothing",
    ]


def _cost_values(matrix: MatrixResult, runs: list[CaseResult]) -> dict[str, str]:
    cost = cell_cost(matrix.prices, runs)
    return {
        "cost": cost.total.text(),
        "costPerCall": cost.per_call.text(),
        "costPer100Calls": cost.per_100.text(),
    }


def _rates(rates: CallerRates) -> dict[str, str]:
    n = rates.runs
    return {
        "pickedRight": f"{rates.picked}/{n}",
        "wrongTool": f"{rates.wrong_tool}/{n}",
        "wrongTools": ", ".join(f"{k} ×{v}" for k, v in rates.wrong_tools.items()),
        "noCall": f"{rates.no_call}/{n}",
        "callerFailed": f"{rates.caller_failed}/{n}",
        "argumentsValid": f"{rates.arguments_valid}/{n}",
        "argumentsExpected": f"{rates.arguments_expected}/{n}",
        "answerPassed": f"{rates.answer_passed}/{n}",
    }


def _write_properties(
    xml: XMLGenerator, stream: TextIOBase, values: dict[str, str], indent: str
) -> None:
    stream.write(indent)
    xml.startElement("properties", xml_attrs())
    for name, value in values.items():
        stream.write(indent + "  ")
        xml.startElement("property", xml_attrs(name=name, value=value))
        xml.endElement("property")
    stream.write(indent)
    xml.endElement("properties")


def _is_error(result: CaseResult) -> bool:
    first = result.failures[0]
    return first.expectation == "isError" and result.outcome.is_error


def _counts(runs: list[CaseResult]) -> dict[str, str]:
    failed = [r for r in runs if r.failures]
    errors = sum(1 for r in failed if _is_error(r))
    return {
        "tests": str(len(runs)),
        "failures": str(len(failed) - errors),
        "errors": str(errors),
        "skipped": "0",
        "time": _seconds(sum(r.outcome.duration_ms for r in runs) / 1000),
    }


def _seconds(value: float) -> str:
    return f"{value:.3f}"


def xml_attrs(**values: str) -> AttributesImpl[str]:
    """An element's attributes, each value made :func:`xml_safe`."""
    return AttributesImpl({key: xml_safe(value) for key, value in values.items()})
