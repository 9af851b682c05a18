"""What a user's reply accepts: the assistant's proposal, what its statement or yes/no question asserts, the value a
short answer gives to the assistant's question, or (a strong acceptance only) the newest pending memory; and the
slot the assistant's message is about, which names the key of a value the user's clause leaves unfiled.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from z0_memory.offline.extraction.answers import LEAD_WORDS, leading_clause, question_subject, questions_asked
from z0_memory.offline.extraction.binding import (
    CJK_COMMON,
    is_rejected,
    looks_like_a_name,
    pairs_in,
    rebind,
)
from z0_memory.offline.extraction.clauses import (
    MAX_SENTENCE_CHARS,
    is_question,
    split_rationale,
    split_sentences,
    strip_noise,
)
from z0_memory.offline.extraction.content import key_for
from z0_memory.offline.extraction.cues import (
    ACCEPT_ONLY,
    ALTERNATIVE,
    CONFIRM_PREFIX,
    HEDGE,
    NEGATION,
    PROPOSAL_MARK,
    QUESTION_TAG,
    REJECTION,
    SWITCH,
    UNDECIDED,
    WH_QUESTION,
    YES_NO_START,
    NOT_A_NAME,
)
from z0_memory.text import ENGLISH_STOPWORDS
from z0_memory.offline.extraction.model import (
    CONF_ANSWER,
    CONF_HEDGE,
    CONF_RESOLVED_CONFIRM,
    ExistingMemory,
    Statement,
    TurnMessage,
)
from z0_memory.offline.extraction.statements import analyse_sentence
from z0_memory.offline.extraction.vocabulary import (
    SLOT_BY_KEY,
    Found,
    Slot,
    find_phrases,
    find_values,
    norm_value,
)
from z0_memory.redaction import REDACTED, redact_secrets


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
        by_key.setdefault(key_for(s, project) or "", []).append(s)
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
    settled = {m.key for m in existing if m.key and not m.pending}
    # a bare "对的" to the assistant's restatement confirms it; it does not replace a value the user settled, unless
    # the assistant asked about a change ("那认证也一起换成 Supabase Auth 吗？" - "对"): then the yes makes the change
    found = [s for s in found if key_for(s, project) not in settled or any(p.search(s.text) for p in SWITCH)]
    return _one_value_per_key(found, existing, project)


def _held_again(text: str, existing: Sequence[ExistingMemory], project: str) -> list[Statement]:
    """What an assistant's question puts back to the user that the project already holds ("you're on Vercel, right?",
    "Keep ULID as the primary key ... Agreed?"): accepted, each is said again (a repeat, never a change). Only the
    asked sentence is read (or, when it is a bare "Agreed?", the sentence it asks about)."""
    sentences = split_sentences(strip_noise(redact_secrets(text)))
    asked = [n for n, s in enumerate(sentences) if is_question(s)]
    if not asked:
        return []
    n = asked[-1]
    bare = not re.search(r"[A-Za-z0-9\u3400-\u9fff]{2}", _BARE_ASK.sub("", sentences[n]))
    body = QUESTION_TAG.sub("", sentences[n - 1] if bare and n else sentences[n]).strip()
    if not body or NEGATION.search(body) or HEDGE.search(body) or WH_QUESTION.search(body) \
            or (ALTERNATIVE.search(body) and len(find_values(body)) > 1):
        return []
    held = {(m.key, norm_value(m.value)): m.value for m in existing if m.key and not m.pending and m.value}
    found = [Statement(kind="fact", slot=pair.slot, value=pair.value, text=body, confidence=CONF_RESOLVED_CONFIRM,
                       said_by="assistant") for pair in pairs_in(body) if pair.slot is not None]
    # in the store's own spelling ("ULIDs" held, "ULID" asked): a repeat of that fact, not a new version of it
    return [replace(s, value=held[key]) for s in found if (key := (key_for(s, project), norm_value(s.value))) in held]


# A question that only asks for assent ("Agreed?", "Sound good?", "OK?", "可以吗？")
_BARE_ASK = re.compile(r"\b(?:agreed|sounds?|good|ok(?:ay)?|right|correct|fine|alright|yes|no)\b|可以|好|行|对|吗|吧|[?？\s.!]",
                       re.I)


def resolve_acceptance(
    previous_assistant: TurnMessage | None, existing: Sequence[ExistingMemory], project: str, *, weak: bool,
    alone: bool = True,
) -> tuple[list[Statement], list[str]]:
    """What a bare "yes, let's do that" / "that's right" accepts: the assistant's proposal, else what its statement or
    yes/no question asserts (a held fact it asks back only when the reply says nothing else, ``alone``), else (a
    strong acceptance only) the newest pending memory."""
    if previous_assistant is not None:
        ids = [previous_assistant.id] if previous_assistant.id else []
        props = _proposals(previous_assistant.text, existing, project)
        if props:
            return [replace(p, confirms=True, hedged=False, confidence=CONF_RESOLVED_CONFIRM, kind="decision",
                            rationale=None, said_by="assistant") for p in props], ids
        claims = _claims(previous_assistant.text, existing, project) \
            or (_held_again(previous_assistant.text, existing, project) if alone else [])
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


# the name a short answer leads with, after filler words ("probably Postgres", "用 Kamal"); it does not run on over a
# sentence's end ("USWDS. Saves us a ton")
_NAME_ANSWER = re.compile(r"(?:(?:just|probably|definitely|obviously|maybe|the|ok|okay|so|then|用|就用|还是)\s*)*"
                          r"(?P<v>[A-Z][\w.+#/&-]*(?:(?<!\.)[ \t]+[A-Z0-9][\w.+#/&-]*){0,2})")


def short_answer(text: str, question: TurnMessage | None) -> list[Statement]:
    """"Postgres, obviously." right after the assistant asked "Which database?": one value answering the question."""
    if question is None:
        return []
    asked = [s for s in split_sentences(strip_noise(question.text)) if is_question(s) or offers_alternatives(s)]
    clean, why = split_rationale(strip_noise(redact_secrets(text[:MAX_SENTENCE_CHARS])).strip())
    if not asked or REDACTED in clean or is_question(clean):
        return []
    rest = _ANSWER_FILLER.sub(" ", clean)
    if len(re.findall(r"[A-Za-z0-9][\w.+#-]*|[\u3400-\u9fff]", rest)) > 6:
        return []
    values = [v for v in find_values(clean) if not is_rejected(clean, v)]
    if not values:
        lead = LEAD_WORDS.match(clean)  # "Ooh, USWDS.": the interjection is no answer
        name = _NAME_ANSWER.match(clean, lead.end() if lead else 0)
        values = [Found(name.start("v"), name.end("v"), name.group("v").rstrip(".,"), None)] if name and \
            looks_like_a_name(name.group("v")) else []
        zh = re.fullmatch(r"(?:用|就用|还是用?)?\s*([\u4e00-\u9fff][\u4e00-\u9fff0-9]{1,5})\s*[。.!！]?", clean)
        if not values and zh and not (HEDGE.search(clean) or UNDECIDED.search(clean) or NEGATION.search(clean)
                                      or REJECTION.match(clean) or CONFIRM_PREFIX.match(clean)
                                      or zh.group(1) in CJK_COMMON or zh.group(1) in _ASSENT_ZH):
            values = [Found(zh.start(1), zh.end(1), zh.group(1), None)]  # "极光推送。" answering "用什么做消息推送？"
    if not values:
        values = offered_word(clean, asked[-1])
    if len({v.value for v in values}) != 1:
        return []
    # the slot the question names, else the slot of a value it offers ("Sidekiq for the jobs?" -> the job queue)
    asked_slots = [p.slot for p in find_phrases(asked[-1])] or [v.slot for v in find_values(asked[-1]) if v.slot]
    slot = rebind(values[0], asked_slots[0]) if asked_slots else values[0].slot
    subject = question_subject(question) if slot is None else None
    if slot is None and subject is None:
        return []
    hedged = bool(HEDGE.search(clean))
    return [Statement(kind="decision", slot=slot, value=values[0].value, text=clean, hedged=hedged,
                       confidence=CONF_HEDGE if hedged else CONF_ANSWER, rationale=why,
                       category_override=subject[0] if subject else None,
                       entity_override=subject[1] if subject else None)]


def offers_alternatives(sentence: str) -> bool:
    """"单元测试可以用 Ztest，或者 Unity。", "You could run Celery or RQ.": a statement that offers named alternatives asks
    the user to pick one, as a question would."""
    either = ALTERNATIVE.search(sentence)
    return either is not None and all(_names_a_thing(side) for side in (sentence[:either.start()],
                                                                          sentence[either.end():]))


def _names_a_thing(text: str) -> bool:
    """A known value, or a capitalised word that looks like a name ("Ztest", "Unity/Ceedling")."""
    return bool(find_values(text)) or any(looks_like_a_name(w) for w in re.findall(r"(?<![\w.])[A-Z][\w.+#/-]+", text))


# "用。" to "消息队列用 Kafka 吗？": a Chinese yes said by echoing the question's verb (one or two characters)
_ECHO = re.compile(r"\s*(?P<verb>[\u4e00-\u9fff]{1,2}?)(?:的|啊|呀|吧|了)?\s*[。.!！]*\s*")
# a negated echo ("不用。", "没上。") answers no; particles are no verb
_NOT_A_YES = re.compile(r"^[不没别无否]|^(?:的|啊|呀|吧|了|吗|呢|嗯|哦|哈)$")


def echoed_yes(text: str, question: TurnMessage | None) -> bool:
    """A reply that is only the verb of the assistant's closing yes/no question ("用。" to "消息队列用 Kafka 吗？",
    "要。" to "要不要上 Kafka？"): a yes to that question, as weak as a lone "对"."""
    m = _ECHO.fullmatch(text)
    if question is None or m is None or _NOT_A_YES.search(m.group("verb")):
        return False
    asked = questions_asked(question)
    return bool(asked) and not WH_QUESTION.search(asked[-1]) and m.group("verb") in asked[-1]


# Assent and judgement said before the answer ("有道理，那就它吧"): no value
_ASSENT_ZH = frozenset("有道理 说得是 不错 挺好 很好 明白 收到 了解 懂了 好主意 没问题".split())


# An either-or question: it offers its alternatives by name
_EITHER_OR = re.compile(r"\bor\b|还是", re.I)


def offered_word(answer: str, question: str) -> list[Found]:
    """"gdscript." answering "GDScript or C#?", "allauth" answering "session auth or django-allauth?": a reply of one
    word, in any case, that the either-or question offered as (part of) an alternative's name."""
    m = re.fullmatch(r"\s*(?P<v>[A-Za-z][\w.+#-]{1,30}?)\s*[.!。！]?\s*", answer)
    if not m or not _EITHER_OR.search(question) or m.group("v").lower() in ENGLISH_STOPWORDS \
            or m.group("v").lower() in NOT_A_NAME or CONFIRM_PREFIX.match(answer) or ACCEPT_ONLY.match(answer):
        return []
    if not re.search(rf"(?<![\w.+#]){re.escape(m.group('v'))}(?![\w+#])", question, re.I):
        return []
    return [Found(m.start("v"), m.end("v"), m.group("v"), None)]


