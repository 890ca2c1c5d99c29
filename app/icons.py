# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""Icons from ``app/resources/icons/*.svg`` (package data), in the palette's text colour.

The SVGs use ``currentColor``; each pixmap is rendered for the requested size and device pixel
ratio (sharp on high-DPI screens) with ``currentColor`` replaced by the current palette's text
colour, so the icons follow a light or dark system palette. ``app.svg`` keeps its own colours.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from PySide6.QtCore import QByteArray, QRect, QSize, Qt
from PySide6.QtGui import QGuiApplication, QIcon, QIconEngine, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer

__all__ = ["ICON_DIR", "app_icon", "icon"]

ICON_DIR = Path(__file__).resolve().parent / "resources" / "icons"


@cache
def _svg_text(name: str) -> str:
    return (ICON_DIR / f"{name}.svg").read_text(encoding="utf-8")


class _PaletteSvgEngine(QIconEngine):
    """Renders one SVG with ``currentColor`` in the palette colour for the icon mode."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self._name = name

    def _colour(self, mode: QIcon.Mode) -> str:
        app = QGuiApplication.instance()
        palette = QGuiApplication.palette() if app is not None else QPalette()
        group = (
            QPalette.ColorGroup.Disabled
            if mode == QIcon.Mode.Disabled
            else (QPalette.ColorGroup.Active)
        )
        role = (
            QPalette.ColorRole.HighlightedText
            if mode == QIcon.Mode.Selected
            else QPalette.ColorRole.WindowText
        )
        return palette.color(group, role).name()

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        svg = _svg_text(self._name).replace("currentColor", self._colour(mode))
        renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
        renderer.render(painter, rect.toRectF())

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        return self.scaledPixmap(size, mode, state, 1.0)

    def scaledPixmap(
        self, size: QSize, mode: QIcon.Mode, state: QIcon.State, scale: float
    ) -> QPixmap:
        pixmap = QPixmap(size * scale)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        self.paint(painter, QRect(0, 0, pixmap.width(), pixmap.height()), mode, state)
        painter.end()
        pixmap.setDevicePixelRatio(scale)
        return pixmap

    def clone(self) -> QIconEngine:
        return _PaletteSvgEngine(self._name)

    def iconName(self) -> str:
        return self._name


@cache
def icon(name: str) -> QIcon:
    """The icon ``app/resources/icons/<name>.svg`` (palette-coloured, any size)."""
    if not (ICON_DIR / f"{name}.svg").exists():
        return QIcon()
    return QIcon(_PaletteSvgEngine(name))


def app_icon() -> QIcon:
    """The application icon (its own colours)."""
    return icon("app")
