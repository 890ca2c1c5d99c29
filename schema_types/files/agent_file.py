"""Reading and writing agent files: ``*.agent.yaml``, JSON, and the older tsagent directory form.

Loading never shows a traceback to a person: an unreadable file, bad YAML or JSON, and content the
agent model refuses all become one :class:`AgentFileError` that says where (``file:line:column``
for syntax, the JSON path, with its line and column, for content) and what is expected. Content
errors are :class:`AgentContentError`, which also lists every other problem found.

Saving is atomic (``files.atomic_write``): a crash mid-save leaves the old file intact. Saving
over a YAML file edits it in place (``files._yaml_edit``): comments, key order, quoting and block
scalars stay, a save with no change writes the same bytes, and an edit changes only its own
lines. A new file, and a JSON one, is written whole, keys in the order of the file it replaces
where it has them (model order otherwise).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from yaml.nodes import Node

from schema_types.agent import Agent
from schema_types.agent_checks import LocatedProblem, check_agent_data
from schema_types.errors import AgentFileError
from schema_types.files._file_text import read_agent_text
from schema_types.files._yaml_dump import dump_yaml
from schema_types.files.agent_yaml import YamlSyntaxError, parse_yaml, parse_yaml_data
from schema_types.files.atomic_write import write_atomically
from schema_types.limits import MAX_FILE_BYTES, MAX_NESTING, TOO_DEEP, nesting_depth
from schema_types.secrets import find_literal_secrets

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_NESTING",
    "TSAGENT_FILES",
    "AgentContentError",
    "agent_data_for_save",
    "dump_agent_yaml",
    "load_agent",
    "save_agent",
    "text_for_save",
]

# The agent description file of a tsagent directory (older releases used ``tspark.json``).
TSAGENT_FILES = ("tsagent.json", "tspark.json")
_TSAGENT_PROMPT = "prompt.md"
_DESCRIPTION_ADVICE = "a tsagent directory's tsagent.json is a JSON file describing the agent"
_PROMPT_ADVICE = "a tsagent directory's prompt.md is a text file holding the system prompt"


class AgentContentError(AgentFileError):
    """The file parses but its content is not a valid agent.

    The error itself describes the first problem in file order; ``problems`` lists all of them
    (the first one included), each as an :class:`AgentFileError` with its own position and path.
    """

    def __init__(self, problems: Sequence[AgentFileError]) -> None:
        first = problems[0]
        super().__init__(
            first.file, first.detail, line=first.line, column=first.column, path=first.path
        )
        self.problems = list(problems)


def load_agent(path: str | Path, *, check_schemas: bool = True) -> Agent:
    """Read an agent file.

    Args:
        path: a ``*.agent.yaml`` / ``.yml`` file, a ``.json`` file, or a tsagent directory
            (``tsagent.json`` plus an optional ``prompt.md`` holding the system prompt). Only
            regular files of at most :data:`MAX_FILE_BYTES` are read.
        check_schemas: refuse an agent whose tools' parameters schemas are unsound. The studio
            passes False: it opens such an agent, checks each tool's schema once the window is
            up, and shows the problems so they can be fixed there.

    Returns:
        The agent, with every key of the file kept (unknown ones too).

    Raises:
        AgentContentError: the file parses but its content is not a valid agent (a wrong type,
            an invalid tool name, two tools with one name, an unsound parameters schema…).
        AgentFileError: the file cannot be read (missing, not a regular file, too large) or is
            not valid YAML/JSON.
    """
    path = Path(path)
    if path.is_dir():
        return _load_tsagent_dir(path, check_schemas)
    text = read_agent_text(path)
    if path.suffix.lower() == ".json":
        data = _parse_json(path, text)
        return _build(path, data, _JsonPositions(path, text, data), check_schemas)
    data = _parse_yaml(path, text)
    return _build(path, data, lambda: _yaml_positions(text), check_schemas)


def _build(
    file: Path, data: Any, positions: Callable[[], Node | None], check_schemas: bool
) -> Agent:
    """The agent, or every problem of it; ``positions`` gives the file's node tree for lines and
    columns, asked for only when there are problems to locate."""
    if data is None:
        raise AgentFileError(
            str(file), "the file is empty: an agent file needs at least a 'metadata:' section"
        )
    if nesting_depth(data) > MAX_NESTING:
        raise AgentFileError(str(file), TOO_DEEP)
    try:
        agent, problems = check_agent_data(data, None, check_schemas=check_schemas)
        if agent is None:
            root = positions()
            if root is not None:
                _, problems = check_agent_data(data, root, check_schemas=check_schemas)
    except RecursionError as exc:  # the schema checks recurse per level of nesting
        raise AgentFileError(str(file), TOO_DEEP) from exc
    if agent is None:
        raise AgentContentError([_as_error(file, problem) for problem in problems])
    return agent


def _as_error(file: Path, problem: LocatedProblem) -> AgentFileError:
    return AgentFileError(
        str(file), problem.detail, line=problem.line, column=problem.column, path=problem.path
    )


def _parse(path: Path, text: str) -> Any:
    """The data of an agent file's text (JSON for ``*.json``, YAML otherwise)."""
    if path.suffix.lower() == ".json":
        return _parse_json(path, text)
    return _parse_yaml(path, text)


