"""The authoring call: a system and a user prompt and a JSON Schema in, a validated object out.

:data:`AskModel` is the shape every authoring feature calls; :func:`model_asker` makes one that
asks a model of the agent's own providers (``provider:model``, default ``settings.model``).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import jsonschema

from mcp_export.errors import ExportError
from mcp_export.providers.base import ChatMessage, Completion, ModelRequest
from mcp_export.providers.factory import provider_for_agent
from mcp_export.testing.run import with_model
from schema_types.agent import Agent

__all__ = ["AskModel", "AuthoringError", "model_asker"]

AskModel = Callable[[str, str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""``ask(system, user, schema)``: the model's answer as an object that fits ``schema``."""


class AuthoringError(ExportError):
    """The authoring model did not answer with an object that fits the schema asked for."""


def model_asker(agent: Agent, model: str | None = None) -> AskModel:
    """An :data:`AskModel` that asks ``model`` (default the agent's own) through its provider."""

    async def ask(system: str, user: str, schema: dict[str, Any]) -> dict[str, Any]:
        provider, name = provider_for_agent(with_model(agent, model) if model else agent)
        try:
            request = ModelRequest(
                model=name,
                messages=[ChatMessage("system", system), ChatMessage("user", user)],
                parameters={
                    "response_format": {
                        "type": "json_schema",
                        "json_schema": {"name": "answer", "schema": schema},
                    }
                },
            )
            answer = ""
            async for event in provider.stream(request):
                if isinstance(event, Completion):
                    answer = event.message.content
        finally:
            await provider.aclose()
        return fitting(answer, schema)

    return ask


def fitting(answer: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The object in ``answer`` (a code fence around it is allowed) if it fits ``schema``.

    Raises:
        AuthoringError: it is not JSON, not an object, or does not fit.
    """
    text = answer.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[-1].rsplit("```", 1)[0]
    try:
        value = json.loads(text)
    except ValueError:
        raise AuthoringError(
            f"the authoring model did not answer with JSON: {answer[:200]!r}"
        ) from None
    if not isinstance(value, dict):
        raise AuthoringError("the authoring model answered JSON that is not an object")
    problem = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schema).iter_errors(value)
    )
    if problem is not None:
        raise AuthoringError(f"the authoring model's answer does not fit: {problem.message}")
    return dict[str, Any](value)
