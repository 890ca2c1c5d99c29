"""The headless runtime: providers, the chat session, the agent's toolbox, the history store, the
MCP server, client-config export and the CLI. Never imports Qt.

The names below are what the studio (``app``) may use. They load on first use (PEP 562), so
``metaagent validate`` does not pay for the MCP SDK (~0.9 s) and a served agent imports a
provider SDK only when it calls a model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from schema_types._lazy import LazyExports

if TYPE_CHECKING:
    from mcp_export._client_config import (
        CLIENTS,
        ClientId,
        ClientInfo,
        ExportEntry,
        InstallError,
        InstallResult,
        build_entry,
        default_config_path,
        install,
        snippet,
    )
    from mcp_export._errors import (
        ConfigurationError,
        CredentialsMissing,
        ExportError,
        HistoryError,
        ProviderError,
        SessionError,
        ToolServerError,
    )
    from mcp_export._events import (
        FailureKind,
        FinalAnswer,
        SessionEvent,
        SessionFailed,
        SessionStarted,
        ToolCallFinished,
        ToolCallRecord,
        ToolCallStarted,
        TurnFinished,
    )
    from mcp_export._history import (
        HistoryStore,
        RunRecord,
        StoredMessage,
        ThreadRecord,
        default_history_path,
    )
    from mcp_export._paths import data_dir, data_dir_notice
    from mcp_export._session import (
        ChatSession,
        SessionResult,
        collect_result,
        load_thread_messages,
        run_to_result,
    )
    from mcp_export._session_failure import failure_for
    from mcp_export._tool_test import ToolTestRecord, caller_result
    from mcp_export._toolbox import (
        AgentToolbox,
        HiddenTool,
        ProbedTool,
        ProbeResult,
        ToolOutcome,
        ToolSpec,
        probe_server,
    )
    from mcp_export._verify import VerifyReport, render_report, verify_export
    from mcp_export.providers import (
        ChatMessage,
        Provider,
        TextDelta,
        credentials_available,
        provider_for_agent,
        resolve_parameters,
    )

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(
        [
            "CLIENTS",
            "ClientId",
            "ClientInfo",
            "ExportEntry",
            "InstallError",
            "InstallResult",
            "build_entry",
            "default_config_path",
            "install",
            "snippet",
        ],
        "mcp_export._client_config",
    ),
    **dict.fromkeys(
        [
            "ConfigurationError",
            "CredentialsMissing",
            "ExportError",
            "HistoryError",
            "ProviderError",
            "SessionError",
            "ToolServerError",
        ],
        "mcp_export._errors",
    ),
    **dict.fromkeys(
        [
            "FailureKind",
            "FinalAnswer",
            "SessionEvent",
            "SessionFailed",
            "SessionStarted",
            "ToolCallFinished",
            "ToolCallRecord",
            "ToolCallStarted",
            "TurnFinished",
        ],
        "mcp_export._events",
    ),
    **dict.fromkeys(
        ["HistoryStore", "RunRecord", "StoredMessage", "ThreadRecord", "default_history_path"],
        "mcp_export._history",
    ),
    **dict.fromkeys(
        ["ChatSession", "SessionResult", "collect_result", "load_thread_messages", "run_to_result"],
        "mcp_export._session",
    ),
    "failure_for": "mcp_export._session_failure",
    **dict.fromkeys(["ToolTestRecord", "caller_result"], "mcp_export._tool_test"),
    **dict.fromkeys(
        [
            "AgentToolbox",
            "HiddenTool",
            "ProbeResult",
            "ProbedTool",
            "ToolOutcome",
            "ToolSpec",
            "probe_server",
        ],
        "mcp_export._toolbox",
    ),
    **dict.fromkeys(["data_dir", "data_dir_notice"], "mcp_export._paths"),
    **dict.fromkeys(["VerifyReport", "render_report", "verify_export"], "mcp_export._verify"),
    **dict.fromkeys(
        [
            "ChatMessage",
            "Provider",
            "TextDelta",
            "credentials_available",
            "provider_for_agent",
            "resolve_parameters",
        ],
        "mcp_export.providers",
    ),
}

__all__ = [
    "CLIENTS",
    "AgentToolbox",
    "ChatMessage",
    "ChatSession",
    "ClientId",
    "ClientInfo",
    "ConfigurationError",
    "CredentialsMissing",
    "ExportEntry",
    "ExportError",
    "FailureKind",
    "FinalAnswer",
    "HiddenTool",
    "HistoryError",
    "HistoryStore",
    "InstallError",
    "InstallResult",
    "ProbeResult",
    "ProbedTool",
    "Provider",
    "ProviderError",
    "RunRecord",
    "SessionError",
    "SessionEvent",
    "SessionFailed",
    "SessionResult",
    "SessionStarted",
    "StoredMessage",
    "TextDelta",
    "ThreadRecord",
    "ToolCallFinished",
    "ToolCallRecord",
    "ToolCallStarted",
    "ToolOutcome",
    "ToolServerError",
    "ToolSpec",
    "ToolTestRecord",
    "TurnFinished",
    "VerifyReport",
    "build_entry",
    "caller_result",
    "collect_result",
    "credentials_available",
    "data_dir",
    "data_dir_notice",
    "default_config_path",
    "default_history_path",
    "failure_for",
    "install",
    "load_thread_messages",
    "probe_server",
    "provider_for_agent",
    "render_report",
    "resolve_parameters",
    "run_to_result",
    "snippet",
    "verify_export",
]


_LAZY = LazyExports(__name__, _EXPORTS)


def __getattr__(name: str) -> Any:
    return _LAZY.get(name)


def __dir__() -> list[str]:
    return _LAZY.names()
