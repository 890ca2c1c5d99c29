# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""The find bar's widgets and how they are laid out: two lines where the pane is wide, the search
options on a line of their own where it is narrow (they would leave the search field no room).

:class:`FindBarLayout` holds the fields, option toggles and buttons and arranges them;
:class:`app.find_bar.FindBar` builds on it and gives them what they do.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QToolButton,
)

from app.icons import icon
from app.layouts import row

__all__ = ["FindBarLayout"]

_FIELD_WIDTH = 160  # the search field's width below which the options go to a line of their own


class FindBarLayout(QFrame):
    """The widgets of a find bar, laid out; they do nothing until a subclass connects them.

    Attributes:
        search_field, replace_field: what to find, what to put instead.
        count_label: "3 of 12", "12 matches", "No results", "Replaced 12".
        error_label: why the regular expression or its replacement cannot be used (hidden when
            they can).
        case_button, word_button, regex_button: the search options (checkable).
        previous_button, next_button, close_button, replace_button, replace_all_button: the
            bar's buttons.
    """

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("findBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.search_field = QLineEdit()
        self.search_field.setObjectName("findField")
        self.search_field.setPlaceholderText("Find")
        self.search_field.setAccessibleName("Find")
        self.search_field.setClearButtonEnabled(True)
        self.replace_field = QLineEdit()
        self.replace_field.setObjectName("replaceField")
        self.replace_field.setPlaceholderText("Replace with")
        self.replace_field.setAccessibleName("Replace with")
        self.count_label = QLabel()
        self.count_label.setObjectName("findCount")
        widest = self.count_label.fontMetrics().horizontalAdvance("999 of 999")
        self.count_label.setMinimumWidth(widest)
        self.error_label = QLabel()
        self.error_label.setObjectName("findError")
        self.error_label.setWordWrap(True)
        self.error_label.hide()
        self.case_button = self._toggle("Aa", "Match case", "findMatchCase")
        self.word_button = self._toggle("ab", "Whole word", "findWholeWord")
        font = self.word_button.font()
        font.setUnderline(True)
        self.word_button.setFont(font)
        self.regex_button = self._toggle(".*", "Regular expression", "findRegex")
        self.previous_button = self._button("up", "Previous match (Shift+Enter, Shift+F3)")
        self.previous_button.setObjectName("findPrevious")
        self.next_button = self._button("down", "Next match (Enter, F3)")
        self.next_button.setObjectName("findNext")
        self.close_button = self._button("close", "Close (Esc)")
        self.close_button.setObjectName("findClose")
        self.replace_button = QPushButton("Replace")
        self.replace_button.setObjectName("replaceOne")
        self.replace_button.setToolTip("Replace the selected match and find the next (Enter)")
        self.replace_all_button = QPushButton("Replace all")
        self.replace_all_button.setObjectName("replaceAll")
        self.replace_all_button.setToolTip("Replace every match, as one undo step")
        for button in (self.replace_button, self.replace_all_button):
            button.setFocusPolicy(Qt.FocusPolicy.TabFocus)

        self._options, options = row(self.case_button, self.word_button, self.regex_button)
        options.addSpacing(6)
        options.addWidget(self.count_label, 1)
        self._navigation, navigation = row(
            self.previous_button, self.next_button, self.close_button
        )
        navigation.insertStretch(0, 1)  # at the right end when the column is wider
        self._replace_buttons, buttons = row(self.replace_button, self.replace_all_button)
        buttons.setSpacing(4)
        buttons.addStretch(1)
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(6, 4, 4, 4)
        self._grid.setHorizontalSpacing(6)
        self._grid.setVerticalSpacing(4)
        self._grid.setColumnStretch(0, 1)
        self._compact: bool | None = None
        self._arrange(compact=False)
        self._show_replace(False)

    def _toggle(self, text: str, tip: str, name: str) -> QToolButton:
        button = QToolButton()
        button.setObjectName(name)
        button.setText(text)
        button.setToolTip(tip)
        button.setAccessibleName(tip)
        button.setCheckable(True)
        button.setAutoRaise(True)
        return button

    def _button(self, icon_name: str, tip: str) -> QToolButton:
        button = QToolButton()
        button.setIcon(icon(icon_name))
        button.setToolTip(tip)
        button.setAccessibleName(tip.split(" (")[0])
        button.setAutoRaise(True)
        return button

    def _show_replace(self, shown: bool) -> None:
        self.replace_field.setVisible(shown)
        self._replace_buttons.setVisible(shown)

    def _arrange(self, *, compact: bool) -> None:
        """Lay the bar out on two lines (wide) or with the options on a line of their own
        (compact: a narrow pane, where they would leave the search field no room)."""
        if compact == self._compact:
            return
        self._compact = compact
        grid = self._grid
        parts = (
            self.search_field,
            self._options,
            self._navigation,
            self.replace_field,
            self._replace_buttons,
            self.error_label,
        )
        for widget in parts:
            grid.removeWidget(widget)
        grid.addWidget(self.search_field, 0, 0)
        if compact:
            grid.addWidget(self._navigation, 0, 1)
            grid.addWidget(self._options, 1, 0, 1, 2)
            grid.addWidget(self.replace_field, 2, 0)
            grid.addWidget(self._replace_buttons, 2, 1)
            grid.addWidget(self.error_label, 3, 0, 1, 2)
        else:
            grid.addWidget(self._options, 0, 1)
            grid.addWidget(self._navigation, 0, 2)
            grid.addWidget(self.replace_field, 1, 0)
            grid.addWidget(self._replace_buttons, 1, 1, 1, 2)
            grid.addWidget(self.error_label, 2, 0, 1, 3)

    def resizeEvent(self, event: QResizeEvent) -> None:
        margins = self._grid.contentsMargins()
        wide = (
            margins.left()
            + _FIELD_WIDTH
            + self._options.sizeHint().width()
            + self._navigation.sizeHint().width()
            + 2 * self._grid.horizontalSpacing()
            + margins.right()
        )
        self._arrange(compact=event.size().width() < wide)
        super().resizeEvent(event)
