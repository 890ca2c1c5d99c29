"""The two YAML parsers behind ``parse_yaml``: libyaml for speed, PyYAML's own for its messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from schema_types.errors import AgentFileError
from schema_types.files import _yaml_loaders
from schema_types.files import agent_yaml as _agent_yaml
from schema_types.files._yaml_dump import dump_yaml
from schema_types.files.agent_file import load_agent
from schema_types.files.agent_yaml import MAX_VALUES, YamlSyntaxError, parse_yaml, parse_yaml_data
from schema_types.limits import MAX_NESTING

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "resources" / "examples").glob("*.yaml"))

pytestmark = pytest.mark.skipif(
    _yaml_loaders.FastLoader is None, reason="PyYAML was built without libyaml"
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
    assert _yaml_loaders.FastLoader is not None
    fast_data, fast_root = _agent_yaml._parse_with(_yaml_loaders.FastLoader, text)
    pure_data, pure_root = _agent_yaml._parse_with(_yaml_loaders.PureLoader, text)
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
    # libyaml's own composer would recurse in C past the stack's end on this.
    depth = 100_000
    with pytest.raises(YamlSyntaxError, match="nested too deeply"):
        parse_yaml("[" * depth + "]" * depth)


# Texts the quick reading (data from libyaml's events) must read exactly as the loaders do, or
# leave to them: anchors, tags, merge keys, YAML 1.1 scalars, repeated keys, several documents.
TRICKY = [
    "a: &x [1, 2]\nb: *x\n",
    "a: &x 1\nb: *x\n",
    "- !!str 5\n- !!int '7'\n",
    "a: 0x1F\nb: 1_000\nc: .5\nd: yes\ne: ~\nf: 2026-01-01\ng: 1:30\nh: -.inf\n",
    "<<: {a: 1}\nb: 2\n",
    "base: &b {a: 1}\nmore:\n  <<: *b\n  c: 2\n",
    "? [a]\n: b\n",
    "a: 1\na: 2\n",
    "1: a\n1.0: b\n",
    "true: 1\n1: 2\n",
    "--- 1\n--- 2\n",
    "",
    "# only a comment\n",
    "---\n",
    "a: *y\n",
    "a: &x [*x]\n",
    "&a a: &a b\n",
    "!!set {a, b}\n",
    "x: !custom value\n",
    "a: =\n",
    "[1, [2, {a: [3, {b: null}]}]]\n",
    "'quoted': \"also\"\nplain: text\n",
    "prompt: |\n  line one\n  line two\nfolded: >\n  one\n  two\n",
]


def _reading(read: Any, text: str) -> tuple[Any, ...]:
    try:
        return ("data", read(text))
    except YamlSyntaxError as exc:
        return ("refused", exc.detail, exc.line, exc.column)


@pytest.mark.parametrize("text", TRICKY)
def test_the_quick_reading_agrees_with_the_loaders(text: str) -> None:
    assert _reading(parse_yaml_data, text) == _reading(lambda t: parse_yaml(t)[0], text)


_JSON_DATA = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False),
        st.text(max_size=20),
    ),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)


@settings(max_examples=300)
@given(_JSON_DATA)
def test_what_we_write_is_read_back_the_quick_way(data: Any) -> None:
    text = dump_yaml({"value": data})
    assert _yaml_loaders.data_from_events(text) == {"value": data}  # no fallback needed


@pytest.mark.parametrize(
    "read", [parse_yaml_data, lambda t: parse_yaml(t)[0]], ids=["quick", "nodes"]
)
def test_one_nesting_limit_in_either_reading(read: Any) -> None:
    assert read("[" * MAX_NESTING + "]" * MAX_NESTING) is not None
    with pytest.raises(YamlSyntaxError, match="nested too deeply"):
        read("[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1))


def test_a_document_of_too_many_values_is_refused_where_they_overflow() -> None:
    text = "[" + "0, " * MAX_VALUES + "0]\n"

    with pytest.raises(YamlSyntaxError) as caught:
        parse_yaml_data(text)

    # The list is a value too, so its millionth zero (at column 2 + 3 × 999 999) is one too many.
    assert (caught.value.line, caught.value.column) == (1, 3 * MAX_VALUES - 1)
    assert caught.value.detail == (
        "the document holds more than 1000000 values: an agent file holds far fewer; check that "
        "this is the agent file you meant"
    )


def test_tools_as_prompts_reads_as_true_or_false_and_is_off_when_absent(tmp_path: Path) -> None:
    path = tmp_path / "a.agent.yaml"
    path.write_text("metadata: {name: A}\nsettings: {maxChatTurns: 3}\n", encoding="utf-8")
    assert load_agent(path).settings.tools_as_prompts is False
    path.write_text("settings:\n  toolsAsPrompts: true\n", encoding="utf-8")
    assert load_agent(path).settings.tools_as_prompts is True
    path.write_text("settings:\n  # serve prompts?\n  toolsAsPrompts: maybe\n", encoding="utf-8")
    with pytest.raises(AgentFileError) as refused:
        load_agent(path)
    assert str(refused.value).endswith(
        ':3:19: settings.toolsAsPrompts: expected true or false, got "maybe"'
    )
