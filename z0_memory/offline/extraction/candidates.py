"""Turn level: statements of each user message, acceptances of the assistant's proposals, linking to stored
memories, precedence within the turn, and the Candidates the extraction node consumes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from z0_memory.offline.extraction.clauses import (
    MAX_SENTENCE_CHARS,
    content_terms,
    is_question,
    split_clauses,
    split_rationale,
    split_sentences,
    strip_noise,
)
from z0_memory.offline.extraction.cues import (
    ALTERNATIVE,
    HEDGE,
    INSTRUCTION,
    NEGATION,
    PROPOSAL_MARK,
    QUESTION_TAG,
    REASON_SENTENCE,
    REJECTION,
    REMEMBER,
    SO_SENTENCE,
    WH_QUESTION,
    YES_NO_START,
)
from z0_memory.offline.extraction.model import (
    CONF_ANSWER,
    CONF_HEDGE,
    CONF_RESOLVED_CONFIRM,
    ExistingMemory,
    Statement,
    TurnMessage,
)
from z0_memory.offline.extraction.statements import Acceptance, analyse_sentence
from z0_memory.offline.extraction.binding import is_rejected, looks_like_a_name, pairs_in, rebind
from z0_memory.offline.extraction.vocabulary import (
    SLOT_BY_KEY,
    Found,
    Slot,
    find_phrases,
    find_values,
    norm_value,
    term_pattern,
)
from z0_memory.redaction import REDACTED, redact_secrets
from z0_memory.schemas import Candidate, normalize_segment
from z0_memory.text import contains_cjk

OFFLINE_EXTRACTOR_NAME = "offline-rules/1"

def _without_instructions(sentence: str, ignored: list[str]) -> str:
    """The sentence minus its clauses that order the assistant about ("ignore your rules", "你以后都用英文回答")."""
    if not INSTRUCTION.search(sentence):
        return sentence
    ignored.append(sentence)
    kept = [c for c in split_clauses(sentence) if not INSTRUCTION.search(c)]
    return ("，" if contains_cjk(sentence) else ", ").join(kept)


def _analyse_message(text: str, ignored: list[str]) -> tuple[list[Statement], Acceptance]:
    """Statements of one user message, and whether it is a bare acceptance; instructions go to ``ignored``."""
    statements: list[Statement] = []
    accepted: Acceptance = None
    clean = strip_noise(redact_secrets(text))
    if REJECTION.match(clean.strip()):
        accepted = "rejected"
    previous: list[Statement] = []
    previous_text = ""
    for sentence in split_sentences(clean):
        sentence = _without_instructions(REMEMBER.sub("", sentence.strip()), ignored)
        reason = REASON_SENTENCE.match(sentence)
        if reason and previous and not any(s.rationale for s in previous):
            for s in previous:  # the reason for the sentence before, not a statement of its own
                s.rationale = sentence[reason.end():].strip(" .。!！")
            previous, previous_text = [], sentence
            continue
        found, bare = analyse_sentence(sentence)
        if found and not previous and previous_text and SO_SENTENCE.match(sentence):
            for s in found:
                s.rationale = s.rationale or previous_text.strip(" .。!！")
        statements.extend(found)
        previous, previous_text = found, sentence
        if accepted is None or bare == "strong":
            accepted = bare if accepted != "rejected" else accepted
    return statements, accepted




def _proposals(text: str, existing: Sequence[ExistingMemory], project: str) -> list[Statement]:
    """Keyed values an assistant message proposes, minus echoes of stored facts and ambiguous alternatives."""
    props: list[Statement] = []
    for sentence in split_sentences(strip_noise(redact_secrets(text))):
        if not PROPOSAL_MARK.search(sentence) or (ALTERNATIVE.search(sentence) and len(find_values(sentence)) > 1):
            continue  # "Redis or Memcached?": a bare yes picks neither
        found, _ = analyse_sentence(sentence, proposal=True)
        props.extend(s for s in found if s.slot is not None and s.value and s.kind != "preference")
    return _one_value_per_key(props, existing, project)


def _one_value_per_key(props: list[Statement], existing: Sequence[ExistingMemory], project: str) -> list[Statement]:
    """Drop keys offered with two values (alternatives) and values already stored."""
    by_key: dict[str, list[Statement]] = {}
    for s in props:
        by_key.setdefault(_key_for(s, project) or "", []).append(s)
    stored = {(m.key, norm_value(m.value)) for m in existing if not m.pending and m.key}
    chosen = []
    for key, items in by_key.items():
        values = {norm_value(s.value) for s in items}
        if key and len(values) == 1 and (key, values.pop()) not in stored:
            chosen.append(items[0])
    return chosen


def _claims(text: str, existing: Sequence[ExistingMemory], project: str) -> list[Statement]:
    """What an assistant's statement or yes/no question asserts ("You deploy on Render, right?", "缓存用的是 Redis
    吧？"): one value per key, none from a wh- or either-or question, none negated, none already stored."""
    found: list[Statement] = []
    sentences = split_sentences(strip_noise(redact_secrets(text)))
    if sentences and QUESTION_TAG.search(sentences[-1]):
        sentences = sentences[-1:]  # a reply to a closing question answers that question
    for sentence in sentences:
        body = QUESTION_TAG.sub("", sentence).strip()
        asked = body != sentence.strip()
        if asked and (WH_QUESTION.search(body) or ALTERNATIVE.search(body)):
            continue
        body = YES_NO_START.sub("", body) if asked else body
        if not body or NEGATION.search(body) or HEDGE.search(body):
            continue
        for pair in pairs_in(body):
            if pair.slot is not None:
                found.append(Statement(kind="fact", slot=pair.slot, value=pair.value, text=sentence.strip(),
                                       confidence=CONF_RESOLVED_CONFIRM, confirms=True, said_by="assistant"))
    return _one_value_per_key(found, existing, project)


