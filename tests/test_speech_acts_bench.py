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


def test_a_held_out_conversation_is_never_scored_by_a_model_that_saw_its_labels(bench) -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 8))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = rng.integers(0, 3, size=60)
    groups = np.repeat(np.array(["a", "b", "c"]), 20)
    before = bench.leave_one_conversation_out(x, y, groups)
    flipped = y.copy()
    flipped[groups == "b"] = (flipped[groups == "b"] + 1) % 3  # change only the held-out conversation's labels
    after = bench.leave_one_conversation_out(x, flipped, groups)
    assert (before[groups == "b"] == after[groups == "b"]).all()
    assert (before[groups != "b"] != after[groups != "b"]).any()  # the others' models did see "b"


def test_blind_files_are_refused(bench) -> None:
    with pytest.raises(SystemExit) as refused:
        bench.main(["bench/data/extraction_blind_2026-12-02a.jsonl"])
    assert refused.value.code == 2
