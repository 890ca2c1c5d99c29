"""Pure data: JSON-Schema parameter types, tool and agent models, the prompt-template engine, and
agent-file load/save.

Imports pydantic, the standard library, jsonschema and pyyaml only; no Qt, no MCP SDK, no I/O
beyond reading and writing agent files. Everything above (the runtime, the server, the studio) uses
the names listed here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from schema_types._lazy import LazyExports

if TYPE_CHECKING:
    from schema_types._agent import (
        TOOL_NAME_PATTERN,
        Agent,
        AgentMetadata,
        AgentMode,
        AgentSettings,
        McpServerConfig,
        McpToolSetting,
        ToolDefinition,
        ToolPermission,
    )
    from schema_types._agent_file import (
        AgentContentError,
        agent_data_for_save,
        dump_agent_yaml,
        load_agent,
        save_agent,
    )
    from schema_types._arguments import (
        apply_defaults,
        sample_arguments,
        sample_value,
        validate_arguments,
    )
    from schema_types._errors import (
        AgentFileError,
        ArgumentsError,
        Problem,
        SchemaDefinitionError,
        SchemaError,
        SecretError,
    )
    from schema_types._json_text import format_path
    from schema_types._schema import (
        ArraySchema,
        BooleanSchema,
        IntegerSchema,
        NumberSchema,
        ObjectSchema,
        ParameterPath,
        RawSchema,
        SchemaNode,
        StringSchema,
        iter_nodes,
        parameter_paths,
        parameters_from_json,
        schema_from_json,
        schema_to_json,
    )
    from schema_types._schema_check import check_parameters_schema, ensure_parameters_schema
    from schema_types._secrets import (
        find_literal_secrets,
        is_reference,
        looks_secret,
        resolve_secret,
        store_secret_in_keyring,
    )
    from schema_types._template import (
        TOOL_FIELD_PATHS,
        Diagnostic,
        PlaceholderKind,
        Segment,
        SegmentKind,
        Severity,
        Token,
        TokenKind,
        diagnose,
        placeholder_kind,
        referenced_paths,
        render,
        render_segments,
        render_value,
        tokenize,
    )

# Each public name is imported from its module on first use (PEP 562): a program that needs the
# agent model does not pay for jsonschema or the schema nodes, and the studio starts sooner.
_WHERE: dict[str, str] = {
    "Agent": "schema_types._agent",
    "AgentContentError": "schema_types._agent_file",
    "AgentFileError": "schema_types._errors",
    "AgentMetadata": "schema_types._agent",
    "AgentMode": "schema_types._agent",
    "AgentSettings": "schema_types._agent",
    "ArgumentsError": "schema_types._errors",
    "ArraySchema": "schema_types._schema",
    "BooleanSchema": "schema_types._schema",
    "Diagnostic": "schema_types._template",
    "IntegerSchema": "schema_types._schema",
    "McpServerConfig": "schema_types._agent",
    "McpToolSetting": "schema_types._agent",
    "NumberSchema": "schema_types._schema",
    "ObjectSchema": "schema_types._schema",
    "ParameterPath": "schema_types._schema",
    "PlaceholderKind": "schema_types._template",
    "Problem": "schema_types._errors",
    "RawSchema": "schema_types._schema",
    "SchemaDefinitionError": "schema_types._errors",
    "SchemaError": "schema_types._errors",
    "SchemaNode": "schema_types._schema",
    "SecretError": "schema_types._errors",
    "Segment": "schema_types._template",
    "SegmentKind": "schema_types._template",
    "Severity": "schema_types._template",
    "StringSchema": "schema_types._schema",
    "TOOL_FIELD_PATHS": "schema_types._template",
    "TOOL_NAME_PATTERN": "schema_types._agent",
    "Token": "schema_types._template",
    "TokenKind": "schema_types._template",
    "ToolDefinition": "schema_types._agent",
    "ToolPermission": "schema_types._agent",
    "agent_data_for_save": "schema_types._agent_file",
    "apply_defaults": "schema_types._arguments",
    "check_parameters_schema": "schema_types._schema_check",
    "diagnose": "schema_types._template",
    "dump_agent_yaml": "schema_types._agent_file",
    "ensure_parameters_schema": "schema_types._schema_check",
    "find_literal_secrets": "schema_types._secrets",
    "format_path": "schema_types._json_text",
    "is_reference": "schema_types._secrets",
    "iter_nodes": "schema_types._schema",
    "load_agent": "schema_types._agent_file",
    "looks_secret": "schema_types._secrets",
    "parameter_paths": "schema_types._schema",
    "parameters_from_json": "schema_types._schema",
    "placeholder_kind": "schema_types._template",
    "referenced_paths": "schema_types._template",
    "render": "schema_types._template",
    "render_segments": "schema_types._template",
    "render_value": "schema_types._template",
    "resolve_secret": "schema_types._secrets",
    "sample_arguments": "schema_types._arguments",
    "sample_value": "schema_types._arguments",
    "save_agent": "schema_types._agent_file",
    "schema_from_json": "schema_types._schema",
    "schema_to_json": "schema_types._schema",
    "store_secret_in_keyring": "schema_types._secrets",
    "tokenize": "schema_types._template",
    "validate_arguments": "schema_types._arguments",
}


_LAZY = LazyExports(__name__, _WHERE)


def __getattr__(name: str) -> Any:
    return _LAZY.get(name)


def __dir__() -> list[str]:
    return _LAZY.names()


__all__ = [
    "TOOL_FIELD_PATHS",
    "TOOL_NAME_PATTERN",
    "Agent",
    "AgentContentError",
    "AgentFileError",
    "AgentMetadata",
    "AgentMode",
    "AgentSettings",
    "ArgumentsError",
    "ArraySchema",
    "BooleanSchema",
    "Diagnostic",
    "IntegerSchema",
    "McpServerConfig",
    "McpToolSetting",
    "NumberSchema",
    "ObjectSchema",
    "ParameterPath",
    "PlaceholderKind",
    "Problem",
    "RawSchema",
    "SchemaDefinitionError",
    "SchemaError",
    "SchemaNode",
    "SecretError",
    "Segment",
    "SegmentKind",
    "Severity",
    "StringSchema",
    "Token",
    "TokenKind",
    "ToolDefinition",
    "ToolPermission",
    "agent_data_for_save",
    "apply_defaults",
    "check_parameters_schema",
    "diagnose",
    "dump_agent_yaml",
    "ensure_parameters_schema",
    "find_literal_secrets",
    "format_path",
    "is_reference",
    "iter_nodes",
    "load_agent",
    "looks_secret",
    "parameter_paths",
    "parameters_from_json",
    "placeholder_kind",
    "referenced_paths",
    "render",
    "render_segments",
    "render_value",
    "resolve_secret",
    "sample_arguments",
    "sample_value",
    "save_agent",
    "schema_from_json",
    "schema_to_json",
    "store_secret_in_keyring",
    "tokenize",
    "validate_arguments",
]
