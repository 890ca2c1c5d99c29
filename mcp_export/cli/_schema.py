"""``metaagent schema``: print the agent file's JSON Schema, for editors that check YAML.

Save it (``metaagent schema > agent.schema.json``) and start an ``*.agent.yaml`` with
``# yaml-language-server: $schema=agent.schema.json`` (a path relative to the agent file, or a
URL): VS Code's YAML extension, and any editor with the YAML language server, then completes
keys and flags wrong values as you type. The same text ships in the package as
``schema_types/agent.schema.json``.
"""

from __future__ import annotations

import argparse
import sys

from schema_types.agent_schema import schema_text

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``schema`` subcommand."""
    parser = subparsers.add_parser(
        "schema",
        help="print the agent file's JSON Schema (for editors with the YAML language server)",
        description=(
            "Print the JSON Schema of an agent file, generated from the models the loader uses. "
            "Save it beside your agents (metaagent schema > agent.schema.json) and start each "
            "*.agent.yaml with '# yaml-language-server: $schema=agent.schema.json' to have VS "
            "Code's YAML extension complete and check it."
        ),
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the schema; returns 0."""
    sys.stdout.write(schema_text())
    sys.stdout.flush()
    return 0
