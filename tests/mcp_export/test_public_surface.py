"""The runtime's public names resolve lazily, and importing the package stays cheap."""

from __future__ import annotations

import subprocess
import sys

import mcp_export


def test_every_public_name_resolves_to_its_defining_module() -> None:
    assert sorted(mcp_export.__all__) == sorted(mcp_export._EXPORTS)
    for name in mcp_export.__all__:
        value = getattr(mcp_export, name)
        assert value is not None, name


def test_importing_the_package_loads_neither_the_mcp_sdk_nor_a_provider_sdk() -> None:
    code = (
        "import sys, mcp_export, mcp_export.cli;"
        "print(sorted(m for m in ('mcp', 'openai', 'anthropic', 'PySide6') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        mcp_export.NoSuchThing  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")
