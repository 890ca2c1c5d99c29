"""Choosing a table's row in a test as a click on it does: the studio's own ``choose_row``
(``app/row_choice.py``), which neither a held modifier nor a row already chosen defeats."""

from __future__ import annotations

from app.row_choice import choose_row as pick_row

__all__ = ["pick_row"]
