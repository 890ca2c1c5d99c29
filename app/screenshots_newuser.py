"""``make screenshots``' newuser group: what a new user meets first (the window at a first
start's size, Add MCP server, a chat whose run got none of a server's tools, Export with a key the
keyring refused)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from app.screenshot_kit import Camera, wait_until

if TYPE_CHECKING:
    from app.window.main_window import MainWindow

__all__ = ["new_user_views"]


async def new_user_views(window: MainWindow, camera: Camera) -> None:
    """What a new user meets: the window at the size a first start gives on this
    screen, Add MCP server with its permission choice and where its command is found, a chat
    whose run got none of a server's tools (the trace says why), and the Export dialog at the
    size it opens with a key the keyring refused (no keyring backend) for Claude Desktop."""
    import keyring
    from keyring.backends import fail

    from app.chat import ChatTab
    from app.export_dialog import ExportDialog
    from app.pages.server_dialog import ServerDialog
    from app.window.screen_fit import fit_to_screen
    from mcp_export.session.events import FinalAnswer, SessionFailed

    document = window.current_document()
    assert document is not None and document.path is not None
    fit_to_screen(window, 1200, 780)  # the size a first start asks for, on this screen
    window.show_page(document, "servers")
    await camera.shoot(window, "new-window.png")

    add = ServerDialog({"time"}, tool_permission="tool", parent=window)
    add.show()
    add.name_edit.setText("clock")
    add.command_edit.setText("mcp-server-time")
    add.ask_radio.setChecked(True)
    await camera.shoot(add, "add-server.png")
    add.command_edit.setText("mcp-server-clock")
    await camera.shoot(add, "add-server-not-found.png")
    add.close()

    text = "Needs a person's permission"
    document.set_field(
        ("mcp_servers", "time", "server_tool_defaults", "permission_required"), True, text=text
    )
    tab = window.open_chat_tab(document)
    assert isinstance(tab, ChatTab)
    tab.submit("What time is it in Lisbon?")
    await wait_until(
        lambda: isinstance(tab.outcome, (FinalAnswer, SessionFailed)), "the answer", 60
    )
    await camera.shoot(window, "chat-tools-hidden.png")
    document.undo_stack.undo()
    await tab.aclose()

    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())  # type: ignore[no-untyped-call]  # no keyring backend
    real_home = os.environ.get("HOME")
    os.environ["HOME"] = os.environ["METAAGENT_HOME"]
    os.environ.pop("OPENAI_API_KEY", None)  # Claude Desktop passes no shell environment
    try:
        export = ExportDialog(document.path, window, document=document, save=window.save)
        export.set_client("claude-desktop")
        export.ask_confirm = lambda _path: True  # type: ignore[assignment,method-assign]
        export.install_entry()
        export.show()
        await camera.shoot(export, "export-opens.png")
        export.start_verify()
        await wait_until(lambda: not export.is_verifying(), "the export check", 90)
        if export.keyring_field is not None:
            export.keyring_field.edit.setText("sk-typed-by-the-person")
            export.keyring_field.commit()
        await camera.shoot(export, "export-keyring-refused.png")
        export.close()
    finally:
        keyring.set_keyring(previous)
        os.environ["OPENAI_API_KEY"] = "sk-local-screenshots"
        if real_home is None:
            del os.environ["HOME"]
        else:
            os.environ["HOME"] = real_home
