"""The export dialog's keyring row: the model key the config leaves empty goes to the keyring.

When Verify finds the agent's model key missing from the client's config, the row offers the
agent's API key field (``KeyringField``): the key goes to the system keyring, the agent file
gets a ``keyring://`` reference, and *Save and verify again* saves the agent and verifies. When
the keyring refuses the key (no backend on this machine, a locked keyring), the reason is shown
here, in the dialog the person is looking at, with the way that works for the chosen client:
the key's value in the client's config file (Claude Desktop starts servers without the shell's
environment, so ``env://`` cannot reach it there), or in the environment the client starts in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.pages.keyring_field import KeyringField

if TYPE_CHECKING:
    from app.document.agent_document import AgentDocument
    from mcp_export.clients.entry import ClientInfo
    from mcp_export.clients.verify_report import Fill

__all__ = ["KeyringOffer", "keyring_failure_text"]

_BAD = "#b3261e"


def keyring_failure_text(reason: str, fill: Fill, client: ClientInfo) -> str:
    """What to tell the person when the keyring refused the key of ``fill``, and what to do
    instead for ``client``."""
    text = (
        f"The key could not be stored in the system keyring: {reason.rstrip('.')}. "
        "Nothing was written to the agent."
    )
    where = f"{fill.key_path} in {fill.config_file}" if fill.config_file else fill.key_path
    if client.env_style == "placeholder":
        return (
            f"{text} {client.label} starts the server without your shell's environment, so "
            f"env://{fill.name} cannot work there: paste the key's value into its config "
            f"instead, at {where} (Install writes that entry with the value empty), then "
            "verify again."
        )
    return (
        f"{text} Set {fill.name} in the environment {client.label} is started from (the "
        f"entry passes it on: {where}), or paste the key's value there, then verify again."
    )


class KeyringOffer(QWidget):
    """The row that keeps a missing model key in the keyring, and says why when it cannot.

    Attributes:
        field: the agent's API key field.
        save_button: *Save and verify again* (enabled while the agent has unsaved changes).
        problem: the keyring's refusal and the way that works instead (hidden until then).

    Signals:
        save_requested(): *Save and verify again* was pressed.
        problem_shown(): the keyring refused a key; :attr:`problem` says why (to bring it into
            view).
    """

    save_requested = Signal()
    problem_shown = Signal()

    def __init__(self, document: AgentDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self._fill: Fill | None = None
        self._client: ClientInfo | None = None
        self.label = QLabel()
        self.field = KeyringField(document, on_store_failed=self._on_store_failed)
        self.field.setAccessibleName("API key for the keyring")
        # One row: the field's notes on what the file holds and taking the key out of the
        # agent are the Model page's business, not an export's.
        self.field.status.setVisible(False)
        self.field.remove_button.setVisible(False)
        self.save_button = QPushButton("Save and verify again")
        self.save_button.setEnabled(document.is_dirty())
        self.problem = QLabel()
        self.problem.setObjectName("keyringProblem")
        self.problem.setAccessibleName("Why the key was not stored")
        self.problem.setWordWrap(True)
        self.problem.setTextFormat(Qt.TextFormat.PlainText)
        self.problem.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.problem.setStyleSheet(f"color: {_BAD};")
        self.problem.setVisible(False)
        self.setToolTip(
            "No editing of the client's config: the key goes to the system keyring and the "
            "agent file refers to it (keyring://…); save, and the server reads it from there."
        )
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label)
        row.addWidget(self.field, 1)
        row.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.problem)
        self.save_button.clicked.connect(self.save_requested)
        document.dirty_changed.connect(self.save_button.setEnabled)
        document.changed_at.connect(self._on_document_changed)

    def offer(self, fill: Fill, client: ClientInfo) -> None:
        """Offer to keep the key of ``fill`` (the model's key) in the keyring, for ``client``."""
        from app.pages.model_endpoint import provider_info

        assert fill.provider is not None
        self._fill, self._client = fill, client
        self.field.set_provider(provider_info(fill.provider))
        self.label.setText(f"Or keep {fill.name} in the keyring:")
        self.problem.setVisible(False)
        self.save_button.setEnabled(self.document.is_dirty())

    def _on_document_changed(self, *_: object) -> None:
        self.problem.setVisible(False)  # the key is in the agent now (or the agent changed)

    def _on_store_failed(self, reason: str) -> None:
        if self._fill is None or self._client is None:
            return
        self.problem.setText(keyring_failure_text(reason, self._fill, self._client))
        self.problem.setVisible(True)
        self.problem_shown.emit()
