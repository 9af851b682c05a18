"""Showing an evaluation report: a rich table, the JSON file, and a PNG chart (matplotlib, ``z0-memory[eval]``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.table import Table

from z0_memory.errors import ConfigurationError

CHART_PANELS: tuple[tuple[str, str, str], ...] = (
    ("recall_at_k", "recall@k (final)", "share"),
    ("verdict_accuracy", "judge verdict accuracy", "share"),
    ("over_retrieval_rounds", "over-retrieval (rounds / question)", "rounds"),
    ("mean_rounds", "mean rounds", "rounds"),
    ("latency_p50_ms", "latency p50 / p95", "ms"),
    ("tokens_per_question", "judge tokens / question", "tokens"),
)


def _f(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


ROWS: tuple[tuple[str, str, int], ...] = (
    ("recall_at_k", "recall@{k} (final)", 3),
    ("recall_at_k_round1", "recall@{k} (round 1)", 3),
    ("verdict_accuracy", "verdict accuracy (all)", 3),
    ("round1_verdict_accuracy", "round-1 verdict = first_search_suffices", 3),
    ("final_verdict_accuracy", "final verdict = answerable", 3),
    ("over_retrieval_rounds", "over-retrieval (rounds / question)", 2),
    ("over_retrieval_share", "questions over-retrieved", 3),
    ("mean_rounds", "mean rounds", 2),
    ("latency_p50_ms", "latency p50 (ms)", 1),
    ("latency_p95_ms", "latency p95 (ms)", 1),
    ("model_calls", "judge model calls", 0),
    ("input_tokens", "input tokens", 0),
    ("output_tokens", "output tokens", 0),
    ("tokens_per_question", "tokens / question", 0),
    ("cost_usd", "estimated cost (USD)", 4),
    ("judge_errors", "judge calls failed (offline fallback)", 0),
)


HALF_ROWS: tuple[tuple[str, str, int], ...] = (
    ("verdict_accuracy", "verdict accuracy, dev / holdout half", 3),
    ("over_retrieval_rounds", "over-retrieval, dev / holdout half", 2),
)


def summary_table(report: dict[str, Any]) -> Table:
    """One row per figure, one column per configuration (skipped ones say why)."""
    table = Table(title=f"z0-memory eval: {report['scenarios']} scenarios, {report['questions']} questions\n"
                        f"({report['ingestion']}; {report['mode']} mode)")
    table.add_column("figure")
    configs = report["configs"]
    for c in configs:
        table.add_column(c["config"], justify="right")
    for name in report.get("skipped", {}):
        table.add_column(name, justify="right")
    skipped = list(report.get("skipped", {}).values())
    for i, (metric, label, digits) in enumerate(ROWS):
        cells = []
        for c in configs:
            value = c.get(metric)
            if metric == "cost_usd" and value is None:
                cells.append("n/a (no price)")
            else:
                cells.append(_f(float(value), digits) if isinstance(value, int | float) and digits else _f(value))
        cells += [f"skipped: {reason}" if i == 0 else "" for reason in skipped]
        table.add_row(label.format(k=report["k"]), *cells)
    for metric, label, digits in HALF_ROWS:
        cells = [" / ".join(_f(c.get("by_half", {}).get(h, {}).get(metric), digits) for h in ("dev", "holdout"))
                 for c in configs]
        table.add_row(label, *cells, *["" for _ in skipped])
    return table


def write_json(report: dict[str, Any], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    return path


def write_chart(report: dict[str, Any], path: str | Path) -> Path:
    """A PNG with one bar panel per figure of :data:`CHART_PANELS`, one bar per configuration."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ConfigurationError("--chart needs matplotlib: pip install 'z0-memory[eval]'") from None
    configs: Sequence[dict[str, Any]] = report["configs"]
    if not configs:
        raise ConfigurationError("no configuration ran: nothing to chart")
    names = [c["config"] for c in configs]
    colors = [plt.get_cmap("tab10")(i % 10) for i in range(len(names))]
    fig, axes = plt.subplots(2, 3, figsize=(13, 7.5))
    for ax, (metric, title, unit) in zip(axes.flat, CHART_PANELS, strict=True):
        values = [float(c.get(metric) or 0.0) for c in configs]
        bars = ax.bar(range(len(names)), values, color=colors)
        if metric == "latency_p50_ms":
            p95 = [float(c.get("latency_p95_ms") or 0.0) for c in configs]
            ax.scatter(range(len(names)), p95, marker="_", s=400, color="black", zorder=3, label="p95")
            ax.legend(loc="upper left", fontsize=8)
        if unit == "share":
            ax.set_ylim(0, 1.05)
        if metric == "recall_at_k":
            title = f"recall@{report['k']} (final; dot: round 1)"
            r1 = [float(c.get("recall_at_k_round1") or 0.0) for c in configs]
            ax.scatter(range(len(names)), r1, color="black", zorder=3)
        ax.set_title(title, fontsize=10)
        ax.set_ylabel(unit, fontsize=8)
        ax.set_xticks(range(len(names)), names, rotation=20, ha="right", fontsize=8)
        ax.bar_label(bars, labels=[f"{v:.2f}" if v < 100 else f"{v:.0f}" for v in values], fontsize=7)
    fig.suptitle(f"z0-memory eval — {report['dataset']} ({report['questions']} questions, {report['ingestion']})",
                 fontsize=11)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
