"""Hedges from outside a statement's clause: a sentence that only hedges ("不过还没最终定。") hedges the sentence before
it, an undecided sentence about "it" hedges the one value named just before, a lean after the user's own either-or
question takes the option it names, and tentative options for one slot in a sentence are one pending memory ("Qdrant
or pgvector")."""

from __future__ import annotations

import re

from z0_memory.offline.extraction.binding import open_values, pairs_in
from z0_memory.offline.extraction.clauses import is_question
from z0_memory.offline.extraction.cues import ALTERNATIVE, HEDGE, UNDECIDED, UNSURE
from z0_memory.offline.extraction.model import CONF_HEDGE, CONF_UNSURE, Statement
from z0_memory.offline.extraction.statements import analyse_sentence
from z0_memory.offline.extraction.tentative import OPINION_ONLY
from z0_memory.offline.extraction.vocabulary import find_values, norm_value, term_pattern


# A lean among the options names the one the user favours ("可能用 pytest，也可能 unittest，倾向 pytest"): that option
# is the idea held pending, not the list
_LEAN = re.compile(r"倾向|更偏向|偏向于?|\blean(?:ing|s)?\s+(?:towards?|to)\b|\bprobably\b|\bmost likely\b|大概率|多半", re.I)


def alternatives(found: list[Statement]) -> list[Statement]:
    """"也许用 Qdrant，也许用 pgvector": tentative options for one slot in a sentence are one pending memory
    ("Qdrant or pgvector"), not the last one named; an option the user leans towards is that memory alone."""
    out: list[Statement] = []
    leaned: set[int] = set()  # ids of the kept statements whose value is a lean, closed to more options
    for s in found:
        same = next((o for o in out if o.hedged and s.hedged and o.slot is not None and o.slot == s.slot
                     and o.kind == s.kind and o.value and s.value), None)
        if same is None:
            out.append(s)
            if s.hedged and _LEAN.search(s.text):
                leaned.add(id(s))
        elif id(same) in leaned:
            continue
        elif _LEAN.search(s.text):
            same.value, same.text = s.value, f"{same.text}, {s.text}"
            leaned.add(id(same))
        elif norm_value(s.value) not in {norm_value(v) for v in (same.value or "").split(" or ")}:
            same.value = f"{same.value} or {s.value}"
            same.text = f"{same.text}, {s.text}"
    return out


def bare_hedge(sentence: str) -> bool:
    """A sentence that only hedges ("Not final though.", "不过还没最终定。", "What do you think?", "你觉得呢？"): a hedge cue
    or a request for the assistant's opinion, and no value of its own."""
    if OPINION_ONLY.match(sentence):
        return True
    approving = re.search(r"\b(?:right|good|great|better|best|sense|fits?|correct)\b|好|对|合适|不错|没错", sentence, re.I)
    cue = UNDECIDED.search(sentence) or (None if approving else HEDGE.search(sentence))
    if cue is None or find_values(sentence) or open_values(sentence):
        return False
    rest = (sentence[: cue.start()] + " " + sentence[cue.end():]).strip()
    rest = re.sub(r"^(?:but|though|although|still|yet|however|and|so|不过|但是?|只是|其实|目前|现在)\b", "", rest, flags=re.I)
    opening = re.sub(r"^(?:(?:but|though|although|still|however|and|honestly|tbh|not|不过|但是?|只是|其实)\W+)+", "",
                     sentence.strip(), flags=re.I)
    opened = UNDECIDED.match(opening) or UNDECIDED.match(sentence.strip())
    if opened and not re.match(r"\s*(?:why|how|what|who|where|when|about the)\b|为什么|怎么", (opening if
                               UNDECIDED.match(opening) else sentence.strip())[opened.end():], re.I):
        return True  # "Not sure yet long-term, the pricing might change.": it opens by saying nothing is settled
    # little else said: "Not final though.", "不过还没最终定。" (not "Maybe we'll also archive raw payloads to S3")
    return len(re.findall(r"[A-Za-z][\w'-]*", rest)) + len(re.findall(r"[\u3400-\u9fff]", rest)) // 2 <= 3


_IT = re.compile(r"\b(?:it|that|that one|this one)\b|它|这个", re.I)


