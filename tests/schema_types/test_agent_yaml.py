"""The two YAML parsers behind ``parse_yaml``: libyaml for speed, PyYAML's own for its messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from schema_types import _agent_yaml
from schema_types._agent_yaml import YamlSyntaxError, parse_yaml

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "resources" / "examples").glob("*.yaml"))

pytestmark = pytest.mark.skipif(
    _agent_yaml._CLoader is None, reason="PyYAML was built without libyaml"
)


def positions(node: Any) -> list[tuple[str, int, int]]:
    """Every node's tag and start position, depth first."""
    found = [(node.tag, node.start_mark.line, node.start_mark.column)]
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            found += positions(key) + positions(value)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            found += positions(item)
    return found


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_libyaml_and_pyyaml_read_every_example_alike(example: Path) -> None:
    text = example.read_text(encoding="utf-8")
    assert _agent_yaml._CLoader is not None
    fast_data, fast_root = _agent_yaml._parse_with(_agent_yaml._CLoader, text)
    pure_data, pure_root = _agent_yaml._parse_with(_agent_yaml._Loader, text)
    assert fast_data == pure_data
    assert positions(fast_root) == positions(pure_root)


def test_a_refused_text_gets_pyyamls_explained_message() -> None:
    with pytest.raises(YamlSyntaxError) as caught:
        parse_yaml("metadata:\n  name: Desk\n   description: bad indent\n")
    assert caught.value.line == 3
    assert "unexpected ':'" in caught.value.detail  # the hint for PyYAML's own wording


def test_both_parsers_keep_our_rules() -> None:
    data, _ = parse_yaml("when: 2026-05-01\n")
    assert data == {"when": "2026-05-01"}  # dates stay strings
    with pytest.raises(YamlSyntaxError, match="duplicate key 'a'") as caught:
        parse_yaml("a: 1\nb: 2\na: 3\n")
    assert (caught.value.line, caught.value.column) == (3, 1)


def test_nesting_too_deep_for_libyaml_is_refused_cleanly() -> None:
    # libyaml would recurse in C past the stack's end on this; the pure parser refuses it.
    depth = 100_000
    with pytest.raises(YamlSyntaxError, match="nested too deeply"):
        parse_yaml("[" * depth + "]" * depth)
