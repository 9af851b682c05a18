"""Time windows named in a question ("on 3 June, 2023", "in March 2024", "last week", "2023年5月"), for retrieval.

A memory's time is its ``created_at``: when it was written, or, for imported conversations, the session's date.
A question that names a period is about what was said or decided then, so retrieval searches that period on its
own as well as everywhere, and ranks memories from inside it higher (``stores.recipes``). Because people date
things loosely (an event "in March" told in early April, "before May 10" told on May 7), the window is a soft
preference, never a hard filter: :meth:`TimeWindow.closeness` decays with the distance to the window.

What is read, in English and Chinese:

* a day: ``3 June 2023``, ``June 3rd, 2023``, ``2023-06-03``, ``2023/6/3``, ``2023年6月3日`` (one day);
* a month: ``June 2023``, ``2023-06``, ``2023年6月`` (the whole month); ``early`` / ``the beginning of`` and
  ``late`` / ``the end of`` keep its first or second half; a season: ``summer 2021`` (northern-hemisphere months);
* a year: ``in 2022``, ``during 2022``, ``since 2022`` ..., ``2022年`` (a bare number is not taken for a year);
* relative to ``now``: ``today``, ``yesterday``, ``this/last week``, ``this/last month``, ``this/last year``,
  ``N days/weeks/months ago``, 今天, 昨天, 本周, 上周, 这个月, 上个月, 今年, 去年;
* modifiers of a date: ``the week before X`` (the 7 days before X), ``the day before X``, ``before X`` / ``after X``
  (:data:`OPEN_SIDE_DAYS` days on that side), ``since X`` (X and the
  :data:`OPEN_SIDE_DAYS` days from its start), ``between X and Y`` (from X to the end of Y).

Dates without a year ("in May") are not read: which May is ambiguous. The first period found wins.
"""

from __future__ import annotations

import calendar
import math
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

OPEN_SIDE_DAYS = 60
DECAY_DAYS = 7.0

_MONTH_NAMES = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTH_NAMES.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTH_NAMES["sept"] = 9
_MON = r"(?P<mon>" + "|".join(sorted(_MONTH_NAMES, key=len, reverse=True)) + r")\.?"
_MON2 = _MON.replace("?P<mon>", "?P<mon2>")
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_DAY2 = _DAY.replace("?P<day>", "?P<day2>")
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_SEASONS = {"spring": (3, 5), "summer": (6, 8), "autumn": (9, 11), "fall": (9, 11), "winter": (12, 2)}

