"""The main window's file handling: new, open, save (with conflict detection), close, recovery.

Every question is an attribute holding a callable, so tests answer without dialogs:

- ``ask_save(document) -> "save" | "discard" | "cancel"`` before closing unsaved changes;
- ``ask_conflict(document) -> "reload" | "overwrite" | "cancel"`` when the file changed on disk;
- ``ask_recovery(entry) -> "restore" | "discard" | "later"`` for a crash's recovery copy;
- ``ask_open_path() -> Path | None`` and ``ask_save_path(document) -> Path | None``.

Failures (unreadable files, failed saves) go to the error reporter, never only to a console.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QFileDialog, QMenu, QWidget

from app.document import AgentDocument, blank_agent
from app.errors import reporter

if TYPE_CHECKING:
    from app.dialogs import ConflictAnswer, RecoveryAnswer, SaveAnswer
    from app.recovery import Autosaver, RecoveryEntry, RecoveryStore
    from app.settings_store import SettingsStore

__all__ = ["AGENT_FILE_FILTER", "FileActions"]

AGENT_FILE_FILTER = "Agent files (*.agent.yaml *.yaml *.yml *.json);;All files (*)"


class FileActions:
    """Mixed into :class:`~app.main_window.MainWindow` (which provides the attributes below)."""

    settings: SettingsStore
    recovery: RecoveryStore
    autosaver: Autosaver
    recent_menu: QMenu

    if TYPE_CHECKING:

        def documents(self) -> list[AgentDocument]: ...
        def current_document(self) -> AgentDocument | None: ...
        def add_document(self, document: AgentDocument) -> AgentDocument: ...
        def remove_document(self, document: AgentDocument) -> None: ...
        def _refresh(self) -> None: ...

    def _parent_widget(self) -> QWidget | None:
        return self if isinstance(self, QWidget) else None

    # -- the questions (replaceable) -------------------------------------------------------

    def ask_save(self, document: AgentDocument) -> SaveAnswer:
        """Save / Discard / Cancel before losing unsaved changes."""
        from app.dialogs import ask_save_changes

        return ask_save_changes(self._parent_widget(), document)

    def ask_conflict(self, document: AgentDocument) -> ConflictAnswer:
        """Reload / Keep mine / Cancel when the file changed on disk."""
        from app.dialogs import ask_disk_conflict

        return ask_disk_conflict(self._parent_widget(), document)

    def ask_recovery(self, entry: RecoveryEntry) -> RecoveryAnswer:
        """Restore / Discard / Later for a recovery copy."""
        from app.dialogs import ask_recovery

        return ask_recovery(self._parent_widget(), entry)

    def ask_open_path(self) -> Path | None:
        """The file to open, or None."""
        name, _ = QFileDialog.getOpenFileName(
            self._parent_widget(), "Open agent", str(self._start_dir()), AGENT_FILE_FILTER
        )
        return Path(name) if name else None

    def ask_save_path(self, document: AgentDocument) -> Path | None:
        """Where to save ``document``, or None."""
        suggested = document.path or self._start_dir() / _file_name_for(document)
        name, _ = QFileDialog.getSaveFileName(
            self._parent_widget(), "Save agent as", str(suggested), AGENT_FILE_FILTER
        )
        if not name:
            return None
        path = Path(name)
        if not path.name.endswith((".yaml", ".yml", ".json")):
            path = path.with_name(path.name + ".agent.yaml")
        return path

    def _start_dir(self) -> Path:
        recent = self.settings.recent_files()
        return recent[0].parent if recent else Path.home()

    # -- new and open ----------------------------------------------------------------------

    def new_agent(self, example: Path | None = None) -> AgentDocument | None:
        """A new agent: blank, or a copy of a bundled example (not tied to its file)."""
        if example is None:
            return self.add_document(AgentDocument(blank_agent()))
        try:
            from schema_types._agent_file import load_agent

            agent = load_agent(example, check_schemas=False)
        except Exception as exc:
            reporter().error(f"Could not open the example {example.name}: {exc}")
            return None
        return self.add_document(AgentDocument(agent))

    def open_dialog(self) -> AgentDocument | None:
        """File / Open…"""
        path = self.ask_open_path()
        return self.open_file(path) if path is not None else None

    def open_file(self, path: Path) -> AgentDocument | None:
        """Open ``path`` (or bring it forward when it is open already)."""
        path = Path(path).resolve()
        for document in self.documents():
            if document.path == path:
                self._select_document(document)
                return document
        try:
            document = AgentDocument.load(path)
        except Exception as exc:
            reporter().error(f"Could not open {path.name}", detail=str(exc))
            return None
        self.settings.add_recent_file(path)
        return self.add_document(document)

    def _select_document(self, document: AgentDocument) -> None:
        outline = getattr(self, "outline", None)
        if outline is not None:
            outline.select(document, "agent")

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        recent = self.settings.recent_files()
        for path in recent:
            action = self.recent_menu.addAction(path.name)
            action.setToolTip(str(path))
            action.setStatusTip(str(path))
            action.triggered.connect(lambda _c=False, p=path: self.open_file(p))
        if not recent:
            self.recent_menu.addAction("No recent files").setEnabled(False)
        else:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear recent files").triggered.connect(
                lambda: self.settings.clear_recent_files()
            )

    # -- save ------------------------------------------------------------------------------

    def save(self, document: AgentDocument | None = None) -> bool:
        """Save to the agent's file; a file changed by someone else is not overwritten silently.

        Returns:
            True when saved; False when cancelled, reloaded instead, or failed (reported).
        """
        document = document or self.current_document()
        if document is None:
            return False
        if document.path is None:
            return self.save_as(document)
        if document.changed_on_disk():
            answer = self.ask_conflict(document)
            if answer == "reload":
                try:
                    document.reload()
                except Exception as exc:
                    reporter().error(f"Could not reload {document.display_name()}", detail=str(exc))
                else:
                    self.check_tool_schemas_soon(document)
                return False
            if answer != "overwrite":
                return False
        return self._write(document, None)

    def save_as(self, document: AgentDocument | None = None) -> bool:
        """Save to a file the person picks."""
        document = document or self.current_document()
        if document is None:
            return False
        path = self.ask_save_path(document)
        return path is not None and self._write(document, path)

    def _write(self, document: AgentDocument, path: Path | None) -> bool:
        try:
            document.save(path)
        except Exception as exc:
            target = path or document.path
            reporter().error(f"Could not save {target}: {exc}", detail=str(exc))
            return False
        assert document.path is not None
        self.settings.add_recent_file(document.path)
        reporter().info(f"Saved {document.path}")
        return True

    # -- close -----------------------------------------------------------------------------

    def confirm_close(self, document: AgentDocument) -> bool:
        """Ask about ``document``'s unsaved changes; True when it may close."""
        if not document.is_dirty():
            return True
        answer = self.ask_save(document)
        if answer == "save":
            return self.save(document)
        return answer == "discard"

    def close_document(self, document: AgentDocument | None = None) -> bool:
        """File / Close: close one agent, asking about unsaved changes first."""
        document = document or self.current_document()
        if document is None or not self.confirm_close(document):
            return False
        self.remove_document(document)
        return True

    # -- tool schemas ----------------------------------------------------------------------

    def check_tool_schemas_soon(self, document: AgentDocument) -> None:
        """Check the tools' parameters schemas of ``document`` once the window has painted.

        Agents open even when a schema is unsound (so it can be fixed here, and no recovery copy
        or saved edit is ever refused); the check loads ``jsonschema``, which the first paint of
        the window does not wait for.
        """
        QTimer.singleShot(0, document, lambda: self._check_tool_schemas(document))

    def _check_tool_schemas(self, document: AgentDocument) -> None:
        if document not in self.documents():
            return  # closed meanwhile
        from app.schema_health import tool_schema_health
        from schema_types._agent_checks import tool_parameters_problem

        health = tool_schema_health(document)
        health.check_now()
        unsound = health.unsound_tools()
        if not unsound:
            return
        located = [  # in the terms of ``metaagent validate``: the path in the agent file
            tool_parameters_problem(index, problem)
            for index, tool in enumerate(document.agent.tools)
            for problem in health.problems(tool)
        ]
        reporter().warning(
            f"{document.display_name()}: the parameters of "
            f"{', '.join(tool.name for tool in unsound)} need fixing before the agent can be "
            f"served — open the tool to see where",
            detail="\n".join(f"{p.path}: {p.detail}" for p in located),
        )

    # -- recovery --------------------------------------------------------------------------

    def offer_recovery(self) -> list[AgentDocument]:
        """Offer each recovery copy left by a crash; returns the documents restored."""
        restored: list[AgentDocument] = []
        for entry in self.recovery.pending():
            answer: str = self.ask_recovery(entry)
            if answer == "discard":
                self.recovery.remove(entry.key)
            elif answer == "restore":
                document = self._restore(entry)
                if document is not None:
                    restored.append(document)
                    self.recovery.remove(entry.key)
        return restored

    def _restore(self, entry: RecoveryEntry) -> AgentDocument | None:
        from schema_types._agent_file import load_agent

        try:
            agent = load_agent(entry.copy, check_schemas=False)
        except Exception as exc:
            reporter().error(f"Could not read the recovery copy of {entry.name}", detail=str(exc))
            return None
        document: AgentDocument | None = None
        if entry.original is not None and entry.original.exists():
            document = self.open_file(entry.original)
        if document is None:
            document = self.add_document(AgentDocument(agent))
            document.mark_dirty()
        else:
            document.replace_agent(agent, dirty=True)
        reporter().info(f"Restored the unsaved changes of {entry.name}")
        return document


def _file_name_for(document: AgentDocument) -> str:
    import re

    slug = re.sub(r"[^a-z0-9]+", "-", document.agent.metadata.name.lower()).strip("-")
    return f"{slug or 'agent'}.agent.yaml"
