"""In the dark theme an unticked check box still shows: the parameter tree's Required column."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtGui import QColor, QImage, QPalette
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.document.tool_ref import ToolRef
from app.tool_editor.parameter_builder import ParameterBuilder
from app.tool_editor.parameter_model import REQUIRED
from app.window.theme import apply_theme


@pytest.fixture
def dark() -> Iterator[None]:
    apply_theme("dark")
    yield
    apply_theme("system")


def _contrast(image: QImage, ground: QColor) -> int:
    """The largest difference in lightness between a pixel of ``image`` and ``ground``."""
    level = ground.lightness()
    return max(
        abs(image.pixelColor(x, y).lightness() - level)
        for x in range(image.width())
        for y in range(image.height())
    )


@pytest.mark.usefixtures("dark")
def test_an_unticked_required_box_stands_out_in_the_dark(qtbot: QtBot, example_path: Path) -> None:
    document = AgentDocument.load(example_path)
    tools = document.agent.metadata.tools
    builder = ParameterBuilder(ToolRef(document, [t.name for t in tools].index("book_flight")))
    qtbot.addWidget(builder)
    builder.resize(700, 330)
    builder.show()
    qtbot.waitExposed(builder)
    tree = builder.tree
    tree.expandAll()
    optional = ("properties", "traveller", "properties", "frequent_flyer")
    index = builder.model.index_for_path(optional).siblingAtColumn(REQUIRED)
    palette = tree.palette()

    def cell() -> QImage:
        return tree.viewport().grab(tree.visualRect(index)).toImage()

    assert _contrast(cell(), palette.color(QPalette.ColorRole.Base)) > 60
