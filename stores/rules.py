"""Rules (layer 1): static project files kept in git by humans, loaded into the system prompt at session start.

There is deliberately no write API: the agent never edits its rules. Files load in the configured order (default
``AGENTS.md``, ``CLAUDE.md``, ``.cursorrules``, ``Z0.md``, then every ``.md``/``.mdc``/``.txt`` file under
``.z0/rules/`` sorted by path); missing entries are skipped, each part keeps its source, and the total size is
capped so a runaway file cannot flood every prompt. Entries must stay inside the root (no ``..``, no symlink out).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from z0_memory.config import DEFAULT_RULES_FILES
from z0_memory.errors import RulesError

RULE_SUFFIXES = (".md", ".mdc", ".txt")


@dataclass(frozen=True)
class RulePart:
    source: str
    text: str


@dataclass(frozen=True)
class Rules:
    root: str
    parts: tuple[RulePart, ...]

    @property
    def sources(self) -> list[str]:
        return [p.source for p in self.parts]

    @property
    def text(self) -> str:
        """All parts, each under a header naming its file."""
        return "\n\n".join(f"## Rules from {p.source}\n{p.text.strip()}" for p in self.parts)

    @property
    def size(self) -> int:
        return sum(len(p.text.encode()) for p in self.parts)


def _inside(root: Path, path: Path, entry: str) -> Path:
    resolved = path.resolve()
    if resolved != root and root not in resolved.parents:
        raise RulesError(f"rules entry {entry!r} points outside the rules root {root}; keep rules inside it")
    return resolved


def _files(root: Path, entry: str) -> list[Path]:
    if not isinstance(entry, str) or not entry.strip() or Path(entry).is_absolute():
        raise RulesError(f"rules entry {entry!r} must be a relative path inside {root}")
    path = root / entry
    try:
        if not path.exists():
            return []
        path = _inside(root, path, entry)
        if path.is_dir():
            return sorted(
                _inside(root, p, entry) for p in path.rglob("*") if p.is_file() and p.suffix.lower() in RULE_SUFFIXES
            )
        if not path.is_file():
            # A FIFO or device would block or stream forever on read.
            raise RulesError(f"rules entry {entry!r} is not a regular file; rules must be text files")
    except OSError as exc:  # e.g. a name too long for the file system
        raise RulesError(f"rules entry {entry[:80]!r} cannot be read: {exc.strerror or exc}") from exc
    return [path]


def _read(path: Path, root: Path, max_bytes: int) -> str:
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise RulesError(
                f"rules file {path.relative_to(root)} is {size} bytes; the limit is {max_bytes} "
                "(raise Z0_RULES_MAX_BYTES or shorten the file)"
            )
        data = path.read_bytes()
    except PermissionError as exc:
        raise RulesError(f"rules file {path} cannot be read: {exc.strerror}; fix its permissions") from exc
    except OSError as exc:
        raise RulesError(f"rules file {path} cannot be read: {exc}") from exc
    if b"\x00" in data:
        raise RulesError(f"rules file {path.relative_to(root)} is binary; rules must be UTF-8 text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RulesError(f"rules file {path.relative_to(root)} is not UTF-8 text ({exc.reason})") from exc


def load_rules(root: str | Path, files: Sequence[str] = DEFAULT_RULES_FILES, *, max_bytes: int = 64 * 1024) -> Rules:
    """Load the rules files under ``root`` in order; raise :class:`RulesError` naming any problem."""
    root_path = Path(root).expanduser()
    if not root_path.is_dir():
        raise RulesError(f"rules root {root_path} is not a folder: set Z0_RULES_ROOT (or --rules-root) to your project")
    root_path = root_path.resolve()
    parts: list[RulePart] = []
    seen: set[Path] = set()
    total = 0
    for entry in files:
        for path in _files(root_path, entry):
            if path in seen:
                continue
            seen.add(path)
            text = _read(path, root_path, max_bytes)
            total += len(text.encode())
            if total > max_bytes:
                raise RulesError(
                    f"rules exceed {max_bytes} bytes in total at {path.relative_to(root_path)} "
                    "(raise Z0_RULES_MAX_BYTES, or trim the files)"
                )
            if text.strip():
                parts.append(RulePart(str(path.relative_to(root_path)), text))
    return Rules(str(root_path), tuple(parts))


async def aload_rules(
    root: str | Path, files: Sequence[str] = DEFAULT_RULES_FILES, *, max_bytes: int = 64 * 1024
) -> Rules:
    """:func:`load_rules` off the event loop: resolving the root (``os.getcwd()`` for ".") and reading the files
    block, and an ASGI server's blocking-call checker (``langgraph dev``) fails the run if they happen on the loop."""
    return await asyncio.to_thread(load_rules, root, files, max_bytes=max_bytes)
