"""Model parameters resolve per call: override → agent settings → provider default."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_export.errors import ConfigurationError
from mcp_export.providers.parameters import PARAMETER_KEYS, resolve_parameters
from schema_types.agent import AgentSettings


def test_only_the_settings_that_are_set_become_parameters() -> None:
    settings = AgentSettings(temperature=0.2, max_output_tokens=500)
    assert resolve_parameters(settings) == {"temperature": 0.2, "max_tokens": 500}


def test_nothing_set_means_every_provider_default() -> None:
    assert resolve_parameters(AgentSettings()) == {}


def test_every_setting_maps_to_its_parameter() -> None:
    settings = AgentSettings(
        temperature=1.0,
        top_p=0.5,
        max_output_tokens=10,
        stop=["END"],
        seed=3,
        presence_penalty=0.1,
        frequency_penalty=-0.1,
        response_format="json",
        tool_choice="required",
    )
    assert resolve_parameters(settings) == {
        "temperature": 1.0,
        "top_p": 0.5,
        "max_tokens": 10,
        "stop": ["END"],
        "seed": 3,
        "presence_penalty": 0.1,
        "frequency_penalty": -0.1,
        "response_format": {"type": "json_object"},
        "tool_choice": "required",
    }
    assert set(resolve_parameters(settings)) == set(PARAMETER_KEYS)


def test_an_override_wins_over_the_agent_setting() -> None:
    settings = AgentSettings(temperature=0.2)
    assert resolve_parameters(settings, {"temperature": 0.9}) == {"temperature": 0.9}


def test_an_explicit_null_clears_the_agent_default() -> None:
    settings = AgentSettings(temperature=0.2, max_output_tokens=500)
    resolved = resolve_parameters(settings, {"temperature": None, "maxTokens": None})
    assert resolved == {}


def test_camel_case_and_settings_names_are_accepted_in_overrides() -> None:
    resolved = resolve_parameters(
        AgentSettings(),
        {
            "topP": 0.3,
            "maxOutputTokens": 20,
            "presencePenalty": 1,
            "frequencyPenalty": "0.5",
            "responseFormat": {"type": "json_schema", "json_schema": {"schema": {}}},
            "toolChoice": "auto",
        },
    )
    assert resolved == {
        "top_p": 0.3,
        "max_tokens": 20,
        "presence_penalty": 1.0,
        "frequency_penalty": 0.5,
        "response_format": {"type": "json_schema", "json_schema": {"schema": {}}},
        "tool_choice": "auto",
    }


def test_numbers_typed_as_text_are_read_and_a_single_stop_becomes_a_list() -> None:
    resolved = resolve_parameters(
        AgentSettings(), {"temperature": "0.7", "max_tokens": "64", "stop": "\n\n"}
    )
    assert resolved == {"temperature": 0.7, "max_tokens": 64, "stop": ["\n\n"]}


def test_an_unknown_override_lists_the_allowed_keys() -> None:
    with pytest.raises(ConfigurationError) as caught:
        resolve_parameters(AgentSettings(), {"temprature": 0.5})
    message = str(caught.value)
    assert message.startswith("unknown model parameter 'temprature': use one of temperature, ")
    for key in PARAMETER_KEYS:
        assert key in message


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("temperature", 3, "between 0 and 2"),
        ("temperature", "hot", "must be a number"),
        ("top_p", -0.1, "between 0 and 1"),
        ("max_tokens", 0, "at least 1"),
        ("max_tokens", 2.5, "whole number"),
        ("seed", True, "whole number"),
        ("stop", [1, 2], "list of strings"),
        ("response_format", "xml", "'text', 'json'"),
        ("tool_choice", "", "'auto', 'none', 'required'"),
        ("temperature", float("nan"), "finite number"),
    ],
)
def test_a_bad_override_value_is_a_configuration_error(key: str, value: Any, says: str) -> None:
    with pytest.raises(ConfigurationError, match=key) as caught:
        resolve_parameters(AgentSettings(), {key: value})
    assert says in str(caught.value)


def test_the_settings_are_not_changed_and_each_call_gets_a_new_dict() -> None:
    settings = AgentSettings(stop=["A"])
    first = resolve_parameters(settings)
    first["stop"].append("B")
    assert resolve_parameters(settings) == {"stop": ["A"]}
    assert settings.stop == ["A"]
