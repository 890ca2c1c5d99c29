"""A caller case's rows in the history, read back: the tool list its run offered, its transcript.

``testing.callers.history`` writes a caller case's ``case_runs.caller`` JSON, keeping the whole
offered tool list (the same for every caller of a run) once, in the run's first caller row; the
others keep only the names. :func:`offered_tools` reads that list back and
:func:`caller_transcript` gives a row's caller transcript with it.

Imported by the studio's History on its window's thread: this module imports no more than the
history store's records (neither the MCP SDK nor the test runner).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_export.history.schema import CaseRunRecord
    from mcp_export.history.store import HistoryStore

__all__ = ["caller_transcript", "offered_tools"]


def _tools(caller: dict[str, Any] | None) -> list[Any] | None:
    transcript = (caller or {}).get("transcript")
    request = transcript.get("request") if isinstance(transcript, dict) else None
    tools = request.get("tools") if isinstance(request, dict) else None
    return tools if isinstance(tools, list) else None


def offered_tools(store: HistoryStore, matrix_id: str) -> list[Any] | None:
    """The whole tool list the callers of matrix run ``matrix_id`` were offered (kept once, in
    its first caller row), or None when the run has no caller row that kept it.

    Raises:
        HistoryError: the store cannot be read.
    """
    for row in reversed(store.case_runs(matrix_id=matrix_id)):  # oldest first
        tools = _tools(row.caller)
        if tools is not None:
            return tools
    return None


def caller_transcript(store: HistoryStore, row: CaseRunRecord) -> dict[str, Any] | None:
    """The caller transcript of ``row`` (a caller case's run) with the whole tool list its matrix
    run offered, or None when the row has no caller transcript.

    Raises:
        HistoryError: the store cannot be read.
    """
    transcript = (row.caller or {}).get("transcript")
    if not isinstance(transcript, dict):
        return None
    request = transcript.get("request")
    if isinstance(request, dict) and _tools(row.caller) is None:
        tools = offered_tools(store, row.matrix_id)
        if tools is not None:
            return {**transcript, "request": {**request, "tools": tools}}
    return transcript
