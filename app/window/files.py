"""The main window's file handling: new, open, save (with conflict detection), close, recovery.

Every question is an attribute holding a callable, so tests answer without dialogs:

- ``ask_save(document) -> "save" | "discard" | "cancel"`` before closing unsaved changes;
- ``ask_conflict(document) -> "reload" | "overwrite" | "cancel"`` when the file changed on disk;
- ``ask_recovery(entry) -> "restore" | "discard" | "later"`` for a crash's recovery copy;
- ``ask_open_path() -> Path | None`` and ``ask_save_path(document) -> Path | None``.

Failures (unreadable files, failed saves) go to the error reporter, never only to a console.
"""

from __future__ import annotations

import re
import stat
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QFileDialog, QMenu, QWidget

from app.document.agent_document import AgentDocument, blank_agent
from app.document.file_loading import AgentFileLoader, LoadedAgent, read_agent_file
from app.document.schema_health import tool_schema_health
from app.errors import reporter
from schema_types.errors import AgentFileError

if TYPE_CHECKING:
    from app.document.recovery import Autosaver, RecoveryEntry, RecoveryStore
    from app.settings_store import SettingsStore
    from app.window.dialogs import ConflictAnswer, RecoveryAnswer, SaveAnswer

__all__ = ["AGENT_FILE_FILTER", "READ_AT_ONCE_BYTES", "FileActions", "open_failure_reason"]

# Reading and checking an agent of this size takes ~40 ms (about 140 tools like the travel
# desk's); a larger file is read on the worker so the window never waits for it.
READ_AT_ONCE_BYTES = 256 * 1024

AGENT_FILE_FILTER = "Agent files (*.agent.yaml *.yaml *.yml *.json);;All files (*)"


