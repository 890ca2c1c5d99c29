"""Paths that are not agent files of text: each is refused with one message naming what it is.

The table builds each path and holds the exact message after it. Paths that could block a reader
or feed it forever (a named pipe, ``/dev/zero``) are tried through the real command in a bounded
subprocess, in ``tests/mcp_export/test_cli_validate_render.py``; the save over a named pipe below
runs in a subprocess for the same reason.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from schema_types.errors import AgentFileError
from schema_types.files.agent_file import MAX_FILE_BYTES, load_agent

ROOT = Path(__file__).parents[2]
ADVICE = "save the agent as a *.agent.yaml file and give that file's path"


def _tsagent(folder: Path, data: object | None = None) -> Path:
    (folder / "tsagent.json").write_text(json.dumps(data or {"metadata": {"name": "Old"}}))
    return folder


def prompt_md_a_directory(tmp: Path) -> tuple[Path, str]:
    (_tsagent(tmp) / "prompt.md").mkdir()
    return tmp, (
        f"{tmp / 'prompt.md'}: is a directory, not a regular file: a tsagent directory's "
        "prompt.md is a text file holding the system prompt"
    )


def tsagent_json_a_directory(tmp: Path) -> tuple[Path, str]:
    (tmp / "tsagent.json").mkdir()
    return tmp, (
        f"{tmp / 'tsagent.json'}: is a directory, not a regular file: a tsagent directory's "
        "tsagent.json is a JSON file describing the agent"
    )


def a_socket(tmp: Path) -> tuple[Path, str]:
    path = tmp / "listening.agent.yaml"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.close()  # the socket file stays
    return path, f"{path}: is a socket, not a regular file: {ADVICE}"


def a_character_device(tmp: Path) -> tuple[Path, str]:
    return Path("/dev/null"), f"/dev/null: is a character device, not a regular file: {ADVICE}"


def larger_than_the_limit(tmp: Path) -> tuple[Path, str]:
    path = tmp / "huge.agent.yaml"
    with path.open("wb") as handle:  # sparse: no disk space is used
        handle.truncate(MAX_FILE_BYTES + 1)
    return path, (
        f"{path}: the file is larger than the 10 MB an agent file may hold "
        f"({MAX_FILE_BYTES + 1} bytes): check that this is the agent file you meant"
    )


SPECIAL: list[Callable[[Path], tuple[Path, str]]] = [
    prompt_md_a_directory,
    tsagent_json_a_directory,
    a_socket,
    a_character_device,
    larger_than_the_limit,
]


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    # A socket's path must be short (about 100 bytes); pytest's tmp_path can be longer.
    with tempfile.TemporaryDirectory(prefix="ma") as folder:
        yield Path(folder)


@pytest.mark.parametrize("make", SPECIAL, ids=[make.__name__ for make in SPECIAL])
def test_a_path_that_is_not_a_text_file_is_named_as_such(
    short_tmp: Path, make: Callable[[Path], tuple[Path, str]]
) -> None:
    path, expected = make(short_tmp)

    with pytest.raises(AgentFileError) as caught:
        load_agent(path)

    assert str(caught.value) == expected


def test_a_file_of_exactly_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "padded.agent.yaml"
    head = b"metadata:\n  name: Padded\n"
    path.write_bytes(head + b"#" * (MAX_FILE_BYTES - len(head) - 1) + b"\n")

    assert load_agent(path).metadata.name == "Padded"


def test_saving_over_a_named_pipe_replaces_it_without_waiting_for_a_writer(
    tmp_path: Path,
) -> None:
    # Saving reads the file it replaces (for its key order); a pipe must not be waited on.
    source = tmp_path / "desk.agent.yaml"
    source.write_text("metadata:\n  name: Desk\n", encoding="utf-8")
    pipe = tmp_path / "pipe.agent.yaml"
    os.mkfifo(pipe)
    script = textwrap.dedent(
        f"""
        from schema_types.files.agent_file import load_agent, save_agent
        save_agent(load_agent({str(source)!r}), {str(pipe)!r})
        """
    )

    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )

    assert (done.returncode, done.stderr) == (0, "")
    assert pipe.is_file()
    assert load_agent(pipe).metadata.name == "Desk"


def test_each_tool_of_a_top_level_tools_list_is_reported_in_a_tsagent_directory(
    tmp_path: Path,
) -> None:
    # tsagent keeps tools in metadata.tools; a list beside metadata is read by nothing.
    description = _tsagent(
        tmp_path,
        {"metadata": {"name": "Old"}, "tools": [{"name": "book flight"}, {"description": 3}]},
    )
    with pytest.raises(AgentFileError) as caught:
        load_agent(description)

    where = tmp_path / "tsagent.json"
    assert [str(problem) for problem in getattr(caught.value, "problems", [])] == [
        f"{where}:1:40: tools: tools are not read here: an agent's tools go under metadata "
        "(metadata.tools); move this list there",
        f"{where}:1:50: tools[0].name: tool name 'book flight' is not valid for MCP: use 1 to "
        "128 letters, digits, '_', '-' or '.'",
        f"{where}:1:66: tools[1].name: required, but missing",
        f"{where}:1:82: tools[1].description: expected a string, got 3",
    ]
