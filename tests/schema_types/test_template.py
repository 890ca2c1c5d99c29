"""The prompt-template engine: tokenizer, resolution, diagnostics, rendering."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from schema_types.template.engine import (
    Diagnostic,
    Segment,
    Severity,
    Token,
    TokenKind,
    diagnose,
    parameter_paths,
    placeholder_kind,
    referenced_paths,
    render,
    render_segments,
    render_value,
    tokenize,
)

PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "destination": {"type": "string"},
        "departure_date": {"type": "string", "format": "date"},
        "passengers": {"type": "integer", "default": 1},
        "cabin": {"type": "string"},
        "trip": {
            "type": "object",
            "properties": {
                "destination": {"type": "string"},
                "nights": {"type": "integer", "default": 3},
                "hotel": {
                    "type": "object",
                    "properties": {"stars": {"type": "integer", "default": 4}},
                },
            },
        },
        "extras": {"type": "object"},
        "closed": {"type": "object", "properties": {}, "additionalProperties": False},
    },
    "required": ["destination", "departure_date"],
}


def fill(template: str, arguments: dict[str, Any], parameters: dict[str, Any] = PARAMS) -> str:
    return render(
        template, arguments, parameters, tool_name="book_flight", tool_description="Books flights."
    )


# --- Rendering values -------------------------------------------------------------------------


def test_placeholders_are_replaced_by_string_arguments() -> None:
    template = "Fly to {destination} on {departure_date}."
    assert fill(template, {"destination": "Paris", "departure_date": "2025-06-01"}) == (
        "Fly to Paris on 2025-06-01."
    )


def test_a_value_holding_a_placeholder_is_not_expanded_again() -> None:
    arguments = {"destination": "{departure_date}", "departure_date": "{{x}}"}
    assert fill("{destination}|{departure_date}", arguments) == "{departure_date}|{{x}}"


def test_values_with_replacement_syntax_backslashes_newlines_and_emoji_are_verbatim() -> None:
    value = "$1 \\1 \\g<0> C:\\temp\\new\nline two: Zürich 🚀 \\"
    assert fill("<{destination}>", {"destination": value}) == f"<{value}>"


def test_numbers_render_as_json_numbers() -> None:
    template = "{passengers}"
    assert fill(template, {"passengers": 3}) == "3"
    assert fill(template, {"passengers": 2.5}) == "2.5"
    assert fill(template, {"passengers": 3.0}) == "3.0"
    assert fill(template, {"passengers": -0.001}) == "-0.001"
    assert fill(template, {"passengers": 10**20}) == "100000000000000000000"


def test_booleans_and_null_render_as_json_literals() -> None:
    assert fill("{cabin} {destination} {extras}", {"cabin": True, "destination": False}) == (
        "true false "
    )
    assert fill("{cabin}", {"cabin": None}) == "null"


def test_arrays_and_objects_render_as_compact_json_with_unicode_kept() -> None:
    arguments = {
        "cabin": ["aisle", "Zürich", 1, None],
        "extras": {"meal": "vegan 🌱", "bags": [1, 2], "ok": True},
    }
    assert fill("{cabin}\n{extras}", arguments) == (
        '["aisle", "Zürich", 1, null]\n{"meal": "vegan 🌱", "bags": [1, 2], "ok": true}'
    )


def test_render_value_covers_every_json_type_and_never_raises() -> None:
    assert render_value("plain {x}") == "plain {x}"
    assert render_value(True) == "true"
    assert render_value(False) == "false"
    assert render_value(None) == "null"
    assert render_value(0) == "0"
    assert render_value(1.5e300) == "1.5e+300"
    assert render_value([]) == "[]"
    assert render_value({}) == "{}"
    assert render_value(("a", 1)) == '["a", 1]'
    assert render_value({"k": ("x",)}) == '{"k": ["x"]}'
    assert render_value({"k": {7}}) == '{"k": [7]}'
    circular: list[Any] = []
    circular.append(circular)
    assert render_value(circular) == "[[...]]"


# --- Tool fields and shadowing ----------------------------------------------------------------


def test_tool_fields_and_unclaimed_bare_names_mean_the_tool() -> None:
    template = "{tool.name}: {tool.description} / {name}: {description}"
    assert fill(template, {}) == "book_flight: Books flights. / book_flight: Books flights."


def test_parameters_named_name_and_description_shadow_only_the_bare_forms() -> None:
    parameters = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "description": {"type": "string"}},
    }
    template = "{name} ({description}) via {tool.name}: {tool.description}"
    arguments = {"name": "Ada", "description": "a passenger"}
    assert fill(template, arguments, parameters) == (
        "Ada (a passenger) via book_flight: Books flights."
    )
    # A shadowing parameter that is missing renders empty, never the tool's field.
    assert fill("[{name}]", {}, parameters) == "[]"


def test_a_parameter_named_tool_does_not_capture_tool_fields() -> None:
    parameters = {
        "type": "object",
        "properties": {"tool": {"type": "object", "properties": {"name": {"type": "string"}}}},
    }
    assert placeholder_kind(("tool", "name"), parameters) == "tool_field"
    assert fill("{tool.name} {tool}", {"tool": {"name": "x"}}, parameters) == (
        'book_flight {"name": "x"}'
    )


def test_placeholder_kind_resolves_parameters_tool_fields_and_unknowns() -> None:
    assert placeholder_kind(("destination",), PARAMS) == "parameter"
    assert placeholder_kind(("trip", "hotel", "stars"), PARAMS) == "parameter"
    assert placeholder_kind(("name",), PARAMS) == "tool_field"
    assert placeholder_kind(("description",), PARAMS) == "tool_field"
    assert placeholder_kind(("tool", "description"), PARAMS) == "tool_field"
    assert placeholder_kind(("name", "first"), PARAMS) == "unknown"
    assert placeholder_kind(("tool",), PARAMS) == "unknown"
    assert placeholder_kind(("destinaton",), PARAMS) == "unknown"
    assert placeholder_kind(("trip", "hotel", "name"), PARAMS) == "unknown"
    assert placeholder_kind(("destination", "length"), PARAMS) == "unknown"
    assert placeholder_kind(("extras", "any", "depth"), PARAMS) == "parameter"
    assert placeholder_kind(("closed", "x"), PARAMS) == "unknown"


# --- Nested paths and defaults ----------------------------------------------------------------


def test_nested_paths_reach_into_object_arguments() -> None:
    arguments = {"trip": {"destination": "Lima", "hotel": {"stars": 5}}}
    assert fill("{trip.destination} {trip.hotel.stars}*", arguments) == "Lima 5*"
    assert fill("{extras.meal.kind}", {"extras": {"meal": {"kind": "vegan"}}}) == "vegan"


def test_missing_nested_values_take_nested_defaults_else_render_empty() -> None:
    template = "[{trip.destination}|{trip.nights}|{trip.hotel.stars}|{extras.meal}]"
    # Nested defaults apply even when the parent object argument is absent.
    assert fill(template, {}) == "[|3|4|]"
    assert fill(template, {"trip": {"hotel": {}}}) == "[|3|4|]"
    assert fill(template, {"trip": {"nights": 7, "hotel": {"stars": 2}}}) == "[|7|2|]"


def test_a_parent_default_object_supplies_nested_values_before_child_defaults() -> None:
    parameters = {
        "type": "object",
        "properties": {
            "trip": {
                "type": "object",
                "default": {"destination": "Rome"},
                "properties": {
                    "destination": {"type": "string", "default": "Paris"},
                    "nights": {"type": "integer", "default": 2},
                },
            }
        },
    }
    assert fill("{trip.destination} {trip.nights} {trip}", {}, parameters) == (
        'Rome 2 {"destination": "Rome"}'
    )
    assert fill("{trip.destination}", {"trip": {}}, parameters) == "Paris"


def test_missing_optionals_take_their_default_or_the_empty_string() -> None:
    assert fill("{passengers} pax, cabin [{cabin}]", {}) == "1 pax, cabin []"
    assert fill("{passengers}", {"passengers": 0}) == "0"


def test_keep_missing_shows_the_placeholder_source_for_previews() -> None:
    segments = render_segments(
        "to {destination} x{passengers}",
        {},
        PARAMS,
        tool_name="t",
        tool_description="d",
        keep_missing=True,
    )
    assert segments == [
        Segment("to ", "literal", 0, 3),
        Segment("{destination}", "missing", 3, 16),
        Segment(" x", "literal", 16, 18),
        Segment("1", "default", 18, 30),
    ]
    plain = render_segments("{destination}", {}, PARAMS, tool_name="t", tool_description="d")
    assert plain == [Segment("", "missing", 0, 13)]


# --- Braces -----------------------------------------------------------------------------------


def test_doubled_braces_are_literal_braces() -> None:
    assert fill("{{literal}} and {{destination}}", {"destination": "X"}) == (
        "{literal} and {destination}"
    )


def test_triple_braces_around_a_placeholder_render_a_braced_value() -> None:
    assert [t.kind for t in tokenize("{{{destination}}}")] == [
        TokenKind.ESCAPED_BRACE,
        TokenKind.PLACEHOLDER,
        TokenKind.ESCAPED_BRACE,
    ]
    assert fill("{{{destination}}}", {"destination": "X"}) == "{X}"


def test_three_closing_braces_are_an_escape_then_a_stray_brace() -> None:
    assert tokenize("}}}") == [
        Token(TokenKind.ESCAPED_BRACE, 0, 2, "}}"),
        Token(TokenKind.STRAY_CLOSE, 2, 3, "}"),
    ]
    assert fill("}}}", {}) == "}}"
    assert [(d.code, d.start, d.end) for d in diagnose("}}}", {})] == [("stray-brace", 2, 3)]


def test_unterminated_brace_is_diagnosed_up_to_the_line_end_and_kept_literally() -> None:
    template = "Go to {abc\nthen {destination"
    message = 'unterminated brace: "{" has no closing "}" on this line'
    message += ' (write "{{" for a literal "{")'
    assert diagnose(template, {"type": "object", "properties": {"destination": {}}}) == [
        Diagnostic(Severity.ERROR, "unterminated-brace", message, 6, 10),
        Diagnostic(Severity.ERROR, "unterminated-brace", message, 16, 28),
    ]
    assert fill(template, {"destination": "X"}) == template


def test_an_unterminated_brace_stops_at_the_next_opening_brace() -> None:
    tokens = tokenize("{abc {destination}")
    assert tokens == [
        Token(TokenKind.UNTERMINATED, 0, 5, "{abc "),
        Token(TokenKind.PLACEHOLDER, 5, 18, "{destination}", ("destination",)),
    ]
    assert fill("{abc {destination}", {"destination": "X"}) == "{abc X"


def test_stray_closing_brace_is_diagnosed_with_its_span() -> None:
    assert diagnose("a } b", PARAMS)[0] == Diagnostic(
        Severity.ERROR,
        "stray-brace",
        'stray closing brace: "}" closes no placeholder (write "}}" for a literal "}")',
        2,
        3,
    )
    assert fill("a } b", {}) == "a } b"


def test_braces_around_spaces_or_odd_text_are_invalid_placeholders_kept_literally() -> None:
    template = "to { destination } {} {a..b} {9lives}"
    found = [(d.code, d.start, d.end, d.message) for d in diagnose(template, PARAMS)]
    literal = '(write "{{" and "}}" for literal braces)'
    generic = (
        "a placeholder is a parameter name or dotted path such as {trip.destination},"
        " optionally with a fallback ({days|a few}); a section is {?days}…{/days}"
    )
    assert found[0] == (
        "invalid-placeholder",
        3,
        18,
        f"invalid placeholder {{ destination }}: write {{destination}} without spaces {literal}",
    )
    assert found[1:3] == [
        ("invalid-placeholder", 19, 21, f"invalid placeholder {{}}: {generic} {literal}"),
        ("invalid-placeholder", 22, 28, f"invalid placeholder {{a..b}}: {generic} {literal}"),
    ]
    assert found[3][:3] == ("invalid-placeholder", 29, 37)
    assert fill(template, {"destination": "X"}) == template


# --- Diagnostics ------------------------------------------------------------------------------


def test_unknown_placeholder_suggests_the_closest_parameter() -> None:
    template = "Fly to {destinaton} on {departure_date}"
    assert diagnose(template, PARAMS) == [
        Diagnostic(
            Severity.ERROR,
            "unknown-placeholder",
            'unknown placeholder {destinaton}: no parameter "destinaton"'
            " (did you mean {destination}?)",
            7,
            19,
        ),
        # The typo is not a use of "destination", so the person also learns it is unused.
        Diagnostic(
            Severity.WARNING,
            "unused-required",
            'required parameter "destination" is never used in the prompt',
            39,
            39,
        ),
    ]


def test_unknown_placeholder_without_a_close_match_has_no_suggestion() -> None:
    [diagnostic] = diagnose("{zzzzqq} {destination} {departure_date}", PARAMS)
    assert diagnostic.message == 'unknown placeholder {zzzzqq}: no parameter "zzzzqq"'
    assert (diagnostic.start, diagnostic.end) == (0, 8)


def test_unknown_sub_path_names_the_parent_and_suggests_the_nested_property() -> None:
    template = "{destination} {departure_date} {trip.destinaton} {destination.size} {closed.x}"
    messages = [d.message for d in diagnose(template, PARAMS)]
    assert messages == [
        'unknown placeholder {trip.destinaton}: parameter "trip" has no property "destinaton"'
        " (did you mean {trip.destination}?)",
        'unknown placeholder {destination.size}: parameter "destination" is not an object'
        " (did you mean {destination}?)",
        'unknown placeholder {closed.x}: parameter "closed" has no property "x"'
        " (did you mean {closed}?)",
    ]


def test_unknown_placeholders_render_as_their_source_text_with_error_kind() -> None:
    segments = render_segments("{nope}!", {"nope": 1}, PARAMS, tool_name="t", tool_description="d")
    assert segments == [Segment("{nope}", "error", 0, 6), Segment("!", "literal", 6, 7)]


def test_required_parameter_never_used_is_a_warning_at_the_template_end() -> None:
    template = "Fly on {departure_date}."
    assert diagnose(template, PARAMS) == [
        Diagnostic(
            Severity.WARNING,
            "unused-required",
            'required parameter "destination" is never used in the prompt',
            24,
            24,
        )
    ]


def test_a_nested_placeholder_counts_as_using_its_required_parent() -> None:
    parameters = {**PARAMS, "required": ["trip", "ghost"]}
    assert diagnose("{trip.hotel.stars}", parameters) == []


def test_a_clean_template_has_no_diagnostics() -> None:
    template = "{{json}} {tool.name}: fly to {destination} on {departure_date}, {trip.nights}"
    assert diagnose(template, PARAMS) == []


def test_diagnose_tolerates_a_malformed_schema_being_edited() -> None:
    broken: dict[str, Any] = {"type": "object", "properties": ["x"], "required": "x"}
    assert [d.code for d in diagnose("{x} {name}", broken)] == ["unknown-placeholder"]


# --- Tokens -----------------------------------------------------------------------------------


def test_tokenize_classifies_every_piece() -> None:
    assert tokenize("Hi {tool.name}, {trip.destination}{{}}") == [
        Token(TokenKind.TEXT, 0, 3, "Hi "),
        Token(TokenKind.TOOL_FIELD, 3, 14, "{tool.name}", ("tool", "name")),
        Token(TokenKind.TEXT, 14, 16, ", "),
        Token(TokenKind.PLACEHOLDER, 16, 34, "{trip.destination}", ("trip", "destination")),
        Token(TokenKind.ESCAPED_BRACE, 34, 36, "{{"),
        Token(TokenKind.ESCAPED_BRACE, 36, 38, "}}"),
    ]
    assert tokenize("") == []


def test_identifiers_allow_hyphens_and_underscores_but_not_a_leading_digit() -> None:
    assert tokenize("{_a-b.c_9}")[0].path == ("_a-b", "c_9")
    assert tokenize("{9a}")[0].kind is TokenKind.INVALID_PLACEHOLDER
    assert tokenize("{é}")[0].kind is TokenKind.INVALID_PLACEHOLDER


def test_referenced_paths_lists_each_well_formed_placeholder_once() -> None:
    template = "{a} {a} {b.c} {tool.name} {{d}} { e } {f"
    assert referenced_paths(template) == {("a",), ("b", "c"), ("tool", "name")}


def test_parameter_paths_lists_nested_properties_parents_first() -> None:
    assert parameter_paths(PARAMS) == [
        ("destination",),
        ("departure_date",),
        ("passengers",),
        ("cabin",),
        ("trip",),
        ("trip", "destination"),
        ("trip", "nights"),
        ("trip", "hotel"),
        ("trip", "hotel", "stars"),
        ("extras",),
        ("closed",),
    ]


# --- Properties -------------------------------------------------------------------------------

_template_text = st.text(
    alphabet=st.one_of(st.sampled_from(list("{}{}{}.a_-b \n")), st.characters()), max_size=80
)
_keys = st.sampled_from(["a", "b", "c", "destination", "properties", "default", "type"])
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_keys, children, max_size=3),
    max_leaves=8,
)
_arguments = st.dictionaries(
    st.sampled_from(["a", "b", "destination", "trip", "name", "tool"]), _json, max_size=4
)
_parameters = st.one_of(
    st.just(PARAMS),
    st.dictionaries(
        st.sampled_from(["type", "properties", "required", "additionalProperties"]),
        _json,
        max_size=4,
    ),
)


@given(_template_text)
def test_tokens_tile_the_template_contiguously(template: str) -> None:
    tokens = tokenize(template)
    position = 0
    for token in tokens:
        assert token.start == position
        assert token.end > token.start
        assert template[token.start : token.end] == token.text
        position = token.end
    assert position == len(template)
    assert "".join(token.text for token in tokens) == template


@given(_template_text, _arguments, _parameters, st.booleans())
def test_rendering_and_diagnosing_never_raise(
    template: str, arguments: dict[str, Any], parameters: dict[str, Any], keep: bool
) -> None:
    segments = render_segments(
        template, arguments, parameters, tool_name="t", tool_description="d", keep_missing=keep
    )
    assert [(s.start, s.end) for s in segments] == [(t.start, t.end) for t in tokenize(template)]
    rendered = render(template, arguments, parameters, tool_name="t", tool_description="d")
    if not keep:
        assert rendered == "".join(segment.text for segment in segments)
    for diagnostic in diagnose(template, parameters):
        assert 0 <= diagnostic.start <= diagnostic.end <= len(template)


@given(st.text(alphabet=st.characters(blacklist_characters="{}")))
def test_text_without_braces_renders_unchanged(template: str) -> None:
    assert fill(template, {}) == template
    assert diagnose(template, {}) == []
