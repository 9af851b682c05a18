"""bench/speech_acts.py: mentions and their acts read from the labels, leave-one-conversation-out, dev files only."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from bench_support import loaded_bench



@pytest.fixture(scope="module")
def bench():
    with loaded_bench("speech_acts") as module:
        yield module


def test_each_mention_takes_the_act_of_the_label_that_names_it(bench, tmp_path: Path) -> None:
    turn = {"conversation": "shop", "session": 1, "turn": 1, "role": "user",
            "text": "We use Redis for caching, not Memcached. Maybe Kafka for the queue later.",
            "expected": [{"kind": "decision", "key": "shop:database:cache", "value": "Redis", "outcome": "persist"},
                         {"kind": "decision", "key": "shop:stack:queue", "value": "Kafka", "outcome": "pending"}]}
    data = tmp_path / "extraction_dev_x.jsonl"
    data.write_text(json.dumps(turn) + "\n", encoding="utf-8")
    found = bench.mentions(data)
    assert {m["value"]: m["label"] for m in found} == {"Redis": "assert", "Memcached": "none", "Kafka": "hedge"}
    assert all("X" in m["masked"] and m["value"] not in m["masked"] for m in found)


def _predictions_before_and_after_changing_one_groups_labels(held_out, n_per_group, seed):
    """Random unit vectors and labels in three groups; ``held_out`` is called on the labels as given and with the
    last group's labels changed: what a model predicts for that group must not move, the others' must."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(3 * n_per_group, 8))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = rng.integers(0, 3, size=3 * n_per_group)
    groups = np.repeat(np.array(["a", "b", "c"]), n_per_group)
    flipped = y.copy()
    flipped[groups == "c"] = (flipped[groups == "c"] + 1) % 3  # change only the held-out group's labels
    return held_out(x, y, groups), held_out(x, flipped, groups), groups == "c"


def test_a_held_out_conversation_is_never_scored_by_a_model_that_saw_its_labels(bench) -> None:
    before, after, held = _predictions_before_and_after_changing_one_groups_labels(
        bench.leave_one_conversation_out, 20, seed=0)
    assert (before[held] == after[held]).all()
    assert (before[~held] != after[~held]).any()  # the others' models did see the changed conversation


def test_held_out_blind_files_are_refused_and_retired_ones_are_development_data(bench) -> None:
    for held in ("bench/data/extraction_blind_2026-12-03g.jsonl", "bench/data/extraction_blind_2027-01-01z.jsonl"):
        with pytest.raises(SystemExit) as refused:
            bench.main([held])
        assert refused.value.code == 2
    files = bench.default_files()
    assert not any(bench.held_out(f) for f in files)
    assert {f.name for f in files} >= set(bench.RETIRED) and all(f.exists() for f in files)
    assert set(bench.AUTHORS) == {f.name for f in files}  # every training file has an author to hold out


def test_a_held_out_author_is_never_read_by_a_model_that_saw_any_of_their_files(bench) -> None:
    before, after, held = _predictions_before_and_after_changing_one_groups_labels(
        bench.leave_one_batch_out, 30, seed=1)
    assert np.allclose(before[held], after[held])
    assert not np.allclose(before[~held], after[~held])


def test_the_floor_reads_an_unsure_assert_as_none(bench) -> None:
    probabilities = np.array([[0.45, 0.2, 0.35], [0.7, 0.1, 0.2], [0.2, 0.5, 0.3]])
    assert bench._floored(probabilities, 0.5) == ["none", "assert", "hedge"]
    assert bench._floored(probabilities, 0.0) == ["assert", "assert", "hedge"]
    assert bench.f1_scores(["assert", "none", "hedge"], ["assert", "assert", "hedge"]) == pytest.approx(
        {"assert": 2 / 3, "hedge": 1.0, "none": 0.0, "macro": (2 / 3 + 1.0) / 3})
