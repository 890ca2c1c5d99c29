"""Pure data: JSON-Schema parameter types, tool and agent models, the prompt-template engine, and
agent-file load/save.

Imports pydantic, the standard library, jsonschema and pyyaml only; no Qt, no MCP SDK, no I/O beyond
reading and writing agent files. This package exports nothing itself: everything above (the runtime,
the server, the studio) imports each name from the module that defines it.
"""
