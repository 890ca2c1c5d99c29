"""The Model page: provider, model, endpoint, API key, parameters, loop bounds and permissions.

Every field edits ``document.agent`` through the document (undoable; typing in a field is one
undo step until the field is left). ``settings.model`` is ``provider:model``; the base URL and the
key live in ``providers.<provider>`` (the key only ever as an ``env://`` or ``keyring://``
reference, see :mod:`app.pages.keyring_field`), and so do whether answers stream and how many
requests go to the endpoint at once (:mod:`app.pages.endpoint_settings`). Parameters left empty are
unset: the provider's own default applies. "Refresh" lists the endpoint's models and "Test
connection" sends a one-word prompt through the provider a served call would use; both run on
the qasync loop and report failures through the error reporter. Each shows its outcome on its
own line (the list's under the model box, the test's under its button), which stays until the
next run of that request or a dismiss. A list of exactly one model selects it, as picking it
from the box does.
"""

from __future__ import annotations

from typing import Any, cast

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.document.agent_document import AgentDocument, FieldPath, merge_id_for, touches
from app.errors import reporter
from app.layouts import buddy, column
from app.pages import ComboBinding, LineEditBinding
from app.pages.endpoint_settings import (
    MAX_CONCURRENCY,
    UNLIMITED,
    ConcurrencyBinding,
    EndpointBinding,
    StreamBinding,
)
from app.pages.keyring_field import KeyringField, with_setting
from app.pages.model_endpoint import (
    MAIN_PROVIDERS,
    EndpointError,
    list_models,
    provider_info,
    setting_of,
    test_connection,
)
from app.pages.model_fields import (
    OptionalNumberBinding,
    ResultLine,
    SpinBinding,
    StopSequencesBinding,
    number_field,
    optional_number,
)
from app.pages.page_tasks import PageTasks
from app.pages.server_tools import probe_cache, usable_summary

__all__ = ["PERMISSIONS", "ModelPage"]

# (value, label, explanation)
PERMISSIONS = (
    (
        "never",
        "Never ask",
        "A served call may use every included tool of the agent's MCP servers.",
    ),
    (
        "tool",
        "Ask per tool",
        "A served call uses only the tools marked as needing no permission: nobody is there to "
        "ask, so the others are hidden from the model (and refused if called).",
    ),
    (
        "always",
        "Always ask",
        "Every tool needs permission, so a served call gets no tools at all.",
    ),
)


