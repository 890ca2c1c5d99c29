"""YAML text for agent data: key order kept, block scalars for multi-line text, no anchors.

Multi-line strings are written as ``|`` block scalars, long lines are never folded and shared
values are written out in full, so prompts stay readable and diffs stay small. Everything written
here reads back with libyaml (``files._yaml_loaders``) to the same data.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

__all__ = ["NO_WRAP", "dump_yaml"]


class _Dumper(yaml.SafeDumper):
    """Block scalars for multi-line strings, and no anchors for shared values."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def analyze_scalar(self, scalar: str) -> Any:
        # PyYAML will not put a tab in a block scalar although YAML allows it there; code in a
        # prompt would otherwise turn into one long double-quoted line. Analysing the text with
        # the tabs masked lets the block style through; quoting rules stay as strict as before.
        if "\t" in scalar and "\n" in scalar:
            analysis = super().analyze_scalar(scalar.replace("\t", "x"))
            analysis.scalar = scalar
            return analysis
        return super().analyze_scalar(scalar)

    def determine_block_hints(self, text: str) -> str:
        # libyaml refuses a block scalar whose first line starts with a tab unless the header
        # gives the indentation (``|2``); PyYAML adds it only for a leading space or newline.
        hints: str = super().determine_block_hints(text)
        if text.startswith("\t") and not hints[:1].isdigit():
            hints = f"{self.best_indent}{hints}"
        return hints

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        # Indent list items under their key (``tools:\n  - name: …``) as people write them.
        super().increase_indent(flow, False)


_UNICODE_BREAKS = re.compile("[\x85\u2028\u2029\ufeff]")


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # PyYAML falls back to a quoted style by itself where a block scalar cannot hold the text
    # exactly (trailing spaces on a line, control characters), so this never loses content.
    if _UNICODE_BREAKS.search(value):
        # YAML reads NEL, LS and PS as line breaks; only escapes in double quotes keep them.
        style: str | None = '"'
    else:
        style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _represent_list(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.SequenceNode:
    # Short lists of short scalars (enum, required, examples, args) read best on one line.
    flow = len(value) <= _FLOW_ITEMS and all(
        value_item is None
        or isinstance(value_item, bool | int | float)
        or (
            isinstance(value_item, str) and len(value_item) <= _FLOW_TEXT and "\n" not in value_item
        )
        for value_item in value
    )
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flow)


_FLOW_ITEMS = 12
_FLOW_TEXT = 40
_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(list, _represent_list)

# Large enough that no description or prompt line is ever folded.
NO_WRAP = 1 << 30


def dump_yaml(data: Any) -> str:
    """YAML text for JSON-shaped data: key order kept, block scalars for multi-line strings."""
    return yaml.dump(
        data,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=NO_WRAP,
        default_flow_style=False,
        indent=2,
    )
