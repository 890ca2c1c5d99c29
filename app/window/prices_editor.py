"""The price table in Preferences: ``prices.yaml`` of the data folder, edited as YAML.

What each ``provider:model`` costs in US dollars per million tokens (``mcp_export.costs``); the
studio's matrix and chat and ``metaagent test`` read the same file. The text is checked before it
is written, and kept as written (comments too); a table that does not read says why and is not
written.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QGroupBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from mcp_export.costs.prices import PricesError, save_prices

__all__ = ["PRICES_EXAMPLE", "PricesEditor"]

PRICES_EXAMPLE = "openai:gpt-4.1-mini: {input: 0.4, output: 1.6, cachedInput: 0.1}"


class PricesEditor(QGroupBox):
    """The price table's text, its problem (if any) and where it is kept."""

    def __init__(self, path: Path, parent: QWidget | None = None) -> None:
        super().__init__("Model prices (US dollars per million tokens)", parent)
        self.path = path
        self.text_edit = QPlainTextEdit()
        self.text_edit.setObjectName("pricesText")
        self.text_edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text_edit.setPlaceholderText(PRICES_EXAMPLE)
        self.text_edit.setToolTip(
            "One line per provider:model: {input: …, output: …}; a model without a line costs "
            "unknown. An agent file's settings.prices wins over this table."
        )
        self.text_edit.setFixedHeight(72)
        self.problem = QLabel()
        self.problem.setObjectName("pricesProblem")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #c62828")
        self.problem.hide()
        layout = QVBoxLayout(self)
        layout.addWidget(self.text_edit)
        layout.addWidget(self.problem)
        try:
            self.text_edit.setPlainText(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            pass
        except OSError as exc:
            self._say(f"cannot read {path}: {exc.strerror or exc}")

    def _say(self, problem: str) -> None:
        self.problem.setText(problem)
        self.problem.setVisible(bool(problem))

    def save(self) -> bool:
        """Write the table when it reads (and differs from the file); False, with the problem
        shown, when it does not."""
        text = self.text_edit.toPlainText()
        try:
            if text == self.path.read_text(encoding="utf-8"):
                self._say("")
                return True
        except OSError:
            if not text.strip():
                self._say("")
                return True
        try:
            save_prices(text, self.path)
        except PricesError as exc:
            self._say(str(exc))
            return False
        except OSError as exc:
            self._say(f"cannot write {self.path}: {exc.strerror or exc}")
            return False
        self._say("")
        return True
