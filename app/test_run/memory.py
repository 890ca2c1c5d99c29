"""What the studio remembers per agent file and tool: test arguments and preview sample values.

:class:`ToolMemory` keeps one JSON value per agent file and tool name in an ini file beside the
studio's ``studio.ini`` (in ``SettingsStore.home``). Two memories use it:

* :class:`ArgumentMemory` (``test-arguments.ini``): the arguments of the last test run of each
  tool, so re-opening the test dialog pre-fills them;
* :class:`SampleMemory` (``sample-values.ini``): the sample values the person typed in a tool
  editor's preview table and the rows left unticked, so they are back when the tool is opened
  again.

The agent file's path is hashed into the key: paths hold characters QSettings keys do not keep
readable, and the value only has to be found again, not read by a person. An agent that was never
saved is known by its name until it is.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QSettings

from app.document.agent_document import AgentDocument
from app.settings_store import SettingsStore
from app.tool_editor.sample_values import SampleOverrides, SampleValuesModel
from schema_types.agent import ToolDefinition

__all__ = ["ArgumentMemory", "SampleMemory", "ToolMemory", "sample_values"]

FILE_NAME = "test-arguments.ini"
SAMPLES_FILE_NAME = "sample-values.ini"


class ToolMemory:
    """One JSON value per agent file and tool, kept in ``file_name`` under ``group``.

    Args:
        settings: the studio's settings; the file goes into its ``home``.
        file_name: the ini file's name.
        group: the first part of every key (what is kept).
    """

    def __init__(self, settings: SettingsStore, file_name: str, group: str) -> None:
        self.file = settings.home / file_name
        self._group = group
        self._settings = QSettings(str(self.file), QSettings.Format.IniFormat)

    def key(self, document: AgentDocument, tool_name: str) -> str:
        """The settings key for ``tool_name`` of ``document`` (an unsaved agent: by its name)."""
        if document.path is not None:
            where = str(document.path.resolve())
        else:
            where = f"unsaved:{document.agent.metadata.name}"
        digest = hashlib.sha256(where.encode("utf-8")).hexdigest()[:16]
        return f"{self._group}/{digest}/{tool_name}"

    def recall_json(self, document: AgentDocument, tool_name: str) -> Any:
        """The value kept for the tool, or None (also when the entry cannot be read)."""
        text = self._settings.value(self.key(document, tool_name))
        if not isinstance(text, str):
            return None
        try:
            return json.loads(text)
        except json.JSONDecodeError:  # edited by hand, say: start afresh rather than fail
            return None

    def remember_json(self, document: AgentDocument, tool_name: str, value: Any) -> None:
        """Keep ``value`` (JSON-serialisable) for the tool, replacing what was kept."""
        text = json.dumps(value, ensure_ascii=False)
        self._settings.setValue(self.key(document, tool_name), text)
        self._settings.sync()

    def forget(self, document: AgentDocument, tool_name: str) -> None:
        """Drop what is kept for the tool."""
        key = self.key(document, tool_name)
        if self._settings.contains(key):
            self._settings.remove(key)
            self._settings.sync()


class ArgumentMemory(ToolMemory):
    """Remembers the arguments of the last test of each tool.

    Args:
        settings: the studio's settings; the file goes into its ``home``.
    """

    def __init__(self, settings: SettingsStore) -> None:
        super().__init__(settings, FILE_NAME, "arguments")

    def recall(self, document: AgentDocument, tool_name: str) -> dict[str, Any] | None:
        """The arguments last remembered for the tool, or None."""
        value = self.recall_json(document, tool_name)
        return value if isinstance(value, dict) else None

    def remember(self, document: AgentDocument, tool_name: str, arguments: dict[str, Any]) -> None:
        """Store ``arguments`` as the tool's last used ones."""
        self.remember_json(document, tool_name, arguments)


class SampleMemory(ToolMemory):
    """Remembers what the person changed in each tool editor's sample values table.

    Args:
        settings: the studio's settings; the file goes into its ``home``.
    """

    def __init__(self, settings: SettingsStore) -> None:
        super().__init__(settings, SAMPLES_FILE_NAME, "samples")

    def recall(self, document: AgentDocument, tool_name: str) -> SampleOverrides | None:
        """The typed values and left-out rows kept for the tool, or None."""
        return SampleOverrides.from_json(self.recall_json(document, tool_name))

    def remember(self, document: AgentDocument, tool_name: str, overrides: SampleOverrides) -> None:
        """Keep ``overrides`` for the tool; nothing changed from the samples forgets the entry."""
        if overrides.is_empty():
            self.forget(document, tool_name)
        else:
            self.remember_json(document, tool_name, overrides.to_json())


def sample_values(
    memory: SampleMemory, document: AgentDocument, tool: ToolDefinition
) -> dict[str, Any]:
    """The arguments the tool editor's Sample values table holds for ``tool``: the schema's
    samples with what the person typed there and left out (kept in ``memory``) applied."""
    model = SampleValuesModel()
    parameters = tool.parameters
    model.set_parameters(parameters if isinstance(parameters, Mapping) else {})
    overrides = memory.recall(document, tool.name)
    if overrides is not None:
        model.restore(overrides)
    arguments = model.arguments()
    model.deleteLater()
    return arguments
