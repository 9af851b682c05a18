"""Answers to the assistant's question: the value a reply leads with ("Postgres 16. Non-negotiable, ...",
"nah, GoodJob. fewer moving parts", "PyTorch，分布式用 torchrun。"), and the key a question names when the vocabulary
has no slot for it ("Training framework?" / "训练框架呢？" -> ``stack:训练框架``): an unknown slot still gets a key.
"""

from __future__ import annotations

import re

from z0_memory.offline.extraction.clauses import (
    is_question,
    split_sentences,
    strip_noise,
)
from z0_memory.offline.extraction.model import TurnMessage
from z0_memory.redaction import redact_secrets
from z0_memory.offline.extraction.key_words import key_entity
from z0_memory.offline.extraction.unknown_slots import category_of

# Words a reply may open with before its answer ("nah, GoodJob", "yep, Gradle", "嗯，Qdrant", "Ooh, yes, USWDS")
LEAD_WORDS = re.compile(
    r"^(?:(?:nah|nope|no|yes|yeah|yep|yup|ok(?:ay)?|sure|so|well|hmm+|honestly|o+h+|a+h+|aha|wow|yay|ugh|lol|haha|cool|"
    r"nice|great|perfect|alright|right|fine|totally|absolutely|definitely|嗯+|哦+|对|是的?|好的?)[\s,，.!！。]+)+", re.I)
_REFUSAL = re.compile(r"^(?:nah|nope|no)\b", re.I)
# The reply's first clause: up to the first comma, semicolon, colon, dash or sentence end
_FIRST_CLAUSE = re.compile(r"^(?P<c>.+?)(?:\s*[,，;；:：]|\s+[-—–]+\s+|[.。!！?？]\s|[.。!！?？]?$)")

_SUBJECT_EN = re.compile(
    r"\b(?:what|which)(?:'s|\s+(?:is|are|will be|should be))?\s+(?:(?:the|your|you|our|we)\s+)?"
    r"(?P<s>[a-z][\w/-]*(?:\s+[a-z][\w/-]*){0,2}?)\s*(?:\?|$|\s+(?:are|is|do|does|will|would|should|for|to|you)\b)",
    re.I)
_SUBJECT_ZH = re.compile(
    r"(?P<s>[\u4e00-\u9fffA-Za-z&]{2,10}?)(?:方面|这块|那边)?(?:打算|准备|要|想)?(?:用什么|选什么|用哪个|用哪种|选哪个|呢|"
    r"用\s*\S+\s*还是\s*\S+?)\s*[？?]")
# "What are you using for the mobile app?", "What about emails?", "你们用什么做消息推送？"
_SUBJECT_FOR = re.compile(
    r"\b(?:for|about|on)\s+(?:the\s+|your\s+|our\s+)?(?P<s>[a-z][\w/-]*(?:\s+[a-z][\w/-]*){0,2})\s*\?\s*$"
    r"|(?:用什么|选什么|拿什么)(?:来)?(?:做|当|作为)\s*(?P<sz>[\u4e00-\u9fffA-Za-z]{2,10})\s*[？?]", re.I)
_NOT_SUBJECTS = frozenset("you it this that one what kind about do does 那 这 那么 所以 那你 你们".split())


def questions_asked(message: TurnMessage) -> list[str]:
    """The sentences of an (assistant) message that ask something, in order."""
    return [s for s in split_sentences(strip_noise(message.text)) if is_question(s)]


def question_subject(question: TurnMessage | None) -> tuple[str, str] | None:
    """(category, entity) for the thing the assistant's closing question asks about, from its own words."""
    if question is None:
        return None
    asked = questions_asked(question)
    if not asked:
        return None
    q = asked[-1]
    m = _SUBJECT_FOR.search(q) or _SUBJECT_EN.search(q) or _SUBJECT_ZH.search(q)
    if not m:
        return None
    subject = re.sub(r"^(?:那|所以|好的|那么|请问)+", "", (m.groupdict().get("s") or m.groupdict().get("sz") or "").strip())
    if re.match(r"(?:using|about|doing|planning|going|thinking)\b", subject, re.I):
        return None
    if not subject or subject.lower() in _NOT_SUBJECTS or len(subject) < 2:
        return None
    entity = key_entity(subject)
    return (category_of(subject, entity), entity) if entity else None


def leading_clause(text: str) -> str | None:
    """The clause a reply leads with, opening words removed; None when it opens by refusing ("no, not Celery")."""
    sentences = split_sentences(strip_noise(redact_secrets(text)))
    if not sentences:
        return None
    first = sentences[0].strip()
    lead = LEAD_WORDS.match(first)
    if lead:
        rest = first[lead.end():]
        if _REFUSAL.match(first) and re.match(r"(?:not|no|don't|不)\b", rest, re.I):
            return None
        first = rest
    m = _FIRST_CLAUSE.match(first)
    return m.group("c").strip() if m else None
