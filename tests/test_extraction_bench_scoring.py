"""What bench/extraction.py counts as a hedge persisted, and bench/label_agreement.py's comparison of two annotators
(scored with the extractor's own matching): pure functions, no database."""

from __future__ import annotations

import json

import pytest
from bench_support import loaded_bench


@pytest.fixture(scope="module")
def bench():
    with loaded_bench("extraction") as module:
        yield module


def label(key, value, outcome, kind="decision"):
    return {"kind": kind, "key": key, "value": value, "outcome": outcome}


QUEUE_NOW = label("p:stack:queue", "Horizon", "persist")
QUEUE_LATER = label("p:stack:queue", "SQS", "pending")


def test_a_hedge_is_persisted_when_the_turn_settles_its_value_or_an_unaccounted_write_under_its_key(bench):
    labels = [QUEUE_NOW, QUEUE_LATER]  # "the queue is Horizon for now, might move to SQS later"
    assert not bench.hedge_persisted(QUEUE_LATER, [QUEUE_NOW, QUEUE_LATER], labels)  # the right writes
    assert bench.hedge_persisted(QUEUE_LATER, [QUEUE_NOW, label("p:stack:queue", "SQS", "persist")], labels)
    assert bench.hedge_persisted(QUEUE_LATER, [label("p:stack:queue", "SQS later", "persist")], labels)  # under its key
    assert bench.hedge_persisted(QUEUE_LATER, [label("p:infra:queue", "sqs", "supersede")], labels)  # its value
    assert not bench.hedge_persisted(QUEUE_LATER, [label("p:stack:queue", "SQS", "pending")], labels)
    # with no settled label in the turn, a persisted write under the key is the hedge persisted
    assert bench.hedge_persisted(QUEUE_LATER, [label("p:stack:queue", "Horizon", "persist")], [QUEUE_LATER])


def test_two_annotators_are_compared_with_the_extractors_matching(tmp_path):
    def turns(*expected):
        return [{"conversation": "p", "session": 1, "turn": i + 1, "role": "user", "text": f"message {i}",
                 "expected": list(e)} for i, e in enumerate(expected)]

    reference = turns([QUEUE_NOW, QUEUE_LATER], [label("p:process:deploy", "Kamal", "persist")], [])
    other = turns([QUEUE_NOW, label("p:stack:queue", "SQS", "persist")],  # settles the hedge
                  [label("p:tooling:deploy", "kamal", "persist")],  # another key: lenient only
                  [label(None, None, "persist", kind="context")])  # one more
    with loaded_bench("label_agreement") as agreement:
        assert agreement.compare(reference, reference)["all"]["precision"] == 1.0
        result = agreement.compare(reference, other)
    assert result["all"] == {"precision": 0.25, "recall": 0.333, "lenient_precision": 0.5,
                                  "lenient_recall": 0.667, "labels_reference": 3, "labels_other": 4, "user_turns": 3}
    assert result["pending_settled_by_the_other"] == 1
    with pytest.raises(SystemExit, match="not the same turns"):
        agreement.compare(reference, other[:2])


def test_a_label_key_without_its_project_is_read_with_the_conversations(bench, tmp_path):
    # the label format writes people and preference keys as "people:tech_lead"; a writer may take that literally
    path = tmp_path / "labels.jsonl"
    rows = [{"conversation": "wx", "session": 1, "turn": 1, "role": "user", "text": "Dana leads it",
             "expected": [label("people:tech_lead", "Dana", "persist", kind="fact"),
                          label("wx:stack:language", "Python", "persist", kind="fact"),
                          label(None, None, "persist", kind="context")]}]
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    keys = [lab["key"] for lab in bench.load(path)["wx"][0]["expected"]]
    assert keys == ["wx:people:tech_lead", "wx:stack:language", None]
