"""Pure data: JSON-Schema parameter types, tool and agent models, the prompt-template engine, and
agent-file load/save.

Imports pydantic, the standard library, jsonschema and pyyaml only; no Qt, no MCP SDK, no I/O
beyond reading and writing agent files. Everything above (the runtime, the server, the studio) uses
the names listed here.
"""
