"""Is a JSON Schema well-formed? The Draft 2020-12 meta-schema check, in time linear in the schema.

``jsonschema``'s own ``check_schema`` holds every subschema to the meta-schema through its
``$dynamicRef``\\ s, at a fraction of a millisecond per subschema, and compiles each ``pattern``
and ``patternProperties`` key for its ``regex`` format: a schema of 50 000 pattern properties
took it over ten seconds. Here each node is read once with the direct tests of
``schema._proof`` (:func:`~schema_types.schema._proof.key_sound`), each distinct regular
expression is compiled once as ``jsonschema`` would compile it, and only what those tests cannot
accept (a keyword of the wrong shape, a ``$ref`` or ``$id`` whose URI format ``jsonschema``
checks, a pattern that does not compile) goes to ``check_schema``, a keyword at a time, so the
verdict and the message are ``jsonschema``'s own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from schema_types.schema._proof import key_sound

__all__ = ["meta_schema_error"]

# Checked by jsonschema's format checker (URIs) or pattern (anchors): left to it, value by value.
_FORMATTED = frozenset(("$ref", "$dynamicRef", "$id", "$schema", "$anchor", "$dynamicAnchor"))


def meta_schema_error(schema: Any) -> str | None:
    """What the Draft 2020-12 meta-schema (with its format checks) refuses in ``schema``.

    Args:
        schema: a JSON Schema as parsed from JSON or YAML (an object or a boolean).

    Returns:
        ``jsonschema``'s message for one thing refused (as ``check_schema`` words it), or None
        when the meta-schema accepts the whole schema.
    """
    doubtful: list[Any] = []
    patterns: set[str] = set()
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, bool):
            continue
        if not isinstance(node, Mapping):
            doubtful.append(node)
            continue
        for key, value in node.items():
            if key == "pattern" and isinstance(value, str):
                patterns.add(value)
            elif key == "patternProperties" and isinstance(value, Mapping):
                patterns.update(name for name in value if isinstance(name, str))
                stack.extend(value.values())
            elif key in _FORMATTED or not key_sound(key, value, stack):
                doubtful.append({key: value})
    doubtful += [{"pattern": pattern} for pattern in patterns if not _compiles(pattern)]
    return _first_refused(doubtful)


def _compiles(pattern: str) -> bool:
    # What jsonschema's "regex" format accepts: whatever Python's re compiles.
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def _first_refused(doubtful: list[Any]) -> str | None:
    if not doubtful:
        return None
    # Imported here: most schemas leave nothing in doubt, and jsonschema costs 0.1 s to import.
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    seen: set[str] = set()
    for part in doubtful:
        key = json.dumps(part, sort_keys=True, default=repr)
        if key in seen:
            continue  # one "$schema" repeated in every subschema is checked once
        seen.add(key)
        try:
            Draft202012Validator.check_schema(part)
        except SchemaError as exc:
            return str(exc.message)
        except (RecursionError, OverflowError):  # e.g. a pattern of 10 000 nested groups
            return "nested too deeply to be checked (or compiled, for a pattern)"
    return None
