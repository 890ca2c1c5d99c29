"""Grow cases… and Suggest a fix ask the authoring model chosen in Preferences, as New tool from a
description… does: a widget in a studio window reads the window's choice."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from app.authoring.model_choice import preferred_authoring_model
from tests.app._windows import studio_window


def test_a_widget_in_the_window_reads_the_preferences_choice(qtbot: QtBot) -> None:
    window = studio_window(qtbot)
    inside = QLabel(window)
    assert preferred_authoring_model(inside) is None  # none chosen: the agent's own model
    window.settings.set_authoring_model("vllm:author-model")
    assert preferred_authoring_model(inside) == "vllm:author-model"
    alone = QLabel()
    qtbot.addWidget(alone)
    assert preferred_authoring_model(alone) is None  # not in a studio window
