"""Typed JSON Schema nodes for the parameter builder, and lossless conversion to and from dicts.

A tool's ``parameters`` stay a plain JSON Schema dict (served as ``inputSchema`` as written); the
nodes here are the editable view the studio's tree works on::

    SchemaNode = StringSchema | NumberSchema | IntegerSchema | BooleanSchema
               | ArraySchema | ObjectSchema | RawSchema

``RawSchema`` keeps, verbatim, any sub-schema the builder cannot model (no ``type``, a list of
types, ``"null"``, a bare ``anyOf``/``$ref`` …). Typed nodes keep every keyword they do not model in
``extras`` and remember the order keys were read in, so ``schema_to_json(schema_from_json(d)) == d``
(key order included) for any JSON-Schema-shaped dict.

A modelled keyword is absent when its attribute is ``None``; ``default`` is the exception (``null``
is a real default), so it is present once set and :meth:`clear_default` removes it.

Read JSON with :func:`schema_from_json` (JSON names, unknown keywords into ``extras``); the node
constructors take Python names (``StringSchema(min_length=2)``) or aliases and refuse unknown ones.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from copy import deepcopy
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    Tag,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    model_serializer,
    model_validator,
)

from schema_types.errors import Problem, SchemaDefinitionError
from schema_types.json_text import PathParts, describe_value, format_path, to_problems
from schema_types.schema.check import MODELLED_KEYWORDS, ROOT_MESSAGE, keyword_type_problems

__all__ = [
    "ArraySchema",
    "BooleanSchema",
    "IntegerSchema",
    "NumberSchema",
    "ObjectSchema",
    "ParameterPath",
    "RawSchema",
    "SchemaNode",
    "StringSchema",
    "iter_nodes",
    "parameter_paths",
    "parameters_from_json",
    "schema_from_json",
    "schema_to_json",
]

# Validation context flag: the input is JSON Schema (keys are JSON names, unknown keys are extras).
_FROM_JSON = "schema_types.from_json"


class _FieldValues(dict[str, Any]):
    """Keyword values already renamed to field names (see ``_TypedNode._from_json_keys``)."""


def _unconverted_json(data: Any, info: ValidationInfo) -> Mapping[str, Any] | None:
    """``data`` when it is a JSON object read from JSON whose keys are still keywords, else None.

    Pydantic may run a node's wrap validator twice on one input (a union of models referencing
    each other); keys already converted (:class:`_FieldValues`) must not be converted again.
    """
    json_input = bool(info.context and info.context.get(_FROM_JSON))
    if json_input and isinstance(data, Mapping) and not isinstance(data, _FieldValues):
        return data
    return None


class _TypedNode(BaseModel):
    """Keywords every typed node has; subclasses add a ``type`` literal and their own keywords."""

    model_config = ConfigDict(
        strict=True, validate_assignment=True, populate_by_name=True, extra="forbid"
    )

    title: str | None = None
    description: str | None = None
    enum: list[Any] | None = None
    default: Any = None
    examples: list[Any] | None = None
    extras: dict[str, Any] = Field(default_factory=dict)
    """Every keyword this node does not model (``$defs``, ``anyOf``, ``const``, ``x-ui`` …)."""

    _key_order: list[str] = PrivateAttr(default_factory=list)
    _counts: ClassVar[tuple[str, ...]] = ()

    @model_validator(mode="wrap")
    @classmethod
    def _from_json_keys(
        cls, data: Any, handler: ModelWrapValidatorHandler[Self], info: ValidationInfo
    ) -> Self:
        if _unconverted_json(data, info) is None:
            return handler(data)
        by_alias = {f.alias or name: name for name, f in cls.model_fields.items()}
        by_alias.pop("extras")  # "extras" in a schema is just another unknown keyword
        fields = _FieldValues(extras={})
        for key, value in data.items():
            name = by_alias.get(key)
            if name is None:
                fields["extras"][key] = value
            elif name in cls._counts and isinstance(value, float):
                fields[name] = int(
                    value
                )  # 3.0 is a JSON integer; keyword_type_problems refused 3.5
            else:
                fields[name] = value
        node = handler(fields)
        node._key_order = list(data)
        return node

    @model_serializer
    def _dump(self) -> dict[str, Any]:
        return _typed_to_json(self)

    def to_json(self) -> dict[str, Any]:
        """The plain JSON Schema dict (same as :func:`schema_to_json`)."""
        return _typed_to_json(self)

    def clear_default(self) -> None:
        """Remove ``default`` (setting it to ``None`` means a ``null`` default)."""
        self.default = None
        self.model_fields_set.discard("default")


class StringSchema(_TypedNode):
    """``{"type": "string"}`` with length, pattern and format."""

    type: Literal["string"] = "string"
    min_length: int | None = Field(default=None, alias="minLength")
    max_length: int | None = Field(default=None, alias="maxLength")
    pattern: str | None = None
    format: str | None = None
    _counts = ("min_length", "max_length")


class _NumericSchema(_TypedNode):
    minimum: int | float | None = None
    maximum: int | float | None = None
    exclusive_minimum: int | float | None = Field(default=None, alias="exclusiveMinimum")
    exclusive_maximum: int | float | None = Field(default=None, alias="exclusiveMaximum")
    multiple_of: int | float | None = Field(default=None, alias="multipleOf")


class NumberSchema(_NumericSchema):
    """``{"type": "number"}`` with bounds and ``multipleOf``."""

    type: Literal["number"] = "number"


class IntegerSchema(_NumericSchema):
    """``{"type": "integer"}`` with bounds and ``multipleOf``."""

    type: Literal["integer"] = "integer"


class BooleanSchema(_TypedNode):
    """``{"type": "boolean"}``."""

    type: Literal["boolean"] = "boolean"


class ArraySchema(_TypedNode):
    """``{"type": "array"}``: one ``items`` schema (a node, or a boolean schema) and counts."""

    type: Literal["array"] = "array"
    items: SchemaNode | bool | None = None
    min_items: int | None = Field(default=None, alias="minItems")
    max_items: int | None = Field(default=None, alias="maxItems")
    unique_items: bool | None = Field(default=None, alias="uniqueItems")
    _counts = ("min_items", "max_items")


class ObjectSchema(_TypedNode):
    """``{"type": "object"}``: ordered ``properties``, ``required`` and ``additionalProperties``."""

    type: Literal["object"] = "object"
    properties: dict[str, SchemaNode | bool] | None = None
    required: list[str] | None = None
    additional_properties: bool | SchemaNode | None = Field(
        default=None, alias="additionalProperties", union_mode="left_to_right"
    )

    def is_required(self, name: str) -> bool:
        """Whether property ``name`` is listed in ``required``."""
        return name in (self.required or [])

    def set_required(self, name: str, required: bool = True) -> None:
        """Add ``name`` to ``required`` or remove it (``required`` is dropped when it empties)."""
        names = list(self.required or [])
        if required and name not in names:
            names.append(name)
        elif not required:
            names = [n for n in names if n != name]
        self.required = names or None


class RawSchema(BaseModel):
    """A sub-schema the builder does not model, kept verbatim in ``data``."""

    model_config = ConfigDict(strict=True, validate_assignment=True, extra="forbid")

    data: dict[str, Any]

    @model_validator(mode="wrap")
    @classmethod
    def _wrap_json(
        cls, data: Any, handler: ModelWrapValidatorHandler[Self], info: ValidationInfo
    ) -> Self:
        found = _unconverted_json(data, info)
        return handler(data if found is None else _FieldValues(data=dict(found)))

    @model_serializer
    def _dump(self) -> dict[str, Any]:
        return deepcopy(self.data)

    def to_json(self) -> dict[str, Any]:
        """The plain JSON Schema dict (a copy of ``data``)."""
        return deepcopy(self.data)


def _node_tag(value: Any) -> str:
    # RawSchema catches everything the typed nodes cannot model, so nothing is ever refused here.
    if isinstance(value, _TypedNode):
        return str(type(value).model_fields["type"].default)
    kind = value.get("type") if isinstance(value, Mapping) else None
    if isinstance(kind, str) and kind in MODELLED_KEYWORDS:
        return kind
    return "raw"


SchemaNode = Annotated[
    Annotated[StringSchema, Tag("string")]
    | Annotated[NumberSchema, Tag("number")]
    | Annotated[IntegerSchema, Tag("integer")]
    | Annotated[BooleanSchema, Tag("boolean")]
    | Annotated[ArraySchema, Tag("array")]
    | Annotated[ObjectSchema, Tag("object")]
    | Annotated[RawSchema, Tag("raw")],
    Discriminator(_node_tag),
]

NODE_CLASSES = (
    # every typed node class: ``isinstance(x, NODE_CLASSES)`` is "x is a SchemaNode"
    StringSchema,
    NumberSchema,
    IntegerSchema,
    BooleanSchema,
    ArraySchema,
    ObjectSchema,
    RawSchema,
)

ArraySchema.model_rebuild()
ObjectSchema.model_rebuild()
_NODE_ADAPTER: TypeAdapter[SchemaNode] = TypeAdapter(SchemaNode)


# --- JSON → nodes ------------------------------------------------------------------------------


def schema_from_json(data: Mapping[str, Any]) -> SchemaNode:
    """Build the typed node tree of a JSON Schema dict (deep-copied; nothing is dropped).

    Raises:
        SchemaDefinitionError: ``data`` is not an object, or a keyword the nodes model has a value
            of the wrong JSON type; each problem names the keyword's JSON path
            (``properties.age.minimum: expected number, got string "x"``).
    """
    if not isinstance(data, Mapping):
        got = describe_value(data)
        raise SchemaDefinitionError([Problem("", f"a schema must be a JSON object, got {got}")])
    problems = to_problems(keyword_type_problems(data))
    if problems:
        raise SchemaDefinitionError(problems)
    try:
        return _NODE_ADAPTER.validate_python(deepcopy(dict(data)), context={_FROM_JSON: True})
    except ValidationError as exc:  # keyword_type_problems should have caught it
        located = [(tuple(e["loc"]), str(e["msg"])) for e in exc.errors()]
        raise SchemaDefinitionError(to_problems(located)) from exc


def parameters_from_json(data: Mapping[str, Any]) -> ObjectSchema:
    """Build the root node of a tool's parameters, which must be ``{"type": "object", …}``.

    ``{}`` is refused too: the parameters are served as the MCP ``inputSchema``, which must say
    ``type: object``; a tool without parameters is ``{"type": "object", "properties": {}}``.

    Raises:
        SchemaDefinitionError: the root is not an object schema, or as :func:`schema_from_json`.
    """
    if not isinstance(data, Mapping) or data.get("type") != "object":
        raise SchemaDefinitionError([Problem("", ROOT_MESSAGE)])
    node = schema_from_json(data)
    assert isinstance(node, ObjectSchema)  # guaranteed by the type check above
    return node


# --- nodes → JSON ------------------------------------------------------------------------------


def schema_to_json(node: SchemaNode) -> dict[str, Any]:
    """The plain JSON Schema dict of a node tree (a fresh copy; absent keywords stay absent)."""
    return node.to_json()


def _value_to_json(value: Any) -> Any:
    if isinstance(value, NODE_CLASSES):
        return value.to_json()
    if isinstance(value, dict):
        return {key: _value_to_json(item) for key, item in value.items()}
    return deepcopy(value)


def _typed_to_json(node: _TypedNode) -> dict[str, Any]:
    fields = type(node).model_fields
    common = ("title", "description", "enum", "default", "examples", "extras", "type")
    # Canonical order for keys the node did not read (set by the editor): type, title,
    # description, the type's own keywords, then enum, default, examples.
    names = ["type", "title", "description"]
    names += [name for name in fields if name not in common]
    names += ["enum", "default", "examples"]
    present: dict[str, Any] = {}
    for name in names:
        value = getattr(node, name)
        if value is None and not (name == "default" and "default" in node.model_fields_set):
            continue
        present[fields[name].alias or name] = _value_to_json(value)
    for key, value in node.extras.items():
        present.setdefault(key, deepcopy(value))
    ordered = {key: present[key] for key in node._key_order if key in present}
    ordered.update((key, value) for key, value in present.items() if key not in ordered)
    return ordered


# --- walking -----------------------------------------------------------------------------------


def iter_nodes(node: SchemaNode) -> Iterator[tuple[str, SchemaNode]]:
    """Yield ``(json_path, node)`` for ``node`` and every node below it, depth first.

    Paths are schema paths (``""`` for ``node`` itself, ``properties.trip.properties.destination``,
    ``items``, ``additionalProperties``); boolean schemas are not nodes and are skipped, and a
    :class:`RawSchema` is yielded but not entered.
    """
    for parts, child in _walk(node, ()):
        yield format_path(parts), child


def _walk(node: SchemaNode, parts: PathParts) -> Iterator[tuple[PathParts, SchemaNode]]:
    yield parts, node
    children: list[tuple[PathParts, Any]] = []
    if isinstance(node, ArraySchema):
        children.append((("items",), node.items))
    elif isinstance(node, ObjectSchema):
        children += [(("properties", name), sub) for name, sub in (node.properties or {}).items()]
        children.append((("additionalProperties",), node.additional_properties))
    for child_parts, child in children:
        if isinstance(child, NODE_CLASSES):
            yield from _walk(child, parts + child_parts)


@dataclass(frozen=True)
class ParameterPath:
    """One parameter a prompt template can name (``trip.destination``)."""

    path: str
    """Dotted path, as written in a template placeholder."""
    name: str
    type: str | None
    """JSON type (``string``; ``string | null`` for a list of types); None when not stated."""
    description: str | None
    required: bool
    """Whether it is required within its own object (a parent may still be optional)."""
    schema: dict[str, Any] = field(compare=False, hash=False, repr=False)


def parameter_paths(params: ObjectSchema | Mapping[str, Any]) -> list[ParameterPath]:
    """Every parameter path of a parameters schema, in property order, parents before children.

    Nested objects give dotted paths; arrays are not entered (a template cannot index them). Works
    on whatever part of a malformed dict it can understand, since the template editor asks while
    the person is still typing the schema.
    """
    data = params.to_json() if isinstance(params, ObjectSchema) else params
    found: list[ParameterPath] = []
    _collect_paths(data, "", found)
    return found


def _collect_paths(schema: Mapping[str, Any], prefix: str, found: list[ParameterPath]) -> None:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return
    required = schema.get("required")
    required_names = set(required) if isinstance(required, list) else set()
    for name, sub in properties.items():
        sub_dict = dict(sub) if isinstance(sub, Mapping) else {}
        kind = sub_dict.get("type")
        if isinstance(kind, list):
            kind = " | ".join(str(k) for k in kind)
        description = sub_dict.get("description")
        path = f"{prefix}.{name}" if prefix else str(name)
        found.append(
            ParameterPath(
                path=path,
                name=str(name),
                type=kind if isinstance(kind, str) else None,
                description=description if isinstance(description, str) else None,
                required=name in required_names,
                schema=sub_dict,
            )
        )
        # Enter objects (and untyped schemas with properties); arrays are not entered.
        if kind is None or "object" in kind.split(" | "):
            _collect_paths(sub_dict, path, found)
