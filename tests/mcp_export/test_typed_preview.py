"""What the studio's preview shows is added to a model request for a tool's outputSchema: the
same request shaping a served call uses (``providers.structured``), per endpoint kind."""

from __future__ import annotations

from mcp_export.session.typed import request_additions
from tests.mcp_export.test_typed_calls import FLIGHTS

CLOSED = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
    "additionalProperties": False,
}


def test_openai_gets_a_response_format_on_every_turn_strict_only_when_the_schema_allows() -> None:
    added = request_additions("openai", FLIGHTS, "book.flight", tools=True)
    assert added["method"] == "response_format"
    assert added["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "book_flight", "schema": FLIGHTS},
    }
    assert added["when"] == "on every turn"
    assert "platform.openai.com" in added["source"]
    strict = request_additions("openai", CLOSED, "count", tools=False)
    assert strict["response_format"]["json_schema"]["strict"] is True


def test_a_local_server_with_tools_gets_the_schema_on_the_format_turn_only() -> None:
    added = request_additions("llamacpp", FLIGHTS, "book_flight", tools=True)
    assert added["response_format"] == {"type": "json_object", "schema": FLIGHTS}
    assert "format turn" in added["when"]
    assert request_additions("vllm", FLIGHTS, "book_flight", tools=False)["when"] == (
        "on every turn"
    )


def test_anthropic_gets_a_final_tool_and_sampling_an_instruction() -> None:
    final = request_additions("anthropic", FLIGHTS, "book_flight", tools=True)
    assert final["method"] == "final_tool"
    assert final["tools"][0]["name"] == "final_answer"
    assert final["tools"][0]["input_schema"] == FLIGHTS
    told = request_additions("sampling", FLIGHTS, "book_flight", tools=False)
    assert told["method"] == "instruction"
    assert told["system"].startswith("Answer with one JSON value only")