class ModelPage(QScrollArea):
    """Edits how the agent reaches its model; every field is bound to the document."""

    def __init__(self, document: AgentDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.tasks = PageTasks(self)
        self.setWidgetResizable(True)
        self.setFrameShape(QScrollArea.Shape.NoFrame)
        body = QWidget()
        self.setWidget(body)

        title = QLabel("<h2>Model</h2>")
        intro = QLabel(
            "Which model answers, and how. Served tool calls, test runs and chats all use these "
            "settings; an empty parameter leaves the choice to the provider."
        )
        intro.setWordWrap(True)
        layout = QVBoxLayout(body)
        layout.addWidget(title)
        layout.addWidget(intro)
        layout.addWidget(self._build_endpoint_group())
        layout.addWidget(self._build_parameters_group())
        layout.addWidget(self._build_loop_group())
        layout.addStretch(1)

        self._endpoint_bindings: list[EndpointBinding] = [
            StreamBinding(document, self.stream_check, self.endpoint_id),
            ConcurrencyBinding(document, self.concurrency_spin, self.endpoint_id),
        ]
        self.bindings = [
            LineEditBinding(
                document,
                self.base_url_edit,
                ("providers",),
                "base URL",
                to_model=self._providers_with_url,
                from_model=lambda _providers: self._current_url(),
            ),
            *self._endpoint_bindings,
            *self._parameter_bindings(),
            SpinBinding(document, self.turns_spin, ("settings", "max_chat_turns"), "loop cap"),
            SpinBinding(document, self.timeout_spin, ("settings", "timeout_seconds"), "timeout"),
            ComboBinding(
                document, self.permission_combo, ("settings", "tool_permission"), "tool permission"
            ),
        ]
        document.changed_at.connect(self._on_changed_at)
        probe_cache(document).updated.connect(lambda _name: self._show_usable())
        self.tasks.busy_changed.connect(self._on_busy_changed)
        self.refresh()

    # -- building --------------------------------------------------------------------------

    def _build_endpoint_group(self) -> QGroupBox:
        self.provider_combo = QComboBox()
        self.provider_combo.setObjectName("provider")
        for info in MAIN_PROVIDERS:
            self.provider_combo.addItem(info.label, info.id)
        self.provider_combo.setToolTip(
            "OpenAI-compatible covers OpenAI, vLLM, LM Studio, LiteLLM and OpenRouter (set the "
            "base URL); MCP sampling lets the calling client's own model answer."
        )
        self.model_combo = QComboBox()
        self.model_combo.setObjectName("modelName")
        self.model_combo.setEditable(True)
        self.model_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.model_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.model_combo.setMinimumContentsLength(24)
        self.model_combo.setToolTip("The model name as the endpoint knows it (gpt-4.1-mini).")
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setObjectName("refreshModels")
        self.refresh_button.setToolTip("List the models the endpoint offers")
        self.base_url_edit = QLineEdit()
        self.base_url_edit.setObjectName("baseUrl")
        self.base_url_edit.setClearButtonEnabled(True)
        self.base_url_edit.setToolTip(
            "The endpoint, e.g. http://localhost:11434/v1 for Ollama. Empty: the provider's own."
        )
        self.key_field = KeyringField(self.document)
        self.stream_check = QCheckBox("Stream ans&wers")
        self.stream_check.setObjectName("stream")
        # As wide as its text: the form would stretch it, and a click beside the text does nothing.
        self.stream_check.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        self.stream_check.setToolTip(
            "Show answers as they are written. Turn it off for a server whose streaming is "
            "broken: each answer then comes whole."
        )
        self.concurrency_spin = QSpinBox()
        self.concurrency_spin.setObjectName("maxConcurrentRequests")
        self.concurrency_spin.setRange(UNLIMITED, MAX_CONCURRENCY)
        self.concurrency_spin.setSpecialValueText("unlimited")
        self.concurrency_spin.setMaximumWidth(200)
        self.concurrency_spin.setToolTip(
            "How many requests this process sends to the endpoint at once; the others wait in "
            "line. Local servers often answer one at a time."
        )
        self.test_button = QPushButton("Test connection")
        self.test_button.setObjectName("testConnection")
        self.test_button.setToolTip("Send a one-word prompt with these settings and time it")
        self.test_result = ResultLine("testResult")
        self.refresh_result = ResultLine("refreshResult")
        self.provider_hint = QLabel()
        self.provider_hint.setWordWrap(True)
        self.provider_hint.setEnabled(False)

        model_box = QWidget()
        model_column = QVBoxLayout(model_box)
        model_column.setContentsMargins(0, 0, 0, 0)
        model_column.setSpacing(2)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model_combo, 1)
        model_row.addWidget(self.refresh_button)
        model_column.addLayout(model_row)
        model_column.addWidget(self.refresh_result)
        test_box = column(self.test_button, self.test_result)
        cast(QVBoxLayout, test_box.layout()).setAlignment(
            self.test_button, Qt.AlignmentFlag.AlignLeft
        )

        group = QGroupBox("Provider and endpoint")
        form = _form(group)
        form.addRow(
            buddy("&Provider:", self.provider_combo),
            column(self.provider_combo, self.provider_hint),
        )
        form.addRow(buddy("Mod&el:", self.model_combo), model_box)
        form.addRow(buddy("&Base URL:", self.base_url_edit), self.base_url_edit)
        form.addRow(buddy("API &key:", self.key_field.edit), self.key_field)
        form.addRow("", self.stream_check)
        form.addRow(buddy("Concurrent re&quests:", self.concurrency_spin), self.concurrency_spin)
        form.addRow("", test_box)

        self.provider_combo.activated.connect(self._on_provider_chosen)
        edit = self._model_edit()
        edit.textEdited.connect(self._on_model_typed)
        edit.editingFinished.connect(self.document.seal)
        self.model_combo.activated.connect(self._on_model_chosen)
        self.refresh_button.clicked.connect(self.refresh_models)
        self.test_button.clicked.connect(self.test_connection)
        return group

    def _build_parameters_group(self) -> QGroupBox:
        self.temperature_edit = number_field("temperature", "0 – 2, e.g. 0.2")
        self.top_p_edit = number_field("topP", "0 – 1")
        self.max_tokens_edit = number_field("maxOutputTokens", "e.g. 1000", integer=True)
        self.seed_edit = number_field("seed", "a whole number", integer=True)
        self.presence_edit = number_field("presencePenalty", "-2 – 2")
        self.frequency_edit = number_field("frequencyPenalty", "-2 – 2")
        self.stop_edit = QPlainTextEdit()
        self.stop_edit.setObjectName("stop")
        self.stop_edit.setPlaceholderText("provider default (one sequence per line)")
        self.stop_edit.setTabChangesFocus(True)
        self.stop_edit.setFixedHeight(self.fontMetrics().lineSpacing() * 3 + 12)
        self.stop_edit.setToolTip(
            "The model stops before any of these. One per line; write \\n for a line break."
        )
        self.temperature_edit.setToolTip("Randomness: 0 is focused, higher is more varied.")
        self.top_p_edit.setToolTip("Nucleus sampling: keep the most likely tokens up to this mass.")
        self.max_tokens_edit.setToolTip("The longest answer per model request, in tokens.")
        self.seed_edit.setToolTip("Same seed, same settings: more repeatable answers.")
        self.presence_edit.setToolTip("Positive values push the model towards new topics.")
        self.frequency_edit.setToolTip("Positive values make the model repeat itself less.")

        group = QGroupBox("Parameters (empty: the provider's default)")
        form = _form(group)
        form.addRow(buddy("&Temperature:", self.temperature_edit), self.temperature_edit)
        form.addRow(buddy("To&p P:", self.top_p_edit), self.top_p_edit)
        form.addRow(buddy("Max &output tokens:", self.max_tokens_edit), self.max_tokens_edit)
        form.addRow(buddy("&Stop sequences:", self.stop_edit), self.stop_edit)
        form.addRow(buddy("See&d:", self.seed_edit), self.seed_edit)
        form.addRow(buddy("P&resence penalty:", self.presence_edit), self.presence_edit)
        form.addRow(buddy("&Frequency penalty:", self.frequency_edit), self.frequency_edit)
        return group

    def _parameter_bindings(self) -> list[Any]:
        document = self.document

        def bind(edit: QLineEdit, field: str, label: str, integer: bool = False) -> Any:
            convert = optional_number(label, integer=integer)
            return OptionalNumberBinding(
                document, edit, ("settings", field), label, to_model=convert
            )

        return [
            bind(self.temperature_edit, "temperature", "temperature"),
            bind(self.top_p_edit, "top_p", "top P"),
            bind(self.max_tokens_edit, "max_output_tokens", "max output tokens", True),
            bind(self.seed_edit, "seed", "seed", True),
            bind(self.presence_edit, "presence_penalty", "presence penalty"),
            bind(self.frequency_edit, "frequency_penalty", "frequency penalty"),
            StopSequencesBinding(document, self.stop_edit, ("settings", "stop"), "stop sequences"),
        ]

    def _build_loop_group(self) -> QGroupBox:
        self.turns_spin = QSpinBox()
        self.turns_spin.setObjectName("maxChatTurns")
        self.turns_spin.setRange(1, 1000)
        self.turns_spin.setMaximumWidth(200)
        self.turns_spin.setToolTip(
            "The most model requests one call may make (each tool round is one)."
        )
        self.timeout_spin = QDoubleSpinBox()
        self.timeout_spin.setObjectName("timeoutSeconds")
        self.timeout_spin.setRange(1, 86_400)
        self.timeout_spin.setDecimals(0)
        self.timeout_spin.setSuffix(" s")
        self.timeout_spin.setMaximumWidth(200)
        self.timeout_spin.setToolTip(
            "Wall-clock limit of one call, tool calls included; also the longest wait for the "
            "model to start answering or send its next piece (a slow local model needs more)."
        )
        self.permission_combo = QComboBox()
        self.permission_combo.setObjectName("toolPermission")
        for value, label, explanation in PERMISSIONS:
            self.permission_combo.addItem(f"{label} ({value})", value)
            self.permission_combo.setItemData(
                self.permission_combo.count() - 1, explanation, Qt.ItemDataRole.ToolTipRole
            )
        self.permission_combo.setToolTip("Which of its own tools the agent may use unattended.")
        self.permission_hint = QLabel()
        self.permission_hint.setObjectName("permissionHint")
        self.permission_hint.setWordWrap(True)
        self.usable_label = QLabel()
        self.usable_label.setObjectName("usableTools")
        self.usable_label.setWordWrap(True)
        self.usable_label.setTextFormat(Qt.TextFormat.PlainText)

        group = QGroupBox("Loop and tools")
        form = _form(group)
        form.addRow(buddy("&Loop cap (turns):", self.turns_spin), self.turns_spin)
        form.addRow(buddy("T&imeout:", self.timeout_spin), self.timeout_spin)
        form.addRow(
            buddy("Tool &permission:", self.permission_combo),
            column(self.permission_combo, self.permission_hint, self.usable_label),
        )
        return group

    # -- reading ---------------------------------------------------------------------------

    def provider_id(self) -> str:
        """The provider the agent's model names (``openai`` when it names none)."""
        return provider_info(self.document.agent.settings.provider_id).id

    def endpoint_id(self) -> str:
        """The ``providers.<id>`` entry the endpoint settings are read from and written to: the
        provider ``settings.model`` names, as written (``openai`` when it names none)."""
        return self.document.agent.settings.provider_id or "openai"

    def model_name(self) -> str:
        """The model part of ``settings.model`` (empty when unset)."""
        return self.document.agent.settings.model_name or ""

    def _current_url(self) -> str:
        info = provider_info(self.provider_id())
        value, _name = setting_of(self.document.agent, info.id, info.url_names)
        return value or ""

    def _providers_with_url(self, text: str) -> dict[str, dict[str, str]]:
        info = provider_info(self.provider_id())
        _value, name = setting_of(self.document.agent, info.id, info.url_names)
        url = text.strip() or None
        return with_setting(self.document.agent.providers, info.id, name, url)

    def _on_changed_at(self, path: FieldPath) -> None:
        # The settings and providers it edits; the servers its summary of usable tools counts.
        watched: tuple[FieldPath, ...] = (("settings",), ("providers",), ("mcp_servers",))
        if any(touches(path, w) for w in watched):
            self.refresh()

    def refresh(self) -> None:
        """Show the document's values."""
        info = provider_info(self.provider_id())
        index = self.provider_combo.findData(info.id)
        if index < 0:  # a provider the file names that the main list does not offer
            self.provider_combo.addItem(info.label, info.id)
            index = self.provider_combo.count() - 1
        with QSignalBlocker(self.provider_combo):
            self.provider_combo.setCurrentIndex(index)
        edit = self._model_edit()
        name = self.model_name()
        if edit.text() != name and not edit.hasFocus():
            with QSignalBlocker(self.model_combo):
                self.model_combo.setEditText(name)
        endpoint = info.sdk != "sampling"
        for widget in (
            self.model_combo,
            self.refresh_button,
            self.base_url_edit,
            self.stream_check,
            self.concurrency_spin,
            self.test_button,
        ):
            widget.setEnabled(endpoint and not self._busy(widget))
        for binding in self._endpoint_bindings:
            binding.refresh()  # another provider: another providers entry
        self.base_url_edit.setPlaceholderText(
            info.default_url or "required, e.g. http://localhost:8000/v1"
        )
        self.key_field.set_provider(info)
        self.provider_hint.setText(_provider_hint(info.id))
        value = self.document.agent.settings.tool_permission
        self.permission_hint.setText(next((e for v, _l, e in PERMISSIONS if v == value), ""))
        self._show_usable()

    def _model_edit(self) -> QLineEdit:
        edit = self.model_combo.lineEdit()
        assert edit is not None  # the combo is editable
        return edit

    def _show_usable(self) -> None:
        text = usable_summary(
            self.document.agent,
            probe_cache(self.document),
            detailed=False,
            where=" on the MCP servers page",
        )
        self.usable_label.setText(text)

    def _busy(self, widget: QWidget) -> bool:
        if widget is self.refresh_button:
            return self.tasks.is_running("refresh")
        if widget is self.test_button:
            return self.tasks.is_running("test")
        return False

    # -- edits -----------------------------------------------------------------------------

    def _on_provider_chosen(self, index: int) -> None:
        provider = str(self.provider_combo.itemData(index))
        if provider == self.provider_id() and self.document.agent.settings.model:
            return
        model = "sampling" if provider == "sampling" else f"{provider}:{self.model_name()}"
        self.document.set_field(("settings", "model"), model, text="Change provider")

    def _on_model_typed(self, text: str) -> None:
        path = ("settings", "model")
        value = f"{self.provider_id()}:{text.strip()}"
        self.document.set_field(path, value, text="Edit model", merge_id=merge_id_for(path))

    def _on_model_chosen(self, index: int) -> None:
        self._on_model_typed(self.model_combo.itemText(index))

    # -- requests --------------------------------------------------------------------------

    def refresh_models(self) -> None:
        """List the endpoint's models into the model box (on the qasync loop)."""
        self.tasks.start("refresh", self._refresh_models(), what="Listing the models")

    async def _refresh_models(self) -> None:
        self.refresh_result.show_running("Listing the endpoint's models…")
        try:
            models = await list_models(self.document.agent)
        except EndpointError as exc:
            self._show_failure(self.refresh_result, f"Could not list the models: {exc}")
            return
        current = self.model_combo.currentText()
        with QSignalBlocker(self.model_combo):
            self.model_combo.clear()
            self.model_combo.addItems(models)
            self.model_combo.setEditText(current)
        if len(models) == 1:
            self.model_combo.setCurrentIndex(0)
            self._on_model_chosen(0)
            summary = f"The endpoint lists 1 model: {models[0]} (selected)."
        else:
            summary = f"The endpoint lists {_count(len(models), 'model')}."
        self.refresh_result.show_success(summary)
        reporter().info(f"{_count(len(models), 'model')} listed")

    def test_connection(self) -> None:
        """Send a one-word prompt through the agent's provider (on the qasync loop)."""
        self.key_field.commit()  # a key typed but not stored yet is what the person means
        self.tasks.start("test", self._test_connection(), what="Testing the connection")

    async def _test_connection(self) -> None:
        from mcp_export.errors import ExportError

        self.test_result.show_running("Sending a one-word prompt…")
        try:
            report = await test_connection(self.document.agent)
        except ExportError as exc:
            self._show_failure(self.test_result, f"Connection failed: {exc}")
            return
        self.test_result.show_success(report.summary())
        reporter().info(report.summary())

    def _show_failure(self, line: ResultLine, message: str) -> None:
        line.show_failure(message)
        reporter().error(message)

    def _on_busy_changed(self, _key: str, _busy: bool) -> None:
        self.refresh()


def _count(number: int, noun: str) -> str:
    """``1 model``, ``3 models``, ``no models``."""
    if number == 0:
        return f"no {noun}s"
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _provider_hint(provider_id: str) -> str:
    hints: dict[str, str] = {
        "openai": "OpenAI itself, or any Chat Completions server at the base URL.",
        "ollama": "A local Ollama (no key needed); the base URL ends in /v1.",
        "anthropic": "Claude models through the Messages API.",
        "sampling": (
            "No endpoint: an MCP client that offers sampling answers with its own model. "
            "Test runs in the studio need a provider with an endpoint."
        ),
    }
    return hints.get(provider_id, "An OpenAI-compatible server at the base URL.")


def _form(group: QGroupBox) -> QFormLayout:
    form = QFormLayout(group)
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
    return form
