"""The one exception hierarchy of ``mcp_export`` (the headless runtime).

::

    ExportError                         anything the runtime refuses or that fails in it
    ├── ConfigurationError              the agent cannot run as configured (no model, no key…)
    │   └── CredentialsMissing          a provider's key/reference does not resolve
    ├── ProviderError                   the model call failed
    │   ├── ProviderUnreachable         nothing answers at the endpoint
    │   ├── ProviderAuthError           401/403: the key is wrong
    │   ├── ProviderRateLimited         429 after bounded retries
    │   ├── ProviderServerError         5xx after bounded retries
    │   ├── ProviderTimeout             the request took too long
    │   ├── ProviderProtocolError       malformed or cut-off response/stream
    │   └── EmptyAnswer                 the model answered nothing (no text, no tool call)
    ├── ToolServerError                 an MCP tool server could not start or died
    ├── SessionError                    the chat loop ended without an answer
    │   ├── TurnLimitExceeded           maxChatTurns reached
    │   ├── SessionTimeout              the wall-clock limit reached
    │   └── OutputInvalid               a typed answer still off its schema after the repair
    └── HistoryError                    the history store cannot be opened or written

Outside errors (SDK, HTTP, OS) are translated where they enter (``raise X(...) from exc``); every
message says what is wrong and what to do next.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from schema_types.errors import Problem


class ExportError(Exception):
    """Base of every error raised by ``mcp_export``."""


class ConfigurationError(ExportError):
    """The agent cannot run as configured; the message says what to set."""


class CredentialsMissing(ConfigurationError):
    """A provider credential is not set (``OPENAI_API_KEY is not set (env://OPENAI_API_KEY)``)."""


class ProviderError(ExportError):
    """A model request failed."""


class ProviderUnreachable(ProviderError):
    """Nothing answers at the provider's endpoint."""


class ProviderAuthError(ProviderError):
    """The provider refused the credentials (401/403)."""


class ProviderRateLimited(ProviderError):
    """The provider kept answering 429 after the bounded retries."""


class ProviderServerError(ProviderError):
    """The provider kept failing with 5xx after the bounded retries."""


class ProviderTimeout(ProviderError):
    """The model request timed out."""


class ProviderProtocolError(ProviderError):
    """The provider's response or stream was malformed or cut off."""


class EmptyAnswer(ProviderError):
    """The model ended its answer without a word and without a tool call."""


class ToolServerError(ExportError):
    """An MCP tool server of the agent could not be started, or died."""


class SessionError(ExportError):
    """A chat session ended without an answer."""


class TurnLimitExceeded(SessionError):
    """The model was still calling tools when ``maxChatTurns`` was reached."""


class SessionTimeout(SessionError):
    """The session ran past its wall-clock timeout."""


class HistoryError(ExportError):
    """The history store could not be opened or written."""


class OutputInvalid(SessionError):
    """A typed tool's answer still did not fit its output schema after the repair turn;
    ``problems`` are the schema messages by JSON path."""

    def __init__(self, message: str, problems: Sequence[Problem] = ()) -> None:
        super().__init__(message)
        self.problems = tuple(problems)
