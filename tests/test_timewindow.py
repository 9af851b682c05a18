"""Periods named in questions: the parser, the router's reading, and the loop ranking memories from that period."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from z0_memory.offline.fusion import TIME_WEIGHT, fuse_rounds, time_weight
from z0_memory.offline.router import route
from z0_memory.schemas import Hit
from z0_memory.timewindow import (
    DECAY_DAYS,
    OPEN_SIDE_DAYS,
    TimeWindow,
    parse_time_window,
)

NOW = datetime(2026, 12, 1, 10, 30, tzinfo=UTC)  # a Tuesday


def span(text: str) -> tuple[str, str] | None:
    """(first day, last day) of the window read from ``text``, as ISO dates."""
    window = parse_time_window(text, now=NOW)
    if window is None:
        return None
    return window.start.date().isoformat(), (window.end - timedelta(microseconds=1)).date().isoformat()


@pytest.mark.parametrize(("text", "expected"), [
    ("What movie did Nate watch on October 6, 2022?", ("2022-10-06", "2022-10-06")),
    ("What did Gina find on 1 February, 2023?", ("2023-02-01", "2023-02-01")),
    ("What happened on the 3rd of June 2023?", ("2023-06-03", "2023-06-03")),
    ("deployed 2024-02-29 to prod", ("2024-02-29", "2024-02-29")),
    ("我们2023年5月1日决定了什么？", ("2023-05-01", "2023-05-01")),
    ("What did John attend in March 2023?", ("2023-03-01", "2023-03-31")),
    ("我们2023年5月决定了什么？", ("2023-05-01", "2023-05-31")),
    ("since 2021-03 we use Hono", ("2021-03-01", "2021-04-29")),
    ("Which tournament did Nate win in the beginning of November 2022?", ("2022-11-01", "2022-11-15")),
    ("What shipped in late December 2022?", ("2022-12-17", "2022-12-31")),
    ("What state did Joanna visit in summer 2021?", ("2021-06-01", "2021-08-31")),
    ("How often did we deploy in winter 2022?", ("2022-12-01", "2023-02-28")),
    ("How many times has Melanie gone to the beach in 2023?", ("2023-01-01", "2023-12-31")),
    ("2023年的决定", ("2023-01-01", "2023-12-31")),
    ("Where was Tim in the week before 16 November 2023?", ("2023-11-09", "2023-11-15")),
    ("What did Maria do the weekend before April 10, 2023?", ("2023-04-01", "2023-04-09")),
    ("Where was John between 11 August 2023 and 15 August 2023?", ("2023-08-11", "2023-08-15")),
    ("What did we decide before 1 March 2024?", ((datetime(2024, 3, 1) - timedelta(days=OPEN_SIDE_DAYS)).date().isoformat(), "2024-02-29")),
    ("What changed after June 2024?", ("2024-07-01", (datetime(2024, 7, 1) + timedelta(days=OPEN_SIDE_DAYS - 1)).date().isoformat())),
    ("What did we decide yesterday?", ("2026-11-30", "2026-11-30")),
    ("What did we decide last week?", ("2026-11-23", "2026-11-29")),
    ("上个月用的什么数据库？", ("2026-11-01", "2026-11-30")),
    ("What did we pick last year?", ("2025-01-01", "2025-12-31")),
    ("What did we ship 2 weeks ago?", ("2026-11-14", "2026-11-20")),
])
def test_periods_are_read(text, expected):
    assert span(text) == expected


@pytest.mark.parametrize("text", [
    "What is Nate's favorite genre?",
    "We had 2023 users in the beta",  # a bare number is not a year
    "Which port, 8080 or 2024?",
    "What did we do in May?",  # which May is ambiguous
    "deploy on 2024-02-30",  # not a date
    "",
])
def test_no_period(text):
    assert parse_time_window(text, now=NOW) is None


def test_window_closeness_and_round_trip():
    window = parse_time_window("in March 2023", now=NOW)
    assert window is not None and window.phrase == "March 2023"
    inside = datetime(2023, 3, 15, tzinfo=UTC)
    assert window.distance_days(inside) == 0 and window.closeness(inside) == 1.0
    week_later = datetime(2023, 4, 8, tzinfo=UTC)
    assert window.distance_days(week_later) == pytest.approx(7.0)
    assert window.closeness(week_later) == pytest.approx(math.exp(-7 / DECAY_DAYS))
    assert window.closeness(datetime(2023, 3, 15)) == 1.0  # naive times are read as UTC
    assert window.closeness(None) == 0.0
    assert TimeWindow.from_dict(window.to_dict()) == window and TimeWindow.from_dict(None) is None
    assert "2023-03-01 to 2023-03-31" in window.describe()


def test_router_keeps_the_period_and_says_so():
    decision = route("What did we decide about the cache on 3 June, 2023?", project="acme", now=NOW)
    assert decision.strategies == ["hybrid"]
    assert decision.time_window is not None and decision.time_window["start"].startswith("2023-06-03")
    assert "3 June, 2023" in decision.reason and "rank higher" in decision.reason
    assert route("Which cache do we use?", project="acme", now=NOW).time_window is None


def test_time_weight_prefers_the_named_period_in_fusion():
    window = parse_time_window("on 3 June, 2023", now=NOW)
    hits = [
        Hit(id="old", source="semantic", content="a", score=1.0, created_at=datetime(2022, 1, 1, tzinfo=UTC)),
        Hit(id="then", source="semantic", content="b", score=0.6, created_at=datetime(2023, 6, 3, 12, tzinfo=UTC)),
        Hit(id="undated", source="kv", content="c", score=0.9),
    ]
    assert time_weight(hits[1], window) == 1 + TIME_WEIGHT
    assert time_weight(hits[0], window) == pytest.approx(1.0) and time_weight(hits[2], window) == 1.0
    assert time_weight(hits[0], None) == 1.0
    plain = fuse_rounds([hits], "what then?")
    weighted = fuse_rounds([hits], "what then?", weight=lambda h: time_weight(h, window))
    assert [h.id for h in plain] == ["old", "then", "undated"]
    assert [h.id for h in weighted] == ["then", "old", "undated"]
    assert weighted[0].score == pytest.approx(plain[1].score * (1 + TIME_WEIGHT))
