"""A matrix run written for machines: JUnit XML (read by CI systems; :mod:`.junit`) and JSON
(for scripts).

The JSON is written as UTF-8; half of a surrogate pair in an answer or a name (which UTF-8
cannot carry) is written as its JSON escape (``\\ud83d``), so the file is still JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp_export.testing.callers.history import caller_record
from mcp_export.testing.callers.rates import PickChange, caller_rates
from mcp_export.testing.callers.runner import CallerResult
from mcp_export.testing.cost import cell_cost, run_cost, served_model
from mcp_export.testing.junit import write_junit
from mcp_export.testing.record import Cell, Change
from mcp_export.testing.run import CaseResult, MatrixResult

__all__ = ["matrix_json", "write_json", "write_junit"]


def matrix_json(
    matrix: MatrixResult,
    changes: dict[Cell, Change] | None = None,
    pick_changes: list[PickChange] | None = None,
) -> dict[str, Any]:
    """The JSON form of ``matrix``: one entry per cell with its runs and its change; a caller
    case's cells are its caller models' (``"caller": true``, each run with its ``step`` and
    caller transcript), ``callerTools`` is the tool list the callers were offered (once) and
    ``callerRates`` sums the runs per caller model. Costs (``cost`` of each run, of each cell
    and of the whole run; the cell's and the run's per call and per 100 calls) are
    ``{"usd": number or null, "atLeast": bool}``: null is unknown, never 0; each cell names the
    ``fingerprint`` of the tool's version it ran."""
    cells: list[dict[str, Any]] = []
    for tool, case in matrix.cases:
        is_caller = (tool, case) in matrix.caller_cases
        for model in matrix.columns(tool, case):
            runs = matrix.cell(tool, case, model)
            passes = sum(r.passed for r in runs)
            entry: dict[str, Any] = {
                "tool": tool,
                "case": case,
                "model": model,
                "passed": bool(runs) and passes == len(runs),
                "passRate": passes / len(runs) if runs else None,
                "cost": cell_cost(matrix.prices, runs).as_json(),
                "fingerprint": _fingerprint(matrix, runs[0] if runs else None, tool, model),
                "runs": [_run_json(r, matrix) for r in runs],
            }
            if is_caller:
                entry["caller"] = True
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
        "cost": cell_cost(matrix.prices, matrix.results).as_json(),
        "cells": cells,
        "callerModels": matrix.caller_models,
        "callerTools": _offered(matrix),
        "callerRates": [r.as_json() for r in caller_rates(matrix.results, matrix.caller_models)],
        "pickChanges": None if pick_changes is None else [c.as_json() for c in pick_changes],
    }


def _offered(matrix: MatrixResult) -> list[dict[str, Any]] | None:
    """The tool list every caller of ``matrix`` was offered (once; each run lists the names)."""
    for result in matrix.results:
        if isinstance(result, CallerResult) and result.turn is not None:
            return [tool.listing() for tool in result.turn.tools]
    return None


def _fingerprint(
    matrix: MatrixResult, result: CaseResult | None, tool: str, model: str
) -> str | None:
    served = served_model(result) if result is not None else model
    version = matrix.versions.get((tool, served))
    return None if version is None else version.fingerprint


def _run_json(result: CaseResult, matrix: MatrixResult) -> dict[str, Any]:
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
        # True: the counts are lower bounds (a model request did not report its count).
        "tokensPartial": outcome.tokens_partial,
        "cost": run_cost(matrix.prices, result).as_json(),
        "turns": outcome.turns,
        "toolCalls": [call.get("name") for call in outcome.tool_calls],
        "stopReason": outcome.stop_reason,
        "truncated": outcome.truncated,
    }
    if result.verdict is not None:
        data["judge"] = {"pass": result.verdict.passed, "reason": result.verdict.reason}
    if isinstance(result, CallerResult):
        data["step"] = result.step
        data["caller"] = caller_record(result, with_tools=False)
    return data


def write_json(
    matrix: MatrixResult,
    path: Path,
    changes: dict[Cell, Change] | None = None,
    pick_changes: list[PickChange] | None = None,
) -> None:
    """Write the JSON form of ``matrix`` to ``path``."""
    data = matrix_json(matrix, changes, pick_changes)
    text = json.dumps(data, ensure_ascii=False, indent=2, default=str)
    # A lone surrogate can only be in a string, where its backslash escape is JSON's own.
    path.write_bytes((text + "\n").encode("utf-8", "backslashreplace"))
