"""The list of a template's problems, shown under the template editor.

Each row is one :class:`~schema_types.template.engine.Diagnostic` of
:func:`~schema_types.template.engine.diagnose` with its line and column; clicking (or Enter on) a
row
asks the pane to select that span in the editor (:attr:`DiagnosticsView.jump_requested`). The
count of errors (warnings aside) is published through :attr:`DiagnosticsView.error_count_changed`
so the tool tab can show a badge.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QStyle, QWidget

from schema_types.template.engine import Diagnostic, Severity

__all__ = ["MAX_ROWS", "DiagnosticsView", "line_starts", "location"]

# A template pasted with thousands of bad braces must not cost each keystroke a thousand rows.
MAX_ROWS = 200
_SPAN_ROLE = Qt.ItemDataRole.UserRole + 1


def line_starts(text: str) -> list[int]:
    """The offset where each line of ``text`` starts (for :func:`location`)."""
    starts = [0]
    position = text.find("\n")
    while position >= 0:
        starts.append(position + 1)
        position = text.find("\n", position + 1)
    return starts


def location(starts: Sequence[int], offset: int) -> tuple[int, int]:
    """The 1-based ``(line, column)`` of ``offset``, given :func:`line_starts` of the text."""
    line = bisect_right(starts, offset) - 1
    return line + 1, offset - starts[line] + 1


class DiagnosticsView(QListWidget):
    """Problems of the template: errors first in text order, then warnings."""

    jump_requested = Signal(int, int)
    """A row was chosen: select ``(start, end)`` (code-point offsets) in the template."""
    error_count_changed = Signal(int)
    """The number of errors (not warnings) changed."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("templateDiagnostics")
        self.setAccessibleName("Template problems")
        self.setUniformItemSizes(True)
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self._shown: list[tuple[str, str, int, int]] | None = None
        self._errors = 0
        self.diagnostics: list[Diagnostic] = []
        self.itemClicked.connect(self._on_item_chosen)
        self.itemActivated.connect(self._on_item_chosen)
        self.set_diagnostics([], "")

    def error_count(self) -> int:
        """How many errors the template has now."""
        return self._errors

    def set_diagnostics(self, diagnostics: Sequence[Diagnostic], template: str) -> None:
        """Show ``diagnostics`` of ``template`` (rows are rebuilt only when they differ)."""
        self.diagnostics = list(diagnostics)
        key = [(d.severity.value, d.message, d.start, d.end) for d in diagnostics]
        errors = sum(1 for d in diagnostics if d.severity is Severity.ERROR)
        if key != self._shown:
            self._shown = key
            self._rebuild(diagnostics, template)
        if errors != self._errors:
            self._errors = errors
            self.error_count_changed.emit(errors)

    def _rebuild(self, diagnostics: Sequence[Diagnostic], template: str) -> None:
        self.setUpdatesEnabled(False)
        try:
            self.clear()
            if not diagnostics:
                item = QListWidgetItem("No problems: every placeholder names a parameter.")
                item.setFlags(Qt.ItemFlag.NoItemFlags)
                self.addItem(item)
                return
            style = self.style()
            error_icon = style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxCritical)
            warning_icon = style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)
            starts = line_starts(template)
            for diagnostic in diagnostics[:MAX_ROWS]:
                if diagnostic.code == "unused-required":
                    where = "prompt"
                else:
                    line, column = location(starts, diagnostic.start)
                    where = f"{line}:{column}"
                item = QListWidgetItem(f"{where}  {diagnostic.message}")
                error = diagnostic.severity is Severity.ERROR
                item.setIcon(error_icon if error else warning_icon)
                item.setToolTip(
                    f"{'Error' if error else 'Warning'} at {where}: {diagnostic.message}\n"
                    "Click to show it in the template."
                )
                item.setData(_SPAN_ROLE, [diagnostic.start, diagnostic.end])
                self.addItem(item)
            hidden = len(diagnostics) - MAX_ROWS
            if hidden > 0:
                more = QListWidgetItem(f"… and {hidden} more problems")
                more.setFlags(Qt.ItemFlag.NoItemFlags)
                self.addItem(more)
        finally:
            self.setUpdatesEnabled(True)

    def _on_item_chosen(self, item: QListWidgetItem) -> None:
        span = item.data(_SPAN_ROLE)
        if isinstance(span, list | tuple) and len(span) == 2:
            self.jump_requested.emit(int(span[0]), int(span[1]))
