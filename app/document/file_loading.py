"""Reading agent files off the GUI thread, so opening a large agent never freezes the window.

:class:`AgentFileLoader` reads one file at a time on a worker thread (``load_agent`` and the
file's :class:`~app.document.agent_document.DiskStamp`) and hands each outcome back on the GUI
thread through a
queued signal, where the window turns it into a document. Nothing Qt is touched on the worker:
it only builds the pydantic agent, which the window adopts.

The reading itself refuses what is not an agent file before a byte is read (a named pipe, a
device, a file over the size limit: ``schema_types``), so a worker never waits on a pipe either.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal

from app.document.agent_document import DiskStamp
from schema_types.agent import Agent

__all__ = ["AgentFileLoader", "LoadedAgent", "read_agent_file"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LoadedAgent:
    """An agent file read on the worker.

    Attributes:
        path: the file (resolved).
        agent: its agent.
        disk_stamp: the file as it was when read.
    """

    path: Path
    agent: Agent
    disk_stamp: DiskStamp | None


def read_agent_file(path: Path) -> LoadedAgent:
    """Read ``path`` as the studio opens it: the agent (tools' schemas are checked later, in
    the window) and the stamp that tells a later change on disk.

    Raises:
        AgentFileError: the file cannot be read or is not an agent.
    """
    from schema_types.files.agent_file import load_agent

    agent = load_agent(path, check_schemas=False)
    return LoadedAgent(path, agent, DiskStamp.of(path))


class AgentFileLoader(QObject):
    """Reads agent files on a worker thread, one after the other.

    Signals:
        loaded(LoadedAgent): a file was read (on the GUI thread).
        failed(Path, Exception): a file could not be read; the exception says why.
    """

    loaded = Signal(object)
    failed = Signal(object, object)
    _done = Signal(object, object, object)  # path, LoadedAgent | None, Exception | None

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agent-file")
        self._pending: dict[Path, None] = {}  # an ordered set
        # Emitted on the worker (or here, for a read that ended at once), always delivered later
        # on the thread this object lives in.
        self._done.connect(self._on_done, Qt.ConnectionType.QueuedConnection)

    def load(self, path: Path) -> bool:
        """Start reading ``path``; False when it is being read already."""
        path = Path(path).resolve()
        if path in self._pending:
            return False
        self._pending[path] = None
        future = self._executor.submit(read_agent_file, path)
        future.add_done_callback(lambda done: self._deliver(path, done))
        return True

    def loading(self) -> list[Path]:
        """The files being read, in the order asked for."""
        return list(self._pending)

    def is_loading(self, path: Path | None = None) -> bool:
        """Whether ``path`` (any file, when None) is being read."""
        if path is None:
            return bool(self._pending)
        return Path(path).resolve() in self._pending

    def shutdown(self) -> None:
        """Drop the reads not started yet; one under way finishes on its own (its outcome is
        not delivered)."""
        self._done.disconnect(self._on_done)
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._pending.clear()

    def _deliver(self, path: Path, done: Future[LoadedAgent]) -> None:
        if done.cancelled():
            return
        error = done.exception()
        result = None if error is not None else done.result()
        try:
            self._done.emit(path, result, error)
        except RuntimeError:  # the window (and this loader) closed while the file was read
            logger.debug("dropped the outcome of reading %s: the loader is gone", path)

    def _on_done(self, path: Path, result: LoadedAgent | None, error: BaseException | None) -> None:
        self._pending.pop(path, None)
        if result is not None:
            self.loaded.emit(result)
        else:
            self.failed.emit(path, error)
