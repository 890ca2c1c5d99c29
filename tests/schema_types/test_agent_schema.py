"""The agent file's JSON Schema: shipped equal to the generated one, and agreeing with the loader.

Agreement is tested on every bundled example and on every malformed file of
``test_malformed_files``: what the loader accepts the schema accepts; what the loader refuses the
schema refuses too, except the rules only the loader knows (named below, each with its reason).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator

from schema_types.agent_schema import (
    agent_json_schema,
    schema_text,
    shipped_schema_text,
)
from schema_types.errors import AgentFileError
from schema_types.files.agent_file import load_agent
from schema_types.files.agent_yaml import YamlSyntaxError, parse_yaml_data
from tests.schema_types.test_malformed_files import CASES

EXAMPLES = sorted((Path(__file__).parents[2] / "resources" / "examples").glob("*.agent.yaml"))
VALIDATOR = Draft7Validator(agent_json_schema())

# Malformed files the loader refuses and the schema lets through, and why only the loader can say.
LOADER_ONLY = {
    "duplicate_tool_names": "names unique across a list",
    "bad_regex_pattern": "a parameters schema's soundness (Python's regex compiler)",
    "default_not_in_enum": "a parameters schema's soundness",
    "default_of_wrong_type": "a parameters schema's soundness",
    "minimum_above_maximum": "a parameters schema's soundness",
    "parameters_root_not_object": "a parameters schema's soundness",
    "unknown_parameter_type": "a parameters schema's soundness",
    "required_names_missing_property": "a parameters schema's soundness",
    "ref_cycle": "a parameters schema's references",
    "ref_to_itself": "a parameters schema's references",
    "ref_loop_through_anyof": "a parameters schema's references",
    "ref_to_another_document": "a parameters schema's references",
    "ref_to_nothing": "a parameters schema's references",
    "ref_to_an_unknown_anchor": "a parameters schema's references",
    "ref_to_a_value_not_a_schema": "a parameters schema's references",
    "ref_chain_too_long": "a parameters schema's references",
    "provider_stream_not_a_truth_value": "the words stream reads (the schema checks the type)",
    "max_concurrent_requests_zero": "the words maxConcurrentRequests reads (likewise)",
}


def _schema_errors(data: Any) -> list[str]:
    return [error.message for error in VALIDATOR.iter_errors(data)]


def _loads(tmp_path: Path, text: str) -> bool:
    path = tmp_path / "case.agent.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        load_agent(path)
    except AgentFileError:
        return False
    return True


def test_the_shipped_schema_is_the_generated_one():
    assert shipped_schema_text() == schema_text(), (
        "schema_types/agent.schema.json is out of date with the models: write it again with "
        "`python -c 'from schema_types.agent_schema import schema_text; "
        'open("schema_types/agent.schema.json", "w").write(schema_text())\'`'
    )


def test_the_schema_is_a_valid_draft_07_schema():
    Draft7Validator.check_schema(agent_json_schema())


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_each_example_names_the_shipped_schema_and_passes_it(example: Path):
    text = example.read_text(encoding="utf-8")
    first = text.splitlines()[0]
    found = re.fullmatch(r"# yaml-language-server: \$schema=(\S+)", first)
    assert found, f"{example.name} does not start with the yaml-language-server line"
    target = (example.parent / found.group(1)).resolve()
    assert target.read_text(encoding="utf-8") == schema_text()

    assert load_agent(example).tools
    assert _schema_errors(parse_yaml_data(text)) == []


@pytest.mark.parametrize(("name", "text"), [(c[0], c[1]) for c in CASES], ids=[c[0] for c in CASES])
def test_the_schema_refuses_what_the_loader_refuses_but_the_loader_only_rules(
    tmp_path: Path, name: str, text: str
):
    assert not _loads(tmp_path, text)  # every case is malformed
    try:
        data = parse_yaml_data(text)
    except YamlSyntaxError:
        return  # YAML syntax is the loader's alone: the editor's YAML parser reports it
    errors = _schema_errors(data)
    if name in LOADER_ONLY:
        assert errors == [], f"the schema now catches {name}: drop it from LOADER_ONLY"
    else:
        assert errors, f"the schema accepts {name}, which the loader refuses"


GOOD_VARIANTS = {
    "unquoted_endpoint_settings": (
        "providers:\n  ollama:\n    OLLAMA_HOST: http://localhost:11434\n"
        "    stream: false\n    maxConcurrentRequests: 4\n"
    ),
    "unknown_keys_everywhere": (
        "x-owner: team-a\nmetadata:\n  x-tag: 1\n  tools:\n    - name: a.b-c_d\n      x-ui: {}\n"
        "settings:\n  mostRecentModel: openai:gpt-4.1\n"
    ),
    "http_server_with_url": "mcpServers:\n  web:\n    type: streamable-http\n    url: http://x\n",
    "stdio_server_by_default": "mcpServers:\n  files:\n    command: npx\n",
    "caller_case": (
        "metadata:\n  tools:\n    - name: book\n      tests:\n        - name: words\n"
        "          ask: book it\n          expect: {picks: book, toolCalls: [a, {name: b}]}\n"
    ),
    "longest_tool_name": f"metadata:\n  tools:\n    - name: {'n' * 128}\n",
}


@pytest.mark.parametrize("text", GOOD_VARIANTS.values(), ids=GOOD_VARIANTS.keys())
def test_what_the_loader_accepts_the_schema_accepts(tmp_path: Path, text: str):
    assert _loads(tmp_path, text)
    assert _schema_errors(parse_yaml_data(text)) == []


BAD_VARIANTS = {
    "tool_name_too_long": f"metadata:\n  tools:\n    - name: {'n' * 129}\n",
    # A block scalar keeps its final newline: not a name an MCP client can call.
    "tool_name_with_a_final_newline": "metadata:\n  tools:\n    - name: |\n        search\n",
    "stdio_server_with_empty_command": "mcpServers:\n  files:\n    command: ''\n",
    "sse_server_without_url": "mcpServers:\n  old:\n    type: sse\n    command: x\n",
    "case_without_name": (
        "metadata:\n  tools:\n    - name: a\n      tests:\n        - arguments: {}\n"
    ),
}


@pytest.mark.parametrize("text", BAD_VARIANTS.values(), ids=BAD_VARIANTS.keys())
def test_what_the_schema_refuses_the_loader_refuses(tmp_path: Path, text: str):
    assert _schema_errors(parse_yaml_data(text))
    assert not _loads(tmp_path, text)


def test_quoted_numbers_load_but_the_schema_asks_for_a_number(tmp_path: Path):
    # The one place the schema is stricter (agent_schema.SCHEMA_STRICTER): pydantic's coercion.
    text = "settings:\n  maxChatTurns: '10'\n"
    assert _loads(tmp_path, text)
    assert _schema_errors(parse_yaml_data(text)) == ["'10' is not of type 'integer'"]


def test_the_schema_is_json_a_yaml_language_server_reads():
    data = json.loads(shipped_schema_text())
    assert data["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert "metadata" in data["properties"] and "systemPrompt" in data["properties"]
