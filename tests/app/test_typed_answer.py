"""A typed answer's block in a test run: the object as a tree, the schema messages where they are,
the repair turn named as such."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from app.test_run.typed_answer import MAX_CHILDREN, OutputCheckBlock
from mcp_export.session.output_events import OutputChecked as _Check
from schema_types.errors import Problem

FLIGHTS = {
    "cheapest": 212.5,
    "flights": [
        {"airline": "Iberia", "price": 212.5, "direct": True},
        {"airline": "KLM", "price": 340, "direct": False},
    ],
}


def _block(qtbot: QtBot, check: _Check) -> OutputCheckBlock:
    block = OutputCheckBlock(check)
    qtbot.addWidget(block)
    block.resize(700, 500)
    block.show()
    return block


def test_an_answer_that_fits_shows_its_object_as_a_tree(qtbot: QtBot) -> None:
    block = _block(qtbot, _Check("answer", "response_format", "{}", FLIGHTS))

    assert block.heading.text() == "✓ The answer fits the output schema"
    assert "structured output (response_format" in block.method_label.text()
    assert not block.problems_label.isVisible()
    assert block.tree is not None and block.tree.isVisible()
    assert block.tree.row_texts() == [
        ("(answer)", "2 fields", "object", 0),
        ("cheapest", "212.5", "number", 1),
        ("flights", "2 items", "array", 1),
        ("[0]", "3 fields", "object", 2),
        ("airline", "Iberia", "string", 3),
        ("price", "212.5", "number", 3),
        ("direct", "true", "boolean", 3),
        ("[1]", "3 fields", "object", 2),
        ("airline", "KLM", "string", 3),
        ("price", "340", "integer", 3),
        ("direct", "false", "boolean", 3),
    ]


def test_an_answer_that_does_not_fit_lists_the_messages_and_marks_the_fields(
    qtbot: QtBot,
) -> None:
    wrong = {"flights": [{"airline": "KLM", "price": "cheap"}]}
    problems = (
        Problem("", "'cheapest' is a required property"),
        Problem("flights[0].price", "'cheap' is not of type 'number'"),
    )
    block = _block(qtbot, _Check("answer", "instruction", "…", wrong, problems))

    assert block.heading.text() == "✗ The answer does not fit the output schema"
    assert block.problems_label.isVisible()
    assert block.problem_lines() == [
        "'cheapest' is a required property",
        "flights[0].price: 'cheap' is not of type 'number'",
    ]
    assert block.tree is not None
    assert block.tree.marked() == {
        "": "'cheapest' is a required property",
        "flights[0].price": "flights[0].price: 'cheap' is not of type 'number'",
    }


def test_the_repair_turn_is_named_and_says_whether_it_fixed_the_answer(qtbot: QtBot) -> None:
    fixed = _block(qtbot, _Check("repair", "final_tool", "{}", FLIGHTS))
    not_json = (Problem("", "the answer is not JSON"),)
    still = _block(qtbot, _Check("repair", "final_tool", "nope", None, not_json))

    assert fixed.heading.text().startswith("✓ Repair turn: the model was sent the messages above")
    assert fixed.heading.text().endswith("it fits the output schema")
    assert "a forced final tool" in fixed.method_label.text()
    assert still.heading.text().endswith("it still does not fit the schema")
    assert still.tree is None  # not JSON: nothing to show as a tree
    assert still.problem_lines() == ["the answer is not JSON"]


def test_a_long_array_shows_its_first_items_and_counts_the_rest(qtbot: QtBot) -> None:
    value = {"ids": list(range(MAX_CHILDREN + 50))}
    block = _block(qtbot, _Check("answer", "response_format", "{}", value))

    assert block.tree is not None
    rows = block.tree.row_texts()
    assert len(rows) == 2 + MAX_CHILDREN + 1
    assert rows[-1] == ("…", "50 more not shown", "", 2)
    assert block.tree.height() < 600  # scrolls inside the block rather than swamping the chat
