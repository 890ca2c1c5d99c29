"""Reading and writing agent files: ``*.agent.yaml``, JSON, and the older tsagent directory form.

Loading never shows a traceback to a person: an unreadable file, bad YAML or JSON, and content the
agent model refuses all become one :class:`AgentFileError` that says where (``file:line:column``
for syntax, the JSON path, with its line and column, for content) and what is expected. Content
errors are :class:`AgentContentError`, which also lists every other problem found.

Saving is atomic: the YAML goes to a temporary file in the same directory, is flushed to disk,
and replaces the original in one rename, so a crash mid-save leaves the old file intact. Keys are
written in the order of the file being replaced where it has them (model order otherwise), so
saving an agent opened from a hand-written file does not reshuffle it.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from yaml.nodes import Node

from ._agent import Agent
from ._agent_checks import LocatedProblem, check_agent_data
from ._agent_yaml import YamlSyntaxError, dump_yaml, parse_yaml
from ._errors import AgentFileError
from ._secrets import find_literal_secrets

__all__ = [
    "TSAGENT_FILES",
    "AgentContentError",
    "agent_data_for_save",
    "dump_agent_yaml",
    "load_agent",
    "save_agent",
]

# The agent description file of a tsagent directory (older releases used ``tspark.json``).
TSAGENT_FILES = ("tsagent.json", "tspark.json")
_TSAGENT_PROMPT = "prompt.md"
_TOO_DEEP = "the document is nested too deeply to read"
# Objects and arrays inside one another, at the most. Every reader of an agent (the schema checks,
# the studio's editors, saving) recurses per level; real agents stay under 20. One limit for every
# load, whether the schemas are checked then (the server) or later (the studio).
MAX_NESTING = 100


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
            (``tsagent.json`` plus an optional ``prompt.md`` holding the system prompt).
        check_schemas: refuse an agent whose tools' parameters schemas are unsound. The studio
            passes False: it opens such an agent, checks each tool's schema once the window is
            up, and shows the problems so they can be fixed there.

    Returns:
        The agent, with every key of the file kept (unknown ones too).

    Raises:
        AgentContentError: the file parses but its content is not a valid agent (a wrong type,
            an invalid tool name, two tools with one name, an unsound parameters schema…).
        AgentFileError: the file cannot be read or is not valid YAML/JSON.
    """
    path = Path(path)
    if path.is_dir():
        return _load_tsagent_dir(path, check_schemas)
    text = _read_text(path)
    data, root = _parse(path, text)
    if data is None:
        raise AgentFileError(
            str(path),
            "the file is empty: an agent file needs at least a 'metadata:' section",
        )
    return _build(path, data, root, check_schemas)


def _build(file: Path, data: Any, root: Node | None, check_schemas: bool) -> Agent:
    if _nesting(data) > MAX_NESTING:
        raise AgentFileError(str(file), _TOO_DEEP)
    try:
        agent, problems = check_agent_data(data, root, check_schemas=check_schemas)
    except RecursionError as exc:  # the schema checks recurse per level of nesting
        raise AgentFileError(str(file), _TOO_DEEP) from exc
    if agent is None:
        raise AgentContentError([_as_error(file, problem) for problem in problems])
    return agent


def _as_error(file: Path, problem: LocatedProblem) -> AgentFileError:
    return AgentFileError(
        str(file), problem.detail, line=problem.line, column=problem.column, path=problem.path
    )


def _read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise AgentFileError(str(path), "no such file") from exc
    except IsADirectoryError as exc:  # pragma: no cover - directories are handled before
        raise AgentFileError(str(path), "is a directory, not an agent file") from exc
    except OSError as exc:
        raise AgentFileError(str(path), f"cannot read the file: {exc.strerror or exc}") from exc
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line_start = raw.rfind(b"\n", 0, exc.start) + 1
        line = raw.count(b"\n", 0, exc.start) + 1
        # Columns count characters, as an editor shows them, not bytes.
        column = len(raw[line_start : exc.start].decode("utf-8", errors="replace")) + 1
        raise AgentFileError(
            str(path),
            f"the file is not UTF-8 text (byte 0x{raw[exc.start]:02x} cannot be decoded); "
            "agent files are UTF-8",
            line=line,
            column=column,
        ) from exc


