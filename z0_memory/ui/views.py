"""What the pages show, computed from the scoped stores: the timeline of a fact, the score parts of a recalled
memory, the extraction-outcome chart (inline SVG geometry), and the split of search results."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from z0_memory.offline.fusion import RECENCY_HALF_LIFE_DAYS, RECENCY_WEIGHT, SUPERSEDED_WEIGHT
from z0_memory.schemas import FactVersion, Hit, MemoryRecord
from z0_memory.stores.extraction_log import LogEntry

GROUPS = ("written", "confirmed", "pending", "ignored")
CHART_DAYS = 14


@dataclass(frozen=True)
class TimelineItem:
    """One version of a fact and why it changed from the version before."""

    version: FactVersion
    change: str


def timeline(versions: Sequence[FactVersion]) -> list[TimelineItem]:
    """Every version, newest first, each with a sentence saying what changed."""
    out: list[TimelineItem] = []
    previous: FactVersion | None = None
    for v in versions:
        if previous is None:
            change = f"first recorded as {v.value!r}"
        else:
            change = f"changed from {previous.value!r} to {v.value!r}"
        out.append(TimelineItem(v, change))
        previous = v
    return list(reversed(out))


@dataclass(frozen=True)
class ScoreParts:
    """Why a memory was recalled: the recipe(s) that found it, in which rounds, and the weights of its score."""

    strategy: str
    rounds: list[int]
    raw_score: float | None
    confidence_factor: float
    superseded_factor: float
    recency_factor: float
    final: float

    @property
    def weight(self) -> float:
        return self.confidence_factor * self.superseded_factor * self.recency_factor


def score_parts(hit: Hit, *, include_history: bool = False, now: datetime | None = None) -> ScoreParts:
    """The parts of ``fusion.memory_weight`` for one hit, with what the loop recorded of how it was found."""
    now = now or datetime.now(UTC)
    recency = 1.0
    if hit.created_at is not None:
        age_days = max(0.0, (now - hit.created_at).total_seconds() / 86400)
        recency = 1.0 + RECENCY_WEIGHT * math.exp(-age_days * math.log(2) / RECENCY_HALF_LIFE_DAYS)
    raw = hit.metadata.get("raw_score")
    return ScoreParts(
        strategy=hit.strategy or "?", rounds=[int(r) for r in hit.metadata.get("rounds", [])],
        raw_score=float(raw) if isinstance(raw, int | float) else None,
        confidence_factor=0.5 + 0.5 * hit.confidence,
        superseded_factor=SUPERSEDED_WEIGHT if hit.superseded and not include_history else 1.0,
        recency_factor=recency, final=hit.score,
    )


@dataclass
class Bar:
    x: float
    label: str
    segments: list[dict[str, Any]] = field(default_factory=list)
    total: int = 0


@dataclass
class Chart:
    """A stacked bar chart's geometry, drawn by the template as inline SVG."""

    width: int
    height: int
    bars: list[Bar]
    bar_width: float
    top: int
    groups: tuple[str, ...] = GROUPS

    @property
    def empty(self) -> bool:
        return self.top == 0


def outcome_chart(entries: Sequence[LogEntry], *, days: int = CHART_DAYS, today: date | None = None,
                  width: int = 560, height: int = 160) -> Chart:
    """Extraction outcomes per day (written, confirmed, pending, ignored) over the last ``days`` days."""
    today = today or datetime.now(UTC).date()
    first = today - timedelta(days=days - 1)
    per_day = {first + timedelta(days=i): dict.fromkeys(GROUPS, 0) for i in range(days)}
    for entry in entries:
        day = entry.created_at.astimezone(UTC).date()
        if day in per_day:
            for group, n in entry.counts().items():
                per_day[day][group] += n
    top = max((sum(c.values()) for c in per_day.values()), default=0)
    plot_h, margin = height - 20, 4
    slot = width / days
    bars: list[Bar] = []
    for i, (day, counts) in enumerate(sorted(per_day.items())):
        bar = Bar(x=i * slot + margin / 2, label=day.strftime("%m-%d"), total=sum(counts.values()))
        y = float(plot_h)
        for group in GROUPS:
            h = plot_h * counts[group] / top if top else 0.0
            if h:
                y -= h
                bar.segments.append({"group": group, "y": round(y, 1), "h": round(h, 1), "n": counts[group]})
        bars.append(bar)
    return Chart(width=width, height=height, bars=bars, bar_width=round(slot - margin, 1), top=top)


def split_superseded(items: Sequence[Hit | MemoryRecord]) -> tuple[list[Hit | MemoryRecord], list[Hit | MemoryRecord]]:
    """(current, superseded) of hits or memory records, order kept."""
    current = [i for i in items if not _superseded(i)]
    return current, [i for i in items if _superseded(i)]


def _superseded(item: Hit | MemoryRecord) -> bool:
    if isinstance(item, Hit):
        return item.superseded
    return item.superseded_at is not None


def in_period(created_at: datetime | None, since: date | None, until: date | None) -> bool:
    """Whether a memory was created in [since, until] (whole days, UTC); open ends allowed."""
    if created_at is None:
        return since is None and until is None
    day = created_at.astimezone(UTC).date()
    return (since is None or day >= since) and (until is None or day <= until)
