"""``metaagent install-desktop [--uninstall]``: the studio as a desktop application (freedesktop).

Three files under ``$XDG_DATA_HOME`` (default ``~/.local/share``), as the XDG specifications
place them for one user:

- ``applications/metaagent-studio.desktop``: the launcher (Desktop Entry Specification 1.4,
  the newest ``desktop-file-validate`` 0.26 accepts), whose ``Exec`` runs this installation's
  ``metaagent`` (or this interpreter's ``-m app``) with the files opened (``%F``), and whose
  ``MimeType`` names the agent file type;
- ``icons/hicolor/scalable/apps/metaagent-studio.svg``: its icon (Icon Theme Specification);
- ``mime/packages/metaagent-studio.xml``: the ``application/x-metaagent-agent+yaml`` type for
  ``*.agent.yaml`` (shared-mime-info), a kind of YAML.

Then ``update-mime-database`` and ``update-desktop-database`` refresh the caches desktops read,
when they are installed (each bounded by :data:`UPDATE_SECONDS`; one that fails is reported,
the files stay). Installing again writes nothing when the files are already as they should be;
``--uninstall`` removes them. Nothing here imports Qt.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.studio_extra import STUDIO_MISSING, studio_installed

__all__ = [
    "APP_ID",
    "MIME_TYPE",
    "UPDATE_SECONDS",
    "DesktopFiles",
    "DesktopResult",
    "desktop_entry",
    "install_desktop",
    "main",
    "uninstall_desktop",
]

APP_ID = "metaagent-studio"
"""The launcher's and the icon's name (``QGuiApplication.setDesktopFileName`` says the same)."""
MIME_TYPE = "application/x-metaagent-agent+yaml"
"""The type of ``*.agent.yaml`` files."""
UPDATE_SECONDS = 30.0
"""How long one cache update may take before it is given up (the files stay installed)."""

_ICON = Path(__file__).resolve().parent / "resources" / "icons" / "app.svg"
_MIME_XML = f"""<?xml version="1.0" encoding="UTF-8"?>
<mime-info xmlns="http://www.freedesktop.org/standards/shared-mime-info">
  <mime-type type="{MIME_TYPE}">
    <comment>Meta Agent Studio agent</comment>
    <sub-class-of type="application/x-yaml"/>
    <generic-icon name="text-x-script"/>
    <glob pattern="*.agent.yaml" weight="60"/>
  </mime-type>
</mime-info>
"""


@dataclass(frozen=True)
class DesktopFiles:
    """Where the three files go for one data directory."""

    data_home: Path

    @property
    def launcher(self) -> Path:
        return self.data_home / "applications" / f"{APP_ID}.desktop"

    @property
    def icon(self) -> Path:
        return self.data_home / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg"

    @property
    def mime(self) -> Path:
        return self.data_home / "mime" / "packages" / f"{APP_ID}.xml"

    def all(self) -> tuple[Path, Path, Path]:
        return (self.launcher, self.icon, self.mime)


@dataclass(frozen=True)
class DesktopResult:
    """What an install or uninstall did.

    Attributes:
        changed: the files written or removed (empty: nothing to do).
        updated: the cache tools that ran.
        problems: what went wrong on the way (a cache tool that failed or timed out).
        message: one line for the person.
    """

    changed: tuple[Path, ...]
    updated: tuple[str, ...]
    problems: tuple[str, ...] = field(default=())
    message: str = ""


def data_home(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_DATA_HOME`` when set to an absolute path (the spec ignores others), else
    ``~/.local/share``."""
    environ = os.environ if env is None else env
    given = environ.get("XDG_DATA_HOME", "")
    if given and os.path.isabs(given):
        return Path(given)
    home = environ.get("HOME") or str(Path.home())
    return Path(home) / ".local" / "share"


def launch_command() -> list[str]:
    """This installation's studio: the ``metaagent`` script beside the interpreter, else the
    interpreter with ``-m app``."""
    python = Path(os.path.abspath(sys.executable))
    script = python.parent / "metaagent"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [str(python), "-m", "app"]


def _exec_argument(word: str) -> str:
    """One ``Exec`` argument, quoted as the Desktop Entry Specification says."""
    escaped = word.replace("%", "%%")
    if not any(c in escaped for c in " \t\n\"'\\><~|&;$*?#()`"):
        return escaped
    for c in ("\\", '"', "`", "$"):
        escaped = escaped.replace(c, "\\" + c)
    # The file format escapes a backslash once more: each one is written doubled.
    return '"' + escaped.replace("\\", "\\\\") + '"'


