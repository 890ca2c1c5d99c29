"""A matrix run written for machines: JUnit XML (read by CI systems) and JSON (for scripts).

JUnit: one ``<testsuite>`` per model, one ``<testcase>`` per case run (``classname`` is
``agent.tool``; with repeats the name ends ``[2/3]``), a ``<failure>`` whose message is the first
failed expectation and whose text lists them all with the answer; a call that failed where an
answer was expected is an ``<error>``. Written with junitparser.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import junitparser

from mcp_export.testing.record import Cell, Change
from mcp_export.testing.run import CaseResult, MatrixResult

__all__ = ["junit_xml", "matrix_json", "write_json", "write_junit"]

_SLUG = re.compile(r"[^A-Za-z0-9_-]+")


def _case_name(result: CaseResult, repeat: int) -> str:
    return result.case if repeat == 1 else f"{result.case} [{result.attempt}/{repeat}]"


def junit_xml(matrix: MatrixResult) -> junitparser.JUnitXml:
    """The JUnit document of ``matrix``."""
    document = junitparser.JUnitXml(name=f"{matrix.agent_name} test cases")
    agent = _SLUG.sub("_", matrix.agent_name).strip("_") or "agent"
    order = {key: index for index, key in enumerate(matrix.cases)}
    for model in matrix.models:
        suite = junitparser.TestSuite(model)
        runs = [r for r in matrix.results if r.model == model]
        runs.sort(key=lambda r: (order.get((r.tool, r.case), 0), r.attempt))
        for result in runs:
            case = junitparser.TestCase(
                _case_name(result, matrix.repeat),
                f"{agent}.{result.tool}",
                round(result.outcome.duration_ms / 1000, 3),
            )
            if result.failures:
                first = result.failures[0]
                unexpected = first.expectation == "isError" and result.outcome.is_error
                mark = (junitparser.Error if unexpected else junitparser.Failure)(
                    str(first), first.expectation
                )
                lines = [str(f) for f in result.failures]
                mark.text = "\n".join([*lines, "", "answer:", result.outcome.text])
                case.result = [mark]
            case.system_out = result.outcome.text
            suite.add_testcase(case)  # also counts it into the suite's totals
        document.add_testsuite(suite)
    document.update_statistics()  # type: ignore[no-untyped-call]
    return document


def write_junit(matrix: MatrixResult, path: Path) -> None:
    """Write the JUnit XML of ``matrix`` to ``path``."""
    junit_xml(matrix).write(str(path), pretty=True)


def matrix_json(matrix: MatrixResult, changes: dict[Cell, Change] | None = None) -> dict[str, Any]:
    """The JSON form of ``matrix``: one entry per cell with its runs and its change."""
    cells: list[dict[str, Any]] = []
    for tool, case in matrix.cases:
        for model in matrix.models:
            runs = matrix.cell(tool, case, model)
            passes = sum(r.passed for r in runs)
            entry: dict[str, Any] = {
                "tool": tool,
                "case": case,
                "model": model,
                "passed": bool(runs) and passes == len(runs),
                "passRate": passes / len(runs) if runs else None,
                "runs": [_run_json(r) for r in runs],
            }
            if changes is not None:
                entry["change"] = changes.get((tool, case, model))
            cells.append(entry)
    return {
        "id": matrix.id,
        "agent": matrix.agent_name,
        "agentPath": matrix.agent_path,
        "models": matrix.models,
        "repeat": matrix.repeat,
        "durationMs": round(matrix.duration_ms, 3),
        "passed": matrix.passed,
        "cells": cells,
    }


def _run_json(result: CaseResult) -> dict[str, Any]:
    outcome = result.outcome
    data: dict[str, Any] = {
        "attempt": result.attempt,
        "passed": result.passed,
        "failures": [{"expectation": f.expectation, "message": f.message} for f in result.failures],
        "answer": outcome.text,
        "isError": outcome.is_error,
        "durationMs": round(outcome.duration_ms, 3),
        "inputTokens": outcome.input_tokens,
        "outputTokens": outcome.output_tokens,
        "turns": outcome.turns,
        "toolCalls": [call.get("name") for call in outcome.tool_calls],
    }
    if result.verdict is not None:
        data["judge"] = {"pass": result.verdict.passed, "reason": result.verdict.reason}
    return data


def write_json(matrix: MatrixResult, path: Path, changes: dict[Cell, Change] | None = None) -> None:
    """Write the JSON form of ``matrix`` to ``path``."""
    text = json.dumps(matrix_json(matrix, changes), ensure_ascii=False, indent=2)
    path.write_text(text + "\n", encoding="utf-8")
