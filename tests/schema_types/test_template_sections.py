"""Optional sections and fallbacks of prompt templates: rendering, diagnostics, lexical edits.

The property tests build templates as small trees (text, placeholders with or without a
fallback, sections and inverted sections, nested) together with the text the rules in DESIGN.md
say they render to for given arguments, and compare that with the engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from schema_types.template.engine import (
    Diagnostic,
    Segment,
    Severity,
    TokenKind,
    count_path_uses,
    diagnose,
    has_value,
    open_sections,
    rename_path,
    render,
    render_segments,
    render_value,
    tokenize,
)

PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "mode": {"type": "string", "enum": ["car", "train"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "pets": {"type": "boolean"},
        "budget": {
            "type": "object",
            "properties": {
                "amount": {"type": "number"},
                "currency": {"type": "string", "default": "EUR"},
            },
        },
        "email": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "pace": {"type": "string", "enum": ["slow", "fast"], "default": "slow"},
    },
    "required": ["mode"],
}


def fill(template: str, arguments: dict[str, Any]) -> str:
    return render(template, arguments, PARAMS, tool_name="plan", tool_description="Plans trips.")


def segments(template: str, arguments: dict[str, Any], **options: Any) -> list[Segment]:
    return render_segments(
        template, arguments, PARAMS, tool_name="plan", tool_description="Plans.", **options
    )


# --- The trip ---------------------------------------------------------------------------

TRIP = (
    "Plan a {mode} trip{?days} for {days} days{/days}{!days} for as long as suits{/days}"
    "{?pets} (pets: {pets}){/pets}.{?budget.amount} Budget {budget.amount} {budget.currency}."
    "{/budget.amount} Mail {email|nobody}."
)


def test_a_call_with_only_the_required_parameter_leaves_no_holes() -> None:
    assert fill(TRIP, {"mode": "car"}) == "Plan a car trip for as long as suits. Mail nobody."


def test_every_optional_parameter_given_fills_every_section() -> None:
    arguments = {
        "mode": "train",
        "days": 5,
        "pets": False,
        "budget": {"amount": 800},
        "email": "ada@example.com",
    }
    assert fill(TRIP, arguments) == (
        "Plan a train trip for 5 days (pets: false). Budget 800 EUR. Mail ada@example.com."
    )


def test_null_empty_string_and_empty_array_count_as_no_value_but_false_and_zero_do() -> None:
    values: list[Any] = [None, "", [], False, 0, {}, "0", [None]]
    assert [has_value(v) for v in values] == [
        False,
        False,
        False,
        True,
        True,
        True,
        True,
        True,
    ]
    template = "{?email}mail{/email}{!email}none{/email}|{?tags}tags{/tags}{tags|no tags}"
    assert fill(template, {"email": None, "tags": []}) == "none|no tags"
    assert fill(template, {"email": "", "tags": ["a"]}) == 'none|tags["a"]'
    assert fill("{?pets}pets: {pets}{/pets}", {"pets": False}) == "pets: false"
    assert fill("{?days}{days} days{/days}", {"days": 0}) == "0 days"


def test_a_schema_default_is_a_value_for_sections_and_fallbacks() -> None:
    assert fill("{?pace}at a {pace} pace{/pace}", {}) == "at a slow pace"
    assert fill("{pace|any}", {}) == "slow"
    assert fill("{pace|any}", {"pace": None}) == "any"
    assert fill("{?budget.currency}in {budget.currency}{/budget.currency}", {}) == "in EUR"


def test_a_fallback_differs_from_a_plain_placeholder_only_without_a_value() -> None:
    assert fill("{email|nobody}", {"email": "a@b"}) == "a@b"
    assert fill("{email|nobody}", {}) == "nobody"
    assert fill("{email}", {}) == ""
    assert fill("{email}", {"email": None}) == "null"  # a plain placeholder renders null as ever
    assert fill("{email|}", {"email": None}) == ""
    assert fill("{email|a | b, c: d}", {}) == "a | b, c: d"


def test_tool_fields_take_fallbacks_and_sections_too() -> None:
    template = "{?tool.description}About: {tool.description}{/tool.description}{tool.name|x}"
    described = render(template, {}, PARAMS, tool_name="plan", tool_description="Plans.")
    assert described == "About: Plans.plan"
    bare = render(template, {}, PARAMS, tool_name="plan", tool_description="")
    assert bare == "plan"


def test_sections_nest_and_test_dotted_paths() -> None:
    template = (
        "{?budget}[{?budget.amount}{budget.amount}{/budget.amount}"
        "{!budget.amount}?{/budget.amount}]{/budget}"
    )
    assert fill(template, {}) == ""
    assert fill(template, {"budget": {}}) == "[?]"
    assert fill(template, {"budget": {"amount": 3}}) == "[3]"


# --- Standalone lines ---------------------------------------------------------------------------


BLOCK = "Trip:\n  {?days}\n  Days: {days}\n  {/days}\n{!days}\nNo fixed length.\n{/days}\nEnd."


def test_a_tag_alone_on_its_line_takes_the_line_with_it() -> None:
    assert fill(BLOCK, {"days": 3}) == "Trip:\n  Days: 3\nEnd."
    assert fill(BLOCK, {}) == "Trip:\nNo fixed length.\nEnd."


def test_a_tag_sharing_its_line_with_text_leaves_the_line_alone() -> None:
    assert fill("a {?days}\nx\n{/days} b", {}) == "a  b"
    assert fill("a {?days}\nx\n{/days} b", {"days": 1}) == "a \nx\n b"


def test_standalone_tags_at_the_edges_and_with_windows_line_breaks() -> None:
    assert fill("{?days}\r\nDays: {days}\r\n{/days}", {"days": 2}) == "Days: 2\r\n"
    assert fill("{?days}\nx\n{/days}", {}) == ""
    assert fill("\t{!days}\t\nnone\n{/days}", {}) == "none\n"


def test_segments_map_kept_text_back_to_its_source_and_mark_provenance() -> None:
    found = segments("A\n{?days}\nd={days}\n{/days}{pace} {email|-}", {"days": 2})
    assert found == [
        Segment("A\n", "literal", 0, 2),
        Segment("d=", "literal", 10, 12, section=True),
        Segment("2", "value", 12, 18, section=True),
        Segment("\n", "literal", 18, 19, section=True),
        Segment("slow", "default", 26, 32),
        Segment(" ", "literal", 32, 33),
        Segment("-", "fallback", 33, 42),
    ]


def test_keep_missing_shows_a_placeholder_without_value_but_never_inside_hidden_sections() -> None:
    found = segments("{email}{?days}{days}{/days}{email|x}", {}, keep_missing=True)
    assert [(s.text, s.kind) for s in found] == [("{email}", "missing"), ("x", "fallback")]


# --- Single pass --------------------------------------------------------------------------------

_TRICKY = st.text(alphabet="{}?!/|.abdays \n\\$1", max_size=24)


@given(value=_TRICKY)
def test_a_value_is_never_expanded_inside_a_section_or_a_fallback(value: str) -> None:
    template = "{?email}<{email}>{/email}{!email}({email|-}){/email}"
    assert fill(template, {"email": value}) == (f"<{value}>" if value else "(-)")
    assert fill("{?email}{email}{email}{/email}", {"email": value}) == value * 2


# --- Property: random trees against the rules -------------------------------------------------


@dataclass(frozen=True)
class _Text:
    text: str


@dataclass(frozen=True)
class _Var:
    name: str
    fallback: str | None


@dataclass(frozen=True)
class _Section:
    name: str
    inverted: bool
    body: tuple[Any, ...]


_NAMES = st.sampled_from(["email", "pets", "tags", "pace", "budget.amount", "budget.currency"])
_PLAIN = st.text(alphabet="ab ,.-:x", min_size=1, max_size=6)
_FALLBACK = st.none() | st.text(alphabet="ab -|,", max_size=5)
_LEAVES = st.builds(_Text, _PLAIN) | st.builds(_Var, _NAMES, _FALLBACK)
_TREES = st.recursive(
    st.lists(_LEAVES, max_size=4).map(tuple),
    lambda inner: st.lists(
        _LEAVES | st.builds(_Section, _NAMES, st.booleans(), inner), max_size=4
    ).map(tuple),
    max_leaves=12,
)
_VALUES = st.sampled_from([None, "", [], "ok", 0, False, ["t"], "{email}"])
_ARGUMENTS = st.fixed_dictionaries(
    {},
    optional={
        "email": _VALUES,
        "pets": _VALUES,
        "tags": _VALUES,
        "pace": _VALUES,
        "budget": st.fixed_dictionaries({}, optional={"amount": _VALUES, "currency": _VALUES}),
    },
)
_ABSENT = object()


def _source(body: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for node in body:
        if isinstance(node, _Text):
            parts.append(node.text)
        elif isinstance(node, _Var):
            tail = "" if node.fallback is None else "|" + node.fallback
            parts.append("{" + node.name + tail + "}")
        else:
            sigil = "!" if node.inverted else "?"
            parts.append(f"{{{sigil}{node.name}}}{_source(node.body)}{{/{node.name}}}")
    return "".join(parts)


def _value(name: str, arguments: dict[str, Any]) -> Any:
    """The rules, written out: an argument, else the schema's default, else absent."""
    if name == "pace":
        return arguments.get("pace", "slow")
    if name.startswith("budget."):
        budget = arguments.get("budget", _ABSENT)
        key = name.split(".")[1]
        if isinstance(budget, dict) and key in budget:
            return budget[key]
        return "EUR" if key == "currency" else _ABSENT
    return arguments.get(name, _ABSENT)


