"""Untyped tools answer byte for byte as before typed results: the same ``tools/list`` entries
and the same ``tools/call`` results (text, ``structuredContent`` trace, ``_meta``, errors) in both
protocol eras as the answers recorded at 088b469, before typed results merged
(``tests/mcp_export/_untyped_answers.py``), with only durations, ids and clock times made
constant."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.mcp_export._untyped_answers import untyped_answers

pytestmark = pytest.mark.anyio

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "typed" / "untyped_answers.json"


async def test_untyped_tools_answer_byte_for_byte_as_before(tmp_path: Path) -> None:
    found = await untyped_answers(tmp_path)
    assert json.dumps(found, indent=1, sort_keys=True) + "\n" == RECORDED.read_text()
