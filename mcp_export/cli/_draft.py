"""``metaagent draft AGENT_FILE "SENTENCE" [--model M] [--write]``: a tool drafted by a model.

The model (``--model provider:model``, else the agent's own ``settings.model``; keys as for
every run) proposes a whole tool for the sentence; the draft must pass the agent file's checks and
the template analysis, with its cases (``authoring.draft``), or it gets one repair turn and is
then refused. The drafted tool is printed on stdout as YAML; ``--write`` adds it to the agent file
(an atomic write that keeps the rest of the file, its comments and order, as it was). Without
``--write`` nothing is written. The exchange is recorded in History (unless ``--no-history``).

Exit codes: 0 a tool was drafted (and written with ``--write``); 1 the draft was refused (every
message on stderr), the model gave none, or the file could not be written; 2 a bad command
line, an agent file that does not load, or no usable authoring model (no model, an unknown
provider, a missing key: stderr says what to set).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from mcp_export.authoring.draft import DraftOutcome, draft_tool
from mcp_export.authoring.exchange import authoring_model
from mcp_export.cli._report import error, load_agent_or_report
from mcp_export.errors import ExportError, HistoryError
from mcp_export.history.store import HistoryStore
from schema_types.agent import ToolDefinition
from schema_types.errors import AgentFileError, SchemaError
from schema_types.files._yaml_dump import dump_yaml
from schema_types.files.agent_file import load_agent, save_agent

__all__ = ["REFUSED_EXIT", "USAGE_EXIT", "register", "run"]

REFUSED_EXIT = 1
"""No draft: refused after its repair turn, no answer, or the file could not be written."""
USAGE_EXIT = 2
"""A bad command line, agent file or authoring model."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``draft`` subcommand."""
    parser = subparsers.add_parser(
        "draft",
        help="draft a tool from a sentence with the authoring model",
        description=(
            "Ask the authoring model for a whole tool (parameters, prompt template, output "
            "schema, test cases) for SENTENCE. The draft must pass validation (one repair turn, "
            "then it is refused); it is printed as YAML, and added to AGENT_FILE only with "
            "--write. Exit codes: 0 drafted, 1 refused or no answer, 2 bad input or model."
        ),
    )
    parser.add_argument("agent_file", metavar="AGENT_FILE", help="the agent file")
    parser.add_argument("sentence", metavar="SENTENCE", help="what the tool should do, in words")
    parser.add_argument(
        "--model",
        metavar="PROVIDER:MODEL",
        help="the authoring model (default: the agent's own settings.model)",
    )
    parser.add_argument(
        "--write", action="store_true", help="add the drafted tool to AGENT_FILE (atomically)"
    )
    parser.add_argument(
        "--no-history", action="store_true", help="do not record the exchange in the history"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``draft``; returns the exit code."""
    path = Path(args.agent_file)
    agent = load_agent_or_report("draft", path)
    if agent is None:
        return USAGE_EXIT
    if not args.sentence.strip():
        error("draft", "the sentence is empty: say in words what the tool should do")
        return USAGE_EXIT
    try:
        model = authoring_model(agent, args.model)
    except ExportError as exc:
        error("draft", f"no authoring model: {exc}")
        return USAGE_EXIT
    history: HistoryStore | None = None
    if not args.no_history:
        try:
            history = HistoryStore()
        except HistoryError as exc:
            error("history", f"{exc}; going on without recording")
    sys.stderr.write(f"metaagent draft: asking {model.label}…\n")
    sys.stderr.flush()
    try:
        outcome = asyncio.run(
            draft_tool(agent, args.sentence, model, history=history, agent_path=str(path.resolve()))
        )
    except KeyboardInterrupt:
        return 130
    finally:
        if history is not None:
            history.close()
    return _report(outcome, path, write=args.write)


def _report(outcome: DraftOutcome, path: Path, *, write: bool) -> int:
    if outcome.tool is None or outcome.data is None:
        error("draft", outcome.refusal())
        return REFUSED_EXIT
    sys.stdout.write(dump_yaml(outcome.data))
    sys.stdout.flush()
    tool = outcome.tool
    repaired = " after one repair turn" if outcome.repaired else ""
    note = f"drafted {tool.name!r} with {len(tool.tests)} test cases{repaired} ({outcome.model})"
    if not write:
        advice = f"not written (pass --write to add it to {path})"
        sys.stderr.write(f"metaagent draft: {note}; {advice}\n")
        return 0
    try:
        _add(path, tool)
    except (AgentFileError, SchemaError) as exc:
        error("draft", f"{note}, but it could not be added: {exc}")
        return REFUSED_EXIT
    sys.stderr.write(f"metaagent draft: {note}; added to {path}\n")
    return 0


def _add(path: Path, tool: ToolDefinition) -> None:
    """Add ``tool`` to the agent file as it is now (re-read: it may have changed meanwhile).

    The drafted tool holds no provider values, so literal keys already in the file are left as
    they were rather than refused.

    Raises:
        AgentFileError: the file no longer loads, already has a tool of that name, or cannot
            be written.
    """
    agent = load_agent(path)
    if agent.metadata.tool(tool.name) is not None:
        raise AgentFileError(str(path), f"already has a tool named {tool.name!r}")
    agent.metadata.tools = [*agent.metadata.tools, tool]
    save_agent(agent, path, allow_literal_secrets=True)
