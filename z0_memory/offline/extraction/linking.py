"""From a statement to the candidate the write gate receives: its key (a value the store already holds under one key
is that key's value), and its links to the stored memories: the memory it repeats (``same_as``), the ones it
replaces (``supersedes``), or the pending one it confirms; a repeat of "Go 1.22" without its version is that fact."""

from __future__ import annotations

import re
from collections.abc import Sequence

from z0_memory.offline.extraction.clauses import content_terms
from z0_memory.offline.extraction.content import content_for, key_for
from z0_memory.offline.extraction.model import ExistingMemory, Statement
from z0_memory.offline.extraction.unknown_slots import unknown_slot
from z0_memory.offline.extraction.vocabulary import find_phrases, norm_value, term_pattern
from z0_memory.redaction import REDACTED, redact_secrets
from z0_memory.schemas import Candidate


def _link(
    s: Statement, key: str | None, existing: Sequence[ExistingMemory], project: str
) -> tuple[int | None, list[int], bool]:
    """(same_as, supersedes, confirms) for a statement against the stored memories."""
    if key is None:
        return _link_keyless(s, existing, project), [], s.confirms
    same_key = [m for m in existing if m.key == key]
    stored_same = [m for m in same_key if not m.pending and (norm_value(m.value) == norm_value(s.value)
                                                             or _unversioned(s.value, m.value))]
    if stored_same:
        return max(m.local_id for m in stored_same), [], s.confirms
    if s.hedged:
        return None, [], False
    pending_same = [m for m in same_key if m.pending and norm_value(m.value) == norm_value(s.value)]
    # "Qdrant or pgvector" waiting, then "Qdrant it is": the choice between the options takes that pending item
    chosen = [m for m in same_key if m.pending and not pending_same and norm_value(s.value) in
              {norm_value(v) for v in (m.value or "").split(" or ")} and " or " in (m.value or "")]
    if chosen:
        return chosen[-1].local_id, [], True
    supersedes = [m.local_id for m in same_key if norm_value(m.value) != norm_value(s.value)]
    if s.old_value:
        supersedes += [m.local_id for m in existing if m.key is None
                       and re.search(term_pattern(s.old_value), m.content, re.I)
                       and m.local_id not in supersedes]
    return None, sorted(supersedes), s.confirms or bool(pending_same)


def _unversioned(value: str | None, held: str | None) -> bool:
    """"Go" said of a project that holds "Go 1.22": the same choice, its version left unsaid."""
    bare = re.sub(r"\s*v?\d+(?:\.\d+)*$", "", held or "")
    return bool(value) and not re.search(r"\d", value or "") and bare != (held or "") and norm_value(bare) == norm_value(value)


def _link_keyless(s: Statement, existing: Sequence[ExistingMemory], project: str) -> int | None:
    """A stored memory saying the same thing: nearly all of its content terms (template words aside) recur."""
    template = content_terms(f"{project} project 项目") | {project.lower()}
    mine = content_terms(s.text) - template
    if not mine:
        return None
    for m in existing:
        theirs = content_terms(m.content) - template
        shared = len(mine & theirs)
        if theirs and shared / len(mine) >= 0.8 and shared / len(theirs) >= 0.8:
            return m.local_id
    return None


def held_key(value: str | None, existing: Sequence[ExistingMemory]) -> tuple[str, str] | None:
    """(category, entity) of the one settled key that holds ``value`` (a switch's old name), else None."""
    keys = {m.key for m in existing if value and m.key and not m.pending and m.value
            and norm_value(m.value) == norm_value(value)}
    if len(keys) != 1:
        return None
    _, category, entity = next(iter(keys)).split(":", 2)
    return (category, entity) if category not in ("preference", "people") else None


def _adopt_stored_key(s: Statement, key: str | None, existing: Sequence[ExistingMemory]) -> str | None:
    """A value the store already holds (or holds pending) under one key is that key's value, unless the clause
    itself names another slot: "Dialogue Manager it is" confirms the pending dialogue-system choice."""
    if key is None or s.value is None or s.kind == "preference" or s.category_override == "people":
        return key
    same = {m.key for m in existing if m.key and m.value and norm_value(m.value) == norm_value(s.value)
            and m.key.split(":")[1:2] not in (["preference"], ["people"])}  # a liking is not the project's choice
    if len(same) != 1 or key in same:
        return key
    other = next(iter(same))
    if s.slot is not None and any(p.slot == s.slot for p in find_phrases(s.text)):
        return key  # "Redis for the queue too": the clause files it itself
    if s.entity_override and unknown_slot(s.text, s.value) == (s.category_override, s.entity_override):
        return key
    return other


def candidate_for(s: Statement, project: str, existing: Sequence[ExistingMemory], ids: list[str]) -> Candidate | None:
    key = _adopt_stored_key(s, key_for(s, project), existing)
    if s.value is not None and (REDACTED in s.value or not s.value.strip()):
        return None
    same_as, supersedes, confirms = _link(s, key, existing, project)
    if s.hedged and any(m.local_id == same_as and m.key and not m.pending for m in existing):
        return None  # "maybe keep htmx" of a held htmx: tentative talk about what is settled changes nothing
    value = s.value
    held = next((m for m in existing if m.local_id == same_as and m.key == key and m.value), None)
    if held is not None and value and (_unversioned(value, held.value) or norm_value(value) == norm_value(held.value)):
        value = held.value  # a repeat ("Go" of "Go 1.22", "postgres" of "PostgreSQL") is that fact, not a new version
    if confirms and key and value and not s.hedged:
        # "R2 is approved" confirms the pending "Cloudflare R2": the pending item's spelling, so the store finds it
        waiting = [m for m in existing if m.pending and m.key == key and m.value
                   and norm_value(m.value) == norm_value(value)]
        value = waiting[-1].value if waiting else value
    return Candidate(
        kind=s.kind,  # type: ignore[arg-type]
        content=redact_secrets(content_for(s, project)),
        key=key,
        value=redact_secrets(value) if (key and value) else None,
        rationale=redact_secrets(s.rationale) if s.rationale else None,
        confidence=s.confidence,
        hedged=s.hedged,
        confirms=confirms,
        supersedes=supersedes,
        same_as=same_as,
        source_message_ids=list(ids),
    )
