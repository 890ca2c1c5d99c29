"""Asking "the authoring model": the model that helps write an agent (drafts, cases, fixes).

Which model: the one the author chose (the studio's Preferences, a CLI's ``--model``) as
``provider:model``; when none was chosen, the agent's own ``settings.model``. Its endpoint and
key come from the agent's ``providers`` and the environment by the same rules as every run
(``providers.factory``: ``env://``, ``keyring://``, a provider's own variable), so nothing new is
configured and no key is handled here.

One exchange is a conversation (:class:`AuthoringConversation`) whose every question must be
answered in a given JSON Schema. Each question is a typed run of a ``ChatSession`` with an
``OutputSpec``: the model is made to answer in the schema the way its endpoint supports best
(``providers.structured``), the answer is checked and repaired once by the same machinery as a
typed tool's (``session.typed``). A caller that checks more than the schema (``validate`` of a
drafted tool) asks again in the same conversation with what was wrong.

Every exchange is recorded like other runs: a History thread of kind ``authoring`` titled by
what was asked (its messages redacted by the session), and, when a protocol log is given, the raw
HTTP exchange with the endpoint (redacted by the log). Nothing here writes an agent file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_export.errors import ConfigurationError, ExportError, OutputInvalid
from mcp_export.protocol_log import ProtocolLog, attach
from mcp_export.providers.factory import provider_for_agent
from mcp_export.redact import redact
from mcp_export.session.chat import ChatSession
from mcp_export.session.events import FinalAnswer, OutputChecked, SessionFailed
from mcp_export.session.typed import OutputSpec
from schema_types.errors import Problem

if TYPE_CHECKING:
    from mcp_export.history.store import HistoryStore
    from mcp_export.providers.base import Provider, Usage
    from schema_types.agent import Agent

__all__ = [
    "AuthoringAnswer",
    "AuthoringConversation",
    "AuthoringModel",
    "authoring_model",
    "authoring_model_label",
]

_EXAMPLE = "openai:gpt-4.1-mini"


@dataclass(frozen=True)
class AuthoringModel:
    """The authoring model, ready to ask: its provider, model name and ``provider:model`` label.

    ``agent`` is the agent with ``settings.model`` set to it (its parameters, timeout and
    providers are the agent's own)."""

    provider: Provider
    model: str
    label: str
    agent: Agent

    async def aclose(self) -> None:
        """Close the provider's connections (its owner does, once it is done asking)."""
        await self.provider.aclose()


def authoring_model_label(agent: Agent, chosen: str | None) -> str:
    """The ``provider:model`` the authoring model is: ``chosen`` when set, else the agent's own
    model ("" when neither is set)."""
    picked = (chosen or "").strip()
    return picked or (agent.settings.model or "").strip()


def authoring_model(
    agent: Agent, chosen: str | None = None, *, env: Mapping[str, str] | None = None
) -> AuthoringModel:
    """The authoring model for ``agent``: ``chosen`` (``provider:model``) or the agent's own.

    Raises:
        ConfigurationError: no model, an unknown provider, a missing base URL, or the model is
            ``sampling`` (only an MCP client can answer that: choose another); the message says
            what to set.
        CredentialsMissing: its key is not set (the message names it and where it was looked).
    """
    label = authoring_model_label(agent, chosen)
    if not label:
        raise ConfigurationError(
            "no authoring model: the agent has no settings.model; choose one in Preferences "
            f"(Authoring model) or pass --model, e.g. {_EXAMPLE}"
        )
    if label == "sampling":
        raise ConfigurationError(
            "the authoring model cannot be 'sampling' (only a calling MCP client answers it): "
            f"choose one in Preferences (Authoring model) or pass --model, e.g. {_EXAMPLE}"
        )
    chosen_agent = agent.model_copy(
        update={"settings": agent.settings.model_copy(update={"model": label})}
    )
    provider, model = provider_for_agent(chosen_agent, env=env)
    return AuthoringModel(provider, model, label, chosen_agent)


@dataclass(frozen=True)
class AuthoringAnswer:
    """One question's outcome.

    Attributes:
        value: the answer, valid against the schema; None when the exchange failed.
        error: why it failed (redacted), None on an answer.
        problems: the schema messages of the last answer when it did not fit after the repair.
        repaired: whether the schema repair turn was needed.
        usage: token totals of the question's requests.
        duration_ms: how long it took.
    """

    value: Any
    error: str | None
    problems: tuple[Problem, ...]
    repaired: bool
    usage: Usage | None
    duration_ms: float

    @property
    def ok(self) -> bool:
        """Whether the model answered in the schema."""
        return self.error is None


class AuthoringConversation:
    """A conversation with the authoring model about one agent, recorded in History.

    Args:
        model: the authoring model (:func:`authoring_model`).
        system: the system prompt (what the model is asked to be and do).
        schema: the JSON Schema every answer must be valid against.
        schema_name: names the schema on the wire (``tool_draft``…).
        title: the History thread's title (``draft a tool: …``).
        history: where the exchange is recorded (None: not recorded).
        agent_path: the agent file, recorded with the thread.
        protocol_log: where the raw HTTP exchange is recorded (None: not recorded).
        timeout: the wall-clock limit of one question in seconds (default the agent's).

    Used as ``async with``, it closes the model's provider on leaving.
    """

    def __init__(
        self,
        model: AuthoringModel,
        *,
        system: str,
        schema: Mapping[str, Any],
        schema_name: str,
        title: str,
        history: HistoryStore | None = None,
        agent_path: str | None = None,
        protocol_log: ProtocolLog | None = None,
        timeout: float | None = None,
    ) -> None:
        self.model = model
        self.title = title
        self._schema_name = schema_name
        if protocol_log is not None:
            attach(protocol_log, model.provider)
        self.thread_id = self._create_thread(history, title, agent_path)
        self._session = ChatSession(
            model.agent,
            provider=model.provider,
            model=model.model,
            history=history,
            thread_id=self.thread_id,
            thread_kind="authoring",
            agent_path=agent_path,
            timeout=timeout,
            output=OutputSpec(dict(schema), schema_name),
        )
        self._session.set_system_prompt(system)

    def _create_thread(
        self, history: HistoryStore | None, title: str, agent_path: str | None
    ) -> str | None:
        """The History thread, titled by what is asked (None without history, or when the store
        fails: the session then records nothing, and the answer matters more)."""
        if history is None:
            return None
        try:
            return history.create_thread(
                agent_path=agent_path,
                agent_name=self.model.agent.metadata.name,
                title=redact(title),
                kind="authoring",
            )
        except ExportError:
            return None

    async def __aenter__(self) -> AuthoringConversation:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.model.aclose()

    def cancel(self) -> None:
        """Stop the question in progress (it ends with an error)."""
        self._session.cancel()

    async def ask(self, text: str) -> AuthoringAnswer:
        """Ask one question (the first, or a follow-up such as "these messages remain…").

        Never raises for the model's failures (a refused request, a timeout, an answer that
        does not fit after the repair): they come back as ``error``."""
        answer: FinalAnswer | None = None
        failed: SessionFailed | None = None
        repaired = False
        problems: tuple[Problem, ...] = ()
        async for event in self._session.run(text):
            if isinstance(event, OutputChecked):
                if not event.ok:
                    repaired = True
                    problems = event.problems
            elif isinstance(event, FinalAnswer):
                answer = event
            elif isinstance(event, SessionFailed):
                failed = event
        if answer is not None and answer.output is not None:
            return AuthoringAnswer(
                answer.output.value, None, (), repaired, answer.usage, answer.duration_ms
            )
        if failed is not None:
            message = redact(failed.message)
            if isinstance(failed.error, OutputInvalid):
                listed = "; ".join(
                    f"{p.path or '(the whole answer)'}: {p.message}" for p in failed.error.problems
                )
                message = f"its answer does not fit the {self._schema_name} schema even after "
                message += f"one repair turn: {redact(listed)}"
            return AuthoringAnswer(None, message, problems, repaired, failed.usage, 0.0)
        return AuthoringAnswer(
            None, "the authoring model gave no answer", problems, repaired, None, 0.0
        )