def _expected(body: tuple[Any, ...], arguments: dict[str, Any]) -> str:
    out: list[str] = []
    for node in body:
        if isinstance(node, _Text):
            out.append(node.text)
            continue
        value = _value(node.name, arguments)
        given_ = value is not _ABSENT and has_value(value)
        if isinstance(node, _Var):
            if node.fallback is not None and not given_:
                out.append(node.fallback)
            elif value is not _ABSENT:
                out.append(render_value(value))
        elif given_ != node.inverted:
            out.append(_expected(node.body, arguments))
    return "".join(out)


@settings(max_examples=300, deadline=None)
@given(tree=_TREES, arguments=_ARGUMENTS)
def test_random_templates_render_as_the_rules_say(tree: tuple[Any, ...], arguments: Any) -> None:
    template = _source(tree)
    assert fill(template, arguments) == _expected(tree, arguments)
    assert [d for d in diagnose(template, PARAMS) if d.severity is Severity.ERROR] == []


@settings(max_examples=300, deadline=None)
@given(template=st.text(alphabet="{}?!/|.ab\n x", max_size=30), arguments=_ARGUMENTS)
def test_any_text_renders_without_raising_and_segments_lie_inside_their_source(
    template: str, arguments: Any
) -> None:
    found = segments(template, arguments)
    assert "".join(s.text for s in found) == fill(template, arguments)
    for segment in found:
        assert 0 <= segment.start <= segment.end <= len(template)
        if segment.kind == "literal" and len(segment.text) == segment.end - segment.start:
            assert template[segment.start : segment.end] == segment.text
    tokens = tokenize(template)
    assert "".join(t.text for t in tokens) == template
    diagnose(template, PARAMS)


