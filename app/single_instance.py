"""One studio per user: a second ``metaagent FILE`` opens the file in the studio already running.

The running studio listens on a local socket (``QLocalServer``: a Unix socket in the temporary
directory, a named pipe on Windows) named for the user and the studio's data directory
(``METAAGENT_HOME``), so another user's studio, or one kept apart with its own data directory,
is never reached. A new start first tries to connect:

- connected: it sends one JSON line ``{"files": [absolute paths]}`` and waits for ``ok``; the
  running studio opens the files and comes to the front; the new process ends (exit 0);
- nobody listening: it becomes the running studio. A socket left by a studio that crashed
  (nobody answers on it) is removed first;
- connected but no answer within :data:`ANSWER_MS` (the running studio hangs): the new process
  opens its own window and takes the name over.

Every wait is bounded (:data:`CONNECT_MS`, :data:`ANSWER_MS`); a request larger than
:data:`MAX_REQUEST_BYTES` or not in the expected shape is answered with an error and dropped.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtNetwork import QLocalServer, QLocalSocket

__all__ = [
    "ANSWER_MS",
    "CONNECT_MS",
    "MAX_REQUEST_BYTES",
    "StudioServer",
    "forward_to_running_studio",
    "instance_name",
]

logger = logging.getLogger(__name__)

CONNECT_MS = 1000
"""How long a new start waits to reach a running studio."""
ANSWER_MS = 5000
"""How long it waits for the running studio to say it took the files."""
MAX_REQUEST_BYTES = 1024 * 1024
"""The most one request may hold (a list of paths)."""


def instance_name(home: Path) -> str:
    """The socket's name for this user (the uid; the user name on Windows) and this data
    directory."""
    getuid = getattr(os, "getuid", None)
    user = str(getuid()) if getuid is not None else os.environ.get("USERNAME", "user")
    digest = hashlib.sha256(str(home.resolve()).encode("utf-8")).hexdigest()[:16]
    safe_user = "".join(c if c.isalnum() else "_" for c in user)[:32]
    return f"metaagent-studio-{safe_user}-{digest}"


def forward_to_running_studio(name: str, files: Sequence[Path]) -> bool:
    """Hand ``files`` to the studio listening on ``name``; whether it took them.

    False when nobody listens (or the socket is stale), or when the studio there did not answer
    ``ok`` within :data:`ANSWER_MS`.
    """
    socket = QLocalSocket()
    socket.connectToServer(name)
    if not socket.waitForConnected(CONNECT_MS):
        return False
    request = json.dumps({"files": [str(Path(f).resolve()) for f in files]}) + "\n"
    socket.write(request.encode("utf-8"))
    answer = b""
    if socket.waitForBytesWritten(ANSWER_MS):
        while b"\n" not in answer and socket.waitForReadyRead(ANSWER_MS):
            answer += bytes(socket.readAll().data())
    socket.abort()
    if answer.strip() != b"ok":
        logger.warning("the running studio did not take the files (answer %r)", answer[:200])
        return False
    return True


class StudioServer(QObject):
    """Listens for later starts and hands their files to ``open_files``.

    Args:
        name: from :func:`instance_name`.
        open_files: called on the GUI thread with the paths of one request (may be empty: the
            studio only comes to the front).
    """

    def __init__(
        self, name: str, open_files: Callable[[list[Path]], None], parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._open_files = open_files
        self._buffers: dict[QLocalSocket, bytes] = {}
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.server.newConnection.connect(self._on_connection)
        self.name = name

    def listen(self) -> bool:
        """Start listening; a socket left by a studio that is gone is removed first."""
        # With UserAccessOption Qt (6.x, Unix) binds the socket aside and renames it over the
        # name, which replaces a stale file; where listening still finds the name taken (a stale
        # file, or a studio that did not answer: the caller asked it first), it is removed.
        if self.server.listen(self.name):
            return True
        QLocalServer.removeServer(self.name)
        listening = self.server.listen(self.name)
        if not listening:
            logger.warning("cannot listen on %s: %s", self.name, self.server.errorString())
        return listening

    def close(self) -> None:
        """Stop listening (the socket file is removed)."""
        self.server.close()

    def _on_connection(self) -> None:
        while self.server.hasPendingConnections():
            socket = self.server.nextPendingConnection()
            if socket is None:
                return
            self._buffers[socket] = b""
            socket.readyRead.connect(lambda s=socket: self._on_ready(s))
            socket.disconnected.connect(lambda s=socket: self._forget(s))

    def _forget(self, socket: QLocalSocket) -> None:
        self._buffers.pop(socket, None)
        socket.deleteLater()

    def _on_ready(self, socket: QLocalSocket) -> None:
        if socket not in self._buffers:
            return
        data = self._buffers[socket] + bytes(socket.readAll().data())
        if b"\n" not in data:
            if len(data) > MAX_REQUEST_BYTES:
                self._answer(socket, b"error: request too large")
            else:
                self._buffers[socket] = data
            return
        line = data.split(b"\n", 1)[0]
        try:
            request = json.loads(line)
            files = request["files"]
            if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
                raise TypeError("files must be a list of paths")
        except (ValueError, KeyError, TypeError) as exc:
            self._answer(socket, f"error: {exc}".encode())
            return
        self._answer(socket, b"ok")
        self._open_files([Path(f) for f in files])

    def _answer(self, socket: QLocalSocket, text: bytes) -> None:
        self._buffers.pop(socket, None)
        socket.write(text + b"\n")
        socket.flush()
        socket.disconnectFromServer()
