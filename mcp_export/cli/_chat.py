"""``metaagent chat AGENT_FILE [-m MESSAGE]``: talk to an agent directly in the terminal.

With ``-m`` one message is sent, the answer printed to stdout and the thread id to stderr. Without
it the command reads lines from stdin (a person at a terminal, or a pipe) until ``/quit`` or the
end of input; lines starting with ``/`` are commands (``/help`` lists them).

Threads resume across runs from the history store: ``--thread ID`` continues that thread, and by
default the agent's most recent chat thread is continued (``--new`` starts a fresh one). Answers
go to stdout; prompts, tool calls, thread ids and errors go to stderr, so stdout stays the
conversation.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from mcp_export.cli._report import load_agent_or_report
from mcp_export.cli._terminal import (
    EventPrinter,
    Runtime,
    add_session_options,
    check_parameters,
    parameter_name,
    parse_parameter_overrides,
    parse_parameter_value,
    with_runtime,
)
from mcp_export.redact import redact
from mcp_export.session.chat import ChatSession
from mcp_export.session.events import FinalAnswer
from mcp_export.session.record import load_thread_messages

if TYPE_CHECKING:
    from mcp_export.providers.base import ChatMessage
    from schema_types.agent import Agent

__all__ = ["register", "run"]

_HELP = """commands:
  /set KEY VALUE   set a model parameter for this chat (VALUE is JSON, else text; null clears)
  /system TEXT     replace the system prompt of this chat
  /tools           list the tools the model may use, and the hidden ones with the reason
  /clear           start a new conversation (a new thread)
  /save            print the thread id (continue later with --thread ID)
  /quit            leave (so does the end of input)
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``chat`` subcommand."""
    parser = subparsers.add_parser(
        "chat",
        help="talk to an agent directly (one message with -m, interactive otherwise)",
        description=(
            "Chat with an agent's model and tools in the terminal. Conversations are kept in the "
            "history store and resume across runs."
        ),
    )
    parser.add_argument("agent_file", metavar="AGENT_FILE", help="the agent file")
    parser.add_argument("-m", "--message", help="send this one message, print the answer, exit")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--thread", metavar="ID", help="continue this history thread")
    group.add_argument(
        "--new", action="store_true", help="start a new thread instead of the most recent one"
    )
    add_session_options(parser)
    parser.set_defaults(func=run)


def _say(text: str) -> None:
    sys.stderr.write(redact(text) + "\n")
    sys.stderr.flush()


def run(args: argparse.Namespace) -> int:
    """Run ``chat`` with parsed arguments; returns the exit code."""
    path = Path(args.agent_file)
    agent = load_agent_or_report("chat", path)
    if agent is None:
        return 2
    if args.no_history and args.thread:
        _say("metaagent chat: --thread needs the history; leave out --no-history")
        return 2
    try:
        overrides = parse_parameter_overrides(args.set, agent)
    except ValueError as exc:
        _say(f"metaagent chat: {exc}")
        return 2
    try:
        return asyncio.run(_chat(agent, path.resolve(), overrides, args))
    except KeyboardInterrupt:
        return 130


class _Chat:
    """One terminal conversation: the runtime, the current session and its thread."""

    def __init__(
        self, agent: Agent, path: Path, runtime: Runtime, overrides: dict[str, object]
    ) -> None:
        self.agent = agent
        self.path = path
        self.runtime = runtime
        self.overrides = dict(overrides)
        self.printer = EventPrinter()
        self.session = self.new_session(None, ())

    def new_session(self, thread_id: str | None, prior: tuple[ChatMessage, ...]) -> ChatSession:
        return ChatSession(
            self.agent,
            provider=self.runtime.provider,
            model=self.runtime.model,
            toolbox=self.runtime.toolbox,
            history=self.runtime.history,
            thread_id=thread_id,
            thread_kind="chat",
            prior_messages=prior,
            parameters=self.overrides,
            agent_path=str(self.path),
        )

    async def send(self, message: str) -> bool:
        """Send one message; True when the model answered."""
        answered = False
        async for event in self.session.run(message):
            self.printer.handle(event)
            answered = answered or isinstance(event, FinalAnswer)
        return answered

    async def command(self, line: str) -> bool:
        """Run one ``/command``; False when the chat should end."""
        name, _, rest = line[1:].partition(" ")
        rest = rest.strip()
        if name in {"quit", "exit", "q"}:
            return False
        if name == "help":
            sys.stderr.write(_HELP)
        elif name == "set":
            self.set_parameter(rest)
        elif name == "system":
            self.session.set_system_prompt(rest)
            _say("system prompt replaced for this chat" if rest else "system prompt removed")
        elif name == "tools":
            await self.list_tools()
        elif name == "clear":
            self.session = self.new_session(None, ())
            _say("new conversation (a new thread starts with the next message)")
        elif name == "save":
            thread = self.session.thread_id
            if thread is None:
                _say("nothing to save yet" if self.runtime.history else "history is off")
            else:
                sys.stdout.write(thread + "\n")
                sys.stdout.flush()
        else:
            _say(f"unknown command /{name}; /help lists the commands")
        return True

    def set_parameter(self, rest: str) -> None:
        key, _, value = rest.partition(" ")
        if not key or not value.strip():
            _say("usage: /set KEY VALUE (for example /set temperature 0.2)")
            return
        try:
            name = parameter_name(key)
        except ValueError as exc:
            _say(str(exc))
            return
        parsed = parse_parameter_value(value.strip())
        try:
            check_parameters(self.agent, self.overrides | {name: parsed})
        except ValueError as exc:
            _say(str(exc))
            return
        self.overrides[name] = parsed
        self.session.set_parameter(name, parsed)
        _say(f"{name} = {json.dumps(parsed)}")

    async def list_tools(self) -> None:
        toolbox = self.runtime.toolbox
        if toolbox is None:
            _say("this agent has no MCP servers: the model may use no tools")
            return
        allowed = await toolbox.allowed_tools()
        hidden = await toolbox.hidden_tools()
        _say("tools the model may use:" if allowed else "the model may use no tools")
        for spec in allowed:
            _say(f"  {spec.name}  {spec.description.splitlines()[0] if spec.description else ''}")
        if hidden:
            _say("hidden tools:")
            for item in hidden:
                _say(f"  {item.spec.name}  ({item.reason})")
        for server, error in toolbox.server_errors.items():
            _say(f"server {server} is unavailable: {error}")


def _resume(runtime: Runtime, path: Path, args: argparse.Namespace) -> tuple[str | None, bool]:
    """The thread to continue (None: a new one) and whether that is fine (False: exit 2)."""
    history = runtime.history
    if history is None or args.new:
        return None, True
    if args.thread:
        if history.thread(args.thread) is None:
            _say(f"metaagent chat: no thread {args.thread!r} in the history")
            return None, False
        return args.thread, True
    latest = history.latest_thread(agent_path=str(path), kind="chat")
    return (latest.id if latest is not None else None), True


async def _chat(
    agent: Agent, path: Path, overrides: dict[str, object], args: argparse.Namespace
) -> int:
    async def chat_on(runtime: Runtime, _printer: EventPrinter) -> int:
        thread_id, ok = _resume(runtime, path, args)
        if not ok:
            return 2
        chat = _Chat(agent, path, runtime, overrides)
        if thread_id is not None and runtime.history is not None:
            prior = tuple(load_thread_messages(runtime.history, thread_id))
            chat.session = chat.new_session(thread_id, prior)
            if args.message is None:
                _say(f"continuing thread {thread_id} ({len(prior)} messages; --new starts over)")
        if args.message is not None:
            answered = await chat.send(args.message)
            if chat.session.thread_id is not None:
                _say(f"thread: {chat.session.thread_id}")
            return 0 if answered else 1
        return await _repl(chat)

    return await with_runtime(agent, path, args, chat_on)


async def _repl(chat: _Chat) -> int:
    interactive = sys.stdin.isatty()
    if interactive:
        _say(f"chatting with {chat.agent.metadata.name} ({chat.runtime.model}); /help for commands")
    while True:
        if interactive:
            sys.stderr.write("> ")
            sys.stderr.flush()
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line:
            break
        line = line.rstrip("\n")
        if not line.strip():
            continue
        if line.startswith("/"):
            if not await chat.command(line):
                break
            continue
        await chat.send(line)
    if chat.session.thread_id is not None:
        _say(f"thread: {chat.session.thread_id}")
    return 0