# --- Diagnostics --------------------------------------------------------------------------------


def found(template: str) -> list[tuple[str, str, int, int]]:
    return [(d.severity.value, d.code, d.start, d.end) for d in diagnose(template, PARAMS)]


def test_an_unclosed_section_is_an_error_at_its_tag_and_its_tag_renders_as_written() -> None:
    assert found("{mode} {?days}x") == [("error", "unclosed-section", 7, 14)]
    message = diagnose("{mode} {?days}x", PARAMS)[0].message
    assert message == "unclosed section {?days}: write {/days} where it ends"
    assert fill("{mode} {?days}x", {"mode": "car"}) == "car {?days}x"


def test_a_close_without_open_is_an_error() -> None:
    assert found("{mode}{/days}") == [("error", "unopened-section-end", 6, 13)]
    assert diagnose("{mode}{/days}", PARAMS)[0].message == (
        "{/days} closes no section: open one before it with {?days} or {!days}"
    )
    assert fill("{mode}{/days}", {"mode": "car"}) == "car{/days}"


def test_a_close_of_another_name_says_which_section_is_open() -> None:
    template = "{mode}{?days}x{/dayz}"
    assert found(template) == [
        ("error", "unclosed-section", 6, 13),
        ("error", "section-mismatch", 14, 21),
    ]
    assert diagnose(template, PARAMS)[1].message == (
        "{/dayz} does not close the open section {?days}: write {/days} to close it"
    )


