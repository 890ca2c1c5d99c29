"""The arguments last used to test each tool, so re-opening the test dialog pre-fills them.

Kept as JSON text in ``test-arguments.ini`` beside the studio's ``studio.ini`` (in
``SettingsStore.home``), one entry per agent file and tool name. The agent file's path is hashed
into the key: paths hold characters QSettings keys do not keep readable, and the value only has to
be found again, not read by a person.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from PySide6.QtCore import QSettings

from app.document.agent_document import AgentDocument
from app.settings_store import SettingsStore

__all__ = ["ArgumentMemory"]

FILE_NAME = "test-arguments.ini"


class ArgumentMemory:
    """Remembers the arguments of the last test of each tool.

    Args:
        settings: the studio's settings; the file goes into its ``home``.
    """

    def __init__(self, settings: SettingsStore) -> None:
        self.file = settings.home / FILE_NAME
        self._settings = QSettings(str(self.file), QSettings.Format.IniFormat)

    @staticmethod
    def key(document: AgentDocument, tool_name: str) -> str:
        """The settings key for ``tool_name`` of ``document`` (an unsaved agent: by its name)."""
        if document.path is not None:
            where = str(document.path.resolve())
        else:
            where = f"unsaved:{document.agent.metadata.name}"
        digest = hashlib.sha256(where.encode("utf-8")).hexdigest()[:16]
        return f"arguments/{digest}/{tool_name}"

    def recall(self, document: AgentDocument, tool_name: str) -> dict[str, Any] | None:
        """The arguments last remembered for the tool, or None."""
        text = self._settings.value(self.key(document, tool_name))
        if not isinstance(text, str):
            return None
        try:
            value = json.loads(text)
        except json.JSONDecodeError:  # edited by hand, say: start afresh rather than fail
            return None
        return value if isinstance(value, dict) else None

    def remember(self, document: AgentDocument, tool_name: str, arguments: dict[str, Any]) -> None:
        """Store ``arguments`` as the tool's last used ones."""
        text = json.dumps(arguments, ensure_ascii=False)
        self._settings.setValue(self.key(document, tool_name), text)
        self._settings.sync()
