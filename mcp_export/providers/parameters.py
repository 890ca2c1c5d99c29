"""Model parameters, resolved per call: explicit override → agent settings → provider default.

``resolve_parameters`` gives the ``ModelRequest.parameters`` mapping every provider reads. Keys are
snake_case (``PARAMETER_KEYS``); a key that is absent means "the provider's own default". An
override whose value is ``None`` removes the key, so an explicit null clears an agent default and
hands the choice back to the provider.

Values are checked and normalised here, once, so providers need not: numbers may come as strings
(``/set temperature 0.3`` in the CLI), ``stop`` is always a list, ``response_format`` always a
dict (``"json"`` → ``{"type": "json_object"}``), ``tool_choice`` a string (``auto``, ``none``,
``required`` or a tool name) or the provider's dict form.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from mcp_export.errors import ConfigurationError
from schema_types.agent import AgentSettings

__all__ = ["PARAMETER_KEYS", "resolve_parameters"]

PARAMETER_KEYS = (
    "temperature",
    "top_p",
    "max_tokens",
    "stop",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "response_format",
    "tool_choice",
)

# The AgentSettings field each parameter defaults from.
_SETTINGS_FIELD = {key: key for key in PARAMETER_KEYS} | {"max_tokens": "max_output_tokens"}

# Other spellings accepted in overrides: camelCase (as in the agent file) and the settings name.
_ALIASES = {
    "topP": "top_p",
    "maxTokens": "max_tokens",
    "max_output_tokens": "max_tokens",
    "maxOutputTokens": "max_tokens",
    "max_completion_tokens": "max_tokens",
    "maxCompletionTokens": "max_tokens",
    "presencePenalty": "presence_penalty",
    "frequencyPenalty": "frequency_penalty",
    "responseFormat": "response_format",
    "toolChoice": "tool_choice",
}


def resolve_parameters(
    settings: AgentSettings, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The model parameters of one call.

    Args:
        settings: the agent's settings; every parameter set there is a default.
        overrides: per-call values, snake_case or camelCase keys; a ``None`` value removes the
            parameter (the provider's default applies).

    Returns:
        A new dict with snake_case keys among ``PARAMETER_KEYS``.

    Raises:
        ConfigurationError: an override key is unknown (the message lists the allowed keys), or a
            value has the wrong type or range.
    """
    resolved: dict[str, Any] = {}
    for key in PARAMETER_KEYS:
        value = getattr(settings, _SETTINGS_FIELD[key])
        if value is not None:
            resolved[key] = _check(key, value)
    for raw_key, value in (overrides or {}).items():
        key = _ALIASES.get(raw_key, raw_key)
        if key not in PARAMETER_KEYS:
            allowed = ", ".join(PARAMETER_KEYS)
            raise ConfigurationError(f"unknown model parameter {raw_key!r}: use one of {allowed}")
        if value is None:
            resolved.pop(key, None)
        else:
            resolved[key] = _check(key, value)
    return resolved


def _check(key: str, value: Any) -> Any:
    return _CHECKS[key](key, value)


def _number(low: float, high: float) -> Callable[[str, Any], float]:
    def check(key: str, value: Any) -> float:
        number = float(_as_number(key, value, float))
        if not low <= number <= high:
            raise ConfigurationError(f"{key} must be between {low:g} and {high:g} (got {value!r})")
        return number

    return check


def _integer(low: int | None) -> Callable[[str, Any], int]:
    def check(key: str, value: Any) -> int:
        number = int(_as_number(key, value, int))
        if low is not None and number < low:
            raise ConfigurationError(f"{key} must be at least {low} (got {value!r})")
        return number

    return check


def _as_number(key: str, value: Any, kind: type[int] | type[float]) -> Any:
    what = "a whole number" if kind is int else "a number"
    if isinstance(value, bool):
        raise ConfigurationError(f"{key} must be {what} (got {value!r})")
    try:
        number = kind(value) if isinstance(value, str | int | float) else None
    except ValueError:
        number = None
    if number is None or (kind is int and isinstance(value, float) and not value.is_integer()):
        raise ConfigurationError(f"{key} must be {what} (got {value!r})")
    if isinstance(number, float) and not math.isfinite(number):
        raise ConfigurationError(f"{key} must be a finite number (got {value!r})")
    return number


def _stop(key: str, value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ConfigurationError(f"{key} must be a string or a list of strings (got {value!r})")


def _response_format(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        kind = {"json": "json_object"}.get(value, value)
        if kind not in ("text", "json_object"):
            raise ConfigurationError(
                f"{key} must be 'text', 'json' / 'json_object', or an object such as "
                f'{{"type": "json_schema", "json_schema": {{...}}}} (got {value!r})'
            )
        return {"type": kind}
    if isinstance(value, Mapping) and isinstance(value.get("type"), str):
        return dict(value)
    raise ConfigurationError(f"{key} must be a string or an object with a 'type' (got {value!r})")


def _tool_choice(key: str, value: Any) -> str | dict[str, Any]:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, Mapping):
        return dict(value)
    raise ConfigurationError(
        f"{key} must be 'auto', 'none', 'required', a tool name, or an object (got {value!r})"
    )


_CHECKS: dict[str, Callable[[str, Any], Any]] = {
    "temperature": _number(0.0, 2.0),
    "top_p": _number(0.0, 1.0),
    "max_tokens": _integer(1),
    "stop": _stop,
    "seed": _integer(None),
    "presence_penalty": _number(-2.0, 2.0),
    "frequency_penalty": _number(-2.0, 2.0),
    "response_format": _response_format,
    "tool_choice": _tool_choice,
}
