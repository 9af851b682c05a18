"""Clause tests the statement rules share: a clause that is little more than the names it states, a negation of
its own (not an undecided "not sure whether"), a value stated before the alternative it turns down, a bound pair."""

from __future__ import annotations

import re

from z0_memory.offline.extraction.binding import bound_pairs, open_values, pairs_in
from z0_memory.offline.extraction.clauses import is_question
from z0_memory.offline.extraction.cues import NEGATION, NOT_A_NAME, UNDECIDED
from z0_memory.offline.extraction.measures import line_lengths
from z0_memory.offline.extraction.vocabulary import find_phrases, find_values
from z0_memory.text import ENGLISH_STOPWORDS


_FILLER = re.compile(
    r"\b(?:so|then|ok(?:ay)?|and|with|plus|the|a|an|on|for|our|we|just|also|too|as well|both|all|"
    r"mobile first|to start|for now|for the|on top|obviously|obv|of course|end[ -]to[ -]end|everywhere|all the way|throughout|monolith|apps?|services?|setup|stack|new|mode)\b|[,，.。!！:：+&/]|还是|就|吧|和|加上|配合|先|"
    r"另外|还有|其实|对了|目前|现在|依然|仍然|继续用?",
    re.I,
)


def nominal(clause: str) -> bool:
    """"so React Native with Expo" / "Postgres 加 Redis": a clause that is little more than the names it states (a
    rival it turns down after them adds nothing: "Rails rather than Laravel", "NestJS 而不是 Koa")."""
    if pairs_before_negation(clause):
        clause = clause[: NEGATION.search(UNDECIDED.sub(lambda m: " " * len(m.group(0)), clause)).start()]
    pairs = pairs_in(clause)
    if not pairs or is_question(clause):
        return False
    rest = clause
    for p in sorted(pairs, key=lambda p: -p.start):
        rest = rest[: p.start] + " " + rest[p.end :]
    for v in open_values(clause):
        rest = rest.replace(v.value, " ")
    for phrase in find_phrases(rest):  # "后端 Java 17 + Spring Boot 3", "backend Django": slot words are not extra
        if any(phrase.slot == p.slot for p in pairs):
            rest = rest[: phrase.start] + " " * (phrase.end - phrase.start) + rest[phrase.end :]
    rest = _PURPOSE.sub(_nouns_only, _INTERJECTION.sub(" ", rest))
    rest = _FILLER.sub(" ", rest)
    words = re.findall(r"[A-Za-z][\w.+#-]*|[\u3400-\u9fff]", rest)
    return len(words) <= 1


# What a value is for, closing the clause ("postgres for player accounts + unlocks", "Mosquitto for telemetry"): nouns
# only, so a clause going on to say something ("Redis for caching is overkill") keeps its verb and is no bare name
_PURPOSE = re.compile(r"\bfor\s+(?:the\s+|our\s+|all\s+)?(?P<what>[A-Za-z][\w-]*(?:\s*(?:[+&/]|and)?\s*[A-Za-z][\w-]*){0,3})"
                      r"\s*[.!]?\s*$", re.I)


def _nouns_only(purpose: re.Match[str]) -> str:
    """The purpose removed when it is nouns only; kept (so the clause is no bare name) when a word could be a verb."""
    words = [w.lower() for w in re.findall(r"[A-Za-z][\w-]*", purpose.group("what")) if w.lower() != "and"]
    return purpose.group(0) if any(w in ENGLISH_STOPWORDS or w in NOT_A_NAME or w in _PREPOSITIONS for w in words) \
        else " "


# Words that place the value somewhere else ("dbt for the transforms inside snowflake"): no purpose of its own
_PREPOSITIONS = frozenset("inside outside within into onto via across behind beside beyond near per without".split())


# Interjections opening a casual clause ("omg yes redis for lobbies")
_INTERJECTION = re.compile(r"^\s*(?:(?:omg|wow|yay|nice|cool|yes|yeah|yep|yup|ok(?:ay)?|right|sure)\b[\s,!]*)+", re.I)


def negated(clause: str) -> bool:
    """A negation of its own: "not sure whether" and "还没想好" are undecided (hedges), not negations."""
    return bool(NEGATION.search(UNDECIDED.sub(lambda m: " " * len(m.group(0)), clause)))


def pairs_before_negation(clause: str) -> bool:
    """"Hono, not Express" / "用 Gin，不用 Echo": the clause states a value before it rejects another."""
    neg = NEGATION.search(UNDECIDED.sub(lambda m: " " * len(m.group(0)), clause))
    if neg is None:
        return False
    after, before = clause[neg.end():], pairs_in(clause[: neg.start()])
    if before and re.match(r"\s*\d", after):  # "Postgres 16 not 15", "100 not 120": a number turns down a number
        return before[-1].value[-1:].isdigit()
    return bool(before and (find_values(after) or _NAME_NEXT.match(after)))


_NAME_NEXT = re.compile(r"\s*(?:用|选|采用|(?i:the|using)\s+)?[A-Z][\w.+#-]*")  # "而不是 ThinkPHP", "not Micronaut"


def has_bound_pair(clause: str) -> bool:
    values = find_values(clause)
    phrases = find_phrases(clause)
    return any(p.value for p in bound_pairs(clause, values, phrases)) or bool(line_lengths(clause))


_REFUSAL_WORDS = re.compile(r"\b(?:not|no|never|instead of|rather than|over|than|the)\b|不用|不要|不选|不是|而非|而不是|弃用|放弃|别用",
                            re.I)


def bare_refusal(clause: str) -> bool:
    """"not Express", "不用 Django": a clause that only turns a name down; it explains nothing ("beego 太重了" does)."""
    if not negated(clause):
        return False
    rest = clause
    for v in [*find_values(clause), *open_values(clause)]:
        rest = rest.replace(v.value, " ")
    rest = _REFUSAL_WORDS.sub(" ", rest)
    return not re.findall(r"[A-Za-z][\w.+#-]*|[\u3400-\u9fff]", rest)