def _parse(path: Path, text: str) -> tuple[Any, Node | None]:
    if path.suffix.lower() == ".json":
        return _parse_json(path, text)
    try:
        return parse_yaml(text)
    except YamlSyntaxError as exc:
        raise AgentFileError(str(path), exc.detail, line=exc.line, column=exc.column) from exc


def _nesting(data: Any) -> int:
    """How deep objects and arrays nest in ``data`` (0 for a scalar), counted without recursion
    and only up to one level past :data:`MAX_NESTING`."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack and deepest <= MAX_NESTING:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Iterable[Any] = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        deepest = max(deepest, depth + 1)
        stack += [(child, depth + 1) for child in children]
    return deepest


def _parse_json(path: Path, text: str) -> tuple[Any, Node | None]:
    if not text.strip():
        return None, None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AgentFileError(
            str(path), f"invalid JSON: {exc.msg}", line=exc.lineno, column=exc.colno
        ) from exc
    except RecursionError as exc:
        raise AgentFileError(str(path), _TOO_DEEP) from exc
    # JSON is (nearly) YAML: its node tree gives content errors a line and column too. Where
    # the YAML reader disagrees with the JSON one, errors still name their JSON path.
    try:
        yaml_data, root = parse_yaml(text)
    except YamlSyntaxError as exc:
        if exc.detail.startswith("duplicate key"):
            raise AgentFileError(str(path), exc.detail, line=exc.line, column=exc.column) from exc
        return data, None
    return data, (root if yaml_data == data else None)


def _load_tsagent_dir(directory: Path, check_schemas: bool) -> Agent:
    description = next(
        (directory / name for name in TSAGENT_FILES if (directory / name).is_file()), None
    )
    if description is None:
        raise AgentFileError(
            str(directory),
            "not an agent directory: it has no tsagent.json (open a *.agent.yaml file, or a "
            "tsagent directory holding tsagent.json and prompt.md)",
        )
    data, root = _parse_json(description, _read_text(description))
    if data is None:
        raise AgentFileError(str(description), "the file is empty")
    if isinstance(data, dict):
        data = _from_tsagent(data, directory)
    return _build(description, data, root, check_schemas)


def _from_tsagent(data: dict[str, Any], directory: Path) -> dict[str, Any]:
    """The tsagent layout in this project's terms; every original key is kept as well."""
    data = dict(data)
    prompt = directory / _TSAGENT_PROMPT
    if prompt.is_file():
        data["systemPrompt"] = _read_text(prompt)
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
    old_data, old_mode = _existing(target)
    try:
        data = agent_data_for_save(agent, old_data)
        if target.suffix.lower() == ".json":
            text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        else:
            text = dump_yaml(data)
    except RecursionError as exc:
        raise AgentFileError(str(path), "cannot save: the agent is nested too deeply") from exc
    mode = old_mode if old_mode is not None else 0o666 & ~_umask()
    try:
        _write_atomically(target, text.encode("utf-8"), mode, _replace)
    except OSError as exc:
        raise AgentFileError(str(path), f"cannot save: {exc.strerror or exc}") from exc


def _existing(target: Path) -> tuple[Any, int | None]:
    """The data (for key order) and permission bits of the file about to be replaced."""
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except OSError:
        return None, None
    try:
        text = target.read_bytes().decode("utf-8-sig")
        data, _ = _parse(target, text)
    except (OSError, UnicodeDecodeError, AgentFileError):
        data = None  # unreadable or malformed: it is being replaced, order is best effort
    return data, mode


def _umask() -> int:
    # Linux reports the umask without changing it; elsewhere os.umask can only be read by
    # setting it, which races with other threads creating files, so that is the fallback.
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _write_atomically(
    target: Path, content: bytes, mode: int, replace: Callable[[str, str], None]
) -> None:
    directory = target.parent
    handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed below, kept on success
        dir=directory, prefix=f".{target.name}.", suffix=".tmp", delete=False
    )
    temp = handle.name
    try:
        with handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)
        replace(temp, str(target))
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    _fsync_directory(directory)


def _fsync_directory(directory: Path) -> None:
    # Makes the rename itself durable; not possible on every platform (Windows), and the new
    # content is already in place, so failing here is not an error.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
