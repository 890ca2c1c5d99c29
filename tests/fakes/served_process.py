"""``metaagent serve`` in a child process, spoken to in raw JSON-RPC lines, killable at any moment.

The official client owns the server process it starts and ends it politely; a test of what a
crash leaves behind needs the process itself, calls sent without waiting for one another, the
results as they come, and ``kill -9`` at a moment the test chooses. Every wait here is bounded.

Usage::

    with ServedProcess(agent, env=env, stderr=tmp_path / "serve.log") as served:
        served.initialize()
        ids = [served.call("book_flight", {"destination": "Oslo"}) for _ in range(8)]
        assert served.wait_for(ids, timeout=30)
        served.kill()
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from tests.fakes.mcp_clients import REPO, serve_command

__all__ = ["ServedProcess"]

_PROTOCOL = "2025-11-25"


class ServedProcess:
    """A ``python -m mcp_export serve AGENT ARGS…`` child with stdin/stdout as the MCP wire.

    Args:
        agent: the agent file to serve.
        args: more ``serve`` arguments.
        env: the child's environment.
        stderr: a file that receives the child's stderr (its log).
    """

    def __init__(self, agent: Path, *args: str, env: Mapping[str, str], stderr: Path) -> None:
        self._log: IO[bytes] = stderr.open("ab")
        self.process = subprocess.Popen(
            serve_command(str(agent), *args),
            cwd=REPO,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
        )
        self._next_id = 0
        self._replies: dict[int, dict[str, Any]] = {}
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True, name="served-stdout")
        self._reader.start()

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self.process.pid

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and isinstance(message.get("id"), int):
                with self._changed:
                    self._replies[message["id"]] = message
                    self._changed.notify_all()

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> int:
        """Send a request without waiting for its reply; returns its id."""
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)
        return self._next_id

    def initialize(self, timeout: float = 30.0) -> dict[str, Any]:
        """The initialize handshake; returns the server's result.

        Raises:
            TimeoutError: no reply within ``timeout`` seconds.
        """
        request = self.request(
            "initialize",
            {
                "protocolVersion": _PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "served-process", "version": "1"},
            },
        )
        if not self.wait_for([request], timeout):
            raise TimeoutError(f"the server did not answer initialize within {timeout:g} s")
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        result: dict[str, Any] = self._replies[request]["result"]
        return result

    def call(self, tool: str, arguments: dict[str, Any]) -> int:
        """Send ``tools/call`` without waiting; returns the request id."""
        return self.request("tools/call", {"name": tool, "arguments": arguments})

    def wait_for(self, ids: Iterable[int], timeout: float) -> bool:
        """Wait until every request in ``ids`` has its reply; False on timeout."""
        wanted = set(ids)
        with self._changed:
            return self._changed.wait_for(lambda: wanted <= self._replies.keys(), timeout)

    def replies(self) -> dict[int, dict[str, Any]]:
        """The replies received so far, by request id (a copy)."""
        with self._changed:
            return dict(self._replies)

    def kill(self, timeout: float = 10.0) -> None:
        """``kill -9`` the server and wait for it to be gone."""
        self.process.kill()
        self.process.wait(timeout)
        self._reader.join(timeout)

    def close(self, timeout: float = 30.0) -> int:
        """End the server as a client does (close its stdin); killed if it outlives ``timeout``.

        Returns:
            The exit status.
        """
        if self.process.poll() is None:
            assert self.process.stdin is not None
            try:
                self.process.stdin.close()
                return self.process.wait(timeout)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
        return self.process.wait(timeout)

    def __enter__(self) -> ServedProcess:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self.close()
        finally:
            if self.process.stdin is not None and not self.process.stdin.closed:
                self.process.stdin.close()
            if self.process.stdout is not None:
                self.process.stdout.close()
            self._log.close()
