"""Which value binds to a key when a message names several: the main clause's value over an aside's.

A name in a message is not the key's value when the clause only mentions it:

* a value judged badly in its clause is not stated there (``without_judged``);
* a former, tried or weighed value ("we tried gin first", "we looked at airflow last year", "之前用的 Tailwind") and someone else's suggestion
  ("someone asked if we'd move to echo", "dont suggest gorm again") are asides (``aside``): never chosen;
* a clause about a part of the slot ("broker 用 RabbitMQ", "底层还是 Prometheus", "告警走飞书", "(buildkite under the
  hood)", a value restricted to a part: "Python 只写策略层") does not replace the value an earlier clause of the sentence gave the slot itself (``main_over_aspects``);
* a self-correction ("orm: prisma. no wait, drizzle", "ci 是 gitlab ci。哦不对，...", "……算了还是 CMake") retracts what
  the message said just before it (``at_retractions``); the correction keeps the retracted value's slot.
"""

from __future__ import annotations

import re

from z0_memory.offline.extraction.cues import CORRECTION, NEGATIVE_EVAL
from z0_memory.offline.extraction.model import Statement
from z0_memory.offline.extraction.vocabulary import Found, find_values

# A value the project had, tried or weighed before: mentioned, not chosen
FORMER = re.compile(
    r"\b(?:we|i|they|team)\s+(?:had\s+)?(?:already\s+)?(?:tried|looked (?:at|into)|considered|evaluated)\b|\bused to (?:use|be on|run|have)\b|"
    r"\b(?:was|were) (?:the )?(?:old|previous|original|former) (?:plan|one|choice|setup|stack)\b|"
    r"\b(?:we|i|they)\s+(?:were|was)\s+looking (?:at|into)\b|"
    r"(?:之前|以前|原先|早先|过去)(?:一直)?(?:用的|用过|用|是|试过)",
    re.I,
)
# Someone else's suggestion reported, or refused ("someone asked if we'd move to echo", "dont suggest gorm again")
OTHERS_SUGGESTION = re.compile(
    r"\b(?:someone|somebody|people|folks|[A-Z][a-z]+)(?:\s+[\w']+){0,4}?\s+(?:asked|wondered|wanted to know)\s+"
    r"(?:[\w']+\s+){0,3}?(?:if|whether|about|why)\b|"
    r"\b(?:don'?t|dont|do not|stop|quit|never) (?:suggest|recommend|propos|bring(?:ing)? up)\w*|"
    r"(?:别|不要)再?(?:推荐|建议|提)|(?:有人|别人|[\u4e00-\u9fff]{1,3})问(?:过|了)?(?:要不要|能不能|可不可以|是否|能否)",
    re.I,
)
# Words that name a part of a slot (what runs underneath, the alerting of monitoring, a queue's broker), not the slot
ASPECT = re.compile(
    r"\b(?:under the hood|underneath|under it|broker|alert(?:s|ing)|metrics|tracing|dashboards?)\b|"
    r"底层|底下|下面|告警|报警|指标|链路|看板|大盘",
    re.I,
)
# A self-correction: what comes before it in the message is taken back
RETRACTION = re.compile(
    r"(?:^|(?<=[\s,，.。!！?？…—-]))(?:no,?\s+wait|wait,?\s+no|oh\s+wait|actually,?\s+no|(?:nah,?\s+)?scratch that)\b|"
    r"(?:哦|啊|呃)不对|(?:^|(?<=[,，.。!！?？…—]))\s*(?:不对不对|不对|算了)(?=[\s,，.。!！…—]|$|[\u4e00-\u9fff])",
    re.I,
)


# A lean among tentative options ("leaning grafana", "我倾向 Prefect"): it picks one of the ideas put forward
LEAN = re.compile(r"\blean(?:s|ing)?\b|倾向|\bI'?d (?:go with|pick)\b", re.I)


def aside(clause: str) -> bool:
    """Whether the clause only mentions its values: a former or tried one, or someone else's suggestion."""
    return bool(FORMER.search(clause) or OTHERS_SUGGESTION.search(clause))


def without_judged(clause: str, pairs: list[Found]) -> list[Found]:
    """``pairs`` without the value a bad judgement is said of, the one named last before it ("prisma's generated
    client was too heavy for our lambda bundle": prisma is judged, whatever the clause names after)."""
    bad = NEGATIVE_EVAL.search(clause)
    before = [p for p in pairs if bad is not None and p.end <= bad.start()]
    return [p for p in pairs if not before or p.start != before[-1].start]


def main_over_aspects(out: list[Statement], found: list[Statement], clause: str) -> list[Statement]:
    """``found`` without what a clause about a part of a slot says of a slot an earlier clause already gave a value."""
    held = {s.slot: s.value for s in out if s.slot is not None and s.value and not s.hedged}
    if not held:
        return found
    kept = []
    for s in found:
        if s.slot in held and s.value and held[s.slot] != s.value and _about_a_part(clause, s.value):
            continue
        kept.append(s)
    return kept


# A value restricted to a part right after it ("Python 只写策略层", "ULIDs only for the public ref")
RESTRICTED = re.compile(r"^\s*(?:只|仅|就只|only\b|just for\b|solely\b)", re.I)


def _about_a_part(clause: str, value: str) -> bool:
    at = clause.find(value)
    before = clause[: at if at >= 0 else len(clause)]
    return bool(ASPECT.search(before) or before.count("(") > before.count(")")
                or before.count("（") > before.count("）")
                or (at >= 0 and RESTRICTED.match(clause[at + len(value):])))


def at_retractions(sentences: list[str]) -> list[str]:
    """The sentences, each cut where a self-correction starts inside it ("deploying to X — wait no, Y")."""
    out = []
    for sentence in sentences:
        m = next((m for m in RETRACTION.finditer(sentence) if re.search(r"\w", sentence[: m.start()])), None)
        if m is None:
            out.append(sentence)
        else:
            out += [sentence[: m.start()].rstrip(" \t,，—-…"), sentence[m.start():]]
    return out


def starts_with_retraction(sentence: str) -> bool:
    m = RETRACTION.search(sentence)
    return m is not None and not re.search(r"\w", sentence[: m.start()])


def corrected_slots(sentence: str, found: list[Statement]) -> set:
    """The slots a sentence opening with a correction ("Actually, FastAPI", "In fact, NATS") gives a firm value: their
    earlier values in the message are replaced, the other slots stay (a retraction takes back the whole sentence)."""
    if not CORRECTION.match(sentence):
        return set()
    return {s.slot for s in found if s.slot is not None and not s.hedged}


def take_back(retracted: list[Statement], correction: list[Statement]) -> None:
    """A correction that names a value of no slot ("no wait, drizzle") keeps the slot of the value it replaces."""
    slots = [s.slot for s in retracted if s.slot is not None]
    for s in correction:
        if s.slot is None and s.value and slots and not find_values(s.value):
            s.slot = slots[-1]
