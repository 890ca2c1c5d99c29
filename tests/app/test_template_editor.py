"""The template editor: highlighting, completion, diagnostics, undo/redo, renames, tool tracking."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette, QTextCharFormat, QTextDocument
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.document.tool_ref import ToolRef
from app.tool_editor.highlighter import (
    HighlightStyle,
    OffsetMap,
    TemplateHighlighter,
    style_colours,
    style_formats,
)
from app.tool_editor.template_editor import TemplateEditor
from app.tool_editor.template_pane import TemplatePane
from schema_types.agent import Agent, ToolDefinition
from schema_types.template.engine import TokenKind, placeholder_kind, tokenize

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "destination": {"type": "string", "description": "Where to go.", "examples": ["Lisbon"]},
        "nights": {"type": "integer", "minimum": 1, "default": 3},
        "trip": {
            "type": "object",
            "description": "The trip.",
            "properties": {
                "budget": {"type": "number", "description": "Most to spend."},
                "cabin": {"type": "string", "enum": ["economy", "business"]},
            },
        },
    },
    "required": ["destination"],
}


def make_document(prompt: str = "") -> tuple[AgentDocument, ToolDefinition]:
    agent = Agent.model_validate(
        {
            "metadata": {
                "name": "Trips",
                "tools": [
                    {"name": "first", "description": "Comes first.", "prompt": "x"},
                    {
                        "name": "book_trip",
                        "description": "Books a trip.",
                        "parameters": PARAMETERS,
                        "prompt": prompt,
                    },
                ],
            }
        }
    )
    document = AgentDocument(agent)
    return document, document.agent.metadata.tools[1]


def make_pane(qtbot: QtBot, prompt: str = "") -> tuple[TemplatePane, AgentDocument, ToolDefinition]:
    document, tool = make_document(prompt)
    pane = TemplatePane(ToolRef.of(document, tool))
    qtbot.addWidget(pane)
    pane.resize(1000, 600)
    pane.show()
    return pane, document, tool


def format_at(editor: TemplateEditor, position: int) -> QTextCharFormat | None:
    """The highlighter's format at Qt ``position`` (a copy), None for plain text."""
    block = editor.document().findBlock(position)
    inside = position - block.position()
    for found in block.layout().formats():
        if found.start <= inside < found.start + found.length:
            return QTextCharFormat(found.format)
    return None


def colour(fmt: QTextCharFormat | None) -> str:
    assert fmt is not None
    return fmt.foreground().color().name()


def style_colour(editor: TemplateEditor, style: HighlightStyle) -> str:
    return style_colours(editor.palette())[style].name()


LOOKS = {
    HighlightStyle.PARAMETER: "parameter",
    HighlightStyle.TOOL_FIELD: "tool field",
    HighlightStyle.UNKNOWN: "error",
    HighlightStyle.MALFORMED: "error",
    HighlightStyle.ESCAPED: "escaped",
    HighlightStyle.SECTION: "section",
    HighlightStyle.FALLBACK: "fallback",
}
"""How each style looks to a person: unknown and malformed look the same ("error")."""


def look(palette: QPalette, fmt: QTextCharFormat) -> str:
    """The look of a format the highlighter applied on ``palette``."""
    found = {LOOKS[s] for s, f in style_formats(palette).items() if f == fmt}
    assert len(found) == 1, f"a format the highlighter has no style for: {fmt}"
    return found.pop()


def painted_ranges(document: QTextDocument, palette: QPalette) -> list[tuple[int, int, str]]:
    """Every format range Qt draws: ``(start, end, look)`` in document positions."""
    ranges: list[tuple[int, int, str]] = []
    block = document.begin()
    while block.isValid():
        for piece in block.layout().formats():
            start = block.position() + piece.start
            ranges.append((start, start + piece.length, look(palette, piece.format)))
        block = block.next()
    return ranges


