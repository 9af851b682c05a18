"""Verdicts that point back: "Meilisearch 评估完了，中文分词也OK，就它了。", "Judge0 扛得住，就用它", "benchmark's done: NATS
JetStream KV was fast enough. we're going with it", "The Pagefind prototype is great. Locking it in.", "IT 回复了，Apptainer
可以用，就这么办". The verdict names no value of its own; it settles the one the message talked about before it.

The message is rewritten so the verdict names its referent ("就用 Meilisearch", "we're going with NATS JetStream KV"),
which the statement rules then read as any other decision. The referent is the one idea the store holds as pending
that the message names before the verdict; with two or none, nothing is rewritten (a name said only in passing is no
referent: "NATS JetStream KV p99 was 3ms ... going with it" would otherwise settle "NATS"). A verdict in a question ("should we go with it?") or under a hedge
("maybe we'll go with it") is left alone: only a settled verdict points back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from z0_memory.offline.extraction.binding import is_rejected
from z0_memory.offline.extraction.clauses import is_question
from z0_memory.offline.extraction.cues import HEDGE, NEGATION, NEGATIVE_EVAL, UNDECIDED
from z0_memory.offline.extraction.vocabulary import Found, norm_value, term_pattern

# A verdict whose object is a pronoun, or that has none ("就这么办"), as a whole clause (a topic may open it: "数据仓库就用它")
_VERDICT_EN = re.compile(
    r"(?:^|(?<=[,;:.!—–]\s)|(?<=[,;:.!—–]))\s*(?:(?:so|ok(?:ay)?|and|then|yeah|yep|alright)[,\s]+)*"
    r"(?:(?:we'?re|we are|i'?m|i am|we'?ll|we will|let'?s|we)\s+)?(?:(?:have |'ve )?decided to\s+)?"
    r"(?:going with|go(?:ing)? ahead with|went with|sticking with|stick(?:ing)? with|rolling with|"
    r"lock(?:ing|ed)?(?= (?:it|that|this) in)|keep(?:ing)?|adopt(?:ing)?|pick(?:ing)?|us(?:e|ing))\s+"
    r"(?P<pronoun>it|that|this(?: one)?|that one)(?:\s+in)?\b", re.I)
_VERDICT_ZH = re.compile(
    r"(?:^|(?<=[，,；;。！!：:]))\s*(?:[\u4e00-\u9fffA-Za-z/ ]{0,8}?)(?:那|所以|那么)?(?:就|确认|决定|最终|最后)(?:就|还是)?"
    r"(?:用|选|定|是|上)?"
    r"(?P<pronoun>它|这个)(?:了|吧)?(?=\s*(?:[，,；;。！!]|$))"
    r"|(?:^|(?<=[，,；;。！!：:]))\s*(?:那|所以)?就[这那]么(?:办|定)(?:了|吧)?(?=\s*(?:[，,；;。！!]|$))")


def _said_before(text: str, end: int, pending: Iterable[str]) -> list[str]:
    """The pending values named before a verdict at ``end``, distinct (one: the referent; none or several: none)."""
    before = text[:end]
    named = {norm_value(v): v for v in pending if v and (m := re.search(term_pattern(v), before, re.I))
             and not is_rejected(before, Found(m.start(), m.end(), v, None))}
    return list(named.values())


def name_back(text: str, pending: Iterable[str] = ()) -> str:
    """The message with its first verdict that points back (English, else Chinese) rewritten to name its referent;
    unchanged when there is none. ``pending``: the values the store holds as pending."""
    pending = list(pending)
    for pattern, said in ((_VERDICT_EN, "we're going with {}"), (_VERDICT_ZH, "就用 {}")):
        m = pattern.search(text)
        if m is None:
            continue
        sentence_start = max(text.rfind(c, 0, m.start()) for c in ".!?。！？\n") + 1
        ends = [i for i in (text.find(c, m.end()) for c in ".!?。！？\n") if i >= 0]
        sentence = text[sentence_start: min(ends) + 1 if ends else len(text)]
        clause = text[sentence_start: m.end()]
        if is_question(sentence) or HEDGE.search(clause) or UNDECIDED.search(clause) \
                or NEGATION.search(clause):
            continue  # "should we go with it?", "maybe we'll go with it", "not going with it"
        referent = _said_before(text, m.start(), pending)
        if len(referent) != 1 or NEGATIVE_EVAL.search(text[:m.start()].rsplit(referent[0], 1)[-1]):
            continue
        return text[: m.start()] + " " + said.format(referent[0]) + text[m.end():]
    return text