class FileActions:
    """Mixed into :class:`~app.window.main_window.MainWindow` (which provides the attributes
    below)."""

    settings: SettingsStore
    recovery: RecoveryStore
    autosaver: Autosaver
    recent_menu: QMenu
    file_loader: AgentFileLoader
    document_opened: SignalInstance

    if TYPE_CHECKING:

        def documents(self) -> list[AgentDocument]: ...
        def current_document(self) -> AgentDocument | None: ...
        def add_document(self, document: AgentDocument) -> AgentDocument: ...
        def remove_document(self, document: AgentDocument) -> None: ...
        def _refresh(self) -> None: ...

    def _parent_widget(self) -> QWidget | None:
        return self if isinstance(self, QWidget) else None

    # -- the questions (replaceable) -------------------------------------------------------
    # The dialogs, the agent file code and the agent checks load on first use: at the top they
    # would add ~4, ~17 and ~25 ms before the first paint (bench/studio_startup.py).

    def ask_save(self, document: AgentDocument) -> SaveAnswer:
        """Save / Discard / Cancel before losing unsaved changes."""
        from app.window.dialogs import ask_save_changes

        return ask_save_changes(self._parent_widget(), document)

    def ask_conflict(self, document: AgentDocument) -> ConflictAnswer:
        """Reload / Keep mine / Cancel when the file changed on disk."""
        from app.window.dialogs import ask_disk_conflict

        return ask_disk_conflict(self._parent_widget(), document)

    def ask_recovery(self, entry: RecoveryEntry) -> RecoveryAnswer:
        """Restore / Discard / Later for a recovery copy."""
        from app.window.dialogs import ask_recovery

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
            from schema_types.files.agent_file import load_agent

            agent = load_agent(example, check_schemas=False)
        except Exception as exc:
            reporter().error(f"Could not open the example {example.name}: {exc}")
            return None
        return self.add_document(AgentDocument(agent))

    def open_dialog(self) -> None:
        """File / Open…: the file picked is read without freezing the window."""
        path = self.ask_open_path()
        if path is not None:
            self.open_file_soon(path)

    def open_file(self, path: Path) -> AgentDocument | None:
        """Open ``path`` now, reading it on this thread (or bring it forward when it is open
        already); None when it cannot be read (and reported)."""
        path = Path(path).resolve()
        document = self._open_document(path)
        if document is not None:
            self._select_document(document)
            return document
        try:
            loaded = read_agent_file(path)
        except Exception as exc:
            self._report_open_failure(path, exc)
            return None
        return self._adopt(loaded)

    def open_file_soon(self, path: Path) -> None:
        """Open ``path`` without freezing the window: a regular file of up to
        :data:`READ_AT_ONCE_BYTES` is read now (tens of milliseconds, and the agent is in the
        window's first paint); anything else is read on a worker thread and shown once read
        (:attr:`document_opened`). A file that cannot be read is reported."""
        path = Path(path).resolve()
        document = self._open_document(path)
        if document is not None:
            self._select_document(document)
        elif _small_regular_file(path):
            self.open_file(path)
        elif self.file_loader.load(path):
            reporter().info(f"Opening {path.name}…")
            self._refresh()

    def _open_document(self, path: Path) -> AgentDocument | None:
        return next((d for d in self.documents() if d.path == path), None)

    def _on_file_loaded(self, loaded: LoadedAgent) -> None:
        document = self._open_document(loaded.path)
        if document is not None:  # opened meanwhile by another way
            self._select_document(document)
            return
        document = self._adopt(loaded)
        count = len(document.agent.tools)
        reporter().info(f"Opened {loaded.path.name} ({count} tool{'s' if count != 1 else ''})")

    def _on_file_failed(self, path: Path, error: BaseException) -> None:
        self._report_open_failure(path, error)
        self._refresh()

    def _adopt(self, loaded: LoadedAgent) -> AgentDocument:
        document = AgentDocument(loaded.agent, loaded.path, disk_stamp=loaded.disk_stamp)
        self.settings.add_recent_file(loaded.path)
        self.add_document(document)
        self.document_opened.emit(document)
        return document

    def _report_open_failure(self, path: Path, error: BaseException) -> None:
        reporter().error(
            f"Could not open {path.name}: {open_failure_reason(error)}",
            detail=_failure_detail(path, error),
        )

    def _select_document(self, document: AgentDocument) -> None:
        outline = getattr(self, "outline", None)
        if outline is not None:
            outline.select(document, "agent")

    def _fill_recent_menu(self) -> None:
        """Open Recent: the remembered files, newest first; one that no longer exists is shown
        greyed with "(missing)", and *Remove missing files* forgets those with a message."""
        self.recent_menu.clear()
        recent = self.settings.recent_entries()
        names = [path.name for path in recent]
        missing = [path for path in recent if not path.exists()]
        for path in recent:
            # Two files of the same name are told apart by their folder.
            label = path.name if names.count(path.name) == 1 else f"{path.name} — {path.parent}"
            if path in missing:
                action = self.recent_menu.addAction(f"{label} (missing)")
                action.setEnabled(False)
                action.setStatusTip(f"{path} no longer exists")
            else:
                action = self.recent_menu.addAction(label)
                action.setStatusTip(str(path))
                action.triggered.connect(lambda _c=False, p=path: self.open_file_soon(p))
            action.setToolTip(str(path))
        if not recent:
            self.recent_menu.addAction("No recent files").setEnabled(False)
            return
        self.recent_menu.addSeparator()
        if missing:
            self.recent_menu.addAction(f"Remove missing files ({len(missing)})").triggered.connect(
                lambda: self.forget_missing_recent_files()
            )
        self.recent_menu.addAction("Clear recent files").triggered.connect(
            lambda: self.settings.clear_recent_files()
        )

    def forget_missing_recent_files(self) -> list[Path]:
        """Remove the recent files that no longer exist, saying which; returns them."""
        missing = [path for path in self.settings.recent_entries() if not path.exists()]
        if missing:
            self.settings.forget_recent_files(missing)
            listed = ", ".join(path.name for path in missing)
            reporter().info(
                f"Removed {len(missing)} missing file{'s' if len(missing) != 1 else ''} "
                f"from Open Recent: {listed}"
            )
        return missing

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
        """Say which tools' parameters schemas of ``document`` need fixing, once they are
        checked.

        Agents open even when a schema is unsound (so it can be fixed here, and no recovery copy
        or saved edit is ever refused). The checks run from the event loop in short slices after
        the agent is shown (:mod:`app.document.schema_health`); the first complete pass from now on
        is
        the one reported.
        """
        health = tool_schema_health(document)

        def report() -> None:
            health.pass_finished.disconnect(report)
            if document in self.documents():  # not closed meanwhile
                self._report_unsound_tools(document)

        health.pass_finished.connect(report)
        health.check_soon()

    def _report_unsound_tools(self, document: AgentDocument) -> None:
        from schema_types.agent_checks import LocatedProblem, parse_path, tool_parameters_problem

        health = tool_schema_health(document)
        unsound = health.unsound_tools()
        if not unsound:
            return
        located: list[LocatedProblem] = []  # in the terms of ``metaagent validate``
        for index, tool in enumerate(document.agent.tools):
            located += [tool_parameters_problem(index, p) for p in health.problems(tool)]
            output = ("metadata", "tools", index, "outputSchema")
            located += [
                LocatedProblem((*output, *parse_path(p.path)), p.message)
                for p in health.output_problems(tool)
            ]
        names = ", ".join(tool.name for tool in unsound[:5])
        if len(unsound) > 5:
            names += f" and {len(unsound) - 5} more"
        params = any(health.problems(tool) for tool in unsound)
        outputs = any(health.output_problems(tool) for tool in unsound)
        what = "schemas" if params and outputs else "parameters" if params else "output schemas"
        reporter().warning(
            f"{document.display_name()}: the {what} of {names} need fixing before the "
            "agent can be served — open the tool to see where",
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
        from schema_types.files.agent_file import load_agent

        try:
            agent = load_agent(entry.copy, check_schemas=False)
        except Exception as exc:
            reporter().error(f"Could not read the recovery copy of {entry.name}", detail=str(exc))
            return None
        original = entry.original.resolve() if entry.original is not None else None
        document = self._open_document(original) if original is not None else None
        if document is not None:
            document.replace_agent(agent, dirty=True)
            self.check_tool_schemas_soon(document)
        else:
            # The copy is newer than its file, which is not read; a path that is no longer a
            # regular file (gone, a named pipe in its place) leaves the agent unsaved.
            path = original if original is not None and original.is_file() else None
            document = AgentDocument(agent, path)
            if path is not None:
                self.settings.add_recent_file(path)
            self.add_document(document)
            document.mark_dirty()
        reporter().info(f"Restored the unsaved changes of {entry.name}")
        return document


def _file_name_for(document: AgentDocument) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", document.agent.metadata.name.lower()).strip("-")
    return f"{slug or 'agent'}.agent.yaml"


def _small_regular_file(path: Path) -> bool:
    try:
        info = path.stat()
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size <= READ_AT_ONCE_BYTES


def open_failure_reason(error: BaseException) -> str:
    """Why a file could not be opened, in one line: the first problem, located, and how many
    more there are (the details list them all)."""
    if not isinstance(error, AgentFileError):
        return str(error) or type(error).__name__
    detail = error.detail
    reason = f"it {detail}" if detail.startswith("is ") else detail
    if error.path:
        reason = f"{error.path}: {reason}"
    if error.line is not None:
        where = f"line {error.line}" + (f", column {error.column}" if error.column else "")
        reason = f"{where}: {reason}"
    more = len(getattr(error, "problems", ())) - 1
    if more > 0:
        reason += f" (and {more} more problem{'s' if more > 1 else ''})"
    return reason


def _failure_detail(path: Path, error: BaseException) -> str:
    if not isinstance(error, AgentFileError):
        return "".join(traceback.format_exception(type(error), error, error.__traceback__))
    problems = getattr(error, "problems", None) or [error]
    return "\n".join(str(problem) for problem in problems) or str(path)
