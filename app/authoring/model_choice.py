"""Which authoring model a studio widget asks: the one chosen in Preferences, else the agent's
own (``mcp_export.authoring.exchange.authoring_model`` decides between them)."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from app.settings_store import SettingsStore

__all__ = ["preferred_authoring_model"]


def preferred_authoring_model(widget: QWidget) -> str | None:
    """The authoring model chosen in the Preferences of ``widget``'s window (None: none chosen,
    or the widget is not in a studio window)."""
    settings = getattr(widget.window(), "settings", None)
    if not isinstance(settings, SettingsStore):
        return None
    return settings.authoring_model() or None
