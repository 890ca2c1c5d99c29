"""The studio's own settings: recent files, window geometry, pane sizes, view and preferences.

View and preferences: the theme (``system``, ``light`` or ``dark``), whether the toolbar and the
outline show, the autosave interval, the model endpoints offered as suggestions, and whether the
Getting started page has been shown (the first run shows it). A value that cannot be read
reads as its default.

Kept in an ini file inside the data directory (``studio.ini``) rather than the platform's
registry, so tests (each with its own METAAGENT_HOME) are isolated and a person can see what is
stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from PySide6.QtCore import QByteArray, QSettings

from mcp_export.paths import data_dir
from mcp_export.providers.kinds import PROVIDER_KINDS

__all__ = [
    "AUTOSAVE_RANGE",
    "MAX_RECENT",
    "THEMES",
    "Endpoint",
    "SettingsStore",
    "Theme",
    "default_endpoints",
    "metaagent_home",
]

MAX_RECENT = 10

Theme = Literal["system", "light", "dark"]
THEMES: tuple[Theme, ...] = ("system", "light", "dark")
AUTOSAVE_RANGE = (1.0, 600.0)
"""The autosave intervals (seconds) a person may choose, shortest and longest."""


@dataclass(frozen=True)
class Endpoint:
    """A model endpoint offered as a suggestion: a provider kind and its base URL."""

    kind: str
    base_url: str


def default_endpoints() -> list[Endpoint]:
    """The providers' own local and hosted endpoints that have a fixed base URL."""
    return [
        Endpoint(kind, info.default_url)
        for kind, info in PROVIDER_KINDS.items()
        if info.default_url is not None
    ]


def metaagent_home() -> Path:
    """The studio's data directory: the one the served server keeps its history in."""
    return data_dir()


