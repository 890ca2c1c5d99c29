"""The reference pages generated from the code when the docs are built (an mkdocs hook).

``mkdocs.yml`` names this file under ``hooks:``; ``on_files`` adds three pages that exist only in
the built site, so they can never fall behind the code:

- ``reference/cli.md``: ``metaagent --help`` and every subcommand's ``--help``, from the same
  argparse parsers the command line runs (``mcp_export.cli.build_parser``; ``install-desktop``'s
  from ``app.desktop_install``, which imports no Qt);
- ``reference/agent-schema.md``: the agent file's JSON Schema (``metaagent schema``), with a table
  of its top-level keys;
- ``reference/expectations.md``: the expectation kinds of a test case, from
  ``schema_types.cases``: its docstring and the ``Expectations`` / ``FieldCheck`` models.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
import itertools
import json
import os
import re
import textwrap
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

GENERATED_NOTE = (
    "!!! note\n    This page is generated from the code each time the docs are built "
    "(`docs/gen_reference.py`); edit the code, not the page.\n\n"
)


def _help_of(argv: list[str]) -> str:
    """What ``metaagent ARGV --help`` prints, at a fixed width."""
    os.environ["COLUMNS"] = "100"
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        if argv and argv[0] == "install-desktop":
            from app.desktop_install import main as install_desktop

            install_desktop(["--help"])
        else:
            from mcp_export.cli import build_parser

            build_parser(argv[0] if argv else None).parse_args([*argv, "--help"])
    return out.getvalue().rstrip()


def cli_page() -> str:
    from mcp_export.cli import COMMANDS

    names = [name.lstrip("_") for name in COMMANDS]
    parts = [
        "# Command line reference\n\n",
        GENERATED_NOTE,
        "The studio is `metaagent [AGENT_FILE …]`; every other use is a subcommand below. "
        "The guide to them is [The command line](../cli.md).\n\n",
        "## metaagent\n\n```text\n",
        _help_of([]),
        "\n```\n",
    ]
    for name in [*names, "install-desktop"]:
        parts += [f"\n## metaagent {name}\n\n```text\n", _help_of([name]), "\n```\n"]
    return "".join(parts)


def schema_page() -> str:
    from schema_types.agent_schema import agent_json_schema

    schema: dict[str, Any] = agent_json_schema()
    rows = []
    for key, value in schema.get("properties", {}).items():
        target = str(value.get("$ref", "")).rsplit("/", 1)[-1]
        text = value.get("description") or schema.get("$defs", {}).get(target, {}).get(
            "description"
        )
        description = " ".join(str(text or "").split()).replace("|", "\\|")
        rows.append(f"| `{key}` | {description} |")
    required = ", ".join(f"`{key}`" for key in schema.get("required", [])) or "none"
    return "".join(
        [
            "# Agent file schema\n\n",
            GENERATED_NOTE,
            "`metaagent schema` prints this JSON Schema (draft-07); the package ships it as "
            "`schema_types/agent.schema.json`. Start an agent file with "
            "`# yaml-language-server: $schema=agent.schema.json` (a path relative to the file, "
            "or a URL) and editors with the YAML language server complete and check it; "
            "[The agent file](../agent-file.md) says what only the loader checks.\n\n",
            f"Required at the top level: {required}.\n\n",
            "| key | description |\n|---|---|\n",
            "\n".join(rows),
            "\n\n## The whole schema\n\n```json\n",
            json.dumps(schema, indent=2, ensure_ascii=False),
            "\n```\n",
        ]
    )


def _attribute_docs(model: Any) -> dict[str, str]:
    """The docstrings written under a model's fields (``name: type`` then a string)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(model)))
    body = tree.body[0].body if isinstance(tree.body[0], ast.ClassDef) else []
    docs: dict[str, str] = {}
    for field, after in itertools.pairwise(body):
        if (
            isinstance(field, ast.AnnAssign)
            and isinstance(field.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[field.target.id] = after.value.value
    return docs


def _example_comments(text: str) -> dict[str, str]:
    """The comments beside each key in the YAML examples of a docstring (``key: … # comment``)."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        match = re.match(r"\s+([A-Za-z]+): .*?#\s*(.+)$", line)
        if match:
            found.setdefault(match.group(1), match.group(2).strip())
    return found


def _field_rows(model: Any, comments: dict[str, str] | None = None) -> list[str]:
    schema = model.model_json_schema(by_alias=True)
    docs = _attribute_docs(model)
    rows = []
    for name, info in model.model_fields.items():
        alias = info.alias or name
        prop = schema["properties"].get(alias, {})
        kinds = _type_of(prop)
        value = None if info.is_required() else info.get_default(call_default_factory=True)
        default = "—" if info.is_required() else f"`{json.dumps(value)}`"
        doc = info.description or docs.get(name) or (comments or {}).get(alias, "")
        doc = " ".join(doc.split()).replace("|", "\\|")
        rows.append(f"| `{alias}` | {kinds} | {default} | {doc} |")
    return rows


def _type_of(prop: dict[str, Any]) -> str:
    if "type" in prop:
        kind = prop["type"]
        if kind == "array":
            return f"array of {_type_of(prop.get('items', {}))}"
        return str(kind)
    if "anyOf" in prop:
        return " or ".join(_type_of(part) for part in prop["anyOf"])
    if "$ref" in prop:
        return str(prop["$ref"]).rsplit("/", 1)[-1]
    return "any"


def _inline(line: str) -> str:
    """reST's inline code and roles (``x``, :class:`x`) as Markdown code."""
    return re.sub(r":\w+:`([^`]+)`", r"`\1`", line).replace("``", "`")


def docstring_markdown(text: str) -> str:
    """A module docstring as Markdown: its ``::`` blocks as YAML code, its reST roles as code."""
    out: list[str] = []
    block: list[str] | None = None

    def close_block() -> None:
        if block is not None:
            code = textwrap.dedent("\n".join(block)).strip("\n").splitlines()
            out.extend(["```yaml", *code, "```", ""])

    for line in textwrap.dedent(text).strip().splitlines():
        if block is not None and (not line.strip() or line.startswith(" ")):
            block.append(line)
            continue
        close_block()
        block = None
        if line.endswith("::"):
            out.extend([_inline(line[:-1]), ""])
            block = []
        else:
            out.append(_inline(line))
    close_block()
    return "\n".join(out).strip() + "\n"


def expectations_page() -> str:
    import schema_types.cases as cases

    header = "| key | type | default | what it checks |\n|---|---|---|---|\n"
    return "".join(
        [
            "# Expectation kinds\n\n",
            GENERATED_NOTE,
            "A test case's `expect:` holds these keys (from `schema_types/cases.py`). "
            "[Test cases](../test-cases.md) says how `metaagent test` and the studio run them.\n\n",
            "## From the module's own documentation\n\n",
            docstring_markdown(cases.__doc__ or ""),
            "\n",
            "## `expect:` keys\n\n",
            header,
            "\n".join(_field_rows(cases.Expectations, _example_comments(cases.__doc__ or ""))),
            "\n\n## A field check (`fields: {POINTER: …}`)\n\n",
            header,
            "\n".join(_field_rows(cases.FieldCheck)),
            "\n\n## An expected inner tool call (`toolCalls: [{…}]`)\n\n",
            header,
            "\n".join(_field_rows(cases.CalledTool)),
            "\n",
        ]
    )


PAGES = {
    "reference/cli.md": cli_page,
    "reference/agent-schema.md": schema_page,
    "reference/expectations.md": expectations_page,
}


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for path, build in PAGES.items():
        files.append(File.generated(config, path, content=build()))
    return files