def test_closing_an_outer_section_first_leaves_the_inner_one_unclosed() -> None:
    template = "{mode}{?days}{?pets}p{/days}"
    assert found(template) == [("error", "unclosed-section", 13, 20)]
    assert diagnose(template, PARAMS)[0].message == (
        "unclosed section {?pets}: {/days} closes {?days} around it first;"
        " write {/pets} before {/days}"
    )
    assert fill(template, {"mode": "", "days": 1}) == "{?pets}p"
    assert fill(template, {"mode": ""}) == ""


def test_unknown_names_in_sections_are_errors_with_suggestions() -> None:
    [problem] = diagnose("{mode}{?dayz}x{/dayz}", PARAMS)
    assert (problem.code, problem.start, problem.end) == ("unknown-placeholder", 6, 13)
    assert problem.message == 'unknown section {?dayz}: no parameter "dayz" (did you mean {?days}?)'
    [fallback] = diagnose("{mode}{emial|none}", PARAMS)
    assert fallback.message == (
        'unknown placeholder {emial|none}: no parameter "emial" (did you mean {email|none}?)'
    )


def test_sections_and_fallbacks_on_a_value_that_is_always_there_are_warned_about() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "s": {"type": "string"},
            "d": {"type": "integer", "default": 2},
        },
        "required": ["n", "s"],
    }
    template = "{?n}{n}{/n}{!n}-{/n}{s|x}{?d}{d}{/d}"
    assert [(d.severity, d.code, d.start, d.message) for d in diagnose(template, schema)] == [
        (
            Severity.WARNING,
            "always-has-value",
            0,
            'section {?n} is always kept: "n" is required',
        ),
        (Severity.WARNING, "always-has-value", 11, 'section {!n} is never kept: "n" is required'),
        (
            Severity.WARNING,
            "always-has-value",
            20,
            'the fallback of {s|x} is never used: "s" is required (unless a call sends it empty)',
        ),
        (
            Severity.WARNING,
            "always-has-value",
            25,
            'section {?d} is always kept: "d" has a default',
        ),
    ]


def test_a_required_parameter_used_only_in_a_section_tag_is_still_unused() -> None:
    assert found("{?mode}x{/mode}") == [
        ("warning", "always-has-value", 0, 7),
        ("warning", "unused-required", 15, 15),
    ]


def test_diagnostics_stay_in_template_order() -> None:
    problems = diagnose("{/days} {nope} {?days}", PARAMS)
    assert [p.start for p in problems] == sorted(p.start for p in problems)
    assert all(isinstance(p, Diagnostic) for p in problems)


# --- Lexical operations -------------------------------------------------------------------------


def test_tokens_of_sections_and_fallbacks() -> None:
    kinds = [(t.kind, t.path, t.fallback) for t in tokenize("{?a.b}{x|y z}{!a}{/a}{tool.name|t}")]
    assert kinds == [
        (TokenKind.SECTION, ("a", "b"), None),
        (TokenKind.PLACEHOLDER, ("x",), "y z"),
        (TokenKind.INVERTED_SECTION, ("a",), None),
        (TokenKind.SECTION_END, ("a",), None),
        (TokenKind.TOOL_FIELD, ("tool", "name"), "t"),
    ]
    assert [t.kind for t in tokenize("{? a}{?}{x|{y}}{x|a\nb}")][:2] == [
        TokenKind.INVALID_PLACEHOLDER,
        TokenKind.INVALID_PLACEHOLDER,
    ]


def test_renaming_a_parameter_renames_its_section_tags_and_fallback_placeholders() -> None:
    template = "{?days}{days|a few} {days.x}{/days}{daysy}{{days}}"
    assert count_path_uses(template, ("days",)) == 4
    assert rename_path(template, ("days",), ("nights",)) == (
        "{?nights}{nights|a few} {nights.x}{/nights}{daysy}{{days}}",
        4,
    )


def test_open_sections_lists_what_an_end_tag_may_close() -> None:
    template = "{?a}{!b}x{/b} {?c}y"
    assert [t.text for t in open_sections(template, 9)] == ["{?a}", "{!b}"]
    assert [t.text for t in open_sections(template, 14)] == ["{?a}"]
    assert [t.text for t in open_sections(template, len(template))] == ["{?a}", "{?c}"]
