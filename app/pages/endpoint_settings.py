"""The Model page's endpoint settings: whether answers stream and how many requests go at once.

Both live in ``providers.<provider>`` (``stream``: "true" or "false", default true;
``maxConcurrentRequests``: a positive whole number or "unlimited", default unlimited, one for
``llamacpp``), each written only while it differs from its default and read as the runtime reads
it (``schema_types.agent_checks``): a value the runtime refuses shows as the default, and
``validate`` and a run name it.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSignalBlocker
from PySide6.QtWidgets import QCheckBox, QSpinBox, QWidget

from app.document.agent_document import AgentDocument, merge_id_for
from app.pages import FieldBinding
from app.pages.keyring_field import with_setting
from app.pages.model_fields import wire_spin
from mcp_export.providers.kinds import PROVIDER_KINDS
from schema_types.agent_checks import parse_max_concurrency, parse_stream

__all__ = [
    "CONCURRENCY_KEY",
    "MAX_CONCURRENCY",
    "STREAM_KEY",
    "UNLIMITED",
    "ConcurrencyBinding",
    "EndpointBinding",
    "StreamBinding",
    "default_concurrency",
]

STREAM_KEY = "stream"
CONCURRENCY_KEY = "maxConcurrentRequests"
UNLIMITED = 0
"""The concurrency spin box's value for "unlimited" (shown as that word)."""
MAX_CONCURRENCY = 1_000_000


def default_concurrency(provider_id: str) -> int:
    """How many requests go to a provider's endpoint at once when the file does not say
    (``UNLIMITED``: no limit): the provider kind's default, as the runtime reads it."""
    kind = PROVIDER_KINDS.get(provider_id)
    limit = kind.max_concurrency if kind is not None else None
    return UNLIMITED if limit is None else limit


def _stream_value(text: str | None, provider_id: str) -> bool:
    """What ``providers.<id>.stream`` means, read as the runtime reads it (a value the runtime
    refuses shows as the default; ``validate`` and a run name it)."""
    kind = PROVIDER_KINDS.get(provider_id)
    default = kind.stream if kind is not None else True
    if text is None:
        return default
    try:
        return parse_stream(text)
    except ValueError:
        return default


def concurrency_value(text: str | None, provider_id: str) -> int:
    """What ``providers.<id>.maxConcurrentRequests`` means, as the spin box's value, read as the
    runtime reads it (a value the runtime refuses shows as the default)."""
    if text is None:
        return default_concurrency(provider_id)
    try:
        limit = parse_max_concurrency(text)
    except ValueError:
        return default_concurrency(provider_id)
    return UNLIMITED if limit is None else min(limit, MAX_CONCURRENCY)


class EndpointBinding(FieldBinding):
    """A widget bound to one key of the current provider's ``providers`` entry; the key is
    written only while the value differs from its default, and removed when it is the default
    again."""

    key: str

    def __init__(self, document: AgentDocument, widget: QWidget, provider: Any, label: str) -> None:
        super().__init__(document, widget, ("providers",), label)
        self._provider = provider

    def stored(self) -> str | None:
        """The key's text in the current provider's entry (None: absent)."""
        return self.document.agent.providers.get(self._provider(), {}).get(self.key)

    def write(self, text: str | None) -> bool:
        """Store ``text`` under the key (None removes it); one undo step per typing run."""
        provider = self._provider()
        if self.stored() == text:
            return True
        providers = with_setting(self.document.agent.providers, provider, self.key, text)
        return self.document.set_field(
            ("providers",),
            providers,
            text=f"Edit {self.label}",
            merge_id=merge_id_for(("providers", provider, self.key)),
        )


class StreamBinding(EndpointBinding):
    """The "Stream answers" check box: ``stream: "false"`` when off, no key when on."""

    key = STREAM_KEY

    def __init__(self, document: AgentDocument, check: QCheckBox, provider: Any) -> None:
        super().__init__(document, check, provider, "streaming")
        self.check = check
        check.clicked.connect(self.commit)
        self.refresh()

    def commit(self, widget_value: Any) -> bool:
        self.document.seal()  # a click is a step of its own
        done = self.write(None if widget_value else "false")
        self.document.seal()
        return done

    def refresh(self) -> None:
        checked = _stream_value(self.stored(), self._provider())
        if self.check.isChecked() != checked:
            with QSignalBlocker(self.check):
                self.check.setChecked(checked)


class ConcurrencyBinding(EndpointBinding):
    """The "Concurrent requests" spin box: a number, or "unlimited" at its lowest value."""

    key = CONCURRENCY_KEY

    def __init__(self, document: AgentDocument, spin: QSpinBox, provider: Any) -> None:
        super().__init__(document, spin, provider, "concurrent requests")
        self.spin = spin
        wire_spin(self, spin)
        self.refresh()

    def commit(self, widget_value: Any) -> bool:
        value = int(widget_value)
        provider = self._provider()
        if value == concurrency_value(self.stored(), provider):
            return True  # the same limit, however the file spells it
        if value == default_concurrency(provider):
            return self.write(None)
        return self.write("unlimited" if value == UNLIMITED else str(value))

    def refresh(self) -> None:
        value = concurrency_value(self.stored(), self._provider())
        if self.spin.value() != value:
            with QSignalBlocker(self.spin):
                self.spin.setValue(value)
