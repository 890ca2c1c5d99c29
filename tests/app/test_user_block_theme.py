"""A message the person sent before switching the theme takes the new theme's colours."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtGui import QPalette
from pytestqt.qtbot import QtBot

from app.chat.transcript import UserBlock
from app.window.theme import apply_theme


@pytest.fixture
def light_then_system() -> Iterator[None]:
    apply_theme("light")
    yield
    apply_theme("system")


@pytest.mark.usefixtures("light_then_system")
def test_a_message_sent_in_the_light_theme_turns_dark_with_the_theme(qtbot: QtBot) -> None:
    block = UserBlock("What time is it in Kyoto?")
    qtbot.addWidget(block)
    block.resize(400, 60)
    block.show()
    qtbot.waitExposed(block)

    apply_theme("dark")
    qtbot.wait(50)

    # A pixel of the block's ground, inside its frame and away from the text.
    ground = block.grab().toImage().pixelColor(block.width() - 6, block.height() - 4)
    expected = block.palette().color(QPalette.ColorRole.AlternateBase)
    assert expected.lightness() < 100  # the dark theme's ground
    assert abs(ground.lightness() - expected.lightness()) < 20, (
        f"the block's ground is {ground.name()}, the dark theme's is {expected.name()}"
    )
