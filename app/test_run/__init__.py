"""The "Test tool" dialog: a form generated from a tool's parameters, a live prompt preview, Run.

``TestToolDialog`` is what the studio opens; ``run_requested`` carries a ``TestRequest`` for the
chat tab that runs it.
"""

from __future__ import annotations

from app.test_run.dialog import TestRequest, TestToolDialog, mcp_call_text
from app.test_run.form import ArgumentsForm
from app.test_run.memory import ArgumentMemory

__all__ = ["ArgumentMemory", "ArgumentsForm", "TestRequest", "TestToolDialog", "mcp_call_text"]
