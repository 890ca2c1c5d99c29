"""``providers.<id>.stream`` and ``maxConcurrentRequests`` read the way people write them: a YAML
``false`` or ``4`` without quotes is the setting, not a type error; anything else is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from schema_types.agent_checks import parse_max_concurrency, parse_stream
from schema_types.errors import AgentFileError
from schema_types.files.agent_file import load_agent

AGENT = """\
metadata:
  name: Local
settings:
  model: llamacpp:gemma
providers:
  llamacpp:
    LLAMACPP_BASE_URL: http://127.0.0.1:8080/v1
{settings}
"""


@pytest.mark.parametrize(
    ("written", "stream", "limit"),
    [
        ("    stream: false\n    maxConcurrentRequests: 4", False, 4),
        ("    stream: true\n    maxConcurrentRequests: unlimited", True, None),
        ("    stream: 'False'\n    maxConcurrentRequests: '2'", False, 2),
    ],
)
def test_unquoted_booleans_and_numbers_are_the_settings(
    tmp_path: Path, written: str, stream: bool, limit: int | None
) -> None:
    path = tmp_path / "local.agent.yaml"
    path.write_text(AGENT.format(settings=written), encoding="utf-8")
    values = load_agent(path).providers["llamacpp"]
    assert parse_stream(values["stream"]) is stream
    assert parse_max_concurrency(values["maxConcurrentRequests"]) == limit


@pytest.mark.parametrize(
    ("written", "message"),
    [
        ("    maxConcurrentRequests: 0", "expected a whole number of at least 1"),
        ("    maxConcurrentRequests: 2.5", "expected a whole number of at least 1"),
        ("    stream: [yes]", 'expected "true" or "false"'),
    ],
)
def test_other_values_are_named_with_what_is_allowed(
    tmp_path: Path, written: str, message: str
) -> None:
    path = tmp_path / "local.agent.yaml"
    path.write_text(AGENT.format(settings=written), encoding="utf-8")
    with pytest.raises(AgentFileError) as caught:
        load_agent(path)
    assert message in str(caught.value)
    assert "providers.llamacpp." in str(caught.value)
