"""What a message says around a choice, not beside it: no memory of its own.

* A clause with no key in a sentence that states a keyed choice elaborates that choice: who likes it, why, what it
  must do ("lint 用 golangci-lint，这个我个人比较喜欢", "包管理器用 pnpm，小林不喜欢 yarn", "测试用 GoogleTest，perft 的结果必须跟
  Stockfish 对得上", "decided: no SQS, staying on Horizon"). The keyed memory holds the choice (and its reason); the
  rest kept apart is a loose sentence nobody asked for. A keyless statement in a sentence of its own stays.
* The clauses after a request for work in the same sentence are that work's specification ("write me the bucketing
  function, buckets of 150 rating points, widen every 10s"; "帮我写个脚本，批量模拟 100 台设备"): the task's details,
  not the project's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from z0_memory.offline.extraction.clauses import split_clauses, split_sentences, strip_noise
from z0_memory.offline.extraction.cues import TASK_REQUEST
from z0_memory.offline.extraction.model import Statement
from z0_memory.text import contains_cjk


def _sentence_of(text: str, sentences: Sequence[str]) -> int | None:
    """The index of the sentence holding ``text`` (or held by it), else None."""
    probe = text.strip(" .。!！,，")
    return next((n for n, s in enumerate(sentences) if probe and (probe in s or s.strip(" .。!！") in probe)), None)


def without_elaborations(statements: list[Statement], message: str, keyed: Callable[[Statement], str | None]) -> list[Statement]:
    """``statements`` minus keyless ones whose sentence also states a firm keyed choice. ``keyed(s)``: the
    statement's key, or None."""
    sentences = split_sentences(strip_noise(message))
    chosen = {_sentence_of(s.text, sentences) for s in statements
              if keyed(s) and s.value and not s.hedged and s.said_by == "user"} - {None}
    return [s for s in statements
            if keyed(s) or s.value is not None or _sentence_of(s.text, sentences) not in chosen]


def without_task_details(sentence: str) -> str:
    """The sentence up to its first clause asking for work (that clause and the ones after it specify the task)."""
    clauses = split_clauses(sentence)
    first = next((n for n, c in enumerate(clauses) if TASK_REQUEST.search(c)), None)
    if first is None:
        return sentence
    return ("，" if contains_cjk(sentence) else ", ").join(clauses[:first])
