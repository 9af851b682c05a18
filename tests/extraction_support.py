"""Shared by the offline extractor's behaviour tests: one turn extracted from short texts."""

from __future__ import annotations

from z0_memory.offline.extractor import ExistingMemory, TurnMessage, extract_candidates
from z0_memory.schemas import Candidate, WriteOutcome

P = "demo"  # the project of every key these tests expect


def run(*texts: str, existing: tuple[ExistingMemory, ...] = (), ignored: list[WriteOutcome] | None = None
        ) -> list[Candidate]:
    """Extract one turn: "A: ..." texts are assistant messages, anything else the user's; ``ignored`` collects the
    instructions left out."""
    messages = [TurnMessage("assistant", t[3:], f"a{i}") if t.startswith("A: ") else TurnMessage("user", t, f"u{i}")
                for i, t in enumerate(texts)]
    return extract_candidates(messages, project=P, existing=existing, ignored=ignored)


def by_key(candidates: list[Candidate]) -> dict[str | None, Candidate]:
    return {c.key: c for c in candidates}


def firm(c: Candidate) -> bool:
    return not c.hedged and c.confidence >= 0.6