# Absolute dates, most specific first. Each pattern's groups: day?, mon?, year (and part / season for months).
_ABSOLUTE: list[tuple[str, re.Pattern[str]]] = [
    ("day", re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MON},?\s+{_YEAR}\b", re.IGNORECASE)),
    ("day", re.compile(rf"\b{_MON}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE)),
    ("day", re.compile(r"\b(?P<year>(?:19|20)\d{2})[-/.](?P<mon>\d{1,2})[-/.](?P<day>\d{1,2})\b")),
    ("day", re.compile(r"(?P<year>(?:19|20)\d{2})\s*年\s*(?P<mon>\d{1,2})\s*月\s*(?P<day>\d{1,2})\s*[日号]")),
    ("month", re.compile(rf"\b(?:(?P<part>early|late|mid|the\s+beginning\s+of|the\s+start\s+of|the\s+end\s+of)\s+)?"
                         rf"{_MON},?\s+{_YEAR}\b", re.IGNORECASE)),
    ("month", re.compile(r"\b(?P<year>(?:19|20)\d{2})-(?P<mon>\d{1,2})\b(?![-/.]\d)")),
    ("month", re.compile(r"(?P<year>(?:19|20)\d{2})\s*年\s*(?P<mon>\d{1,2})\s*月")),
    ("season", re.compile(rf"\b(?P<season>{'|'.join(_SEASONS)})\s+(?:of\s+)?{_YEAR}\b", re.IGNORECASE)),
    ("year", re.compile(rf"\b(?:in|during|since|of|throughout|until|till|by|before|after|from)\s+(?:the\s+year\s+)?"
                        rf"{_YEAR}\b(?!\s*(?:%|[$€£]|dollars|people|users|items|euros))", re.IGNORECASE)),
    ("year", re.compile(r"(?P<year>(?:19|20)\d{2})\s*年(?!\s*\d)")),
]
_RELATIVE = re.compile(
    r"\b(?P<word>today|tonight|yesterday|this\s+(?:week|month|year)|last\s+(?:week|month|year)|past\s+(?:week|month))\b"
    r"|\b(?P<n>\d{1,3}|a|an|one|two|three|four|five|six)\s+(?P<unit>days?|weeks?|months?)\s+ago\b"
    r"|(?P<zh>今天|今日|昨天|本周|这周|上周|这个月|本月|上个月|今年|去年)",
    re.IGNORECASE,
)
_SMALL_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_BEFORE_WEEK = re.compile(r"\b(?:the\s+)?(?P<unit>week|weekend|day|month)\s+(?:before|prior\s+to)\s*$", re.IGNORECASE)
_BEFORE = re.compile(r"\b(?:before|prior\s+to|until|till|by)\s*$", re.IGNORECASE)
_AFTER = re.compile(r"\b(?:after|following)\s*$", re.IGNORECASE)
_SINCE = re.compile(r"\b(?:since|from)\s*$", re.IGNORECASE)
_BETWEEN = re.compile(r"\bbetween\s*$", re.IGNORECASE)
_AND_NEXT = re.compile(r"\s*(?:and|to|-|–)\s*", re.IGNORECASE)


@dataclass(frozen=True)
class TimeWindow:
    """A half-open period ``[start, end)`` in UTC, with the words it was read from."""

    start: datetime
    end: datetime
    phrase: str

    def distance_days(self, when: datetime) -> float:
        """0 inside the window, else the days to its nearer edge."""
        when = when if when.tzinfo else when.replace(tzinfo=UTC)
        if when < self.start:
            return (self.start - when).total_seconds() / 86400
        if when >= self.end:
            return (when - self.end).total_seconds() / 86400
        return 0.0

    def closeness(self, when: datetime | None) -> float:
        """1 inside the window, decaying by ``e`` every :data:`DECAY_DAYS` days outside it; 0 without a time."""
        return 0.0 if when is None else math.exp(-self.distance_days(when) / DECAY_DAYS)

    def padded(self, days: float) -> TimeWindow:
        return TimeWindow(self.start - timedelta(days=days), self.end + timedelta(days=days), self.phrase)

    def describe(self) -> str:
        last = (self.end - timedelta(microseconds=1)).date()
        span = self.start.date().isoformat() if last == self.start.date() else f"{self.start.date()} to {last}"
        return f"'{self.phrase}' ({span})"

    def to_dict(self) -> dict[str, str]:
        return {"start": self.start.isoformat(), "end": self.end.isoformat(), "phrase": self.phrase}

    @classmethod
    def from_dict(cls, data: dict[str, str] | None) -> TimeWindow | None:
        if not data:
            return None
        return cls(datetime.fromisoformat(data["start"]), datetime.fromisoformat(data["end"]), data.get("phrase", ""))


def _at(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def _month_number(text: str) -> int | None:
    if text.isdigit():
        n = int(text)
        return n if 1 <= n <= 12 else None
    return _MONTH_NAMES.get(text.lower().rstrip("."))


def _absolute(kind: str, m: re.Match[str]) -> tuple[date, date] | None:
    """The [first day, day after the last) of an absolute match, or None when it is not a real date."""
    groups = m.groupdict()
    year = int(groups["year"])
    try:
        if kind == "year":
            return date(year, 1, 1), date(year + 1, 1, 1)
        if kind == "season":
            first, last = _SEASONS[groups["season"].lower()]
            end_year = year + 1 if last < first else year
            return date(year, first, 1), _month_after(end_year, last)
        month = _month_number(groups["mon"])
        if month is None:
            return None
        if kind == "day":
            day = date(year, month, int(groups["day"]))
            return day, day + timedelta(days=1)
        start, end = date(year, month, 1), _month_after(year, month)
        part = " ".join((groups.get("part") or "").lower().split())
        if part in {"early", "the beginning of", "the start of"}:
            return start, start + timedelta(days=15)
        if part in {"late", "the end of"}:
            return end - timedelta(days=15), end
        return start, end
    except ValueError:  # 31 February and the like
        return None


def _month_after(year: int, month: int) -> date:
    return date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)


def _start(m: re.Match[str]) -> int:
    return m.start("year") if m.re.groupindex.keys() == {"year"} else m.start()


def _first_absolute(text: str, pos: int = 0) -> tuple[re.Match[str], date, date] | None:
    best: tuple[re.Match[str], date, date] | None = None
    for kind, pattern in _ABSOLUTE:
        for m in pattern.finditer(text, pos):
            span = _absolute(kind, m)
            if span is None:
                continue
            # A year read after a preposition ("since 2021-03") starts where its number starts, so a more
            # specific reading of the same number, earlier in the list, wins the tie.
            if best is None or _start(m) < _start(best[0]):
                best = (m, *span)
            break
    return best


def _relative(text: str, now: datetime) -> tuple[re.Match[str], date, date] | None:
    m = _RELATIVE.search(text)
    if m is None:
        return None
    today = now.astimezone(UTC).date()
    word = " ".join((m.group("word") or m.group("zh") or "").lower().split())
    monday = today - timedelta(days=today.weekday())
    first = today.replace(day=1)
    spans = {
        "today": (today, today + timedelta(days=1)), "tonight": (today, today + timedelta(days=1)),
        "今天": (today, today + timedelta(days=1)), "今日": (today, today + timedelta(days=1)),
        "yesterday": (today - timedelta(days=1), today), "昨天": (today - timedelta(days=1), today),
        "this week": (monday, today + timedelta(days=1)), "本周": (monday, today + timedelta(days=1)),
        "这周": (monday, today + timedelta(days=1)),
        "last week": (monday - timedelta(days=7), monday), "上周": (monday - timedelta(days=7), monday),
        "past week": (today - timedelta(days=7), today + timedelta(days=1)),
        "this month": (first, today + timedelta(days=1)), "这个月": (first, today + timedelta(days=1)),
        "本月": (first, today + timedelta(days=1)),
        "last month": ((first - timedelta(days=1)).replace(day=1), first),
        "上个月": ((first - timedelta(days=1)).replace(day=1), first),
        "past month": (today - timedelta(days=31), today + timedelta(days=1)),
        "this year": (date(today.year, 1, 1), today + timedelta(days=1)),
        "今年": (date(today.year, 1, 1), today + timedelta(days=1)),
        "last year": (date(today.year - 1, 1, 1), date(today.year, 1, 1)),
        "去年": (date(today.year - 1, 1, 1), date(today.year, 1, 1)),
    }
    if word in spans:
        return m, *spans[word]
    n = int(m.group("n")) if m.group("n").isdigit() else _SMALL_NUMBERS[m.group("n").lower()]
    unit = m.group("unit").lower().rstrip("s")
    days = n * {"day": 1, "week": 7, "month": 30}[unit]
    center = today - timedelta(days=days)
    half = {"day": 1, "week": 3, "month": 15}[unit]
    return m, center - timedelta(days=half), center + timedelta(days=half + 1)


def parse_time_window(text: str, *, now: datetime | None = None) -> TimeWindow | None:
    """The period ``text`` names, or None (see the module docstring for what is read)."""
    now = now or datetime.now(UTC)
    found = _first_absolute(text)
    if found is None:
        rel = _relative(text, now)
        if rel is None:
            return None
        m, start, end = rel
        return TimeWindow(_at(start), _at(end), m.group(0))
    m, start, end = found
    before, phrase_start, phrase_end = text[: m.start()], m.start(), m.end()
    if _BETWEEN.search(before):
        nxt = _AND_NEXT.match(text, m.end())
        second = _first_absolute(text, nxt.end()) if nxt else None
        if second is not None and second[0].start() == nxt.end() and second[1] >= start:
            end, phrase_end = second[2], second[0].end()
        phrase_start = _BETWEEN.search(before).start()
    elif week := _BEFORE_WEEK.search(before):
        unit = week.group("unit").lower()
        span = {"day": 1, "week": 7, "weekend": 9, "month": 31}[unit]
        start, end = start - timedelta(days=span), start
        phrase_start = week.start()
    elif side := _BEFORE.search(before):
        start, end = start - timedelta(days=OPEN_SIDE_DAYS), start
        phrase_start = side.start()
    elif side := _AFTER.search(before):
        start, end = end, end + timedelta(days=OPEN_SIDE_DAYS)
        phrase_start = side.start()
    elif side := _SINCE.search(before):
        end = max(end, start + timedelta(days=OPEN_SIDE_DAYS))
        phrase_start = side.start()
    return TimeWindow(_at(start), _at(end), text[phrase_start:phrase_end].strip())