def painted(editor: TemplateEditor) -> set[tuple[str, str]]:
    """What a person sees highlighted: ``(text, look)`` for every format range Qt draws."""
    text = editor.document().toRawText()
    return {
        (text[start:end], seen)
        for start, end, seen in painted_ranges(editor.document(), editor.palette())
    }


def offered(editor: TemplateEditor) -> list[str]:
    """The paths the completion popup lists, top to bottom."""
    model = editor.popup.model()
    return [str(model.index(row, 0).data()) for row in range(model.rowCount())]


def current(pane: TemplatePane) -> ToolDefinition:
    tool = pane.tool()
    assert tool is not None
    return tool


# -- highlighting ----------------------------------------------------------------------------


def test_highlight_marks_known_unknown_tool_field_escaped_and_malformed(qtbot: QtBot) -> None:
    prompt = "Go to {destination} for {nightz} via {tool.name}: {{literal}} and {trip.budget\nok"
    pane, _, _ = make_pane(qtbot, prompt)
    editor = pane.editor

    assert painted(editor) == {
        ("{destination}", "parameter"),
        ("{nightz}", "error"),
        ("{tool.name}", "tool field"),
        ("{{", "escaped"),
        ("}}", "escaped"),
        ("{trip.budget", "error"),
    }
    parameter = style_colour(editor, HighlightStyle.PARAMETER)
    unknown = format_at(editor, prompt.index("{nightz}") + 3)
    assert colour(format_at(editor, prompt.index("{destination}"))) == parameter
    assert colour(format_at(editor, prompt.index("}", prompt.index("{destination}")))) == parameter
    assert unknown is not None
    assert unknown.underlineStyle() == QTextCharFormat.UnderlineStyle.WaveUnderline
    assert colour(unknown) != parameter
    assert format_at(editor, prompt.index("Go")) is None
    assert format_at(editor, prompt.index("literal")) is None
    escaped = format_at(editor, prompt.index("{{"))
    assert escaped is not None and escaped.underlineStyle() != (
        QTextCharFormat.UnderlineStyle.WaveUnderline
    )
    malformed = format_at(editor, prompt.index("{trip.budget") + 2)
    assert malformed is not None
    assert malformed.underlineStyle() == QTextCharFormat.UnderlineStyle.WaveUnderline
    assert format_at(editor, prompt.index("ok")) is None


def test_highlight_updates_as_you_type(qtbot: QtBot) -> None:
    pane, _, _ = make_pane(qtbot, "Stay ")
    editor = pane.editor
    editor.moveCursor(editor.textCursor().MoveOperation.End)
    qtbot.keyClicks(editor, "{night")
    pane.editor.popup.hide()
    qtbot.keyClicks(editor, "}")
    assert painted(editor) == {("{night}", "error")}
    editor.moveCursor(editor.textCursor().MoveOperation.Left)
    qtbot.keyClicks(editor, "s")
    assert editor.toPlainText() == "Stay {nights}"
    fmt = format_at(editor, len("Stay {"))
    assert colour(fmt) == style_colour(editor, HighlightStyle.PARAMETER)


def test_highlight_positions_survive_characters_outside_the_bmp(qtbot: QtBot) -> None:
    prompt = "🚀🚀 {destination} and {nope}"
    pane, _, _ = make_pane(qtbot, prompt)
    offsets = OffsetMap(prompt)
    start = offsets.to_qt(prompt.index("{destination}"))
    assert start == prompt.index("{destination}") + 2  # each rocket is two UTF-16 units
    editor = pane.editor
    parameter = style_colour(editor, HighlightStyle.PARAMETER)
    assert format_at(editor, start - 1) is None
    assert colour(format_at(editor, start)) == parameter
    assert colour(format_at(editor, start + len("{destination}") - 1)) == parameter
    unknown = format_at(editor, offsets.to_qt(prompt.index("{nope}")))
    assert unknown is not None
    assert unknown.underlineStyle() == QTextCharFormat.UnderlineStyle.WaveUnderline