def desktop_entry(command: Sequence[str]) -> str:
    """The launcher's text for a studio started by ``command``."""
    exec_line = " ".join(_exec_argument(word) for word in command)
    return (
        "[Desktop Entry]\n"
        "Type=Application\n"
        "Version=1.4\n"
        "Name=Meta Agent Studio\n"
        "GenericName=MCP Tools Agent Studio\n"
        "Comment=Design, test and export Tools agents served over MCP\n"
        f"Exec={exec_line} %F\n"
        f"Icon={APP_ID}\n"
        "Terminal=false\n"
        "Categories=Development;IDE;\n"
        f"MimeType={MIME_TYPE};\n"
        "Keywords=MCP;agent;LLM;tools;\n"
        f"StartupWMClass={APP_ID}\n"
    )


def _contents(command: Sequence[str]) -> tuple[bytes, bytes, bytes]:
    """The launcher's, the icon's and the MIME type's bytes, in ``DesktopFiles.all()`` order."""
    return (desktop_entry(command).encode("utf-8"), _ICON.read_bytes(), _MIME_XML.encode())


def install_desktop(
    home: Path | None = None, command: Sequence[str] | None = None
) -> DesktopResult:
    """Write the launcher, icon and MIME type under ``home`` (default: :func:`data_home`), and
    refresh the caches; writes nothing that is already as it should be.

    Raises:
        OSError: a file could not be written (the message names it).
    """
    files = DesktopFiles(data_home() if home is None else home)
    contents = _contents(launch_command() if command is None else command)
    changed: list[Path] = []
    for target, content in zip(files.all(), contents, strict=True):
        if target.is_file() and target.read_bytes() == content:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.tmp")
        temporary.write_bytes(content)
        os.replace(temporary, target)
        changed.append(target)
    if not changed:
        return DesktopResult((), (), message=f"already installed in {files.data_home}")
    updated, problems = _update_caches(files)
    return DesktopResult(
        tuple(changed),
        updated,
        problems,
        f"installed the Meta Agent Studio launcher in {files.data_home}: "
        f"{files.launcher.name} opens *.agent.yaml files",
    )


def uninstall_desktop(home: Path | None = None) -> DesktopResult:
    """Remove the three files (and refresh the caches when one was there)."""
    files = DesktopFiles(data_home() if home is None else home)
    removed = []
    for target in files.all():
        if target.is_file():
            target.unlink()
            removed.append(target)
    if not removed:
        return DesktopResult((), (), message=f"not installed in {files.data_home}: nothing removed")
    updated, problems = _update_caches(files)
    return DesktopResult(
        tuple(removed),
        updated,
        problems,
        f"removed the Meta Agent Studio launcher from {files.data_home}",
    )


def _update_caches(files: DesktopFiles) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Run the cache tools that are installed; returns those that ran and what went wrong."""
    updated: list[str] = []
    problems: list[str] = []
    for tool, folder in (
        ("update-mime-database", files.mime.parent.parent),
        ("update-desktop-database", files.launcher.parent),
    ):
        found = shutil.which(tool)
        if found is None or not folder.is_dir():
            continue
        try:
            done = subprocess.run(
                [found, str(folder)],
                capture_output=True,
                text=True,
                timeout=UPDATE_SECONDS,
                check=False,
            )
        except subprocess.TimeoutExpired:
            problems.append(f"{tool} did not finish within {UPDATE_SECONDS:g} s")
            continue
        except OSError as exc:
            problems.append(f"{tool} could not run: {exc}")
            continue
        if done.returncode != 0:
            said = (done.stderr or done.stdout).strip().splitlines()
            problems.append(f"{tool} failed ({done.returncode}): {said[-1] if said else ''}")
            continue
        updated.append(tool)
    return tuple(updated), tuple(problems)


def main(args: Sequence[str]) -> int:
    """``metaagent install-desktop [--uninstall]``; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="metaagent install-desktop",
        description=(
            "Add Meta Agent Studio to the desktop's applications (a launcher with its icon) and "
            "open *.agent.yaml files with it, for this user (under $XDG_DATA_HOME, default "
            "~/.local/share). Running it again changes nothing; --uninstall removes it."
        ),
    )
    parser.add_argument("--uninstall", action="store_true", help="remove the launcher again")
    options = parser.parse_args(list(args))
    if options.uninstall:
        result = uninstall_desktop()
    else:
        if not studio_installed():
            sys.stderr.write(STUDIO_MISSING + "\n")
            return 2
        try:
            result = install_desktop()
        except OSError as exc:
            sys.stderr.write(f"metaagent install-desktop: {exc}\n")
            return 1
    sys.stdout.write(result.message + "\n" + "".join(f"  {path}\n" for path in result.changed))
    for problem in result.problems:
        sys.stderr.write(f"note: {problem}\n")
    return 0