def leading_answer(text: str, question: TurnMessage | None) -> list[Statement]:
    """"Postgres 16. Non-negotiable, ..." / "nah, GoodJob. fewer moving parts": the value a reply to the assistant's
    question leads with, when the rest of the message goes on to other things."""
    clause = leading_clause(text) if question is not None else None
    found = short_answer(clause, question) if clause else []
    if found and (HEDGE.search(text) or UNDECIDED.search(text)) and not found[0].hedged:
        # "Render for now, not sure yet long-term": a hedge anywhere in the reply hedges the answer it leads with
        found[0].hedged, found[0].confidence = True, CONF_HEDGE
    return found


# A slot word used in passing ("popular addons with good docs") does not make the message about that slot
_IN_PASSING = re.compile(r"\b(?:with|has|have|their|its|good|great|nice|solid|better|decent)\s+(?:\w+\s+)?(?:docs|"
                         r"documentation|tests|testing|search|logging|monitoring|caching|support|tooling)\b", re.I)


def topic_slot(assistant: TurnMessage | None) -> Slot | None:
    """The one slot the assistant's message is about: its closing question's, else the whole message's."""
    if assistant is None:
        return None
    sentences = split_sentences(strip_noise(assistant.text))
    for chosen in ([s for s in sentences if is_question(s)][-1:], [s for s in sentences if not _IN_PASSING.search(s)]):
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