def test_a_parameter_added_to_the_schema_turns_its_placeholder_known(qtbot: QtBot) -> None:
    pane, document, tool = make_pane(qtbot, "Bring {pets}")
    assert painted(pane.editor) == {("{pets}", "error")}
    assert pane.error_count() == 1
    parameters = {**tool.parameters, "properties": {**tool.parameters["properties"]}}
    parameters["properties"]["pets"] = {"type": "boolean"}
    document.set_field(("metadata", "tools", 1, "parameters"), parameters, text="Add pets")
    assert painted(pane.editor) == {("{pets}", "parameter")}
    assert pane.error_count() == 0
    qtbot.keyClicks(pane.editor, "{pe")
    assert offered(pane.editor) == ["pets"]
    pane.editor.popup.hide()
    document.undo_stack.undo()  # the typing
    document.undo_stack.undo()  # the new parameter
    assert painted(pane.editor) == {("{pets}", "error")}


def test_highlight_colours_follow_a_dark_palette(qtbot: QtBot) -> None:
    pane, _, _ = make_pane(qtbot, "{destination}")
    editor = pane.editor
    light = colour(format_at(editor, 1))
    dark = QPalette()
    dark.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    dark.setColor(QPalette.ColorRole.Text, QColor("#e0e0e0"))
    editor.setPalette(dark)
    on_dark = format_at(editor, 1)
    assert colour(on_dark) != light
    assert on_dark is not None and on_dark.foreground().color().lightness() > 128


def test_sections_and_fallbacks_are_highlighted(qtbot: QtBot) -> None:
    prompt = "{?nights} Stay {nights|a few} nights {/nights} {!trip.cabin} {?nope} {tool.name|x}"
    pane, _, _ = make_pane(qtbot, prompt)
    assert painted(pane.editor) == {
        ("{?nights}", "section"),
        ("{nights", "parameter"),
        ("|a few", "fallback"),
        ("}", "parameter"),
        ("{/nights}", "section"),
        ("{!trip.cabin}", "section"),
        ("{?", "section"),
        ("nope", "error"),
        ("}", "section"),
        ("{tool.name", "tool field"),
        ("|x", "fallback"),
        ("}", "tool field"),
    }
    colours = style_colours(pane.editor.palette())
    section = colours[HighlightStyle.SECTION]
    assert section not in (colours[HighlightStyle.PARAMETER], colours[HighlightStyle.UNKNOWN])
    fallback = format_at(pane.editor, prompt.index("a few"))
    parameter = format_at(pane.editor, prompt.index("{nights|"))
    assert fallback is not None and parameter is not None
    assert fallback.fontItalic() and not parameter.fontItalic()
    assert fallback.fontWeight() < parameter.fontWeight()


def test_section_tags_read_well_on_a_dark_palette(qtbot: QtBot) -> None:
    pane, _, _ = make_pane(qtbot, "{?nights}x{/nights}")
    editor = pane.editor
    light = colour(format_at(editor, 1))
    dark = QPalette()
    dark.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    dark.setColor(QPalette.ColorRole.Text, QColor("#e0e0e0"))
    editor.setPalette(dark)
    on_dark = format_at(editor, 1)
    assert colour(on_dark) != light
    assert on_dark is not None and on_dark.foreground().color().lightness() > 128
    assert painted(editor) == {("{?nights}", "section"), ("{/nights}", "section")}


PIECES = [
    "a",
    " ",
    "\t",
    "\n",
    "{",
    "}",
    "{{",
    "}}",
    "?",
    "!",
    "/",
    "|",
    ".",
    "-",
    "é",
    "nights",
    "trip",
    "cabin",
    "nope",
    "tool",
    "name",
    "{?",
    "{!",
    "{/",
    "{nights",
    "{trip.cabin",
    "{nope",
    "{tool.name",
    "|a few}",
    "{?nights}",
    "{!trip.cabin}",
    "{/nope}",
    "{?tool.name}",
    "{trip.budget|}",
]


