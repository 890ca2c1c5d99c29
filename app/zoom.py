"""Zoom for the studio's text: editors and transcripts grow and shrink, the rest stays as it is.

A :class:`ZoomController` holds a zoom step (:data:`MIN_STEP` … :data:`MAX_STEP`, 0 is 100 %),
kept in ``studio.ini`` beside the studio's other settings (``view/zoomStep``), and applies it to
every ``QPlainTextEdit`` and ``QTextEdit`` (``QTextBrowser`` is one) of the application: the
template and JSON editors, previews, transcripts. Labels, buttons, fields and lists keep the
application font.

Each text widget keeps the font its owner gave it as its base (a widget property), and shows it
at the step's factor; a font the owner sets later becomes the new base. While the step is not
0, an event filter on the application zooms each text widget made afterwards when it is first
polished (before it shows) and follows fonts set on them later; at step 0 there is no filter,
so the default costs nothing.

:func:`application_zoom` gives the application's controller (made on the first call, on the
studio's settings); :func:`zoom_actions` the View menu's Zoom in / Zoom out / Actual size
actions (Ctrl+= and Ctrl++, Ctrl+-, Ctrl+0).
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Signal
from PySide6.QtGui import QAction, QFont, QKeySequence
from PySide6.QtWidgets import QApplication, QPlainTextEdit, QTextEdit, QWidget

from app.settings_store import SettingsStore

__all__ = [
    "FACTORS",
    "MAX_STEP",
    "MIN_STEP",
    "ZoomController",
    "application_zoom",
    "zoom_actions",
]

FACTORS = (0.5, 0.67, 0.75, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0)
"""The zoom factors, one per step; step 0 is 1.0."""
_ZERO = FACTORS.index(1.0)
MIN_STEP = -_ZERO
MAX_STEP = len(FACTORS) - 1 - _ZERO

_BASE = "zoomBaseSize"  # widget property: the size its owner gave its font
_SHOWN = "zoomShownSize"  # widget property: the size zoom gave it
_TEXT_WIDGETS = (QPlainTextEdit, QTextEdit)


def _size(font: QFont) -> float:
    """The font's size in points, or in pixels (negative) when it was set in pixels."""
    points = font.pointSizeF()
    return points if points > 0 else -float(font.pixelSize())


def _sized(font: QFont, size: float) -> QFont:
    sized = QFont(font)
    if size > 0:
        sized.setPointSizeF(size)
    else:
        sized.setPixelSize(max(1, round(-size)))
    return sized


