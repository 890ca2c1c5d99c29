"""Why a chat run failed, in the words every consumer shows: a kind and a hint of what to do.

One table, so the chat tab, the served server's ``isError`` results and the CLI all say the same
thing about the same failure. The error's text is redacted here, once, for all of them: a failure
often quotes what a provider or a tool server said, and that may repeat a key.
"""

from __future__ import annotations

from mcp_export.errors import (
    ConfigurationError,
    CredentialsMissing,
    EmptyAnswer,
    ExportError,
    OutputInvalid,
    ProviderAuthError,
    ProviderError,
    ProviderProtocolError,
    ProviderRateLimited,
    ProviderServerError,
    ProviderTimeout,
    ProviderUnreachable,
    SessionTimeout,
    ToolServerError,
    TurnLimitExceeded,
)
from mcp_export.redact import redact
from mcp_export.session.events import FailureKind, SessionFailed

__all__ = ["failure_for", "turn_limit_error"]

# Most specific first: the first class the error is an instance of decides.
_TABLE: tuple[tuple[type[ExportError], FailureKind, str], ...] = (
    (
        TurnLimitExceeded,
        "turn-limit",
        "raise settings.maxChatTurns or make the prompt ask for fewer tool calls",
    ),
    (
        OutputInvalid,
        "provider",
        "say in the prompt or in the schema's descriptions what each field holds, or choose a "
        "model that follows JSON Schemas",
    ),
    (
        SessionTimeout,
        "timeout",
        "raise settings.timeoutSeconds, or look for a slow model endpoint or tool server",
    ),
    (
        CredentialsMissing,
        "configuration",
        "set the environment variable or keyring entry the agent's providers section names",
    ),
    (ConfigurationError, "configuration", "fix the agent's settings as the message says"),
    (
        ProviderUnreachable,
        "provider",
        "start the model server, or fix the base URL in the agent's providers section",
    ),
    (ProviderAuthError, "provider", "check the API key the agent's providers section points to"),
    (
        ProviderRateLimited,
        "provider",
        "wait a moment and try again, or make fewer calls at the same time",
    ),
    (
        ProviderServerError,
        "provider",
        "the model provider is failing: try again later or choose another model",
    ),
    (
        ProviderTimeout,
        "provider",
        "try again, choose a faster model, or raise settings.timeoutSeconds",
    ),
    (
        ProviderProtocolError,
        "provider",
        "check that the base URL points at an API of the configured provider kind",
    ),
    (
        EmptyAnswer,
        "provider",
        "try again, or make the prompt ask for a written answer",
    ),
    (ProviderError, "provider", "check the model settings and the provider's status"),
    (
        ToolServerError,
        "tool-server",
        "check the agent's mcpServers entry: its command, arguments and that it starts alone",
    ),
)

_HINTS: dict[FailureKind, str] = {
    "cancelled": "run it again when ready",
    "internal": "this is a bug in Meta Agent Studio; the log on stderr has the details",
}


def failure_for(error: ExportError, *, kind: FailureKind | None = None) -> SessionFailed:
    """The ``SessionFailed`` event for ``error`` (``kind`` forces the category).

    ``error``'s text is redacted in place (its ``args``), so the event's ``message`` and any
    later ``str(error)`` carry no secret.
    """
    _redact_error(error)
    if kind is None:
        for cls, table_kind, hint in _TABLE:
            if isinstance(error, cls):
                return SessionFailed(error, table_kind, hint)
        kind = "internal"
    for cls, table_kind, hint in _TABLE:
        if table_kind == kind and isinstance(error, cls):
            return SessionFailed(error, kind, hint)
    return SessionFailed(error, kind, _HINTS.get(kind, "see the message"))


def _redact_error(error: ExportError) -> None:
    cleaned = tuple(redact(arg) if isinstance(arg, str) else arg for arg in error.args)
    if cleaned != error.args:
        error.args = cleaned


def turn_limit_error(max_turns: int) -> TurnLimitExceeded:
    """The error of a run whose model still wanted tools after ``max_turns`` requests."""
    return TurnLimitExceeded(
        f"the model was still calling tools after {max_turns} model "
        f"request{'s' if max_turns != 1 else ''} (settings.maxChatTurns = {max_turns})"
    )
