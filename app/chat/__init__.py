"""Chat tabs: a conversation with an agent, or a test run of one of its tools.

:class:`ChatTab` is the widget; :class:`ChatRunner` the Qt-free runtime behind it (provider,
toolbox and chat session, made on first use).
"""

from __future__ import annotations

from app.chat.chat_tab import ChatTab, settings_page_for
from app.chat.runner import ChatRunner, ToolTest

__all__ = ["ChatRunner", "ChatTab", "ToolTest", "settings_page_for"]