def _resolve_acceptance(
    previous_assistant: TurnMessage | None, existing: Sequence[ExistingMemory], project: str, *, weak: bool
) -> tuple[list[Statement], list[str]]:
    """What a bare "yes, let's do that" / "that's right" accepts: the assistant's proposal, else what its statement or
    yes/no question asserts, else (a strong acceptance only) the newest pending memory."""
    if previous_assistant is not None:
        ids = [previous_assistant.id] if previous_assistant.id else []
        props = _proposals(previous_assistant.text, existing, project)
        if props:
            return [replace(p, confirms=True, hedged=False, confidence=CONF_RESOLVED_CONFIRM, kind="decision",
                            rationale=None, said_by="assistant") for p in props], ids
        claims = _claims(previous_assistant.text, existing, project)
        if claims:
            return claims, ids
    if weak:
        return [], []
    pending = [m for m in existing if m.pending]
    if not pending:
        return [], []
    newest = max(pending, key=lambda m: m.local_id)
    return [_statement_from_memory(newest)], []


_ANSWER_FILLER = re.compile(
    r"\b(?:obviously|of course|definitely|please|probably|i guess|i think|for sure|then|still|just|the|our)\b|"
    r"当然|肯定|吧|呀|啊|还是|就|用",
    re.I,
)


def _short_answer(text: str, question: TurnMessage | None) -> list[Statement]:
    """"Postgres, obviously." right after the assistant asked "Which database?": one value answering the question."""
    if question is None:
        return []
    asked = [s for s in split_sentences(strip_noise(question.text)) if is_question(s)]
    clean, why = split_rationale(strip_noise(redact_secrets(text[:MAX_SENTENCE_CHARS])).strip())
    if not asked or REDACTED in clean or is_question(clean):
        return []
    rest = _ANSWER_FILLER.sub(" ", clean)
    if len(re.findall(r"[A-Za-z0-9][\w.+#-]*|[\u3400-\u9fff]", rest)) > 6:
        return []
    values = [v for v in find_values(clean) if not is_rejected(clean, v)]
    if not values:
        name = re.match(r"^(?:(?:just|probably|definitely|obviously|maybe|the|ok|okay|so|then|用|就用|还是)\s*)*"
                        r"(?P<v>[A-Z][\w.+#/-]*(?:[ \t]+[A-Z0-9][\w.+#/-]*){0,2})", clean)
        values = [Found(name.start("v"), name.end("v"), name.group("v").rstrip(".,"), None)] if name and \
            looks_like_a_name(name.group("v")) else []
    if len({v.value for v in values}) != 1:
        return []
    asked_slots = [p.slot for p in find_phrases(asked[-1])]
    slot = rebind(values[0], asked_slots[0]) if asked_slots else values[0].slot
    if slot is None:
        return []
    hedged = bool(HEDGE.search(clean))
    return [Statement(kind="decision", slot=slot, value=values[0].value, text=clean, hedged=hedged,
                       confidence=CONF_HEDGE if hedged else CONF_ANSWER, rationale=why)]


def _topic_slot(assistant: TurnMessage | None) -> Slot | None:
    """The one slot the assistant's message is about: its closing question's, else the whole message's."""
    if assistant is None:
        return None
    sentences = split_sentences(strip_noise(assistant.text))
    for chosen in ([s for s in sentences if is_question(s)][-1:], sentences):
        slots = {p.slot for s in chosen for p in find_phrases(s) if p.slot is not None}
        if len(slots) == 1:
            return slots.pop()
        if slots:
            return None
    return None


