"""Which project an MCP server serves, and where its rules live: decided by the operator, never by the model.

In order: ``--project`` (or ``Z0_PROJECT``); else the folder name of the first root the client reports (MCP
``roots``: the workspace an editor has open), or of the git repository it is in; else the git repository of the
working directory (Claude Code and Cursor start stdio servers in the workspace), else the working directory's own
name. Names are normalised into a valid key segment (``My App`` -> ``my_app``). No tool takes a project argument, so
a model cannot reach another project's memory by naming it.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from z0_memory.schemas import normalize_segment, validate_segment


@dataclass(frozen=True)
class ProjectChoice:
    """The project a server (or one client session) serves, and how it was chosen (shown in every result)."""

    project: str
    source: str
    root: str | None = None  # the folder rules are read from when no --rules-root / Z0_RULES_ROOT is set

    def describe(self) -> str:
        return f"project {self.project} (from {self.source})"


def repository_root(path: str | Path) -> Path | None:
    """The top folder of the git repository ``path`` is in, or None (no git, or not a repository)."""
    try:
        out = subprocess.run(["git", "-C", str(path), "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    top = out.stdout.strip()
    return Path(top) if out.returncode == 0 and top else None


def from_folder(path: str | Path, what: str) -> ProjectChoice:
    """The project named after ``path``'s git repository (or, outside one, after the folder itself)."""
    folder = Path(path).expanduser().resolve()
    repo = repository_root(folder)
    base = repo or folder
    return ProjectChoice(normalize_segment(base.name or "default"),
                         f"{what} {'git repository' if repo else 'folder'} {base}", str(base))


def from_root_uri(uri: str) -> ProjectChoice | None:
    """The project of a client root (``file:///home/me/acme``), or None for a root that is not a local folder."""
    parsed = urlparse(str(uri))
    if parsed.scheme != "file":
        return None
    path = Path(unquote(parsed.path))
    if not path.is_dir():
        return None
    return from_folder(path, "client root")


def explicit(project: str | None) -> ProjectChoice | None:
    """The project named by ``--project`` or ``Z0_PROJECT`` (validated as a key segment), or None."""
    if project:
        return ProjectChoice(validate_segment(project, "project"), "--project")
    env = os.environ.get("Z0_PROJECT")
    if env:
        return ProjectChoice(validate_segment(env, "project"), "Z0_PROJECT")
    return None


def from_working_directory() -> ProjectChoice:
    return from_folder(Path.cwd(), "working directory's")