class SettingsStore:
    """Typed access to ``studio.ini``."""

    def __init__(self, home: Path | None = None) -> None:
        self.home = home or metaagent_home()
        self.home.mkdir(parents=True, exist_ok=True)
        self._settings = QSettings(str(self.home / "studio.ini"), QSettings.Format.IniFormat)

    # -- recent files ------------------------------------------------------------------------

    def recent_entries(self) -> list[Path]:
        """Every remembered agent file, newest first, whether it still exists or not."""
        value = self._settings.value("recent/files", [])
        names: list[object] = [value] if isinstance(value, str) else []
        if isinstance(value, list):
            names = list(value)
        return [Path(n) for n in names if isinstance(n, str) and n]

    def recent_files(self) -> list[Path]:
        """Recently opened agent files, newest first, only those that still exist."""
        return [path for path in self.recent_entries() if path.exists()]

    def add_recent_file(self, path: Path) -> None:
        """Put ``path`` first in the recent files."""
        path = Path(path).resolve()
        files = [p for p in self.recent_entries() if p != path]
        self._settings.setValue("recent/files", [str(p) for p in [path, *files][:MAX_RECENT]])
        self._settings.sync()

    def forget_recent_files(self, paths: list[Path]) -> None:
        """Remove ``paths`` from the recent files (the others keep their order)."""
        kept = [p for p in self.recent_entries() if p not in paths]
        self._settings.setValue("recent/files", [str(p) for p in kept])
        self._settings.sync()

    def clear_recent_files(self) -> None:
        """Forget the recent files."""
        self._settings.remove("recent/files")
        self._settings.sync()

    # -- window state ------------------------------------------------------------------------

    def window_geometry(self) -> QByteArray | None:
        """The main window geometry saved by :meth:`set_window_geometry`."""
        value = self._settings.value("window/geometry")
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def set_window_geometry(self, geometry: QByteArray) -> None:
        """Remember the main window geometry (``QWidget.saveGeometry()``)."""
        self._settings.setValue("window/geometry", geometry)
        self._settings.sync()

    def splitter_sizes(self, name: str) -> list[int] | None:
        """Saved sizes of the splitter called ``name``."""
        value = self._settings.value(f"splitters/{name}")
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            return None
        try:
            sizes = [int(v) for v in value]
        except (TypeError, ValueError):
            return None
        return sizes if sizes and all(s >= 0 for s in sizes) else None

    def set_splitter_sizes(self, name: str, sizes: list[int]) -> None:
        """Remember the sizes of the splitter called ``name``."""
        self._settings.setValue(f"splitters/{name}", [str(s) for s in sizes])
        self._settings.sync()

    # -- view ------------------------------------------------------------------------------

    def theme(self) -> Theme:
        """The chosen colour theme (``system`` by default)."""
        value = self._settings.value("view/theme", "system")
        return next((theme for theme in THEMES if theme == value), "system")

    def set_theme(self, theme: Theme) -> None:
        """Remember the colour theme."""
        self._set("view/theme", theme)

    def zoom_step(self) -> int:
        """The zoom step of editors and transcripts (0 is 100 %; an unreadable value is 0)."""
        try:
            return int(str(self._settings.value("view/zoomStep", 0)))
        except ValueError:
            return 0

    def set_zoom_step(self, step: int) -> None:
        """Remember the zoom step."""
        self._set("view/zoomStep", step)

    def shows(self, part: Literal["toolbar", "outline"]) -> bool:
        """Whether the main window shows its toolbar or its outline (both do by default)."""
        return self._settings.value(f"view/show_{part}", "true") not in ("false", False)

    def set_shows(self, part: Literal["toolbar", "outline"], shown: bool) -> None:
        """Remember whether the toolbar or the outline shows."""
        self._set(f"view/show_{part}", "true" if shown else "false")

    # -- preferences -----------------------------------------------------------------------

    def autosave_seconds(self) -> float | None:
        """How often unsaved agents get a recovery copy (seconds, within :data:`AUTOSAVE_RANGE`);
        None until the person chooses (the studio's default then applies)."""
        try:
            seconds = float(str(self._settings.value("preferences/autosave_seconds", "")))
        except ValueError:
            return None
        low, high = AUTOSAVE_RANGE
        return min(high, max(low, seconds))

    def set_autosave_seconds(self, seconds: float) -> None:
        """Remember the autosave interval."""
        self._set("preferences/autosave_seconds", str(seconds))

    def endpoints(self) -> list[Endpoint]:
        """The model endpoints offered as base URL suggestions (:func:`default_endpoints` until
        the person keeps a list of their own)."""
        value = self._settings.value("preferences/endpoints")
        if value is None:
            return default_endpoints()
        rows = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        found: list[Endpoint] = []
        for row in rows:
            kind, _, url = str(row).partition(" ")
            if kind and url.strip():
                found.append(Endpoint(kind, url.strip()))
        return found

    def set_endpoints(self, endpoints: list[Endpoint]) -> None:
        """Remember the model endpoints (an empty list is kept as empty, not as the defaults)."""
        self._set("preferences/endpoints", [f"{e.kind} {e.base_url}" for e in endpoints])

    def authoring_model(self) -> str:
        """The authoring model (``provider:model``); "" for each agent's own model."""
        return str(self._settings.value("preferences/authoring_model", "") or "").strip()

    def set_authoring_model(self, model: str) -> None:
        """Remember the authoring model ("" for each agent's own)."""
        self._set("preferences/authoring_model", model.strip())

    # -- first run -------------------------------------------------------------------------

    def getting_started_shown(self) -> bool:
        """Whether the Getting started page has been shown once (the first run shows it)."""
        return self._settings.value("help/getting_started_shown", "false") in ("true", True)

    def set_getting_started_shown(self) -> None:
        """Note that the Getting started page has been shown."""
        self._set("help/getting_started_shown", "true")

    def _set(self, key: str, value: object) -> None:
        self._settings.setValue(key, value)
        self._settings.sync()
