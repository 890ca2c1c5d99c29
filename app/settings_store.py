"""The studio's own settings: recent files, window geometry, splitter sizes.

Kept in an ini file inside the data directory (``studio.ini``) rather than the platform's
registry, so tests (each with its own METAAGENT_HOME) are isolated and a person can see what is
stored.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

from mcp_export.paths import data_dir

__all__ = ["MAX_RECENT", "SettingsStore", "metaagent_home"]

MAX_RECENT = 10


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

    def recent_files(self) -> list[Path]:
        """Recently opened agent files, newest first, only those that still exist."""
        value = self._settings.value("recent/files", [])
        names: list[object] = [value] if isinstance(value, str) else []
        if isinstance(value, list):
            names = list(value)
        return [Path(n) for n in names if isinstance(n, str) and Path(n).exists()]

    def add_recent_file(self, path: Path) -> None:
        """Put ``path`` first in the recent files."""
        path = Path(path).resolve()
        files = [p for p in self.recent_files() if p != path]
        self._settings.setValue("recent/files", [str(p) for p in [path, *files][:MAX_RECENT]])
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
