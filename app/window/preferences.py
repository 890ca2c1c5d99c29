"""Edit ▸ Preferences: the studio's own choices, kept in its settings and applied at once.

:class:`PreferencesDialog` edits a :class:`Preferences`: the theme, how often unsaved agents get
a recovery copy, and the model endpoints the Model page suggests for its base URL (a provider kind
and a URL each), and the authoring model (the model that helps write tools; each agent's own
model unless one is chosen). It also shows where the studio keeps its data, with a button that
opens that folder; the folder itself is chosen by ``METAAGENT_HOME`` before the studio starts,
not here. OK and Apply hand the preferences to whoever listens to :attr:`PreferencesDialog.applied`
(the main window saves and applies them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QPersistentModelIndex,
    QUrl,
    Signal,
)
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.settings_store import AUTOSAVE_RANGE, THEMES, Endpoint, Theme, default_endpoints
from app.window.prices_editor import PricesEditor
from app.window.screen_fit import fit_to_screen
from app.window.theme import THEME_LABELS
from mcp_export.costs.prices import PRICES_FILE
from mcp_export.providers.kinds import PROVIDER_KINDS

__all__ = ["Preferences", "PreferencesDialog"]

_KIND, _URL = 0, 1


@dataclass(frozen=True)
class Preferences:
    """What Edit ▸ Preferences sets.

    Attributes:
        theme: ``system``, ``light`` or ``dark``.
        autosave_seconds: how often unsaved agents get a recovery copy.
        endpoints: the base URLs the Model page suggests, each with its provider kind.
        authoring_model: the model that drafts tools, grows cases and suggests fixes
            (``provider:model``); "" for each agent's own model.
    """

    theme: Theme
    autosave_seconds: float
    endpoints: tuple[Endpoint, ...]
    authoring_model: str = ""


class PreferencesDialog(QDialog):
    """Edits :class:`Preferences`; shows the data folder.

    Args:
        preferences: the preferences now.
        data_folder: where the studio keeps its data.
        parent: the main window.

    Signals:
        applied(Preferences): OK or Apply was pressed.
    """

    applied = Signal(object)

    def __init__(
        self, preferences: Preferences, data_folder: Path, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("preferencesDialog")
        self.setWindowTitle("Preferences")
        self.data_folder = data_folder

        self.theme_combo = QComboBox()
        self.theme_combo.setObjectName("themeCombo")
        for theme in THEMES:
            self.theme_combo.addItem(THEME_LABELS[theme], theme)
        self.autosave_spin = QSpinBox()
        self.autosave_spin.setObjectName("autosaveSeconds")
        low, high = AUTOSAVE_RANGE
        self.autosave_spin.setRange(int(low), int(high))
        self.autosave_spin.setSuffix(" s")
        self.autosave_spin.setToolTip(
            "How often an agent with unsaved changes gets a recovery copy, which the next start "
            "offers after a crash"
        )
        self.authoring_edit = QLineEdit()
        self.authoring_edit.setObjectName("authoringModel")
        self.authoring_edit.setPlaceholderText("the agent's own model")
        self.authoring_edit.setToolTip(
            "The model that drafts tools, grows test cases and suggests fixes, as provider:model "
            "(e.g. openai:gpt-4.1-mini); its key and endpoint come from the agent's providers "
            "and the environment, as for the agent's own model. Empty: the agent's own model."
        )
        general = QGroupBox("General")
        form = QFormLayout(general)
        form.addRow(_buddy("&Theme:", self.theme_combo), self.theme_combo)
        form.addRow(_buddy("&Autosave every:", self.autosave_spin), self.autosave_spin)
        form.addRow(_buddy("Auth&oring model:", self.authoring_edit), self.authoring_edit)

        self.endpoints_table = QTableWidget(0, 2)
        self.endpoints_table.setObjectName("endpointsTable")
        self.endpoints_table.setHorizontalHeaderLabels(["Provider", "Base URL"])
        self.endpoints_table.verticalHeader().hide()
        self.endpoints_table.setItemDelegateForColumn(_KIND, _KindDelegate(self.endpoints_table))
        self.endpoints_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        header = self.endpoints_table.horizontalHeader()
        header.setSectionResizeMode(_KIND, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(_URL, QHeaderView.ResizeMode.Stretch)
        self.add_endpoint_button = QPushButton("&Add")
        self.add_endpoint_button.clicked.connect(lambda: self.add_endpoint(Endpoint("openai", "")))
        self.remove_endpoint_button = QPushButton("&Remove")
        self.remove_endpoint_button.clicked.connect(self.remove_selected_endpoint)
        self.defaults_button = QPushButton("Provider &defaults")
        self.defaults_button.setToolTip("The providers' own local and hosted endpoints")
        self.defaults_button.clicked.connect(lambda: self.set_endpoints(default_endpoints()))
        buttons_row = QHBoxLayout()
        for button in (self.add_endpoint_button, self.remove_endpoint_button):
            buttons_row.addWidget(button)
        buttons_row.addStretch(1)
        buttons_row.addWidget(self.defaults_button)
        endpoints = QGroupBox("Model endpoints")
        endpoints_layout = QVBoxLayout(endpoints)
        note = QLabel("Offered as suggestions in the Model page's Base URL field.")
        note.setWordWrap(True)
        endpoints_layout.addWidget(note)
        endpoints_layout.addWidget(self.endpoints_table, 1)
        endpoints_layout.addLayout(buttons_row)

        self.folder_edit = QLineEdit(str(data_folder))
        self.folder_edit.setObjectName("dataFolder")
        self.folder_edit.setReadOnly(True)
        self.open_folder_button = QPushButton("&Open folder")
        self.open_folder_button.setObjectName("openDataFolder")
        self.open_folder_button.clicked.connect(self.open_data_folder)
        folder_row = QHBoxLayout()
        folder_row.addWidget(self.folder_edit, 1)
        folder_row.addWidget(self.open_folder_button)
        folder_note = QLabel(
            "History, studio settings, recovery copies and remembered test values are kept "
            "here, for the studio and for <tt>metaagent serve</tt>. It cannot be changed here: "
            "start the studio with <tt>METAAGENT_HOME</tt> set to another folder to use that one."
        )
        folder_note.setObjectName("dataFolderNote")
        folder_note.setWordWrap(True)
        data = QGroupBox("Data folder")
        data_layout = QVBoxLayout(data)
        data_layout.addLayout(folder_row)
        data_layout.addWidget(folder_note)

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok
            | QDialogButtonBox.StandardButton.Cancel
            | QDialogButtonBox.StandardButton.Apply
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        apply_button = self.buttons.button(QDialogButtonBox.StandardButton.Apply)
        apply_button.clicked.connect(self._apply)
        layout = QVBoxLayout(self)
        layout.addWidget(general)
        layout.addWidget(endpoints, 1)
        self.prices = PricesEditor(data_folder / PRICES_FILE)
        layout.addWidget(self.prices)
        layout.addWidget(data)
        layout.addWidget(self.buttons)
        self.set_preferences(preferences)
        fit_to_screen(self, 620, 560)

    # -- the preferences -------------------------------------------------------------------

    def set_preferences(self, preferences: Preferences) -> None:
        """Show ``preferences``."""
        self.theme_combo.setCurrentIndex(THEMES.index(preferences.theme))
        self.autosave_spin.setValue(round(preferences.autosave_seconds))
        self.set_endpoints(list(preferences.endpoints))
        self.authoring_edit.setText(preferences.authoring_model)

    def preferences(self) -> Preferences:
        """The preferences as the dialog shows them (rows without a URL left out)."""
        theme = THEMES[max(0, self.theme_combo.currentIndex())]
        return Preferences(
            theme,
            float(self.autosave_spin.value()),
            tuple(self.endpoints()),
            self.authoring_edit.text().strip(),
        )

    def _apply(self) -> bool:
        """Apply: the price table is written when it reads (else it says why); the other
        preferences are applied either way."""
        saved = self.prices.save()
        self.applied.emit(self.preferences())
        return saved

    def accept(self) -> None:
        """OK: apply the preferences and close (not while the price table does not read)."""
        if self._apply():
            super().accept()

    # -- endpoints -------------------------------------------------------------------------

    def set_endpoints(self, endpoints: list[Endpoint]) -> None:
        """Show ``endpoints`` in the table."""
        self.endpoints_table.setRowCount(0)
        for endpoint in endpoints:
            self.add_endpoint(endpoint, edit=False)

    def endpoints(self) -> list[Endpoint]:
        """The table's endpoints that have a URL, in order."""
        found: list[Endpoint] = []
        for row in range(self.endpoints_table.rowCount()):
            kind, url = (self.endpoints_table.item(row, column) for column in (_KIND, _URL))
            if kind is not None and url is not None and url.text().strip():
                found.append(Endpoint(kind.text(), url.text().strip()))
        return found

    def add_endpoint(self, endpoint: Endpoint, *, edit: bool = True) -> int:
        """Add a row for ``endpoint`` (its URL open for typing when ``edit``); its row."""
        row = self.endpoints_table.rowCount()
        self.endpoints_table.insertRow(row)
        self.endpoints_table.setItem(row, _KIND, QTableWidgetItem(endpoint.kind))
        item = QTableWidgetItem(endpoint.base_url)
        self.endpoints_table.setItem(row, _URL, item)
        if edit:
            self.endpoints_table.setCurrentItem(item)
            self.endpoints_table.editItem(item)
        return row

    def remove_selected_endpoint(self) -> None:
        """Remove the selected row."""
        row = self.endpoints_table.currentRow()
        if row >= 0:
            self.endpoints_table.removeRow(row)

    # -- the data folder -------------------------------------------------------------------

    def open_data_folder(self) -> bool:
        """Show the data folder in the desktop's file manager; whether one was started."""
        self.data_folder.mkdir(parents=True, exist_ok=True)
        return QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.data_folder)))


class _KindDelegate(QStyledItemDelegate):
    """Edits a provider kind with a list of the known ones."""

    def createEditor(  # noqa: N802 (Qt override)
        self,
        parent: QWidget,
        _option: QStyleOptionViewItem,
        _index: QModelIndex | QPersistentModelIndex,
    ) -> QWidget:
        combo = QComboBox(parent)
        combo.addItems(list(PROVIDER_KINDS))
        return combo

    def setEditorData(  # noqa: N802 (Qt override)
        self, editor: QWidget, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        if isinstance(editor, QComboBox):
            editor.setCurrentText(str(index.data()))

    def setModelData(  # noqa: N802 (Qt override)
        self,
        editor: QWidget,
        model: QAbstractItemModel,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        if isinstance(editor, QComboBox):
            model.setData(index, editor.currentText())


def _buddy(text: str, widget: QWidget) -> QLabel:
    label = QLabel(text)
    label.setBuddy(widget)
    return label
