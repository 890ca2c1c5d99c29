# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""Find and replace in a plain-text editor: a bar laid out beside the editor, and its keys.

The owner of a ``QPlainTextEdit`` builds one :class:`FindBar` for it, puts it in its layout
(hidden until asked for) and names the *scope*, the pane the keys work in:

- Ctrl+F opens the bar on the search field (an editor selection on one line becomes the search
  text); Ctrl+H opens it with the replace row too, where the editor is editable.
- Enter / Shift+Enter in the search field, F3 / Shift+F3 anywhere in the scope: the next / the
  previous match, wrapping round (F3 with the bar closed opens it on the last search); Enter in
  the replace field replaces the match and moves on.
- Esc in the bar closes it and gives the focus back to the editor.

The keys are the scope's own (the pane, not the window): the bar claims them when the focus is
inside the scope (``ShortcutOverride``) and acts on the key press, so a window shortcut on the
same key (Ctrl+F is the Edit menu's Find…) neither takes them nor makes them ambiguous, and
two tabs' panes never clash.

Search is Python's ``re`` over the editor's text as typed, with match case, whole word and
regular expression options; an invalid expression shows ``re.error``'s message in the bar. The
count reads "3 of 12" while a match is selected in the editor; every match is highlighted, the
current one stronger (:func:`set_extra_selections` keeps other owners' extra selections, such as
problem underlines). A regular expression's replacement may use ``\\1`` and ``\\g<name>``.

A replacement is one text edit of the editor (one edit block: one ``textChanged``), made inside
the owner's ``edit_scope`` when it gives one, so an editor bound to a document turns it into one
undo step as it does typing. :func:`find_bar_for` finds the bar of the pane a widget is in, for
an Edit menu acting on the focused editor. The bar's widgets and their layout are
:class:`~app.find_bar_layout.FindBarLayout`'s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext

from PySide6.QtCore import QEvent, QObject, QSignalBlocker, Qt
from PySide6.QtGui import (
    QColor,
    QKeyEvent,
    QKeySequence,
    QPalette,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import (
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

from app.find_bar_layout import FindBarLayout
from app.tool_editor.highlighter import OffsetMap, document_text, is_dark
from app.tool_editor.value_editors import error_colour

__all__ = ["MAX_HIGHLIGHTS", "FindBar", "find_bar_for", "set_extra_selections"]

MAX_HIGHLIGHTS = 2000
"""Matches highlighted at most (all are counted): thousands of extra selections slow painting."""

EditScope = Callable[[str], AbstractContextManager[object]]

_SCOPE = "findBarScope"  # widget property: a find bar answers this widget's keys
_OWNER = QTextFormat.Property.UserProperty.value + 0x4D41  # tags whose extra selection it is
_FIND_KEYS = [
    (QKeySequence("Ctrl+F"), "find"),
    (QKeySequence("Ctrl+H"), "replace"),
    (QKeySequence("F3"), "next"),
    (QKeySequence("Shift+F3"), "previous"),
]


def set_extra_selections(
    editor: QPlainTextEdit | QTextEdit, owner: str, selections: Sequence[QTextEdit.ExtraSelection]
) -> None:
    """Make ``selections`` ``owner``'s extra selections on ``editor``, keeping the others'.

    Args:
        editor: the text editor.
        owner: who the selections belong to ("find", "problems" …).
        selections: the new ones (an empty list removes the owner's).
    """
    kept = [s for s in editor.extraSelections() if s.format.property(_OWNER) != owner]
    for selection in selections:
        selection.format.setProperty(_OWNER, owner)
    editor.setExtraSelections([*kept, *selections])


def find_bar_for(widget: QWidget | None) -> FindBar | None:
    """The find bar of the pane ``widget`` is in (the focus widget, say), or None.

    Walks up from ``widget`` to the first ancestor that is a find bar's scope.
    """
    while widget is not None:
        if widget.property(_SCOPE):
            for bar in widget.findChildren(FindBar):
                if bar.scope is widget:
                    return bar
        widget = widget.parentWidget()
    return None


def _key_name(event: QKeyEvent) -> str | None:
    pressed = QKeySequence(event.keyCombination())
    for keys, name in _FIND_KEYS:
        if pressed.matches(keys) == QKeySequence.SequenceMatch.ExactMatch:
            return name
    return None


def _is_enter(event: QKeyEvent) -> bool:
    return event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)


class FindBar(FindBarLayout):
    """Find (and replace) for one ``QPlainTextEdit``, opened by keys in its pane.

    Args:
        editor: the editor searched.
        scope: the pane whose keys open the bar (it holds the editor and the bar).
        edit_scope: called with what a replacement does ("Replace all “a” with “b”"); the
            replacement is made inside the context manager it returns (None: no scope).

    Attributes:
        editor: the editor searched.
        scope: the widget whose keys the bar answers.
        search_field, replace_field, count_label, error_label, case_button, word_button,
            regex_button: as in :class:`~app.find_bar_layout.FindBarLayout`.
    """

    def __init__(
        self, editor: QPlainTextEdit, scope: QWidget, *, edit_scope: EditScope | None = None
    ) -> None:
        super().__init__()
        self.editor = editor
        self.scope = scope
        self._edit_scope = edit_scope
        self._pattern: re.Pattern[str] | None = None
        self._text = ""
        self._offsets = OffsetMap("")
        self._spans: list[tuple[int, int]] = []  # Qt positions of every match
        self._anchor = 0  # where typing in the search field looks from
        self._shown_current: int | None = None
        self.search_field.textChanged.connect(self._on_search_edited)
        for toggle in (self.case_button, self.word_button, self.regex_button):
            toggle.toggled.connect(self._on_search_edited)
        self.replace_field.textChanged.connect(lambda _text: self._show_error(self._problem()))
        self.previous_button.clicked.connect(self.find_previous)
        self.next_button.clicked.connect(self.find_next)
        self.close_button.clicked.connect(self.dismiss)
        self.replace_button.clicked.connect(self.replace)
        self.replace_all_button.clicked.connect(self.replace_all)
        self.hide()
        scope.setProperty(_SCOPE, True)
        for watched in (editor, scope, self.search_field, self.replace_field):
            watched.installEventFilter(self)
        editor.textChanged.connect(self._on_text_changed)
        editor.cursorPositionChanged.connect(self._on_cursor_moved)

    # -- opening and closing ---------------------------------------------------------------

    def replacing(self) -> bool:
        """Whether the replace row is shown."""
        return not self.replace_field.isHidden()

    def open_find(self) -> None:
        """Show the bar on the search field (the replace row as it was, where editable)."""
        self._open(replace=self.replacing() and not self.isHidden())

    def open_replace(self) -> None:
        """Show the bar with the replace row (only find where the editor is read-only)."""
        self._open(replace=True)

    def _open(self, *, replace: bool) -> None:
        cursor = self.editor.textCursor()
        selected = cursor.selectedText()
        if selected and "\u2029" not in selected and selected != self._current_match_text():
            literal = re.escape(selected) if self.regex_button.isChecked() else selected
            with QSignalBlocker(self.search_field):
                self.search_field.setText(literal)
        self._anchor = cursor.selectionStart()
        self._show_replace(replace and not self.editor.isReadOnly())
        self.show()
        self.search_field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search_field.selectAll()
        self._search(move=True)

    def dismiss(self) -> None:
        """Hide the bar and its highlights; the editor gets the focus back."""
        self.hide()
        set_extra_selections(self.editor, "find", [])
        self.editor.setFocus(Qt.FocusReason.ShortcutFocusReason)

    # -- searching -------------------------------------------------------------------------

    def _on_search_edited(self) -> None:
        self._search(move=True)

    def _on_cursor_moved(self) -> None:
        # Inside an edit the cursor moves before textChanged has the matches found again.
        if self.isVisible() and document_text(self.editor.document()) == self._text:
            self._show_count()
            if self._current() != self._shown_current:
                self._highlight()

    def _on_text_changed(self) -> None:
        if self.isVisible() and document_text(self.editor.document()) != self._text:
            self._search(move=False)

    def _search(self, *, move: bool) -> None:
        """Find every match of the search text; with ``move``, select the first one from the
        anchor on."""
        self._text = text = document_text(self.editor.document())
        self._offsets = offsets = OffsetMap(text)
        self._pattern = None
        self._spans = []
        problem = ""
        if self.search_field.text():
            try:
                self._pattern = self._compile()
            except re.error as exc:
                problem = f"Regular expression: {exc}"
        if self._pattern is not None:
            self._spans = [
                (offsets.to_qt(m.start()), offsets.to_qt(m.end()))
                for m in self._pattern.finditer(text)
                if m.end() > m.start()
            ]
        self._show_error(problem or self._problem())
        if move and self._spans:
            after = [i for i, (start, _end) in enumerate(self._spans) if start >= self._anchor]
            self._select(after[0] if after else 0, anchor=False)
        else:
            self._highlight()
            self._show_count()

    def _compile(self) -> re.Pattern[str]:
        needle = self.search_field.text()
        pattern = needle if self.regex_button.isChecked() else re.escape(needle)
        if self.word_button.isChecked():
            pattern = rf"(?<!\w)(?:{pattern})(?!\w)"
        flags = re.MULTILINE
        if not self.case_button.isChecked():
            flags |= re.IGNORECASE
        return re.compile(pattern, flags)

    def _catch_up(self) -> None:
        """Find the matches again if the text changed while the bar was hidden."""
        if document_text(self.editor.document()) != self._text:
            self._search(move=False)

    def find_next(self) -> None:
        """Select the next match after the editor's selection (the first after the end)."""
        self._catch_up()
        if not self._spans:
            return
        cursor = self.editor.textCursor()
        origin = cursor.selectionEnd() if self._current() is not None else cursor.position()
        after = [i for i, (start, _end) in enumerate(self._spans) if start >= origin]
        self._select(after[0] if after else 0)

    def find_previous(self) -> None:
        """Select the match before the editor's selection (the last one before the start)."""
        self._catch_up()
        if not self._spans:
            return
        origin = self.editor.textCursor().selectionStart()
        before = [i for i, (start, _end) in enumerate(self._spans) if start < origin]
        self._select(before[-1] if before else len(self._spans) - 1)

    def _select(self, index: int, *, anchor: bool = True) -> None:
        start, end = self._spans[index]
        cursor = self.editor.textCursor()
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        self.editor.setTextCursor(cursor)
        self.editor.ensureCursorVisible()
        if anchor:
            self._anchor = start
        self._highlight()
        self._show_count()

    def _current(self) -> int | None:
        """The index of the match the editor has selected, if it has one selected."""
        cursor = self.editor.textCursor()
        if not cursor.hasSelection():
            return None
        span = (cursor.selectionStart(), cursor.selectionEnd())
        for index, found in enumerate(self._spans):
            if found == span:
                return index
        return None

    def _current_match_text(self) -> str | None:
        index = self._current()
        if index is None:
            return None
        start, end = self._spans[index]
        return self._text[self._offsets.from_qt(start) : self._offsets.from_qt(end)]

    # -- showing ---------------------------------------------------------------------------

    def _show_count(self) -> None:
        if not self.search_field.text() or self._pattern is None:
            self.count_label.setText("")
            return
        total = len(self._spans)
        current = self._current()
        if total == 0:
            text = "No results"
        elif current is None:
            text = f"{total} match{'es' * (total != 1)}"
        else:
            text = f"{current + 1} of {total}"
        self.count_label.setText(text)

    def _show_error(self, problem: str) -> None:
        self.error_label.setText(problem)
        self.error_label.setVisible(bool(problem))
        colour = error_colour(self).name()
        self.error_label.setStyleSheet(f"color: {colour};" if problem else "")

    def _highlight(self) -> None:
        if self.isHidden():
            return
        self._shown_current = current = self._current()
        dark = is_dark(self.editor.palette())
        every = QTextCharFormat()
        every.setBackground(QColor("#5c4a0f" if dark else "#fff0a6"))
        strong = QTextCharFormat()
        strong.setBackground(QColor("#b9770e" if dark else "#ffb347"))
        strong.setForeground(self.editor.palette().color(QPalette.ColorRole.Text))
        selections = []
        for index, (start, end) in enumerate(self._spans[:MAX_HIGHLIGHTS]):
            selection = QTextEdit.ExtraSelection()
            cursor = QTextCursor(self.editor.document())
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            selection.cursor = cursor
            selection.format = QTextCharFormat(strong if index == current else every)
            selections.append(selection)
        set_extra_selections(self.editor, "find", selections)

    # -- replacing -------------------------------------------------------------------------

    def _problem(self) -> str:
        """Why the replacement text cannot be used with the expression ("" when it can)."""
        if self._pattern is None or not self.regex_button.isChecked():
            return ""
        try:
            self._pattern.sub(self.replace_field.text(), "")  # reads the template, finds nothing
        except re.error as exc:
            return f"Replacement: {exc}"
        return ""

    def _replacement(self, match: re.Match[str]) -> str:
        template = self.replace_field.text()
        return match.expand(template) if self.regex_button.isChecked() else template

    def _can_replace(self) -> bool:
        return (
            self._pattern is not None
            and not self.editor.isReadOnly()
            and self.replacing()
            and not self._problem()
        )

    def replace(self) -> None:
        """Replace the selected match and select the next one (only select the next match
        when none is selected)."""
        self._catch_up()
        index = self._current()
        if index is None or not self._can_replace():
            self.find_next()
            return
        start, end = self._spans[index]
        match = self._matches()[index]
        new = self._replacement(match)
        if new != match.group(0):
            self._edit([(start, end, new)], f"Replace “{match.group(0)}” with “{new}”")
        cursor = self.editor.textCursor()
        cursor.setPosition(start + len(new.encode("utf-16-le")) // 2)
        self.editor.setTextCursor(cursor)
        self.find_next()

    def replace_all(self) -> int:
        """Replace every match, as one edit.

        Returns:
            How many matches were replaced.
        """
        self._catch_up()
        if not self._can_replace() or not self._spans:
            return 0
        matches = self._matches()
        edits = [
            (start, end, self._replacement(match))
            for (start, end), match in zip(self._spans, matches, strict=True)
        ]
        changed = [edit for edit, match in zip(edits, matches, strict=True) if edit[2] != match[0]]
        if changed:
            needle = self.search_field.text()
            self._edit(changed, f"Replace all “{needle}” with “{self.replace_field.text()}”")
        count = len(edits)
        self.count_label.setText(f"Replaced {count}")
        return count

    def _matches(self) -> list[re.Match[str]]:
        assert self._pattern is not None
        return [m for m in self._pattern.finditer(self._text) if m.end() > m.start()]

    def _edit(self, edits: list[tuple[int, int, str]], what: str) -> None:
        """Make ``edits`` (Qt spans and their new text) as one edit block inside the scope."""
        scope = self._edit_scope(what) if self._edit_scope is not None else nullcontext()
        with scope:
            cursor = QTextCursor(self.editor.document())
            cursor.beginEditBlock()
            for start, end, new in reversed(edits):
                cursor.setPosition(start)
                cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
                cursor.insertText(new)
            cursor.endEditBlock()

    # -- keys ------------------------------------------------------------------------------

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.dismiss()
            return
        super().keyPressEvent(event)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind not in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress):
            return False
        assert isinstance(event, QKeyEvent)
        command = self._command(watched, event)
        if command is None:
            return False
        event.accept()
        if kind == QEvent.Type.KeyPress:
            command()
        return True

    def _command(self, watched: QObject, event: QKeyEvent) -> Callable[[], object] | None:
        """What the key ``event`` sent to ``watched`` does here (None: not ours)."""
        name = _key_name(event)
        if name == "find":
            return self.open_find
        if name == "replace":
            return self.open_replace
        if name in ("next", "previous") and self.isHidden():
            return self.open_find
        if name in ("next", "previous"):
            return self.find_next if name == "next" else self.find_previous
        if watched not in (self.search_field, self.replace_field):
            return None
        if event.key() == Qt.Key.Key_Escape and event.modifiers() == Qt.KeyboardModifier.NoModifier:
            return self.dismiss
        if _is_enter(event) and watched is self.search_field:
            shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            return self.find_previous if shift else self.find_next
        if _is_enter(event) and watched is self.replace_field:
            return self.replace
        return None