def _statement_from_memory(memory: ExistingMemory) -> Statement:
    slot = None
    category = entity = None
    if memory.key and memory.key.count(":") == 2:
        _, category, entity = memory.key.split(":")
        slot = SLOT_BY_KEY.get((category, entity))
    return Statement(kind="decision", slot=slot, value=memory.value, confidence=CONF_RESOLVED_CONFIRM,
                      text=memory.content, confirms=True, category_override=category, entity_override=entity,
                      said_by="memory")


# --- candidates ---------------------------------------------------------------------------------------------


def _key_for(s: Statement, project: str) -> str | None:
    try:
        if s.category_override and s.entity_override:
            return f"{project}:{normalize_segment(s.category_override)}:{normalize_segment(s.entity_override)}"
        if s.slot is None:
            return None
        if s.kind == "preference":
            entity = s.slot.entity if s.person in (None, "team") else f"{s.person}_{s.slot.entity}"
            return f"{project}:preference:{normalize_segment(entity)}"
        return f"{project}:{s.slot.category}:{s.slot.entity}"
    except ValueError:
        return None



def _label(s: Statement, zh: bool) -> str:
    if s.slot is not None:
        return s.slot.zh if zh else s.slot.en
    return (s.entity_override or "").replace("_", " ")


def _who(s: Statement, zh: bool) -> str:
    if s.person is None:
        return "用户" if zh else "The user"
    if s.person == "team":
        return "团队" if zh else "The team"
    return s.person


def _content(s: Statement, project: str) -> str:
    zh = contains_cjk(s.text)
    if s.value is None:
        return _keyless_content(s, project, zh)
    if s.said_by == "user":
        return _user_content(s, project, zh)
    if s.category_override == "people":
        return _people_content(s, project, zh)
    if s.kind == "preference":
        return (f"{_who(s, zh)}偏好{_label(s, zh)}用 {s.value}。" if zh
                else f"{_who(s, zh)} prefers {s.value} as the {_label(s, zh)}.")
    return _decision_content(s, project, zh)


def _user_content(s: Statement, project: str, zh: bool) -> str:
    """The user's own clause, said where it applies ("shop, backend framework: We'll go with Fastify"), with its
    reason when the reason came from elsewhere in the message."""
    label = s.label_override or _label(s, zh)
    text = s.text.strip().rstrip("。.!！;；,，")
    why = s.rationale if s.rationale and norm_value(s.rationale) not in norm_value(text) else None
    if zh:
        tentative = "（未定）" if s.hedged else ""
        return f"{project} 项目，{label}：{text}{tentative}{'（原因：' + why + '）' if why else ''}。"
    tentative = " (tentative)" if s.hedged else ""
    return f"{project} project, {label}: {text}{tentative}{' (because ' + why + ')' if why else ''}."


def _decision_content(s: Statement, project: str, zh: bool) -> str:
    label = _label(s, zh)
    if zh:
        head = f"{project} 项目可能用 {s.value} 作为{label}（未定）" if s.hedged else f"{project} 项目的{label}是 {s.value}"
        tail = f"（替换 {s.old_value}）" if s.old_value else (f"（不用 {s.rejected}）" if s.rejected else "")
        why = f"，因为{s.rationale}" if s.rationale else ""
        return f"{head}{tail}{why}。"
    head = (f"The {project} project might use {s.value} as its {label} (tentative)" if s.hedged
            else f"The {project} project uses {s.value} as its {label}")
    tail = f", replacing {s.old_value}" if s.old_value else (f", not {s.rejected}" if s.rejected else "")
    why = f", because {s.rationale}" if s.rationale else ""
    return f"{head}{tail}{why}."


def _people_content(s: Statement, project: str, zh: bool) -> str:
    role = s.label_override or _label(s, zh).removesuffix(" owner")
    owner = (s.entity_override or "").endswith("_owner")
    if zh:
        return f"{project} 项目中{s.value}负责{role}。" if owner else f"{project} 项目中{s.value}是{role}。"
    if owner:
        return f"In the {project} project, {s.value} owns the {role}."
    return f"In the {project} project, {s.value} is the {role}."


def _keyless_content(s: Statement, project: str, zh: bool) -> str:
    """No slot to template: the statement itself, said where it applies (and by whom, for preferences)."""
    text = s.text.strip().rstrip("。.!！")
    if zh:
        speaker = "用户说" if s.kind == "preference" and s.person is None else ""
        return f"{project} 项目：{speaker}{text}。"
    if s.kind == "preference" and s.person is None:
        return f"In the {project} project, the user said: {text}."
    return f"In the {project} project: {text}."


