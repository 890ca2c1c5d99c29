"""The authoring pictures for ``python -m app.screenshots --only authoring``: *New tool from a
description…* with a drafted tool's form, template and cases, and a refused draft, at 1400×900 and
1024×700.

The authoring model is a local scripted model of its own (the one the tests use), chosen in
Preferences as ``vllm:author-model`` with ``VLLM_BASE_URL`` pointing at it: its first draft does
not pass validation and its repair does, and for the refusal both drafts fail.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.screenshot_kit import Camera
    from app.window.main_window import MainWindow

__all__ = ["authoring_views"]

_MODEL = "vllm:author-model"


async def authoring_views(window: MainWindow, camera: Camera) -> None:
    """The draft dialog: a draft repaired once (form, template, cases), then a refusal."""
    from app.authoring.draft_dialog import DraftToolDialog
    from app.screenshot_kit import settle, wait_until
    from tests.fakes.drafting import BAD_DRAFT, GOOD_DRAFT, SENTENCE, draft_reply
    from tests.fakes.openai_server import FakeOpenAIServer

    document = window.current_document()
    assert document is not None
    previous_model = window.settings.authoring_model()
    previous_url = os.environ.get("VLLM_BASE_URL")
    drafts = (BAD_DRAFT, GOOD_DRAFT, BAD_DRAFT, BAD_DRAFT)  # repaired once, then refused
    server = FakeOpenAIServer([draft_reply(draft) for draft in drafts])
    try:
        os.environ["VLLM_BASE_URL"] = server.base_url
        window.settings.set_authoring_model(_MODEL)
        window.show_page(document, "tools")
        window.resize(1400, 900)
        dialog = window.new_tool_from_description(document)
        assert isinstance(dialog, DraftToolDialog)
        dialog.resize(1240, 800)
        dialog.sentence_edit.setPlainText(SENTENCE)
        dialog.start_draft()
        await wait_until(lambda: dialog.outcome is not None, "the draft")
        await camera.shoot(dialog, "draft-form.png")
        dialog.preview.setCurrentIndex(1)
        await camera.shoot(dialog, "draft-template.png")
        dialog.preview.setCurrentIndex(2)
        await camera.shoot(dialog, "draft-cases.png")
        window.resize(1024, 700)
        dialog.resize(1000, 660)
        await settle()
        dialog.preview.setCurrentIndex(0)
        await camera.shoot(dialog, "draft-form-1024.png")
        dialog.preview.setCurrentIndex(2)
        await camera.shoot(dialog, "draft-cases-1024.png")
        dialog.start_draft()
        await wait_until(lambda: dialog.outcome is not None, "the refusal")
        await camera.shoot(dialog, "draft-refused-1024.png")
        dialog.reject()
        window.resize(1400, 900)
    finally:
        window.settings.set_authoring_model(previous_model)
        if previous_url is None:
            os.environ.pop("VLLM_BASE_URL", None)
        else:
            os.environ["VLLM_BASE_URL"] = previous_url
        server.stop()