class ZoomController(QObject):
    """The zoom step of the studio's text widgets, kept in the settings.

    Args:
        settings: where the step is kept (``studio.ini`` in its home).
        parent: the owning object.

    Signals:
        step_changed(int): the step is new (and applied).
    """

    step_changed = Signal(int)

    def __init__(self, settings: SettingsStore, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._settings = settings
        self._step = 0
        self._filtering = False
        self._sizing = False  # setting a zoomed font: its FontChange is ours
        self._apply_step(max(MIN_STEP, min(MAX_STEP, settings.zoom_step())))

    def step(self) -> int:
        """The zoom step: 0 is 100 %, each step up or down one of :data:`FACTORS`."""
        return self._step

    def factor(self) -> float:
        """How much bigger the text is than its owner made it (1.0 at step 0)."""
        return FACTORS[self._step + _ZERO]

    def set_step(self, step: int) -> None:
        """Zoom to ``step`` (held within :data:`MIN_STEP` … :data:`MAX_STEP`) and keep it."""
        step = max(MIN_STEP, min(MAX_STEP, step))
        if step == self._step:
            return
        self._settings.set_zoom_step(step)
        self._apply_step(step)
        self.step_changed.emit(step)

    def zoom_in(self) -> None:
        """One step bigger (up to :data:`MAX_STEP`)."""
        self.set_step(self._step + 1)

    def zoom_out(self) -> None:
        """One step smaller (down to :data:`MIN_STEP`)."""
        self.set_step(self._step - 1)

    def reset(self) -> None:
        """Back to 100 %."""
        self.set_step(0)

    def _apply_step(self, step: int) -> None:
        self._step = step
        for widget in QApplication.allWidgets():
            if isinstance(widget, _TEXT_WIDGETS):
                self._zoom(widget)
        app = QCoreApplication.instance()
        if app is None:
            return
        wanted = step != 0
        if wanted and not self._filtering:
            app.installEventFilter(self)
        elif self._filtering and not wanted:
            app.removeEventFilter(self)
        self._filtering = wanted

    def _zoom(self, widget: QWidget) -> None:
        """Show ``widget``'s base font at the current factor."""
        current = _size(widget.font())
        base = widget.property(_BASE)
        shown = widget.property(_SHOWN)
        if not isinstance(base, float) or shown != current:
            base = current  # first seen, or its owner has set a font since
            widget.setProperty(_BASE, base)
        size = base * self.factor()
        if size != current:
            self._sizing = True
            try:
                widget.setFont(_sized(widget.font(), size))
            finally:
                self._sizing = False
        widget.setProperty(_SHOWN, _size(widget.font()))  # as the font holds it

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        kind = event.type()
        polished = kind == QEvent.Type.Polish
        refonted = (
            kind == QEvent.Type.FontChange
            and not self._sizing
            and watched.property(_SHOWN) is not None
        )
        if (polished or refonted) and isinstance(watched, _TEXT_WIDGETS):
            self._zoom(watched)
        return False


def application_zoom(settings: SettingsStore | None = None) -> ZoomController:
    """The application's zoom controller, made on the first call.

    Args:
        settings: where the first call keeps the step (default: the studio's settings in the
            data directory); later calls return the same controller.

    Raises:
        RuntimeError: there is no QApplication yet.
    """
    app = QCoreApplication.instance()
    if app is None:
        raise RuntimeError("application_zoom needs a QApplication")
    found = app.findChild(ZoomController)
    if isinstance(found, ZoomController):
        return found
    return ZoomController(settings or SettingsStore(), app)


def zoom_actions(parent: QWidget, controller: ZoomController | None = None) -> list[QAction]:
    """The View menu's Zoom in (Ctrl+=, Ctrl++), Zoom out (Ctrl+-) and Actual size (Ctrl+0).

    Args:
        parent: owns the actions (the main window, where the shortcuts work).
        controller: the zoom they drive (default: :func:`application_zoom`).

    Returns:
        The three actions, in menu order. Each is disabled where it would do nothing.
    """
    zoom = controller or application_zoom()
    zoom_in = QAction("Zoom &in", parent)
    zoom_in.setObjectName("zoomIn")
    zoom_in.setShortcuts([QKeySequence("Ctrl+="), QKeySequence("Ctrl++")])
    zoom_in.setToolTip("Bigger text in editors and transcripts (Ctrl+=)")
    zoom_out = QAction("Zoom &out", parent)
    zoom_out.setObjectName("zoomOut")
    zoom_out.setShortcut(QKeySequence("Ctrl+-"))
    zoom_out.setToolTip("Smaller text in editors and transcripts (Ctrl+-)")
    reset = QAction("&Actual size", parent)
    reset.setObjectName("zoomReset")
    reset.setShortcut(QKeySequence("Ctrl+0"))
    reset.setToolTip("Text in editors and transcripts at 100 % (Ctrl+0)")
    zoom_in.triggered.connect(zoom.zoom_in)
    zoom_out.triggered.connect(zoom.zoom_out)
    reset.triggered.connect(zoom.reset)
    _ActionStates(zoom_in, zoom_out, reset, zoom, parent)
    return [zoom_in, zoom_out, reset]


class _ActionStates(QObject):
    """Enables the zoom actions by the step; goes with their parent (so does its connection)."""

    def __init__(
        self,
        zoom_in: QAction,
        zoom_out: QAction,
        reset: QAction,
        zoom: ZoomController,
        parent: QObject,
    ) -> None:
        super().__init__(parent)
        self._actions = (zoom_in, zoom_out, reset)
        zoom.step_changed.connect(self._on_step_changed)
        self._on_step_changed(zoom.step())

    def _on_step_changed(self, step: int) -> None:
        zoom_in, zoom_out, reset = self._actions
        zoom_in.setEnabled(step < MAX_STEP)
        zoom_out.setEnabled(step > MIN_STEP)
        reset.setEnabled(step != 0)
