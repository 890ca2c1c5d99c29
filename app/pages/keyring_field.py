"""The API key field: a password entry whose secret goes to the system keyring, never to the file.

On commit (Enter, leaving the field, or "Store key") a typed key is stored in the keyring under
``metaagent-studio/<agent-slug>-<provider>`` and the agent gets the reference
``keyring://metaagent-studio/<agent-slug>-<provider>`` in ``providers.<provider>.<KEY_NAME>``, as
one undoable edit. A typed ``env://NAME`` (or ``keyring://service/name``) reference is written as
it is. The field shows what the file holds (a reference, never the secret), and offers to move a
literal key that came with a file written elsewhere into the keyring.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from app.document.agent_document import AgentDocument, FieldPath, touches
from app.errors import reporter
from app.pages.model_endpoint import KEYRING_SERVICE, ProviderInfo, keyring_entry, setting_of
from schema_types.errors import SecretError
from schema_types.secrets import ENV_SCHEME, KEYRING_SCHEME, is_reference

__all__ = ["KeyringField", "with_setting"]


def with_setting(
    providers: dict[str, dict[str, str]], provider_id: str, name: str, value: str | None
) -> dict[str, dict[str, str]]:
    """A copy of ``providers`` with ``providers[provider_id][name]`` set, or removed for None.

    A provider left without settings is removed, so the file does not keep an empty entry.
    """
    updated = {key: dict(values) for key, values in providers.items()}
    values = updated.setdefault(provider_id, {})
    if value is None:
        values.pop(name, None)
    else:
        values[name] = value
    if not values:
        del updated[provider_id]
    return updated


class KeyringField(QWidget):
    """Enter, replace or remove a provider's API key; the file only ever gets a reference."""

    def __init__(
        self,
        document: AgentDocument,
        parent: QWidget | None = None,
        *,
        on_store_failed: Callable[[str], None] | None = None,
    ) -> None:
        """
        Args:
            document: the agent whose key this field edits.
            parent: the parent widget.
            on_store_failed: told the keyring's reason when it refuses a key, to show it where
                the person is (a dialog); default: the studio's reporter, with the env://
                alternative.
        """
        super().__init__(parent)
        self.document = document
        self._on_store_failed = on_store_failed
        self._provider: ProviderInfo | None = None
        self._refused = ""  # the text the keyring refused last, not tried again on leaving

        self.edit = QLineEdit()
        self.edit.setObjectName("apiKey")
        self.edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.edit.setClearButtonEnabled(True)
        self.edit.setToolTip(
            "Type the API key and press Enter: it is stored in the system keyring and the agent "
            "file gets a keyring:// reference. Or type env://NAME to read it from an environment "
            "variable."
        )
        self.store_button = QPushButton("Store key")
        self.store_button.setToolTip("Store the typed key in the system keyring")
        self.move_button = QPushButton("Move to keyring")
        self.move_button.setToolTip("Store the key written in the file in the keyring instead")
        self.remove_button = QPushButton("Remove")
        self.remove_button.setToolTip("Take the key reference out of the agent file")
        self.status = QLabel()
        self.status.setObjectName("apiKeyStatus")
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.PlainText)

        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.edit, 1)
        row.addWidget(self.store_button)
        row.addWidget(self.move_button)
        row.addWidget(self.remove_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.status)

        self.edit.textEdited.connect(self._on_text_edited)
        self.edit.returnPressed.connect(self.commit)
        self.edit.editingFinished.connect(self._on_editing_finished)
        self.store_button.clicked.connect(self.commit)
        self.move_button.clicked.connect(self.move_literal_to_keyring)
        self.remove_button.clicked.connect(self.remove)
        document.changed_at.connect(self._on_changed_at)
        self.refresh()

    # -- target ----------------------------------------------------------------------------

    def set_provider(self, provider: ProviderInfo) -> None:
        """Edit the key of ``provider`` (none for MCP sampling)."""
        if provider != self._provider:
            self._provider = provider
            self.edit.clear()
            self.refresh()

    def current(self) -> tuple[str | None, str]:
        """What the file holds for the key now: ``(value or None, key name)``."""
        if self._provider is None or not self._provider.key_names:
            return None, ""
        return setting_of(self.document.agent, self._provider.id, self._provider.key_names)

    # -- edits -----------------------------------------------------------------------------

    def commit(self) -> bool:
        """Store what was typed (a key goes to the keyring) and write its reference.

        Returns:
            True when the agent now refers to the key; False when nothing was typed or the
            keyring refused (reported).
        """
        text = self.edit.text().strip()
        if not text:
            return False
        if self._write_secret(text):
            self.edit.clear()
            self._on_text_edited("")
            return True
        return False

    def move_literal_to_keyring(self) -> bool:
        """Move a literal key found in the file into the keyring (the file keeps a reference)."""
        value, _name = self.current()
        if value is None or is_reference(value):
            return False
        return self._write_secret(value)

    def remove(self) -> bool:
        """Take the key out of the agent file (undoable; the keyring entry stays)."""
        value, name = self.current()
        if value is None or self._provider is None:
            return False
        return self._set(name, None, "Remove API key")

    def _write_secret(self, text: str) -> bool:
        provider = self._provider
        if provider is None or not provider.key_names:
            return False
        _value, name = self.current()
        if text.startswith(ENV_SCHEME):
            if not text[len(ENV_SCHEME) :].strip():
                reporter().warning(f"API key: write env://NAME, e.g. env://{name}")
                return False
            return self._set(name, text, "Read API key from the environment")
        if text.startswith(KEYRING_SCHEME):
            return self._set(name, text, "Use API key from the keyring")
        from schema_types.secrets import store_secret_in_keyring

        entry = keyring_entry(self.document.agent, provider.id)
        try:
            reference = store_secret_in_keyring(KEYRING_SERVICE, entry, text)
        except SecretError as exc:
            if self._on_store_failed is not None:
                self._on_store_failed(str(exc))
                return False
            message = (
                f"The API key could not be stored in the system keyring: {exc}. Nothing was "
                f"written to the agent; type env://{name} to read the key from an environment "
                "variable instead."
            )
            # Under the field as well: the status bar cuts a line this long at the window's edge.
            self._refused = text
            self.status.setText(message)
            reporter().error(message)
            return False
        return self._set(name, reference, "Store API key in the keyring")

    def _set(self, name: str, value: str | None, text: str) -> bool:
        assert self._provider is not None
        providers = with_setting(self.document.agent.providers, self._provider.id, name, value)
        return self.document.set_field(("providers",), providers, text=text)

    # -- view ------------------------------------------------------------------------------

    def _on_text_edited(self, text: str) -> None:
        # A reference is not a secret: show it while it is typed.
        self._refused = ""
        visible = text.startswith((ENV_SCHEME, KEYRING_SCHEME))
        mode = QLineEdit.EchoMode.Normal if visible else QLineEdit.EchoMode.Password
        self.edit.setEchoMode(mode)
        self.store_button.setEnabled(bool(text.strip()))

    def _on_editing_finished(self) -> None:
        # Leaving the field commits too, so a typed key is never silently dropped.
        # A click on Store key takes the focus first: the click itself commits.
        text = self.edit.text().strip()
        leaving = not self.edit.hasFocus() and not self.store_button.hasFocus()
        if text and text != self._refused and leaving:
            self.commit()

    def _on_changed_at(self, path: FieldPath) -> None:
        if touches(path, ("providers",)):
            self.refresh()

    def refresh(self) -> None:
        """Show what the file holds for the current provider's key."""
        provider = self._provider
        enabled = provider is not None and bool(provider.key_names)
        for widget in (self.edit, self.remove_button):
            widget.setEnabled(enabled)
        self.store_button.setEnabled(enabled and bool(self.edit.text().strip()))
        value, name = self.current()
        self.move_button.setVisible(value is not None and not is_reference(value))
        self.remove_button.setEnabled(enabled and value is not None)
        if provider is None or not enabled:
            self.edit.setPlaceholderText("no key: the MCP client's own model answers")
            self.status.setText("")
            return
        if value is None:
            self.edit.setPlaceholderText(f"paste the key, or type env://{name}")
            need = "needed" if provider.key_required else "optional"
            self.status.setText(
                f"Not set in the agent ({need}); the {name} environment variable is used "
                "when it is set."
            )
        elif value.startswith(KEYRING_SCHEME):
            self.edit.setPlaceholderText("stored in the keyring — type a new key to replace it")
            self.status.setText(f"Stored in the system keyring: {value}")
        elif value.startswith(ENV_SCHEME):
            self.edit.setPlaceholderText("type a key to store it in the keyring instead")
            variable = value[len(ENV_SCHEME) :]
            self.status.setText(f"Read from the environment variable {variable}: {value}")
        else:
            self.edit.setPlaceholderText("type a new key to replace it")
            self.status.setText(
                f"Warning: the file holds this key in plain text ({name}). Press “Move to "
                "keyring” to keep only a reference in the file."
            )