def expected_looks(template: str) -> list[tuple[int, int, str]]:
    """The looks the tokens of the whole template call for, one ``(start, end, look)`` per
    styled character run, as the highlighter documents them."""
    styles: list[HighlightStyle | None] = [None] * len(template)

    def paint(start: int, end: int, style: HighlightStyle) -> None:
        styles[start:end] = [style] * (end - start)

    for token in tokenize(template):
        kind, start, end = token.kind, token.start, token.end
        named = placeholder_kind(token.path, PARAMETERS) if token.path else None
        if kind is TokenKind.TEXT:
            continue
        if kind in (TokenKind.PLACEHOLDER, TokenKind.TOOL_FIELD):
            name = {"parameter": HighlightStyle.PARAMETER, "unknown": HighlightStyle.UNKNOWN}
            paint(start, end, name.get(str(named), HighlightStyle.TOOL_FIELD))
            if token.fallback is not None:
                paint(start + token.text.index("|"), end - 1, HighlightStyle.FALLBACK)
        elif kind in (TokenKind.SECTION, TokenKind.INVERTED_SECTION, TokenKind.SECTION_END):
            paint(start, end, HighlightStyle.SECTION)
            if named == "unknown":
                paint(start + 2, end - 1, HighlightStyle.UNKNOWN)
        elif kind is TokenKind.ESCAPED_BRACE:
            paint(start, end, HighlightStyle.ESCAPED)
        else:
            paint(start, end, HighlightStyle.MALFORMED)
    runs: list[tuple[int, int, str]] = []
    for offset, style in enumerate(styles):
        if style is None:
            continue
        seen = LOOKS[style]
        if runs and runs[-1][1] == offset and runs[-1][2] == seen:
            runs[-1] = (runs[-1][0], offset + 1, seen)
        else:
            runs.append((offset, offset + 1, seen))
    return runs