def _parse_yaml(path: Path, text: str) -> Any:
    try:
        return parse_yaml_data(text)
    except YamlSyntaxError as exc:
        raise AgentFileError(str(path), exc.detail, line=exc.line, column=exc.column) from exc


def _yaml_positions(text: str) -> Node | None:
    # The text has been read once already, so it parses; the node tree costs a second reading,
    # paid only by a file with problems to locate.
    return parse_yaml(text)[1]


def _parse_json(path: Path, text: str) -> Any:
    if not text.strip():
        return None
    repeated: list[str] = []

    def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(pairs)
        if len(result) < len(pairs):
            repeated.append(next(k for i, (k, _) in enumerate(pairs) if k in dict(pairs[:i])))
        return result

    try:
        data = json.loads(text, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as exc:
        raise AgentFileError(
            str(path), f"invalid JSON: {exc.msg}", line=exc.lineno, column=exc.colno
        ) from exc
    except RecursionError as exc:
        raise AgentFileError(str(path), TOO_DEEP) from exc
    if repeated:
        _refuse_repeated_key(path, text, repeated[0])
    return data


def _refuse_repeated_key(path: Path, text: str, key: str) -> None:
    # json.loads would keep the last value without a word; an agent file names each key once.
    # The YAML reader locates the repeat (JSON is YAML) and words it like a YAML file's.
    try:
        parse_yaml(text)
    except YamlSyntaxError as exc:
        if exc.detail.startswith("duplicate key"):
            raise AgentFileError(str(path), exc.detail, line=exc.line, column=exc.column) from exc
    raise AgentFileError(str(path), f"duplicate key {key!r}: each key may appear once in an object")


class _JsonPositions:
    """The YAML node tree of a JSON text, for lines and columns (None where YAML reads the text
    differently): JSON is (nearly) YAML, but parsing it again costs, so only on demand."""

    def __init__(self, path: Path, text: str, data: Any) -> None:
        self._path, self._text, self._data = path, text, data

    def __call__(self) -> Node | None:
        try:
            yaml_data, root = parse_yaml(self._text)
        except YamlSyntaxError:
            return None
        return root if yaml_data == self._data else None


def _load_tsagent_dir(directory: Path, check_schemas: bool) -> Agent:
    # The first name present is read, whatever it is: a tsagent.json that is not a regular file
    # is named as such rather than reported missing.
    description = next(
        (directory / name for name in TSAGENT_FILES if os.path.lexists(directory / name)), None
    )
    if description is None:
        raise AgentFileError(
            str(directory),
            "not an agent directory: it has no tsagent.json (open a *.agent.yaml file, or a "
            "tsagent directory holding tsagent.json and prompt.md)",
        )
    text = read_agent_text(description, advice=_DESCRIPTION_ADVICE)
    data = _parse_json(description, text)
    if data is None:
        raise AgentFileError(str(description), "the file is empty")
    positions = _JsonPositions(description, text, data)
    if isinstance(data, dict):
        data = _from_tsagent(data, directory)
    return _build(description, data, positions, check_schemas)


def _from_tsagent(data: dict[str, Any], directory: Path) -> dict[str, Any]:
    """The tsagent layout in this project's terms; every original key is kept as well."""
    data = dict(data)
    prompt = directory / _TSAGENT_PROMPT
    if os.path.lexists(prompt):
        data["systemPrompt"] = read_agent_text(prompt, advice=_PROMPT_ADVICE)
    settings = data.get("settings")
    # tsagent remembers the last model used instead of configuring one.
    if isinstance(settings, dict) and "model" not in settings and "mostRecentModel" in settings:
        data["settings"] = {**settings, "model": settings["mostRecentModel"]}
    return data


# --- Saving -----------------------------------------------------------------------------------


def dump_agent_yaml(agent: Agent) -> str:
    """The agent as YAML text, in model key order, with block scalars for multi-line text."""
    return dump_yaml(agent.to_data())


def agent_data_for_save(agent: Agent, like: Any = None) -> dict[str, Any]:
    """The agent's file data, keys ordered like ``like`` (the data of the file it replaces).

    Keys ``like`` has come in its order, new keys after them in model order; tools are matched
    by name, other list items by position.
    """
    data = agent.to_data()
    return _order_like(data, like) if like is not None else data


def _order_like(new: Any, old: Any) -> Any:
    if isinstance(new, dict) and isinstance(old, Mapping):
        keys = [k for k in old if k in new] + [k for k in new if k not in old]
        return {k: _order_like(new[k], old.get(k)) for k in keys}
    if isinstance(new, list) and isinstance(old, list):
        by_name = {
            item.get("name"): item
            for item in old
            if isinstance(item, Mapping) and isinstance(item.get("name"), str)
        }
        ordered: list[Any] = []
        for index, item in enumerate(new):
            name = item.get("name") if isinstance(item, Mapping) else None
            match = by_name.get(name) if name is not None else None
            if match is None and name is None and index < len(old):
                match = old[index]
            ordered.append(_order_like(item, match))
        return ordered
    return new


def save_agent(
    agent: Agent,
    path: str | Path,
    *,
    allow_literal_secrets: bool = False,
    _replace: Callable[[str, str], None] = os.replace,
) -> None:
    """Write an agent file atomically (YAML; JSON when ``path`` ends in ``.json``).

    The text goes to a temporary file beside ``path``, is fsynced, and replaces ``path`` with
    one rename; the directory is fsynced after. An existing file keeps its permissions and its
    key order. On any failure the temporary file is removed and ``path`` is left as it was.

    Args:
        agent: the agent to write.
        path: the destination file (a symlink is followed: its target is replaced).
        allow_literal_secrets: write provider values that look like literal keys anyway. The
            studio never does: it moves them to the keyring first.
        _replace: the rename step; tests inject a failing one to simulate a crash.

    Raises:
        AgentFileError: a literal secret is present, or the file cannot be written.
    """
    path = Path(path)
    if not allow_literal_secrets:
        secrets = find_literal_secrets(agent)
        if secrets:
            first = secrets[0]
            raise AgentFileError(
                str(path),
                "holds a literal key; store it with keyring:// or env:// before saving",
                path=first.path,
            )
    target = path.resolve() if path.is_symlink() else path
    if target.is_dir():
        raise AgentFileError(str(path), "is a directory: save the agent as a *.agent.yaml file")
    text = text_for_save(agent, target)
    try:
        write_atomically(target, text.encode("utf-8"), replace=_replace)
    except OSError as exc:
        raise AgentFileError(str(path), f"cannot save: {exc.strerror or exc}") from exc


def text_for_save(agent: Agent, path: str | Path) -> str:
    """The text a save of ``agent`` to ``path`` writes: an existing YAML file edited in place
    (its comments, order and quoting kept), else the whole file dumped.

    Raises:
        AgentFileError: the agent is nested too deeply to write.
    """
    target = Path(path)
    old_text, old_data = _existing(target)
    try:
        data = agent_data_for_save(agent, old_data)
        if target.suffix.lower() == ".json":
            return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        # ruamel.yaml is for saves only: importing it costs every load, validate and serve ~17 ms
        from schema_types.files._yaml_edit import edit_yaml_text

        edited = None if old_text is None else edit_yaml_text(old_text, old_data, data)
        return edited if edited is not None else dump_yaml(data)
    except RecursionError as exc:
        raise AgentFileError(str(path), "cannot save: the agent is nested too deeply") from exc


def _existing(target: Path) -> tuple[str | None, Any]:
    """The text and data of the file about to be replaced; (None, None) when there is none or
    it is unreadable or malformed (it is being replaced: keeping its layout is best effort)."""
    try:
        text = read_agent_text(target)
        return text, _parse(target, text)
    except AgentFileError:
        return None, None
