"""How a model is made to answer in a tool's output schema, per endpoint kind, on the wire.

The strongest way each endpoint supports, chosen from the provider id (``settings.model``'s
prefix, or ``sampling``):

- **response_format** — OpenAI-compatible ``response_format: {type: json_schema, json_schema:
  {name, schema, strict?}}`` (the server constrains decoding to the schema):

  * ``openai``, ``azure``, ``openrouter``: OpenAI's Structured Outputs
    (platform.openai.com/docs/guides/structured-outputs; Azure OpenAI documents the same body,
    OpenRouter passes it to models that support it). Sent on every turn, tools or not: the
    model still calls tools, and its text answer follows the schema. ``strict: true`` only when
    the schema meets strict mode's rules (every object closed with ``additionalProperties:
    false`` and every property required), which an authored schema often does not.
  * ``llamacpp``: the same, in the form both of its servers take, ``{type: json_object,
    schema}``: llama-cpp-python's server reads only that form (``_grammar_for_response_format``
    in ``llama_cpp/llama_chat_format.py`` returns no grammar for any type but ``json_object``:
    OpenAI's ``json_schema`` form would be ignored without a word), and llama.cpp's
    ``llama-server`` takes it as well as OpenAI's (tools/server/README.md, ``response_format``).
    Both turn the schema into a grammar.
  * ``vllm`` (docs.vllm.ai, "Structured
    Outputs"), ``lmstudio`` (lmstudio.ai/docs, "Structured Output"), ``ollama`` (its ``/v1``
    endpoint maps ``response_format``'s schema onto its native ``format``,
    docs.ollama.com/api/openai-compatibility), ``litellm`` (passed on): the grammar constrains
    the *whole* output, so a turn under it cannot produce a tool call. Where the model is
    offered tools, those turns go without it; when the model then answers, a text that already
    fits is taken as it is, else one more request asks for the answer under the schema with
    ``tool_choice: none`` (the *format turn*). Without tools every turn carries it.

- **final tool** — ``anthropic`` (Messages API tool use, docs.anthropic.com "Tool use"; forcing
  with ``tool_choice: {type: any}`` / ``{type: tool, name}``): one more tool,
  :data:`FINAL_TOOL`, whose ``input_schema`` is the output schema; every turn must call a tool
  (``tool_choice: required``, sent as ``any``), so the model calls inner tools until it
  answers by calling the final tool; the last allowed turn names it.

- **instruction** — ``sampling`` (the MCP client's model, which takes no format): a system
  message with the schema and "answer with JSON only"; the answer is then checked like the
  others.

Whatever the method, the answer is checked (``schema_types.output_schema``) and repaired once
(``session.typed``). :meth:`StructuredOutput.additions` says what is added to a request, for the
studio's preview.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from mcp_export.providers.base import ChatMessage, ModelRequest, ToolSchema

__all__ = [
    "FINAL_TOOL",
    "OutputMethod",
    "StructuredOutput",
    "plan_output",
    "strict_ready",
]

FINAL_TOOL = "final_answer"
"""The tool a final-tool model answers through (its input is the answer)."""

OutputMethod = Literal["response_format", "final_tool", "instruction"]

_COMBINES = frozenset({"openai", "azure", "openrouter"})
"""Provider ids whose ``response_format`` goes with tool calls in one turn."""
_SCHEMA_IN_JSON_OBJECT = frozenset({"llamacpp"})
"""Provider ids whose servers take the schema as ``{type: json_object, schema}``."""
_FINAL_TOOL_PROVIDERS = frozenset({"anthropic"})
_INSTRUCTION_PROVIDERS = frozenset({"sampling"})

_SOURCES: dict[str, str] = {
    "openai": "OpenAI Structured Outputs: platform.openai.com/docs/guides/structured-outputs",
    "azure": "Azure OpenAI structured outputs (the OpenAI request body)",
    "openrouter": "OpenRouter structured outputs (the OpenAI request body)",
    "llamacpp": (
        "llama-cpp-python llama_chat_format._grammar_for_response_format and llama.cpp "
        "tools/server/README.md: response_format {type: json_object, schema}"
    ),
    "vllm": "vLLM docs, Structured Outputs: response_format json_schema",
    "lmstudio": "LM Studio docs, Structured Output: response_format json_schema",
    "ollama": "Ollama OpenAI compatibility: response_format json_schema -> format",
    "litellm": "LiteLLM passes response_format json_schema to the model",
    "anthropic": "Anthropic tool use: a forced tool whose input_schema is the schema",
    "sampling": "MCP sampling takes no format: an instruction, then the check",
}

_NAME_CHARACTERS = re.compile(r"[^A-Za-z0-9_-]+")


def _schema_name(tool_name: str) -> str:
    """A ``json_schema.name`` OpenAI accepts (``^[a-zA-Z0-9_-]{1,64}$``)."""
    return (_NAME_CHARACTERS.sub("_", tool_name) or "answer")[:64]


def strict_ready(schema: Any) -> bool:
    """Whether OpenAI's strict mode takes ``schema`` as it is: every object schema closed
    (``additionalProperties: false``) with every property required, all the way down."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, Mapping):
        return False
    if schema.get("type") == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        if schema.get("additionalProperties") is not False:
            return False
        if not isinstance(properties, Mapping) or set(schema.get("required") or []) != set(
            properties
        ):
            return False
        if not all(strict_ready(sub) for sub in properties.values()):
            return False
    for key in ("items", "not"):
        if key in schema and not strict_ready(schema[key]):
            return False
    for key in ("anyOf", "allOf", "oneOf", "prefixItems"):
        subs = schema.get(key)
        if isinstance(subs, list) and not all(strict_ready(sub) for sub in subs):
            return False
    for key in ("$defs", "definitions"):
        defs = schema.get(key)
        if isinstance(defs, Mapping) and not all(strict_ready(sub) for sub in defs.values()):
            return False
    return True


