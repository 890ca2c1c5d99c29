"""Malformed agent files: each gives one located message that says where and what is expected.

The table holds the file text and the exact message after the file name (``:line:column: path:
detail``); a test never sees a traceback and the file is never touched.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from schema_types.agent_checks import tool_schema_problems
from schema_types.errors import AgentFileError
from schema_types.files.agent_file import MAX_NESTING, AgentContentError, load_agent
from schema_types.secrets import find_literal_secrets

TOOL = (
    "metadata:\n  tools:\n    - name: search\n      parameters:\n        type: object\n"
    "        properties:\n"
)
# A tool whose parameters go on with references (and the text of a long chain of them).
REFS = "metadata:\n  tools:\n    - name: search\n      parameters:\n        type: object\n"
_CHAIN = "".join(f"          d{i}: {{$ref: '#/$defs/d{i + 1}'}}\n" for i in range(101))
_LOOP_ADVICE = (
    "so validating a value would never end: make one of these references point to a schema "
    "outside the loop"
)

CASES = [
    (
        "bad_indentation",
        "metadata:\n  name: Travel Desk\n   version: 1.0.0\n",
        ":3:11: unexpected ':': check the indentation, or put a value containing ': ' "
        "in quotes (invalid YAML: mapping values are not allowed here)",
    ),
    (
        "dedented_key",
        "metadata:\n    name: Travel Desk\n  version: 1.0.0\n",
        ":3:3: this line is not indented like the lines before it (invalid YAML: "
        "expected <block end>, but found '<block mapping start>' (while parsing a block "
        "mapping at line 1, column 1))",
    ),
    (
        "tab_indentation",
        "metadata:\n\tname: Travel Desk\n",
        ":2:1: a tab cannot indent YAML: indent with spaces (invalid YAML: found "
        "character '\\t' that cannot start any token)",
    ),
    (
        "unclosed_quote",
        'metadata:\n  name: "Travel Desk\n  version: 1.0.0\n',
        ":4:1: the quoted string that starts at line 2, column 9 is never closed",
    ),
    (
        "unclosed_flow_list",
        "metadata:\n  tools: [search, book\n",
        ":3:1: the [ ] that opens at line 2, column 10 is not closed, or an item is "
        "missing its comma (expected ',' or ']', but got '<stream end>')",
    ),
    (
        "duplicate_key",
        "metadata:\n  name: A\n  name: B\n",
        ":3:3: duplicate key 'name' (first used on line 2): each key may appear once in a mapping",
    ),
    (
        "undefined_alias",
        "settings: *defaults\n",
        ":1:11: an alias (*name) refers to an anchor (&name) that is not defined "
        "(invalid YAML: found undefined alias 'defaults')",
    ),
    (
        "recursive_alias",
        "metadata: &meta\n  tools:\n    - *meta\n",
        ":1:11: an alias refers to a value that contains it: agent files cannot be recursive",
    ),
    (
        "duplicate_tool_names",
        "metadata:\n  tools:\n    - name: search\n    - name: book\n    - name: search\n",
        ":5:13: metadata.tools[2].name: 'search' is already the name of "
        "metadata.tools[0]: tool names must be unique",
    ),
    (
        "tool_name_with_space",
        "metadata:\n  tools:\n    - name: book flight\n",
        ":3:13: metadata.tools[0].name: tool name 'book flight' is not valid for MCP: "
        "use 1 to 128 letters, digits, '_', '-' or '.'",
    ),
    (
        "tool_name_empty",
        "metadata:\n  tools:\n    - name: ''\n",
        ":3:13: metadata.tools[0].name: tool name '' is not valid for MCP: use 1 to 128 "
        "letters, digits, '_', '-' or '.'",
    ),
    (
        "tool_without_name",
        "metadata:\n  tools:\n    - description: Books a flight.\n",
        ":3:7: metadata.tools[0].name: required, but missing",
    ),
    (
        "tools_not_a_list",
        "metadata:\n  tools:\n    search: {}\n",
        ":3:5: metadata.tools: expected a list, got a mapping",
    ),
    (
        "tool_not_a_mapping",
        "metadata:\n  tools: [search]\n",
        ":2:11: metadata.tools[0]: expected a mapping for a tool (name, description, "
        'parameters, prompt), got "search"',
    ),
    (
        "parameters_not_a_mapping",
        "metadata:\n  tools:\n    - name: search\n      parameters: anything\n",
        ":4:19: metadata.tools[0].parameters: expected a mapping (key: value pairs), "
        'got "anything"',
    ),
    (
        "parameters_root_not_object",
        "metadata:\n  tools:\n    - name: search\n      parameters: {type: string}\n",
        ":4:19: metadata.tools[0].parameters: the parameters root must be an object "
        "schema (type: object)",
    ),
    (
        "unknown_parameter_type",
        TOOL + "          city: {type: strnig}\n",
        ":7:24: metadata.tools[0].parameters.properties.city.type: unknown type "
        '"strnig" (expected one of string, number, integer, boolean, array, object, '
        "null)",
    ),
    (
        "required_names_missing_property",
        TOOL + "          city: {type: string}\n        required: [city, date]\n",
        ':8:26: metadata.tools[0].parameters.required[1]: "date" is not defined in properties',
    ),
    (
        "default_not_in_enum",
        TOOL + "          cabin: {type: string, enum: [economy, business], default: first}\n",
        ':7:69: metadata.tools[0].parameters.properties.cabin.default: "first" is not '
        'one of "economy", "business"',
    ),
    (
        "default_of_wrong_type",
        TOOL + "          nights: {type: integer, default: many}\n",
        ":7:44: metadata.tools[0].parameters.properties.nights.default: expected "
        'integer, got string "many"',
    ),
    (
        "minimum_above_maximum",
        TOOL + "          age: {type: integer, minimum: 18, maximum: 12}\n",
        ":7:41: metadata.tools[0].parameters.properties.age.minimum: 18 is greater than maximum 12",
    ),
    (
        "bad_regex_pattern",
        TOOL + "          code: {type: string, pattern: '[A-Z'}\n",
        ":7:41: metadata.tools[0].parameters.properties.code.pattern: invalid regular "
        "expression: unterminated character set at position 0",
    ),
    (
        "ref_cycle",
        REFS + "        properties:\n          a: {$ref: '#/$defs/x'}\n        $defs:\n"
        "          x: {$ref: '#/$defs/y'}\n          y: {$ref: '#/$defs/x'}\n",
        ':9:21: metadata.tools[0].parameters.$defs.x.$ref: the reference "#/$defs/y" leads back '
        "here without descending into a property or an item ($defs.x → $defs.y → $defs.x), "
        + _LOOP_ADVICE,
    ),
    (
        "ref_to_itself",
        REFS + "        properties:\n          a: {$ref: '#/properties/a'}\n",
        ':7:21: metadata.tools[0].parameters.properties.a.$ref: the reference "#/properties/a" '
        "leads back here without descending into a property or an item (properties.a → "
        "properties.a), " + _LOOP_ADVICE,
    ),
    (
        "ref_loop_through_anyof",
        REFS + "        anyOf: [{$ref: '#'}]\n",
        ':6:24: metadata.tools[0].parameters.anyOf[0].$ref: the reference "#" leads back here '
        "without descending into a property or an item (anyOf[0] → the root → anyOf[0]), "
        + _LOOP_ADVICE,
    ),
    (
        "ref_to_another_document",
        REFS + "        properties:\n          a: {$ref: 'https://example.com/a.json'}\n",
        ":7:21: metadata.tools[0].parameters.properties.a.$ref: cannot resolve the reference "
        '"https://example.com/a.json": only references within the parameters schema '
        "(#/$defs/NAME, #/properties/NAME, …) are followed; copy the schema it names under $defs "
        "and refer to it as #/$defs/NAME",
    ),
    (
        "ref_to_nothing",
        REFS + "        properties:\n          a: {$ref: '#/$defs/cabin'}\n        $defs:\n"
        "          cabni: {type: string}\n",
        ":7:21: metadata.tools[0].parameters.properties.a.$ref: cannot resolve the reference "
        '"#/$defs/cabin": $defs has no "cabin" (it has "cabni")',
    ),
    (
        "ref_to_an_unknown_anchor",
        REFS + "        properties:\n          a: {$ref: '#cabin'}\n",
        ":7:21: metadata.tools[0].parameters.properties.a.$ref: cannot resolve the reference "
        '"#cabin": no $anchor is named "cabin"',
    ),
    (
        "ref_to_a_value_not_a_schema",
        REFS + "        properties:\n          a: {$ref: '#/required/0'}\n        required: [a]\n",
        ":7:21: metadata.tools[0].parameters.properties.a.$ref: the reference "
        '"#/required/0" leads to string "a", not to a schema',
    ),
    (
        "ref_chain_too_long",
        REFS
        + "        properties:\n          a: {$ref: '#/$defs/d0'}\n        $defs:\n"
        + _CHAIN
        + "          d101: {type: string}\n",
        ":9:15: metadata.tools[0].parameters.$defs.d0: references and combinations (allOf, "
        "anyOf, …) lead more than 100 schemas deep from here without descending into a property "
        "or an item, deeper than a value can be validated: shorten the chain",
    ),
    (
        "tools_at_top_level",
        "metadata:\n  name: Desk\ntools:\n  - name: search\n    prompt: Find it.\n",
        ":4:3: tools: tools are not read here: an agent's tools go under metadata "
        "(metadata.tools); move this list there",
    ),
    (
        "max_chat_turns_not_a_number",
        "settings:\n  maxChatTurns: lots\n",
        ':2:17: settings.maxChatTurns: expected an integer, got "lots"',
    ),
    (
        "max_chat_turns_zero",
        "settings:\n  maxChatTurns: 0\n",
        ":2:17: settings.maxChatTurns: must be at least 1, got 0",
    ),
    (
        "temperature_too_high",
        "settings:\n  temperature: 5\n",
        ":2:16: settings.temperature: must be at most 2, got 5",
    ),
    (
        "tool_permission_unknown",
        "settings:\n  toolPermission: sometimes\n",
        ':2:19: settings.toolPermission: expected one of "never", "tool" or '
        '"always", got "sometimes"',
    ),
    (
        "mode_unknown",
        "metadata:\n  mode: chatty\n",
        ':2:9: metadata.mode: expected one of "interactive", "autonomous" or "tools", got "chatty"',
    ),
    (
        "version_is_a_number",
        "metadata:\n  version: 1.0\n",
        ':2:12: metadata.version: expected a string, got 1.0 (put it in quotes: "1.0")',
    ),
    (
        "prompt_is_a_list",
        "metadata:\n  tools:\n    - name: search\n      prompt: [a, b]\n",
        ":4:15: metadata.tools[0].prompt: expected a string, got a list",
    ),
    (
        "response_format_wrong_type",
        "settings:\n  responseFormat: 3\n",
        ":2:19: settings.responseFormat: expected a mapping or a string, got 3",
    ),
    (
        "stdio_server_without_command",
        "mcpServers:\n  time:\n    type: stdio\n    args: [--local-timezone, UTC]\n",
        ":3:5: mcpServers.time: a stdio server needs a 'command'",
    ),
    (
        "http_server_without_url",
        "mcpServers:\n  search:\n    type: streamable-http\n",
        ":3:5: mcpServers.search: a streamable-http server needs a 'url'",
    ),
    (
        "unknown_server_type",
        "mcpServers:\n  search:\n    type: websocket\n    url: ws://localhost:9000\n",
        ':3:11: mcpServers.search.type: expected one of "stdio", "streamable-http" '
        'or "sse", got "websocket"',
    ),
    (
        "server_not_a_mapping",
        "mcpServers:\n  time: mcp-server-time\n",
        ":2:9: mcpServers.time: expected a mapping for an MCP server (type, command or "
        'url, …), got "mcp-server-time"',
    ),
    (
        "server_env_value_a_number",
        "mcpServers:\n  time:\n    command: mcp-server-time\n    env: {PORT: 8080}\n",
        ':4:17: mcpServers.time.env.PORT: expected a string, got 8080 (put it in quotes: "8080")',
    ),
    (
        "permission_required_not_boolean",
        "mcpServers:\n  time:\n    command: mcp-server-time\n"
        "    serverToolDefaults: {permissionRequired: maybe}\n",
        ":4:46: mcpServers.time.serverToolDefaults.permissionRequired: expected true or "
        'false, got "maybe"',
    ),
    (
        "providers_a_list",
        "providers:\n  - openai\n",
        ":2:3: providers: expected a mapping (key: value pairs), got a list",
    ),
    (
        "provider_value_a_number",
        "providers:\n  ollama:\n    OLLAMA_PORT: 11434\n",
        ":3:18: providers.ollama.OLLAMA_PORT: expected a string, got 11434 (put it in "
        'quotes: "11434")',
    ),
    (
        "provider_stream_not_a_truth_value",
        "providers:\n  llamacpp:\n    stream: 'yes'\n",
        ':3:13: providers.llamacpp.stream: expected "true" or "false", got "yes"',
    ),
    (
        "max_concurrent_requests_zero",
        "providers:\n  llamacpp:\n    maxConcurrentRequests: '0'\n",
        ":3:28: providers.llamacpp.maxConcurrentRequests: expected a whole number of at least 1, "
        'or "unlimited", got "0"',
    ),
    (
        "settings_a_list",
        "settings:\n  - model: openai:gpt-4.1\n",
        ":2:3: settings: expected a mapping for settings (model, maxChatTurns, "
        "temperature, …), got a list",
    ),
    (
        "metadata_a_string",
        "metadata: Travel Desk\n",
        ":1:11: metadata: expected a mapping for metadata (name, version, description, "
        'mode, tools), got "Travel Desk"',
    ),
    (
        "empty_file",
        "",
        ": the file is empty: an agent file needs at least a 'metadata:' section",
    ),
    (
        "comments_only",
        "# nothing here yet\n",
        ": the file is empty: an agent file needs at least a 'metadata:' section",
    ),
    (
        "top_level_list",
        "- metadata\n- settings\n",
        ":1:1: an agent file holds a mapping of metadata, settings, systemPrompt, "
        "providers and mcpServers, got a list",
    ),
    (
        "top_level_scalar",
        "Travel Desk\n",
        ":1:1: an agent file holds a mapping of metadata, settings, systemPrompt, "
        'providers and mcpServers, got "Travel Desk"',
    ),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_yaml_gives_one_located_message(tmp_path: Path, text: str, expected: str):
    path = tmp_path / "broken.agent.yaml"
    path.write_text(text, encoding="utf-8")

    with pytest.raises(AgentFileError) as caught:
        load_agent(path)

    assert str(caught.value) == f"{path}{expected}"
    assert path.read_text(encoding="utf-8") == text


SCHEMA_CASES = [
    "parameters_root_not_object",
    "unknown_parameter_type",
    "required_names_missing_property",
    "default_not_in_enum",
    "default_of_wrong_type",
    "minimum_above_maximum",
    "bad_regex_pattern",
    "ref_cycle",
    "ref_to_itself",
    "ref_loop_through_anyof",
    "ref_to_another_document",
    "ref_to_nothing",
    "ref_to_an_unknown_anchor",
    "ref_to_a_value_not_a_schema",
    "ref_chain_too_long",
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in CASES if c[0] in SCHEMA_CASES], ids=SCHEMA_CASES
)
def test_a_schema_problem_left_for_later_is_the_same_problem(
    tmp_path: Path, text: str, expected: str
):
    """``check_schemas=False`` (the studio) builds the agent; the check run later on it finds
    what the strict load refuses the file for, by the same path and words."""
    path = tmp_path / "unsound.agent.yaml"
    path.write_text(text, encoding="utf-8")

    agent = load_agent(path, check_schemas=False)
    problems = tool_schema_problems(agent)

    assert agent.tools[0].name == "search"
    assert [f"{p.path}: {p.detail}" for p in problems] == [expected.split(": ", 1)[1]]
    assert path.read_text(encoding="utf-8") == text


def test_endpoint_settings_that_read_as_one_load(tmp_path: Path):
    path = tmp_path / "local.agent.yaml"
    path.write_text(
        "providers:\n  llamacpp:\n    stream: 'False'\n    maxConcurrentRequests: unlimited\n"
        "  vllm:\n    maxConcurrentRequests: '8'\n",
        encoding="utf-8",
    )

    agent = load_agent(path)

    assert agent.providers["llamacpp"] == {"stream": "False", "maxConcurrentRequests": "unlimited"}
    assert agent.providers["vllm"] == {"maxConcurrentRequests": "8"}


def test_a_problem_the_model_sees_is_refused_even_when_schemas_are_checked_later(tmp_path: Path):
    path = tmp_path / "broken.agent.yaml"
    path.write_text("metadata:\n  tools:\n    - name: a\n      parameters: [x]\n")

    with pytest.raises(AgentContentError, match=r"metadata.tools\[0\].parameters: expected a"):
        load_agent(path, check_schemas=False)


EXAMPLES = sorted((Path(__file__).parents[2] / "resources" / "examples").glob("*.agent.yaml"))


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_a_sound_agent_has_no_schema_problems(example: Path):
    assert tool_schema_problems(load_agent(example, check_schemas=False)) == []


def test_there_are_at_least_thirty_malformed_cases():
    assert len(CASES) >= 30


def test_content_error_reports_the_first_problem_in_file_order_and_lists_all(tmp_path: Path):
    path = tmp_path / "many.agent.yaml"
    path.write_text(
        "metadata:\n"
        "  tools:\n"
        "    - name: book flight\n"
        "settings:\n"
        "  maxChatTurns: lots\n"
        "  toolPermission: sometimes\n",
        encoding="utf-8",
    )

    with pytest.raises(AgentContentError) as caught:
        load_agent(path)

    error = caught.value
    assert (error.line, error.column, error.path) == (3, 13, "metadata.tools[0].name")
    assert [str(problem) for problem in error.problems] == [
        f"{path}:3:13: metadata.tools[0].name: tool name 'book flight' is not valid for MCP: use "
        "1 to 128 letters, digits, '_', '-' or '.'",
        f'{path}:5:17: settings.maxChatTurns: expected an integer, got "lots"',
        f'{path}:6:19: settings.toolPermission: expected one of "never", "tool" or "always", '
        'got "sometimes"',
    ]


def test_json_syntax_error_is_located(tmp_path: Path):
    path = tmp_path / "agent.json"
    path.write_text('{"metadata": {"name": "Travel Desk",}}', encoding="utf-8")

    with pytest.raises(AgentFileError) as caught:
        load_agent(path)

    assert str(caught.value) == (
        f"{path}:1:37: invalid JSON: Expecting property name enclosed in double quotes"
    )


def test_json_content_error_names_path_line_and_column(tmp_path: Path):
    path = tmp_path / "agent.json"
    path.write_text('{\n  "settings": {\n    "maxChatTurns": "lots"\n  }\n}\n', encoding="utf-8")

    with pytest.raises(AgentFileError) as caught:
        load_agent(path)

    assert (
        str(caught.value) == f'{path}:3:21: settings.maxChatTurns: expected an integer, got "lots"'
    )


def test_json_duplicate_key_is_located(tmp_path: Path):
    path = tmp_path / "agent.json"
    path.write_text('{"metadata": {"name": "A",\n "name": "B"}}', encoding="utf-8")

    with pytest.raises(AgentFileError) as caught:
        load_agent(path)

    assert str(caught.value) == (
        f"{path}:2:2: duplicate key 'name' (first used on line 1): each key may appear once in a "
        "mapping"
    )


def test_empty_json_file_is_empty(tmp_path: Path):
    path = tmp_path / "agent.json"
    path.write_text("  \n", encoding="utf-8")

    with pytest.raises(AgentFileError) as caught:
        load_agent(path)

    assert str(caught.value) == (
        f"{path}: the file is empty: an agent file needs at least a 'metadata:' section"
    )


def test_bytes_that_are_not_utf8_are_located(tmp_path: Path):
    path = tmp_path / "binary.agent.yaml"
    path.write_bytes("metadata:\n  name: Zürich ".encode() + b"caf\xe9\n")

    with pytest.raises(AgentFileError) as caught:
        load_agent(path)

    assert str(caught.value) == (
        f"{path}:2:19: the file is not UTF-8 text (byte 0xe9 cannot be decoded); agent files are "
        "UTF-8"
    )


def test_control_characters_are_located(tmp_path: Path):
    path = tmp_path / "nul.agent.yaml"
    path.write_bytes(b"metadata:\n  name: Travel\x00Desk\n")

    with pytest.raises(AgentFileError) as caught:
        load_agent(path)

    assert str(caught.value) == (
        f"{path}:2:15: control character U+0000 is not allowed in YAML text (is this a binary "
        "file?)"
    )


def test_missing_file(tmp_path: Path):
    path = tmp_path / "nowhere.agent.yaml"

    with pytest.raises(AgentFileError) as caught:
        load_agent(path)

    assert str(caught.value) == f"{path}: no such file"


def test_directory_without_tsagent_json(tmp_path: Path):
    (tmp_path / "prompt.md").write_text("You are helpful.\n", encoding="utf-8")

    with pytest.raises(AgentFileError) as caught:
        load_agent(tmp_path)

    assert str(caught.value) == (
        f"{tmp_path}: not an agent directory: it has no tsagent.json (open a *.agent.yaml file, "
        "or a tsagent directory holding tsagent.json and prompt.md)"
    )


def test_tsagent_directory_with_broken_json_names_the_json_file(tmp_path: Path):
    description = tmp_path / "tsagent.json"
    description.write_text('{"settings": {"maxChatTurns": "lots"}}', encoding="utf-8")

    with pytest.raises(AgentFileError) as caught:
        load_agent(tmp_path)

    assert str(caught.value) == (
        f'{description}:1:31: settings.maxChatTurns: expected an integer, got "lots"'
    )


def test_alias_bomb_is_refused(tmp_path: Path):
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    path = tmp_path / "bomb.agent.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    with pytest.raises(AgentFileError) as caught:
        load_agent(path)

    assert str(caught.value) == (
        f"{path}:6:5: aliases expand this document to more than 1000000 values"
    )


def test_literal_api_key_loads_but_is_reported_as_a_warning(tmp_path: Path):
    path = tmp_path / "literal.agent.yaml"
    path.write_text(
        "providers:\n  openai:\n    OPENAI_API_KEY: sk-proj-abcdefghijklmnop1234\n",
        encoding="utf-8",
    )

    agent = load_agent(path)

    assert [str(p) for p in find_literal_secrets(agent)] == [
        "providers.openai.OPENAI_API_KEY: holds a literal secret; move it to the keyring "
        "(keyring://…) or an environment variable (env://…)"
    ]


def _nested_schema(levels: int) -> str:
    return "{type: object, properties: {a: " * levels + "{type: string}" + "}}" * levels


@pytest.mark.parametrize("check_schemas", [True, False])
def test_one_nesting_limit_whether_schemas_are_checked_now_or_later(
    tmp_path: Path, check_schemas: bool
) -> None:
    # The studio loads without the schema check (it runs later, in the window); an agent too
    # deep for that check must be refused there too, not opened and then fail in every view.
    # Objects nest 2 per schema level plus 5 around it: file, metadata, tools, tool, the leaf.
    deepest_allowed = (MAX_NESTING - 5) // 2
    path = tmp_path / "deep.agent.yaml"
    for levels, refused in ((deepest_allowed, False), (deepest_allowed + 1, True), (100, True)):
        path.write_text(
            f"metadata:\n  tools:\n    - name: t\n      parameters: {_nested_schema(levels)}\n"
        )
        if not refused:
            agent = load_agent(path, check_schemas=check_schemas)
            assert tool_schema_problems(agent) == []  # and the later check copes with it
            continue
        with pytest.raises(AgentFileError) as caught:
            load_agent(path, check_schemas=check_schemas)
        assert str(caught.value) == f"{path}: the document is nested too deeply to read"


@pytest.mark.parametrize("depth", [100, 400])
def test_absurdly_deep_nesting_is_refused_without_a_traceback(tmp_path: Path, depth: int):
    schema = "{type: object, properties: {a: " * depth + "{type: string}" + "}}" * depth
    path = tmp_path / "deep.agent.yaml"
    path.write_text(f"metadata:\n  tools:\n    - name: t\n      parameters: {schema}\n")

    with pytest.raises(AgentFileError) as caught:
        load_agent(path)

    assert str(caught.value) == f"{path}: the document is nested too deeply to read"
