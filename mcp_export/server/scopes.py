"""Scopes per tool: a caller whose OAuth token lacks a tool's scope neither lists nor calls it.

``--tool-scope book_flight=tools:book_flight`` (or the agent file's
``settings.access.toolScopes``, ``server.access``) makes ``book_flight`` need that scope in the
caller's access token (the scopes every token needs, ``--oauth-scope``, still apply to every
request). A tool the caller may not use is left out of its ``tools/list`` (and ``prompts/list``)
and its call is answered as an unknown tool's, so a caller learns nothing of the tools it cannot
use; the refusal is counted in ``/metrics`` (``reason="scope"``) and logged.

Tool scopes need OAuth: the scopes come from the access token (``ctx.request``, the HTTP request
the SDK hands the handler, carries what its authentication middleware found).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_export.errors import ConfigurationError

__all__ = ["ToolScopes", "ToolScopesError", "granted_scopes", "parse_tool_scope"]


class ToolScopesError(ConfigurationError):
    """A tool scope is spelled wrong, names no served tool, or is given without OAuth."""


def parse_tool_scope(text: str) -> tuple[str, str]:
    """``TOOL=SCOPE`` → (tool, scope).

    Raises:
        ToolScopesError: no ``=``, or an empty side, or a scope with a space.
    """
    tool, sep, scope = text.partition("=")
    tool, scope = tool.strip(), scope.strip()
    if not sep or not tool or not scope or " " in scope:
        raise ToolScopesError(
            f"--tool-scope {text!r}: expected TOOL=SCOPE, such as book_flight=tools:book_flight "
            "(one scope, no spaces)"
        )
    return tool, scope


@dataclass(frozen=True)
class ToolScopes:
    """The scope each restricted tool needs (tools not named need none beyond the server's).

    Attributes:
        needed: served tool name → the scope a caller's token must hold to list or call it.
    """

    needed: Mapping[str, str] = field(default_factory=dict)

    def check(self, served: Iterable[str]) -> None:
        """Refuse a scope for a tool that is not served (a typo would restrict nothing).

        Raises:
            ToolScopesError: naming the unknown tools and the served ones.
        """
        names = set(served)
        unknown = sorted(set(self.needed) - names)
        if unknown:
            raise ToolScopesError(
                f"--tool-scope names {', '.join(unknown)}, which this server does not serve; "
                f"the served tools are {', '.join(sorted(names))}"
            )

    def allows(self, tool: str, granted: frozenset[str] | None) -> bool:
        """Whether a caller holding ``granted`` may list and call ``tool``.

        ``granted`` None: the request carries no OAuth token (stdio, or the one-person token):
        its caller is the server's owner, who may use every tool.
        """
        scope = self.needed.get(tool)
        return scope is None or granted is None or scope in granted

    def describe(self) -> str:
        """``book_flight needs tools:book_flight; …`` (or ``none``)."""
        if not self.needed:
            return "none"
        return "; ".join(f"{tool} needs {scope}" for tool, scope in sorted(self.needed.items()))


def granted_scopes(request: Any) -> frozenset[str] | None:
    """The scopes of the request's OAuth token; None when it was not authenticated by OAuth.

    Args:
        request: ``ctx.request``, the Starlette request of an HTTP message (None over stdio).
    """
    scope = getattr(request, "scope", None)
    if not isinstance(scope, Mapping):
        return None
    token = getattr(scope.get("user"), "access_token", None)
    if token is None:
        return None
    return frozenset(token.scopes)