@dataclass(frozen=True)
class StructuredOutput:
    """How one endpoint is made to answer in one schema.

    Attributes:
        method: ``response_format``, ``final_tool`` or ``instruction`` (module docstring).
        schema: the tool's output schema.
        name: the schema's name on the wire (the tool's name, in the characters OpenAI takes).
        provider: the provider id it was chosen for.
        with_tools: whether the format goes with turns that offer tools (else such turns go
            without it and a format turn follows a text answer that does not fit).
        strict: whether ``strict: true`` is sent.
        source: where the wire format comes from.
    """

    method: OutputMethod
    schema: Mapping[str, Any]
    name: str
    provider: str
    with_tools: bool
    strict: bool
    source: str

    def response_format(self) -> dict[str, Any]:
        """The ``response_format`` parameter."""
        if self.provider in _SCHEMA_IN_JSON_OBJECT:
            return {"type": "json_object", "schema": self.schema}
        spec: dict[str, Any] = {"name": self.name, "schema": self.schema}
        if self.strict:
            spec["strict"] = True
        return {"type": "json_schema", "json_schema": spec}

    def final_tool(self) -> ToolSchema:
        """The tool the model answers through."""
        return ToolSchema(
            FINAL_TOOL,
            "Give your final answer by calling this tool, once, with the answer as its input. "
            "Call the other tools first if you need them.",
            self.schema,
        )

    def instruction(self) -> str:
        """The system message that asks for the schema (``instruction``)."""
        return (
            "Answer with one JSON value only, no prose and no code fence, that is valid against "
            "this JSON Schema:\n" + json.dumps(self.schema, ensure_ascii=False)
        )

    def shape(self, request: ModelRequest, *, final: bool) -> ModelRequest:
        """``request`` as sent with the format.

        Args:
            request: the turn's request as the session built it.
            final: this turn must answer, not call tools (a format turn, a repair without
                tools, or the last turn ``maxChatTurns`` allows).
        """
        parameters = dict(request.parameters)
        if self.method == "final_tool":
            parameters["tool_choice"] = FINAL_TOOL if final else "required"
            return replace(
                request, tools=(*request.tools, self.final_tool()), parameters=parameters
            )
        if self.method == "instruction":
            messages = list(request.messages)
            at = 1 if messages and messages[0].role == "system" else 0
            messages.insert(at, ChatMessage("system", self.instruction()))
            return replace(request, messages=tuple(messages))
        if request.tools and not self.with_tools:
            if not final:
                return request
            parameters["tool_choice"] = "none"
        parameters["response_format"] = self.response_format()
        return replace(request, parameters=parameters)

    def additions(self, *, tools: bool) -> dict[str, Any]:
        """What the format adds to a request, for a preview: ``method``, ``source``, and the
        wire parameters (``response_format`` / ``tools`` + ``tool_choice`` / ``system``).

        Args:
            tools: whether the model is offered tools (changes when the format is sent).
        """
        added: dict[str, Any] = {"method": self.method, "source": self.source}
        if self.method == "final_tool":
            tool = self.final_tool()
            added["tools"] = [
                {
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.input_schema,
                }
            ]
            added["tool_choice"] = "required (any); the last turn names " + FINAL_TOOL
        elif self.method == "instruction":
            added["system"] = self.instruction()
        else:
            added["response_format"] = self.response_format()
            if tools and not self.with_tools:
                added["when"] = (
                    "on the format turn only (tool_choice: none), after a text answer that does "
                    "not fit: this endpoint cannot call tools under a response_format"
                )
            else:
                added["when"] = "on every turn"
        return added


def plan_output(provider: str, schema: Mapping[str, Any], tool_name: str) -> StructuredOutput:
    """The way ``provider`` (a provider id: ``openai``, ``anthropic``, ``llamacpp``…,
    ``sampling``) is made to answer in ``schema`` for tool ``tool_name``."""
    method: OutputMethod
    if provider in _FINAL_TOOL_PROVIDERS:
        method = "final_tool"
    elif provider in _INSTRUCTION_PROVIDERS:
        method = "instruction"
    else:
        method = "response_format"
    combines = method != "response_format" or provider in _COMBINES
    strict = provider in _COMBINES and provider != "openrouter" and strict_ready(schema)
    source = _SOURCES.get(provider, "the OpenAI request body (response_format json_schema)")
    return StructuredOutput(
        method, schema, _schema_name(tool_name), provider, combines, strict, source
    )