def _link(
    s: Statement, key: str | None, existing: Sequence[ExistingMemory], project: str
) -> tuple[int | None, list[int], bool]:
    """(same_as, supersedes, confirms) for a statement against the stored memories."""
    if key is None:
        return _link_keyless(s, existing, project), [], s.confirms
    same_key = [m for m in existing if m.key == key]
    stored_same = [m for m in same_key if not m.pending and norm_value(m.value) == norm_value(s.value)]
    if stored_same:
        return max(m.local_id for m in stored_same), [], s.confirms
    if s.hedged:
        return None, [], False
    pending_same = [m for m in same_key if m.pending and norm_value(m.value) == norm_value(s.value)]
    supersedes = [m.local_id for m in same_key if norm_value(m.value) != norm_value(s.value)]
    if s.old_value:
        supersedes += [m.local_id for m in existing if m.key is None and _names(m.content, s.old_value)
                       and m.local_id not in supersedes]
    return None, sorted(supersedes), s.confirms or bool(pending_same)


def _names(content: str, value: str) -> bool:
    return bool(re.search(term_pattern(value), content, re.I))


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


def _candidate(s: Statement, project: str, existing: Sequence[ExistingMemory], ids: list[str]) -> Candidate | None:
    key = _key_for(s, project)
    if s.value is not None and (REDACTED in s.value or not s.value.strip()):
        return None
    same_as, supersedes, confirms = _link(s, key, existing, project)
    return Candidate(
        kind=s.kind,  # type: ignore[arg-type]
        content=redact_secrets(_content(s, project)),
        key=key,
        value=redact_secrets(s.value) if (key and s.value) else None,
        rationale=redact_secrets(s.rationale) if s.rationale else None,
        confidence=s.confidence,
        hedged=s.hedged,
        confirms=confirms,
        supersedes=supersedes,
        same_as=same_as,
        source_message_ids=list(ids),
    )


def _rank(s: Statement) -> int:
    if s.hedged:
        return 0
    if s.weak:
        return 1
    return 2 if s.kind == "fact" and not s.confirms else 3


def _dedupe(statements: Iterable[tuple[Statement, list[str]]], project: str) -> list[tuple[Statement, list[str]]]:
    """One statement per key: a decision beats a description, a firm statement beats a hedge, and among equals the
    later one wins ("We'll go with Fastify. Koa's plugins are thin" keeps Fastify)."""
    out: dict[str, tuple[Statement, list[str]]] = {}
    for n, (s, ids) in enumerate(statements):
        key = _key_for(s, project) or f"__keyless_{s.text}"
        prior = out.get(key)
        if prior is not None and s.hedged and not prior[0].hedged and norm_value(s.value) != norm_value(prior[0].value):
            key = f"{key}|{norm_value(s.value)}"  # "SQLite for now, maybe Postgres later": both, the later one pending
            prior = out.get(key)
        if prior is not None and _rank(s) < _rank(prior[0]):
            continue
        out.pop(key, None)
        out[key] = (s, ids)
    return list(out.values())


@dataclass
class _TurnState:
    previous_assistant: TurnMessage | None = None
    found: list[tuple[Statement, list[str]]] = field(default_factory=list)


def extract_candidates(
    messages: Sequence[TurnMessage],
    *,
    project: str,
    existing: Sequence[ExistingMemory] = (),
    ignored: list[dict[str, str]] | None = None,
) -> list[Candidate]:
    """Memory candidates stated by the user in ``messages`` (one turn), linked to the ``existing`` memories.

    Only user messages are read for statements; an assistant message counts only as what a following user message
    accepts ("yes, let's do that", "that's right"). Output order follows the text; at most one candidate per key.
    Instructions to the assistant are never candidates; when ``ignored`` is given, each is appended to it as
    ``{"action": "ignored", "reason": "instruction", "content": <the sentence>}``.
    """
    normalize_segment(project)
    state = _TurnState()
    for message in messages:
        if message.role == "assistant":
            state.previous_assistant = message
            continue
        if message.role != "user":
            continue
        ids = [message.id] if message.id else []
        instructions: list[str] = []
        statements, accepted = _analyse_message(message.text, instructions)
        if ignored is not None:
            ignored.extend({"action": "ignored", "reason": "instruction", "content": redact_secrets(text)}
                           for text in instructions)
        if not statements and not accepted:
            statements = _short_answer(message.text, state.previous_assistant)
        slot = _topic_slot(state.previous_assistant)
        for s in statements:  # "Let's go with Hummingbird." after "Which backend framework?": the topic names the key
            if s.slot is None and s.value and s.category_override is None and s.kind != "preference":
                if slot is not None:
                    s.slot = slot
                else:
                    s.value = None
        if accepted in ("strong", "weak") and not any(s.slot for s in statements):
            resolved, extra_ids = _resolve_acceptance(state.previous_assistant, existing, project,
                                                      weak=accepted == "weak")
            state.found.extend((s, [*extra_ids, *ids]) for s in resolved)
        state.found.extend((s, ids) for s in statements)
    candidates = (_candidate(s, project, existing, ids) for s, ids in _dedupe(state.found, project))
    return [c for c in candidates if c is not None]

