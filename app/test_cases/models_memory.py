"""The models picked for an agent's matrix runs, kept per agent file in ``studio.ini`` (the
served models under one key, the caller models of caller cases under another).

The picker's whole list and which of it is checked come back when the agent's matrix tab is
opened again (the agent file keys them, as :class:`~app.test_run.memory.ToolMemory` keys the
test arguments).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.document.agent_document import AgentDocument
from app.settings_store import SettingsStore
from app.test_run.memory import ToolMemory

__all__ = ["MatrixModelMemory", "PickedModels"]

_KEY = "models"  # one entry per agent file


@dataclass(frozen=True)
class PickedModels:
    """The models listed in the picker, and those of them checked."""

    listed: list[str]
    checked: list[str]


class MatrixModelMemory:
    """Remembers the matrix's models of each agent file.

    Args:
        settings: the studio's settings; the entries go into its ``studio.ini``.
        key: which picker's models (``models``: the served ones; ``callerModels``: the caller
            models).
    """

    def __init__(self, settings: SettingsStore, key: str = _KEY) -> None:
        self._memory = ToolMemory(settings, "studio.ini", "matrixModels")
        self._key = key

    def recall(self, document: AgentDocument) -> PickedModels | None:
        """The models kept for the agent, or None (also when the entry cannot be read)."""
        value = self._memory.recall_json(document, self._key)
        if not isinstance(value, dict):
            return None
        listed, checked = value.get("listed"), value.get("checked")
        if not isinstance(listed, list) or not isinstance(checked, list):
            return None
        names = [name for name in listed if isinstance(name, str)]
        return PickedModels(names, [name for name in checked if name in names])

    def remember(self, document: AgentDocument, picked: PickedModels) -> None:
        """Keep ``picked`` for the agent, replacing what was kept."""
        value = {"listed": picked.listed, "checked": picked.checked}
        self._memory.remember_json(document, self._key, value)
