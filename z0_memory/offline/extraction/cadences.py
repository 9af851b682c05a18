"""A release cadence as the user said it ("every 2 weeks", "every other Thursday", "每两周一次"): the value of the
release slot is the cadence phrase alone, not the clause around it ("every 2 weeks we tag a version on main")."""

from __future__ import annotations

import re

_DAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?"
_UNIT = rf"(?:days?|weeks?|months?|sprints?|quarters?|{_DAY}|mornings?|nights?|evenings?)"
_COUNT = r"(?:other|second|third|\d+|one|two|three|four|six|few|couple(?: of)?)"
CADENCE = re.compile(
    rf"\b(?:(?:every|each)\s+(?:{_COUNT}\s+)?{_UNIT}(?:\s+(?:morning|afternoon|evening|night))?(?:\s+on\s+{_DAY})?|"
    rf"(?:once|twice|\d+(?:-\d+)?\s+times)\s+(?:a|per)\s+(?:day|week|month|sprint|quarter)|"
    r"(?:bi-?)?weekly|fortnightly|monthly|nightly|daily|quarterly|ad hoc|on demand)\b"
    r"|每(?:隔)?[一两二三四五六七八九十\d]*(?:个)?(?:(?:周|星期)(?:[一二三四五六日天](?![个次版]))?|天|月|季度|迭代|sprint)"
    r"(?:一次|一版|一个版本)?"
    r"|[两二三四\d]+(?:周|个月)(?:一次|一版|一个版本)",
    re.I,
)


# A Chinese cadence is said to the clause's end ("每两周一个 release train", "每周二维护停服更新"), a closing particle aside
_ZH_TO_CLAUSE_END = re.compile(r"[^，,。.;；!！?？\n]*?(?=[来吧了呢啊]?\s*(?:[，,。.;；!！?？\n]|$))")


def cadence_after(text: str, start: int) -> tuple[int, int] | None:
    """(start, end) of the first cadence phrase in ``text`` at or after ``start``."""
    m = CADENCE.search(text, start)
    if m is None:
        return None
    if not re.match(r"[A-Za-z]", m.group(0)):
        return m.start(), _ZH_TO_CLAUSE_END.match(text, m.end()).end()
    return m.start(), m.end()
