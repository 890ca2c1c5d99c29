"""The studio's colour theme: the system's, light or dark, applied to the running application.

:func:`apply_theme` asks the platform for the colour scheme (``QStyleHints.setColorScheme``) and,
where the platform does not take it (a bare X server, an older desktop), sets a palette of that
colour itself: :func:`dark_palette`, or the style's own light palette. ``system``
gives the platform back its own scheme and palette. Views that draw their own colours (the
template highlighting, the preview's marks, the icons) follow the palette change.

On a dark palette the style's check boxes get a light outline (:class:`CheckOutlineStyle`):
Fusion outlines them in a shade of the window colour, so an unticked box, in a form or in an
item view such as the parameter tree's Required column, was a dark square on a dark ground.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPainter, QPalette
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle, QStyleOption, QWidget

from app.settings_store import THEMES, Theme

__all__ = ["THEME_LABELS", "CheckOutlineStyle", "apply_theme", "dark_palette"]

THEME_LABELS: dict[Theme, str] = {"system": "System", "light": "Light", "dark": "Dark"}
assert tuple(THEME_LABELS) == THEMES


def dark_palette() -> QPalette:
    """A dark palette like a desktop's dark theme gives, for platforms that have none."""
    roles = QPalette.ColorRole
    colours = {
        roles.Window: "#2b2b2b",
        roles.WindowText: "#e3e3e3",
        roles.Base: "#1f1f1f",
        roles.AlternateBase: "#333333",
        roles.ToolTipBase: "#3a3a3a",
        roles.ToolTipText: "#e3e3e3",
        roles.PlaceholderText: "#8d8d8d",
        roles.Text: "#e3e3e3",
        roles.Button: "#353535",
        roles.ButtonText: "#e3e3e3",
        roles.BrightText: "#ff6b6b",
        roles.Light: "#474747",
        roles.Midlight: "#3c3c3c",
        roles.Mid: "#262626",
        roles.Dark: "#1a1a1a",
        roles.Shadow: "#0d0d0d",
        roles.Highlight: "#3d6fb4",
        roles.HighlightedText: "#ffffff",
        roles.Link: "#7aaef5",
        roles.LinkVisited: "#b89cf0",
    }
    palette = QPalette()
    for role, colour in colours.items():
        palette.setColor(role, QColor(colour))
    for role in (roles.WindowText, roles.Text, roles.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#7a7a7a"))
    return palette


_CHECKS = (
    QStyle.PrimitiveElement.PE_IndicatorCheckBox,
    QStyle.PrimitiveElement.PE_IndicatorItemViewItemCheck,
)


class CheckOutlineStyle(QProxyStyle):
    """The platform's style, with check boxes outlined in the text colour on a dark palette."""

    def drawPrimitive(  # noqa: N802 (Qt override)
        self,
        element: QStyle.PrimitiveElement,
        option: QStyleOption,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        super().drawPrimitive(element, option, painter, widget)
        palette = option.palette
        if element not in _CHECKS or palette.color(QPalette.ColorRole.Window).lightness() >= 128:
            return
        outline = QColor(palette.color(QPalette.ColorRole.Text))
        outline.setAlpha(150)
        box = option.rect
        side = min(box.width(), box.height(), 16) - 1
        square = QRect(box)
        square.setWidth(side)
        square.setHeight(side)
        square.moveCenter(box.center())
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        painter.setPen(outline)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(square)
        painter.restore()


def _outline_checks(app: QApplication) -> None:
    """Put :class:`CheckOutlineStyle` over the application's style (once)."""
    if isinstance(app.style(), CheckOutlineStyle):
        return
    app.setStyle(CheckOutlineStyle(app.style().name()))  # a base of its own: the old one goes


def apply_theme(theme: Theme) -> None:
    """Show the running application in ``theme``.

    Raises:
        RuntimeError: there is no QApplication yet.
    """
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        raise RuntimeError("apply_theme needs a QApplication")
    _outline_checks(app)
    hints = QGuiApplication.styleHints()
    QApplication.setPalette(QPalette())  # the platform's own, which the scheme may change
    if theme == "system":
        hints.unsetColorScheme()
        return
    dark = theme == "dark"
    scheme = Qt.ColorScheme.Dark if dark else Qt.ColorScheme.Light
    hints.setColorScheme(scheme)
    if hints.colorScheme() != scheme:  # the platform has no colour schemes
        QApplication.setPalette(dark_palette() if dark else app.style().standardPalette())