def merged(ranges: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    runs: list[tuple[int, int, str]] = []
    for start, end, seen in sorted(ranges):
        if runs and runs[-1][1] == start and runs[-1][2] == seen:
            runs[-1] = (runs[-1][0], end, seen)
        else:
            runs.append((start, end, seen))
    return runs


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
def test_line_by_line_highlighting_equals_the_tokens_of_the_whole_template(
    qapp: object, template: str
) -> None:
    document = QTextDocument()
    highlighter = TemplateHighlighter(document, document)
    document.setPlainText(template)
    highlighter.set_parameters(PARAMETERS)  # highlights block by block, each line on its own
    assert merged(painted_ranges(document, QPalette())) == expected_looks(template)


# -- completion ------------------------------------------------------------------------------


def test_typing_a_brace_offers_parameters_nested_paths_and_tool_fields(qtbot: QtBot) -> None:
    pane, _, _ = make_pane(qtbot, "")
    editor = pane.editor
    qtbot.keyClicks(editor, "Go {")
    assert editor.popup.isVisible()
    assert offered(editor) == [
        "destination",
        "nights",
        "trip",
        "trip.budget",
        "trip.cabin",
        "tool.name",
        "tool.description",
    ]
    model = editor.completer.model()
    details = {model.index(r, 0).data(): model.index(r, 1).data() for r in range(model.rowCount())}
    assert details["destination"] == "string, required — Where to go."
    assert details["trip.budget"] == "number — Most to spend."
    assert details["tool.name"] == "the tool's name: book_trip"
    assert details["tool.description"] == "the tool's description: Books a trip."

    qtbot.keyClicks(editor, "bu")
    assert offered(editor) == ["trip.budget"]


def test_choosing_a_completion_writes_the_path_and_the_closing_brace(qtbot: QtBot) -> None:
    pane, document, _tool = make_pane(qtbot, "")
    editor = pane.editor
    qtbot.keyClicks(editor, "Go to {dest")
    popup = editor.popup
    assert popup.isVisible()
    qtbot.keyClick(popup, Qt.Key.Key_Return)
    assert editor.toPlainText() == "Go to {destination}"
    assert current(pane).prompt == "Go to {destination}"
    assert editor.textCursor().position() == len("Go to {destination}")
    assert not popup.isVisible()
    # The whole run of typing and the completion is one undo step.
    assert document.undo_stack.count() == 1
    document.undo_stack.undo()
    assert editor.toPlainText() == "" and current(pane).prompt == ""
    document.undo_stack.redo()
    assert editor.toPlainText() == "Go to {destination}"


def test_a_literal_double_brace_opens_no_completion(qtbot: QtBot) -> None:
    pane, _, _ = make_pane(qtbot, "")
    editor = pane.editor
    qtbot.keyClicks(editor, "{{")
    assert not editor.popup.isVisible()
    assert editor.open_placeholder_prefix() is None
    qtbot.keyClicks(editor, "{")  # "{{{" is a literal brace then a placeholder
    assert editor.open_placeholder_prefix() == ""


def test_ctrl_space_inside_a_placeholder_opens_completion(qtbot: QtBot) -> None:
    pane, _, _ = make_pane(qtbot, "See {trip.c")
    editor = pane.editor
    editor.moveCursor(editor.textCursor().MoveOperation.End)
    qtbot.keyClick(editor, Qt.Key.Key_Space, Qt.KeyboardModifier.ControlModifier)
    assert editor.popup.isVisible()
    assert offered(editor) == ["trip.cabin"]
    assert editor.toPlainText() == "See {trip.c"


def test_a_section_sigil_offers_parameter_paths(qtbot: QtBot) -> None:
    pane, _, _ = make_pane(qtbot, "")
    editor = pane.editor
    qtbot.keyClicks(editor, "{?")
    assert editor.popup.isVisible()
    assert offered(editor) == ["destination", "nights", "trip", "trip.budget", "trip.cabin"]
    qtbot.keyClicks(editor, "ni")
    assert offered(editor) == ["nights"]
    qtbot.keyClick(editor.popup, Qt.Key.Key_Return)
    assert editor.text() == "{?nights}"
    qtbot.keyClicks(editor, " {!ca")
    assert offered(editor) == ["trip.cabin"]
    qtbot.keyClick(editor.popup, Qt.Key.Key_Tab)
    assert current(pane).prompt == "{?nights} {!trip.cabin}"
    qtbot.keyClicks(editor, " {")  # a plain placeholder offers the tool fields again
    assert offered(editor)[-2:] == ["tool.name", "tool.description"]


def test_a_closing_sigil_offers_the_innermost_open_section_first(qtbot: QtBot) -> None:
    prompt = "{?trip.cabin}In {trip.cabin}\n{?trip.budget}for {trip.budget}"
    pane, document, _ = make_pane(qtbot, prompt)
    editor = pane.editor
    editor.moveCursor(editor.textCursor().MoveOperation.End)
    qtbot.keyClicks(editor, " {/")
    assert editor.popup.isVisible()
    assert offered(editor)[:3] == ["trip.budget", "trip.cabin", "destination"]
    model = editor.completer.model()
    assert model.index(0, 1).data() == "closes {?trip.budget} (line 2)"
    assert model.index(1, 1).data() == "closes {?trip.cabin} (line 1)"
    qtbot.keyClick(editor.popup, Qt.Key.Key_Return)  # {/ and Enter close the innermost
    assert editor.text().endswith("for {trip.budget} {/trip.budget}")

    qtbot.keyClicks(editor, "{/")
    assert offered(editor)[0] == "trip.cabin"
    qtbot.keyClick(editor.popup, Qt.Key.Key_Return)
    assert current(pane).prompt.endswith("{/trip.budget}{/trip.cabin}")
    assert pane.error_count() == 0  # every section closed
    assert document.undo_stack.count() == 1

    qtbot.keyClicks(editor, " {/")  # nothing open: the parameters, in their order
    assert offered(editor) == ["destination", "nights", "trip", "trip.budget", "trip.cabin"]


# -- diagnostics -----------------------------------------------------------------------------


def test_diagnostics_list_each_problem_with_its_position(qtbot: QtBot) -> None:
    prompt = "Nights: {nights}\nGo to {destinaton} {oops"
    pane, _, _ = make_pane(qtbot, prompt)
    view = pane.diagnostics
    texts = [view.item(row).text() for row in range(view.count())]
    assert texts[0].startswith("2:7  unknown placeholder {destinaton}")
    assert "did you mean {destination}?" in texts[0]
    assert texts[1].startswith("2:20  unterminated brace")
    assert texts[2] == 'prompt  required parameter "destination" is never used in the prompt'
    assert pane.error_count() == 2
    assert pane.problems_title.text() == "Problems (2 errors, 1 warning)"


def test_clicking_a_diagnostic_selects_its_span_in_the_editor(qtbot: QtBot) -> None:
    prompt = "🚀 Nights: {nights}\nGo to {destinaton} now"
    pane, _, _ = make_pane(qtbot, prompt)
    view = pane.diagnostics
    rect = view.visualItemRect(view.item(0))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    cursor = pane.editor.textCursor()
    assert cursor.selectedText() == "{destinaton}"
    assert pane.editor.hasFocus() or not pane.isActiveWindow()


def test_error_count_changes_are_signalled_for_the_badge(qtbot: QtBot) -> None:
    pane, _, _ = make_pane(qtbot, "Go to {destination}")
    counts: list[int] = []
    pane.error_count_changed.connect(counts.append)
    editor = pane.editor
    editor.moveCursor(editor.textCursor().MoveOperation.End)
    qtbot.keyClicks(editor, " {zz}")
    qtbot.keyClicks(editor, " {yy}")
    assert counts == [1, 2]
    pane.document.undo_stack.undo()
    assert counts == [1, 2, 0]
    assert pane.error_count() == 0


def test_no_problems_shows_a_quiet_line(qtbot: QtBot) -> None:
    pane, _, _ = make_pane(qtbot, "Go to {destination}")
    assert pane.diagnostics.count() == 1
    item = pane.diagnostics.item(0)
    assert item.text().startswith("No problems")
    assert not item.flags() & Qt.ItemFlag.ItemIsSelectable


# -- undo / redo -----------------------------------------------------------------------------


def test_typing_is_one_undo_step_and_undo_redo_update_the_editor(qtbot: QtBot) -> None:
    pane, document, _tool = make_pane(qtbot, "Hello")
    editor = pane.editor
    editor.moveCursor(editor.textCursor().MoveOperation.End)
    qtbot.keyClicks(editor, " world")
    assert current(pane).prompt == "Hello world"
    assert document.undo_stack.count() == 1
    editor.clearFocus()
    editor.editing_finished.emit()  # focus left: the next typing is a new step
    qtbot.keyClicks(editor, "!")
    assert document.undo_stack.count() == 2

    document.undo_stack.undo()
    assert editor.toPlainText() == "Hello world"
    document.undo_stack.undo()
    assert editor.toPlainText() == "Hello"
    assert current(pane).prompt == "Hello"
    document.undo_stack.redo()
    assert editor.toPlainText() == "Hello world"
    # The view's own update is not fed back as an edit.
    assert document.undo_stack.count() == 2
    assert document.undo_stack.index() == 1


def test_undo_keeps_the_cursor_outside_the_change_and_moves_it_from_inside(qtbot: QtBot) -> None:
    pane, document, _ = make_pane(qtbot, "aaaa\nbbbb\ncccc")
    editor = pane.editor
    cursor = editor.textCursor()
    cursor.setPosition(len("aaaa\nbb"))
    editor.setTextCursor(cursor)
    qtbot.keyClicks(editor, "XYZ")
    cursor = editor.textCursor()
    cursor.setPosition(2)  # on the first line, before the change
    editor.setTextCursor(cursor)
    document.undo_stack.undo()
    assert editor.toPlainText() == "aaaa\nbbbb\ncccc"
    assert editor.textCursor().position() == 2

    document.undo_stack.redo()
    cursor = editor.textCursor()
    cursor.setPosition(len("aaaa\nbbXY"))  # inside the typed text
    editor.setTextCursor(cursor)
    document.undo_stack.undo()
    assert editor.textCursor().position() == len("aaaa\nbb")


def test_undo_keys_in_the_editor_use_the_agents_undo_stack(qtbot: QtBot) -> None:
    pane, document, _tool = make_pane(qtbot, "")
    editor = pane.editor
    qtbot.keyClicks(editor, "abc")
    qtbot.keyClick(editor, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert current(pane).prompt == "" and editor.toPlainText() == ""
    qtbot.keyClick(
        editor,
        Qt.Key.Key_Z,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert current(pane).prompt == "abc" and editor.toPlainText() == "abc"
    assert document.undo_stack.index() == 1


def test_a_prompt_changed_elsewhere_shows_without_an_extra_undo_step(qtbot: QtBot) -> None:
    pane, document, _ = make_pane(qtbot, "old")
    document.set_field(("metadata", "tools", 1, "prompt"), "new {nights}", text="Edit prompt")
    assert pane.editor.toPlainText() == "new {nights}"
    assert "3" in pane.preview.text()
    assert document.undo_stack.count() == 1


def test_special_spaces_and_line_breaks_survive_editing(qtbot: QtBot) -> None:
    pane, _document, _tool = make_pane(qtbot, "Go\u00a0to {destination}\u2028now")
    editor = pane.editor
    assert editor.text() == current(pane).prompt
    editor.moveCursor(editor.textCursor().MoveOperation.End)
    qtbot.keyClicks(editor, "!")
    assert (
        current(pane).prompt == "Go\u00a0to {destination}\u2028now!"
    )  # not turned into plain spaces


def test_a_prompt_with_carriage_returns_is_shown_once(qtbot: QtBot) -> None:
    pane, document, _tool = make_pane(qtbot, "one\r\ntwo")
    assert pane.editor.text() == "one\ntwo"
    document.set_field(("metadata", "tools", 0, "prompt"), "other", text="Edit another tool")
    assert pane.editor.text() == "one\ntwo"
    assert current(pane).prompt == "one\r\ntwo"  # unchanged until the person edits it
    assert document.undo_stack.count() == 1


# -- renames ---------------------------------------------------------------------------------


def test_renaming_rewrites_placeholders_fallbacks_and_section_tags(qtbot: QtBot) -> None:
    prompt = (
        "{trip} {trip.budget|any} {{trip}} {tripper} {tool.name} {trip.cabin\n"
        "{?trip.budget}up to {trip.budget}{/trip.budget}"
    )
    pane, document, _ = make_pane(qtbot, prompt)
    assert pane.placeholder_uses(("trip", "budget")) == 4
    assert pane.placeholder_uses("trip") == 5
    assert pane.rename_placeholders("trip", "journey") == 5
    assert current(pane).prompt == (
        "{journey} {journey.budget|any} {{trip}} {tripper} {tool.name} {trip.cabin\n"
        "{?journey.budget}up to {journey.budget}{/journey.budget}"
    )
    assert pane.editor.text() == current(pane).prompt
    document.undo_stack.undo()
    assert current(pane).prompt == prompt


def test_rename_placeholders_is_one_undoable_edit(qtbot: QtBot) -> None:
    pane, document, _tool = make_pane(qtbot, "To {destination}; budget {trip.budget}")
    assert pane.placeholder_uses("trip") == 1
    assert pane.rename_placeholders("trip", "journey") == 1
    assert current(pane).prompt == "To {destination}; budget {journey.budget}"
    assert pane.editor.toPlainText() == current(pane).prompt
    assert document.undo_stack.undoText() == "Rename placeholders {trip} to {journey}"
    document.undo_stack.undo()
    assert pane.editor.toPlainText() == "To {destination}; budget {trip.budget}"
    document.undo_stack.redo()
    assert pane.editor.toPlainText() == "To {destination}; budget {journey.budget}"
    assert pane.rename_placeholders("nothing", "else") == 0
    assert document.undo_stack.count() == 1


def test_renaming_a_parameter_offers_to_update_the_template(qtbot: QtBot) -> None:
    pane, document, tool = make_pane(qtbot, "Go to {destination}, {destination}!")
    properties = dict(tool.parameters["properties"])
    properties = {("place" if k == "destination" else k): v for k, v in properties.items()}
    renamed = {**tool.parameters, "properties": properties, "required": ["place"]}
    with document.macro("Rename destination"):
        document.set_field(("metadata", "tools", 1, "parameters"), renamed, text="Rename")
    assert pane.error_count() == 2
    assert pane.offer_placeholder_rename("destination", "place")
    assert pane.rename_bar.isVisible()
    assert "still uses {destination} in 2 places" in pane.rename_label.text()

    qtbot.mouseClick(pane.rename_apply, Qt.MouseButton.LeftButton)
    assert current(pane).prompt == "Go to {place}, {place}!"
    assert not pane.rename_bar.isVisible()
    assert pane.error_count() == 0
    document.undo_stack.undo()  # the placeholders
    assert current(pane).prompt == "Go to {destination}, {destination}!"
    document.undo_stack.undo()  # the parameter
    assert pane.error_count() == 0
    assert not pane.offer_placeholder_rename("nights", "nights_count")


def test_the_rename_bar_goes_away_when_the_old_name_is_back(qtbot: QtBot) -> None:
    pane, document, tool = make_pane(qtbot, "Go to {destination}")
    properties = {
        ("place" if k == "destination" else k): v for k, v in PARAMETERS["properties"].items()
    }
    document.set_field(
        ("metadata", "tools", 1, "parameters"),
        {**tool.parameters, "properties": properties},
        text="Rename",
    )
    assert pane.offer_placeholder_rename("destination", "place")
    document.undo_stack.undo()
    assert not pane.rename_bar.isVisible()
    qtbot.mouseClick(pane.rename_keep, Qt.MouseButton.LeftButton)  # harmless when hidden


# -- tool tracking ---------------------------------------------------------------------------


def test_typing_after_the_tool_moved_edits_the_same_tool(qtbot: QtBot) -> None:
    pane, document, _tool = make_pane(qtbot, "abc")
    document.move_item(("metadata", "tools", 1), 0, text="Move")
    assert pane.prompt_path() == ("metadata", "tools", 0, "prompt")
    editor = pane.editor
    editor.moveCursor(editor.textCursor().MoveOperation.End)
    qtbot.keyClicks(editor, "d")
    assert current(pane).prompt == "abcd"
    assert document.agent.metadata.tools[1].prompt == "x"


def test_a_deleted_tool_makes_the_editor_read_only_until_undone(qtbot: QtBot) -> None:
    pane, document, tool = make_pane(qtbot, "abc")
    document.remove_item(("metadata", "tools", 1), text="Delete tool")
    assert pane.tool() is None and pane.prompt_path() is None
    assert pane.editor.isReadOnly()
    qtbot.keyClicks(pane.editor, "zzz")
    assert pane.editor.toPlainText() == "abc"
    document.undo_stack.undo()
    assert pane.tool() is tool
    assert not pane.editor.isReadOnly()


@pytest.mark.parametrize("name", ["book_trip", "renamed_tool"])
def test_tool_fields_complete_with_the_current_name(qtbot: QtBot, name: str) -> None:
    pane, document, _ = make_pane(qtbot, "")
    document.set_field(("metadata", "tools", 1, "name"), name, text="Rename tool")
    model = pane.editor.completer.model()
    details = [model.index(r, 1).data() for r in range(model.rowCount())]
    assert f"the tool's name: {name}" in details
