"""The welcome page shown when no agent is open: new, open, bundled examples, recent files."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.icons import app_icon, icon

__all__ = ["EXAMPLES_DIR", "WelcomePage", "bundled_examples", "example_title"]

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "resources" / "examples"
_PATH_ROLE = Qt.ItemDataRole.UserRole + 1


def bundled_examples() -> list[Path]:
    """The example agents shipped in ``resources/examples``."""
    return sorted(EXAMPLES_DIR.glob("*.agent.yaml")) if EXAMPLES_DIR.is_dir() else []


@cache
def example_title(path: Path) -> tuple[str, str]:
    """An example's agent name and description, read cheaply (no full validation).

    Read once (the welcome page and the File ▸ New menu both show them at start-up), with
    libyaml when PyYAML has it.
    """
    name = path.name.removesuffix(".agent.yaml").replace("-", " ").title()
    description = ""
    try:
        import yaml

        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
        metadata = data.get("metadata", {}) if isinstance(data, dict) else {}
        name = str(metadata.get("name") or name)
        description = str(metadata.get("description") or "").strip()
    except Exception:  # a broken example must not break the welcome page
        pass
    return name, description


class WelcomePage(QWidget):
    """What a person sees with nothing open; each choice is a signal the main window handles."""

    new_requested = Signal()
    open_requested = Signal()
    file_requested = Signal(object)  # Path of a recent file
    example_requested = Signal(object)  # Path of a bundled example

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("welcomePage")
        logo = QLabel()
        logo.setPixmap(app_icon().pixmap(QSize(64, 64)))
        heading = QLabel("<h1>Meta Agent Studio</h1>")
        tagline = QLabel(
            "Author Tools agents — an LLM persona, the MCP servers it may use, and the tools it "
            "serves — then test them and serve them to any MCP client."
        )
        tagline.setWordWrap(True)
        head = QHBoxLayout()
        head.addWidget(logo, 0, Qt.AlignmentFlag.AlignTop)
        text = QVBoxLayout()
        text.addWidget(heading)
        text.addWidget(tagline)
        head.addLayout(text, 1)

        self.new_button = QPushButton(icon("new"), "&New agent")
        self.new_button.setToolTip("Start a blank agent (Ctrl+N)")
        self.open_button = QPushButton(icon("open"), "&Open…")
        self.open_button.setToolTip("Open an agent file (Ctrl+O)")
        self.new_button.clicked.connect(self.new_requested)
        self.open_button.clicked.connect(self.open_requested)
        actions = QHBoxLayout()
        actions.addWidget(self.new_button)
        actions.addWidget(self.open_button)
        actions.addStretch(1)

        self.examples_list = QListWidget()
        self.examples_list.setObjectName("welcomeExamples")
        self.examples_list.setWordWrap(True)
        self.examples_list.setToolTip("Open a copy of a bundled example (Enter or double-click)")
        for path in bundled_examples():
            name, description = example_title(path)
            item = QListWidgetItem(
                icon("example"),
                name if not description else f"{name}\n{_first_sentence(description)}",
            )
            item.setData(_PATH_ROLE, path)
            item.setToolTip(description or name)
            self.examples_list.addItem(item)
        self.examples_list.itemActivated.connect(
            lambda item: self.example_requested.emit(item.data(_PATH_ROLE))
        )

        self.recent_list = QListWidget()
        self.recent_list.setObjectName("welcomeRecent")
        self.recent_list.setToolTip("Open a recent agent file (Enter or double-click)")
        self.recent_list.itemActivated.connect(
            lambda item: self.file_requested.emit(item.data(_PATH_ROLE))
        )
        self.no_recent = QLabel("No recent files yet.")
        self.no_recent.setEnabled(False)

        grid = QGridLayout()
        examples_label = QLabel("<b>&Examples</b>")
        examples_label.setBuddy(self.examples_list)
        recent_label = QLabel("<b>&Recent files</b>")
        recent_label.setBuddy(self.recent_list)
        grid.addWidget(examples_label, 0, 0)
        grid.addWidget(recent_label, 0, 1)
        grid.addWidget(self.examples_list, 1, 0)
        recent_box = QVBoxLayout()
        recent_box.addWidget(self.recent_list, 1)
        recent_box.addWidget(self.no_recent)
        grid.addLayout(recent_box, 1, 1)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)

        card = QFrame()
        card.setFrameShape(QFrame.Shape.StyledPanel)
        card.setMaximumWidth(980)
        inner = QVBoxLayout(card)
        inner.setContentsMargins(24, 24, 24, 24)
        inner.setSpacing(16)
        inner.addLayout(head)
        inner.addLayout(actions)
        inner.addLayout(grid, 1)
        outer = QHBoxLayout(self)
        outer.addStretch(1)
        outer.addWidget(card, 4)
        outer.addStretch(1)
        QWidget.setTabOrder(self.new_button, self.open_button)
        QWidget.setTabOrder(self.open_button, self.examples_list)
        QWidget.setTabOrder(self.examples_list, self.recent_list)

    def set_recent_files(self, paths: list[Path]) -> None:
        """Show ``paths`` (newest first) as the recent files."""
        self.recent_list.clear()
        for path in paths:
            item = QListWidgetItem(icon("agent"), f"{path.name}\n{path.parent}")
            item.setData(_PATH_ROLE, path)
            item.setToolTip(str(path))
            self.recent_list.addItem(item)
        self.no_recent.setVisible(not paths)


def _first_sentence(text: str) -> str:
    """The first sentence of a description (its lines joined), at most 110 characters."""
    flat = " ".join(text.split())
    end = flat.find(". ")
    sentence = flat if end < 0 else flat[: end + 1]
    return sentence if len(sentence) <= 110 else sentence[:109].rstrip() + "…"