def pronoun_hedge(sentence: str, previous_text: str) -> list[Statement]:
    """"Is RSpec what the team uses? I'm not sure yet whether we'll standardise on it.": an undecided sentence whose
    only object is a pronoun is about the one value the sentence before named (even a question)."""
    if not (UNDECIDED.search(sentence) or HEDGE.search(sentence)) or find_values(sentence) or not _IT.search(sentence):
        return []
    named = {norm_value(v.value): v.value for v in [*find_values(previous_text), *open_values(previous_text)]}
    if len(named) != 1:
        return []
    value = next(iter(named.values()))
    found, _ = analyse_sentence(_IT.sub(lambda m: value, sentence, count=1))
    for s in found:
        hedge(s, sentence)
    return found


def hedge(s: Statement, cue: str) -> None:
    """``s`` made tentative by a hedge said after it; a liking or a person's role is not what the doubt is about
    ("Liquibase maybe, because our DBA Marek knows it. But I'm not sure")."""
    if s.kind != "preference" and s.category_override != "people":
        s.hedged, s.confirms = True, False
        s.confidence = CONF_UNSURE if UNSURE.search(cue) else CONF_HEDGE


def from_before(sentence: str, previous_text: str) -> list[Statement]:
    """A hedge that gets its value from the sentence before: about "it" (``pronoun_hedge``), or a lean after the
    user's own either-or question ("CI 用 GitHub Actions 还是自建 runner？倾向于 GitHub Actions，还要再看看", "Postgres or
    MySQL for the db? leaning Postgres"): the option it leans to, with the slot the question gave it, pending."""
    found = pronoun_hedge(sentence, previous_text)
    if found or not (is_question(previous_text) and ALTERNATIVE.search(previous_text)) or not HEDGE.search(sentence):
        return found
    options = [p for p in pairs_in(previous_text) if re.search(term_pattern(p.value), sentence, re.I)]
    if len({norm_value(p.value) for p in options}) != 1:
        return []
    s = Statement(kind="decision", slot=options[0].slot, value=options[0].value, confidence=CONF_HEDGE,
                  text=sentence.strip(), hedged=True)
    hedge(s, sentence)
    return [s]


# "..., but the rig needs a runner in the lab so tbd", "…，不过还要等硬件，所以还没定": after a contrast or a
# consequence, a remark that the matter is open; said inside the reason, it is about the choice, not the reason
_OPEN_AFTER = re.compile(r"(?:\b(?:but|so|though|although|however|which means)\b|不过|但是?|所以|因此|只是)[^.;!?。；！？]*?$")


def undecided_reason(found: list[Statement]) -> None:
    """A choice whose reason ends by saying the matter is still open ("we'll use X since A, but B so tbd") is
    pending: the reason's last clause, after a contrast or "so", is undecided and names no value of its own."""
    for s in found:
        if s.hedged or not s.rationale or s.kind == "preference":
            continue
        tail = _OPEN_AFTER.search(s.rationale)
        if tail and UNDECIDED.search(tail.group()) and not find_values(tail.group()):
            hedge(s, tail.group())


# A sentence that takes back the idea just floated ("……算了还是 CMake", "no wait, that's my other job", "actually no,
# forget it"): the tentative statement before it is withdrawn, not held pending
_RETRACTION = re.compile(r"^[\s.…。,，-]*(?:算了|不对|(?:no wait|wait,? no|actually,? no|never ?mind|scratch that|forget (?:it|that))\b)",
                         re.I)


def retracts(sentence: str) -> bool:
    """The sentence opens by taking back what was just said."""
    return bool(_RETRACTION.match(sentence))


# A contrast inside a remark ("Airflow is the safe pick but the DX is rough", "Gin 例子多，不过 chi 更地道")
_CONTRAST = re.compile(r"\b(?:but|though|although|however|yet)\b|不过|但是?|只是", re.I)


def weighed(found: list[Statement], before: list[Statement], sentence: str) -> list[Statement]:
    """"We're evaluating Dagster. Airflow is the safe pick but the DX is rough.": once the message holds a slot
    tentative, a description of another option for it that weighs pros against cons is part of the weighing, not a
    fact settled; a decision ("going with Airflow") or a plain description without a contrast still counts."""
    open_slots = {s.slot for s in before if s.hedged and s.slot is not None}
    if not open_slots or not _CONTRAST.search(sentence):
        return found
    return [s for s in found if s.hedged or s.kind != "fact" or s.slot not in open_slots]
