"""The eval set's two halves for blind development (``scenario_half``), and the figures reported per half."""

from __future__ import annotations

from z0_memory.evaluation import DEFAULT_EVAL_DATASET, load_scenarios
from z0_memory.evaluation.harness import QuestionResult, by_half, scenario_half
from z0_memory.evaluation.models import parse_config
from z0_memory.evaluation.report import summary_table


def result(scenario: str, *, answerable: bool, final: bool, over: int = 0) -> QuestionResult:
    return QuestionResult(
        config="offline", scenario=scenario, question="q1", text="?", type="fact", lang="en", answerable=answerable,
        first_search_suffices=answerable, rounds=1 + over, stop_reason="sufficient", round1_verdict=final,
        final_verdict=final, recall=1.0 if answerable else None, recall_round1=1.0 if answerable else None,
        sufficed_at=1 if answerable else None, over_retrieval=over, latency_ms=1.0, input_tokens=0, output_tokens=0,
        model_calls=0, judge_errors=0)


def test_the_packaged_scenarios_fall_into_two_fixed_halves():
    ids = [s.id for s in load_scenarios(DEFAULT_EVAL_DATASET)]
    halves = {i: scenario_half(i) for i in ids}
    assert set(halves.values()) == {"dev", "holdout"}
    assert halves == {i: scenario_half(i) for i in reversed(ids)}  # a function of the id alone
    assert scenario_half("bakery-backend") == "dev" and scenario_half("ledger-conventions") == "dev"


def test_figures_per_half_only_count_that_half():
    dev = next(i for i in (f"s{n}" for n in range(50)) if scenario_half(i) == "dev")
    holdout = next(i for i in (f"s{n}" for n in range(50)) if scenario_half(i) == "holdout")
    results = [result(dev, answerable=True, final=True), result(dev, answerable=False, final=True),
               result(holdout, answerable=True, final=False, over=3)]
    halves = by_half(results, parse_config("offline"))
    assert halves["dev"]["questions"] == 2 and halves["dev"]["verdict_accuracy"] == 0.5
    assert halves["holdout"]["verdict_accuracy"] == 0.0 and halves["holdout"]["over_retrieval_rounds"] == 3.0
    report = {"scenarios": 2, "questions": 3, "ingestion": "seeded", "mode": "code", "k": 10, "skipped": {},
              "configs": [{"config": "offline", "by_half": halves}]}
    rows = {row: cells for row, cells in zip(summary_table(report).columns[0]._cells,
                                             summary_table(report).columns[1]._cells, strict=True)}
    assert rows["verdict accuracy, dev / holdout half"] == "0.500 / 0.000"
