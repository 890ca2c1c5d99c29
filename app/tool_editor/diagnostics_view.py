"""The list of a template's problems, shown under the template editor.

Each row is one :class:`~schema_types.template.engine.Diagnostic` of
:func:`~schema_types.template.engine.diagnose` with its line and column, wrapped to the view's
width; clicking (or Enter on) a row asks the pane to select that span in the editor
(:attr:`DiagnosticsView.jump_requested`). Typing moves the problems after the cursor, so rows are
rewritten in place rather than rebuilt. The count of errors (warnings aside) is published through
:attr:`DiagnosticsView.error_count_changed` so the tool tab can show a badge.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QListView, QListWidget, QListWidgetItem, QStyle, QWidget

from schema_types.template.diagnostic import line_starts, location
from schema_types.template.engine import Diagnostic, Severity

__all__ = ["MAX_ROWS", "DiagnosticsView"]

# A template pasted with thousands of bad braces must not cost each keystroke a thousand rows.
MAX_ROWS = 200
_SPAN_ROLE = Qt.ItemDataRole.UserRole + 1


class DiagnosticsView(QListWidget):
    """Problems of the template in template order, unused required parameters last."""

    jump_requested = Signal(int, int)
    """A row was chosen: select ``(start, end)`` (code-point offsets) in the template."""
    error_count_changed = Signal(int)
    """The number of errors (not warnings) changed."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("templateDiagnostics")
        self.setAccessibleName("Template problems")
        # Messages say what to write instead: wrapped, so the end of one is never cut off.
        self.setWordWrap(True)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
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
        # The rows show the first MAX_ROWS and a count of the rest: that is all that can change.
        key = [(d.severity.value, d.message, d.start, d.end) for d in diagnostics[:MAX_ROWS]]
        key.append(("", "", len(diagnostics), 0))
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
            if not diagnostics:
                self.clear()
                item = QListWidgetItem("No problems: every placeholder names a parameter.")
                item.setFlags(Qt.ItemFlag.NoItemFlags)
                self.addItem(item)
                return
            rows = self._rows(diagnostics, template)
            if self.count() != len(rows) or self.item(0).data(_SPAN_ROLE) is None:
                self.clear()
                for _ in rows:
                    self.addItem(QListWidgetItem())
            # Typing before a problem moves it: the rows are rewritten in place, not rebuilt.
            for number, (text, icon, tip, span) in enumerate(rows):
                item = self.item(number)
                if item.data(_SPAN_ROLE) != span:
                    item.setData(_SPAN_ROLE, span)
                if item.text() == text:
                    continue
                item.setText(text)
                item.setToolTip(tip)
                # The text names the problem, so the severity can only change with it.
                item.setIcon(QIcon() if icon is None else icon)
                enabled = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
                item.setFlags(Qt.ItemFlag.NoItemFlags if icon is None else enabled)
        finally:
            self.setUpdatesEnabled(True)

    def _rows(
        self, diagnostics: Sequence[Diagnostic], template: str
    ) -> list[tuple[str, QIcon | None, str, list[int] | None]]:
        """``(text, icon, tooltip, span)`` of each row; the "more" row has no icon or span."""
        style = self.style()
        icons = {
            Severity.ERROR: style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxCritical),
            Severity.WARNING: style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning),
        }
        starts = line_starts(template)
        rows: list[tuple[str, QIcon | None, str, list[int] | None]] = []
        for diagnostic in diagnostics[:MAX_ROWS]:
            if diagnostic.code == "unused-required":
                where = "prompt"
            else:
                line, column = location(starts, diagnostic.start)
                where = f"{line}:{column}"
            kind = "Error" if diagnostic.severity is Severity.ERROR else "Warning"
            tip = f"{kind} at {where}: {diagnostic.message}\nClick to show it in the template."
            span = [diagnostic.start, diagnostic.end]
            rows.append((f"{where}  {diagnostic.message}", icons[diagnostic.severity], tip, span))
        hidden = len(diagnostics) - MAX_ROWS
        if hidden > 0:
            rows.append((f"… and {hidden} more problems", None, "", None))
        return rows

    def _on_item_chosen(self, item: QListWidgetItem) -> None:
        span = item.data(_SPAN_ROLE)
        if isinstance(span, list | tuple) and len(span) == 2:
            self.jump_requested.emit(int(span[0]), int(span[1]))
