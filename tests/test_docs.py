"""The documentation site: ``mkdocs build --strict`` of ``docs/`` as ``make test`` runs it.

Strict mode turns every warning into a failure: a link to a page or an anchor that does not
exist, a page left out of the navigation, a navigation entry with no page. The reference pages are
generated from the code by the build (``docs/gen_reference.py``), so the build runs this
checkout's code, and a subcommand, model field or schema key that fails to render fails here too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD_LIMIT = 100
"""Seconds a build may take (about 6 s on a busy 2-core machine)."""


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config)]
    return subprocess.run(
        [*command, "--site-dir", str(site)],
        cwd=config.parent,
        env=environment,
        capture_output=True,
        text=True,
        timeout=BUILD_LIMIT,
        check=False,
    )


def _copy_of_the_docs(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    return tmp_path / "mkdocs.yml"


def test_the_docs_build_strict_with_the_generated_references(tmp_path: Path) -> None:
    site = tmp_path / "site"
    result = _build(ROOT / "mkdocs.yml", site)
    assert result.returncode == 0, result.stderr
    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    for command in ("validate", "test", "serve", "export", "verify", "schema", "install-desktop"):
        assert f"metaagent {command}" in cli
    schema = (site / "reference" / "agent-schema" / "index.html").read_text(encoding="utf-8")
    assert "urn:meta-agent-studio:agent-file" in schema
    kinds = (site / "reference" / "expectations" / "index.html").read_text(encoding="utf-8")
    for key in ("notContains", "maxToolCalls", "truncated", "fields", "atMost"):
        assert f"<code>{key}</code>" in kinds
    tutorial = (site / "tutorial" / "index.html").read_text(encoding="utf-8")
    for image in ("welcome.png", "tool-editor-1024x700.png", "export-dialog.png"):
        assert f"img/{image}" in tutorial
        assert (site / "img" / image).is_file()


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    config = _copy_of_the_docs(tmp_path)
    with (tmp_path / "docs" / "tutorial.md").open("a", encoding="utf-8") as file:
        file.write("\nSee [the missing page](no-such-page.md).\n")
    with (tmp_path / "docs" / "install.md").open("a", encoding="utf-8") as file:
        file.write("\nSee [a section](cli.md#no-such-section).\n")
    result = _build(config, tmp_path / "site")
    assert result.returncode != 0
    assert "no-such-page.md" in result.stderr
    assert "no-such-section" in result.stderr


def test_a_page_missing_from_the_navigation_fails_the_build(tmp_path: Path) -> None:
    config = _copy_of_the_docs(tmp_path)
    (tmp_path / "docs" / "prompts.md").unlink()
    result = _build(config, tmp_path / "site")
    assert result.returncode != 0
    assert "prompts.md" in result.stderr
