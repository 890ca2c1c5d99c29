"""An attack run as JSON and as JUnit XML: one ``<testsuite>`` per model named
``attacks on MODEL`` (apart from the test cases' suites), one ``<testcase>`` per attack and tool
(``classname`` ``agent.tool``), a ``<failure>`` per attack that landed, an ``<error>`` per call
that failed before a final answer (it proves nothing), a ``<skipped>`` per attack no string
parameter could carry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.sax.saxutils import XMLGenerator

from mcp_export.testing.attacks.run import AttackResult, AttackRun
from mcp_export.testing.junit import class_prefix, xml_attrs, xml_safe

__all__ = ["attacks_json", "write_json", "write_junit"]


def attacks_json(run: AttackRun) -> dict[str, Any]:
    """The JSON form of ``run``: one entry per attack, tool and model."""
    return {
        "id": run.id,
        "agent": run.agent_name,
        "agentPath": run.agent_path,
        "models": run.models,
        "attacks": [{"name": a.name, "tries": a.tries} for a in run.attacks],
        "durationMs": round(run.duration_ms, 3),
        "passed": run.passed,
        "results": [_result_json(r) for r in run.ordered()],
    }


def _result_json(result: AttackResult) -> dict[str, Any]:
    outcome = result.outcome
    return {
        "tool": result.tool,
        "attack": result.attack,
        "model": result.model,
        "passed": result.passed,
        "skipped": result.skipped,
        "note": result.note,
        "error": result.error,
        "failures": [{"check": f.expectation, "message": f.message} for f in result.failures],
        "arguments": result.arguments,
        "answer": None if outcome is None else outcome.text,
        "isError": None if outcome is None else outcome.is_error,
        "toolCalls": [] if outcome is None else [c.get("name") for c in outcome.tool_calls],
        "durationMs": None if outcome is None else round(outcome.duration_ms, 3),
    }


def write_json(run: AttackRun, path: Path) -> None:
    """Write the JSON form of ``run`` to ``path`` (a lone surrogate as its JSON escape)."""
    text = json.dumps(attacks_json(run), ensure_ascii=False, indent=2, default=str)
    path.write_bytes((text + "\n").encode("utf-8", "backslashreplace"))


def write_junit(run: AttackRun, path: Path) -> None:
    """Write the JUnit XML of ``run`` to ``path``.

    Raises:
        OSError: the file cannot be written.
    """
    agent = class_prefix(run.agent_name)
    by_model: dict[str, list[AttackResult]] = {model: [] for model in run.models}
    for result in run.ordered():
        by_model.setdefault(result.model, []).append(result)
    with path.open("w", encoding="utf-8", newline="\n") as stream:
        xml = XMLGenerator(stream, encoding="utf-8", short_empty_elements=True)
        xml.startDocument()
        xml.startElement(
            "testsuites", xml_attrs(name=f"{run.agent_name} attacks", **_counts(run.results))
        )
        for model, results in by_model.items():
            stream.write("\n  ")
            xml.startElement("testsuite", xml_attrs(name=f"attacks on {model}", **_counts(results)))
            for result in results:
                stream.write("\n    ")
                seconds = (result.outcome.duration_ms if result.outcome else 0.0) / 1000
                xml.startElement(
                    "testcase",
                    xml_attrs(
                        name=result.attack,
                        classname=f"{agent}.{result.tool}",
                        time=f"{seconds:.3f}",
                    ),
                )
                if result.skipped is not None:
                    xml.startElement("skipped", xml_attrs(message=result.skipped))
                    xml.endElement("skipped")
                elif result.error is not None:
                    xml.startElement("error", xml_attrs(message=result.error, type="unanswered"))
                    xml.endElement("error")
                elif result.failures:
                    first = result.failures[0]
                    answer = result.outcome.text if result.outcome else ""
                    lines = [str(f) for f in result.failures]
                    xml.startElement(
                        "failure", xml_attrs(message=str(first), type=first.expectation)
                    )
                    xml.characters(xml_safe("\n".join([*lines, "", "answer:", answer])))
                    xml.endElement("failure")
                if result.outcome is not None:
                    xml.startElement("system-out", xml_attrs())
                    xml.characters(xml_safe(result.outcome.text))
                    xml.endElement("system-out")
                xml.endElement("testcase")
            stream.write("\n  ")
            xml.endElement("testsuite")
        stream.write("\n")
        xml.endElement("testsuites")
        stream.write("\n")
        xml.endDocument()


def _counts(results: list[AttackResult]) -> dict[str, str]:
    skipped = sum(1 for r in results if r.skipped is not None)
    errors = sum(1 for r in results if r.error is not None)
    failed = sum(1 for r in results if not r.passed) - errors
    seconds = sum(r.outcome.duration_ms for r in results if r.outcome is not None) / 1000
    return {
        "tests": str(len(results)),
        "failures": str(failed),
        "errors": str(errors),
        "skipped": str(skipped),
        "time": f"{seconds:.3f}",
    }
