"""Drafts a scripted authoring model answers with (``FakeOpenAIServer`` replies): a good tool, and
one that does not pass validation (an unknown placeholder, no case that must fail)."""

from __future__ import annotations

import copy
import json
from typing import Any

from tests.fakes._script import Reply, text

__all__ = ["BAD_DRAFT", "GOOD_DRAFT", "SENTENCE", "draft_reply"]

SENTENCE = "Convert a temperature between Celsius and Fahrenheit, as data."

GOOD_DRAFT: dict[str, Any] = {
    "name": "convert_temperature",
    "description": "Converts a temperature between Celsius and Fahrenheit.",
    "parameters": {
        "type": "object",
        "properties": {
            "value": {
                "type": "number",
                "description": "The temperature to convert.",
                "minimum": -459.67,
                "examples": [21.5],
            },
            "to": {
                "type": "string",
                "enum": ["celsius", "fahrenheit"],
                "description": "The unit to convert to.",
            },
            "precision": {
                "type": "integer",
                "minimum": 0,
                "maximum": 4,
                "description": "Decimal places to round to.",
            },
        },
        "required": ["value", "to"],
    },
    "prompt": (
        "Convert {value} degrees to {to}.\n"
        "{?precision}\nRound to {precision} decimal places.\n{/precision}\n"
        "Answer with the value and the unit."
    ),
    "outputSchema": {
        "type": "object",
        "properties": {"value": {"type": "number"}, "unit": {"type": "string"}},
        "required": ["value", "unit"],
    },
    "tests": [
        {
            "name": "body temperature",
            "arguments": {"value": 37, "to": "fahrenheit", "precision": 1},
            "expect": {"fields": {"/value": {"atLeast": 98, "atMost": 99}}},
        },
        {
            "name": "lowest value, no precision",
            "arguments": {"value": -459.67, "to": "celsius"},
            "expect": {"fields": {"/unit": {"matches": "(?i)c"}}},
        },
        {
            "name": "unit missing",
            "arguments": {"value": 20},
            "expect": {"isError": True},
        },
        {
            "name": "in words",
            "ask": "What is 20 degrees Celsius in Fahrenheit?",
            "expect": {"arguments": {"to": "fahrenheit"}},
        },
    ],
}

BAD_DRAFT: dict[str, Any] = copy.deepcopy(GOOD_DRAFT)
BAD_DRAFT["prompt"] = "Convert {value} degrees to {unit}."
BAD_DRAFT["tests"] = [case for case in GOOD_DRAFT["tests"] if "isError" not in case["expect"]]


def draft_reply(draft: dict[str, Any]) -> Reply:
    """The model's answer: the draft as JSON text."""
    return text(json.dumps(draft))
