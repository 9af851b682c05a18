"""What a message says around a choice, not beside it: no memory of its own.

* A clause with no key that speaks of the keyed choice its sentence states (by a pronoun, or naming its value, its
  rival or its person) elaborates that choice: who likes it, why, what it must do ("lint 用 golangci-lint，这个我个人比较
  喜欢", "包管理器用 pnpm，小林不喜欢 yarn", "Ana is our designer, she wants ..."). The keyed memory holds the choice (and
  its reason); the rest kept apart is a loose sentence nobody asked for. A keyless statement with a subject of its
  own stays ("We use Postgres, and all migrations are written by hand"), and so does one in a sentence of its own.
* The clauses after a request for work in the same sentence are that work's specification ("write me the bucketing
  function, buckets of 150 rating points, widen every 10s"; "帮我写个脚本，批量模拟 100 台设备"): the task's details,
  not the project's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from z0_memory.offline.extraction.clauses import split_clauses, split_sentences, strip_noise
from z0_memory.offline.extraction.cues import TASK_REQUEST
from z0_memory.offline.extraction.model import Statement
from z0_memory.offline.extraction.vocabulary import term_pattern
from z0_memory.text import contains_cjk


def _sentence_of(text: str, sentences: Sequence[str]) -> int | None:
    """The index of the sentence holding ``text`` (or held by it), else None."""
    probe = text.strip(" .。!！,，")
    return next((n for n, s in enumerate(sentences) if probe and (probe in s or s.strip(" .。!！") in probe)), None)


# A clause that points back at what its sentence named: a pronoun ("she wants ...", "its dashboard", "这个我比较喜欢")
_POINTS_BACK = re.compile(r"\b(?:he|she|they|him|her|them|his|its|it)\b|他|她|它|这个", re.I)


def _elaborates(s: Statement, choices: list[Statement]) -> bool:
    """``s`` (keyless) speaks of the sentence's choices: a pronoun, or a value, rival or person they name."""
    if not choices:
        return False
    own = s.text  # a convention's text may be its whole sentence: the choices' own clauses are not its words
    for c in choices:
        own = own.replace(c.text, " ")
    named = {n for c in choices for n in (c.value, c.rejected, c.person) if n}
    return bool(_POINTS_BACK.search(own)) or any(re.search(term_pattern(n), own, re.I) for n in named)


def without_elaborations(statements: list[Statement], message: str,
                         keyed: Callable[[Statement], str | None]) -> list[Statement]:
    """``statements`` minus keyless ones that elaborate a firm keyed choice of their sentence. ``keyed(s)``: the
    statement's key, or None. A convention with a subject of its own stays ("We use Postgres, and all migrations are
    written by hand")."""
    sentences = split_sentences(strip_noise(message))
    choices: dict[int, list[Statement]] = {}
    for s in statements:
        n = _sentence_of(s.text, sentences)
        if keyed(s) and s.value and not s.hedged and s.said_by == "user" and n is not None:
            choices.setdefault(n, []).append(s)
    return [s for s in statements if keyed(s) or s.value is not None
            or not _elaborates(s, choices.get(_sentence_of(s.text, sentences), []))]


def without_task_details(sentence: str) -> str:
    """The sentence up to its first clause asking for work (that clause and the ones after it specify the task)."""
    clauses = split_clauses(sentence)
    first = next((n for n, c in enumerate(clauses) if TASK_REQUEST.search(c)), None)
    if first is None:
        return sentence
    return ("，" if contains_cjk(sentence) else ", ").join(clauses[:first])
