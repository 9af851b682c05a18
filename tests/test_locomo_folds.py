"""The leave-one-conversation-out protocol of bench/locomo_retrieval.py --folds: choices, patching, summary."""

from __future__ import annotations


import pytest
from bench_support import loaded_bench



@pytest.fixture(scope="module")
def bench():
    with loaded_bench("locomo_retrieval") as module:
        yield module


# three conversations, one constant "K" (default 1): value 2 is best on a alone, value 3 on b and c together
SCORES = {"K": {
    1: {"a": [0.5, 0.5], "b": [0.5], "c": [0.5]},
    2: {"a": [1.0, 1.0], "b": [0.4], "c": [0.4]},
    3: {"a": [0.0, 0.0], "b": [0.9], "c": [0.6]},
}}


def test_each_fold_chooses_on_the_other_conversations_only(bench):
    chosen = bench.choose_by_folds(SCORES, {"K": 1}, ["a", "b", "c"])
    # held out a: b+c pooled -> 1: 0.5, 2: 0.4, 3: 0.75; held out b: a+c -> 0.5, 0.8, 0.2; held out c: a+b -> 0.5,
    # 0.8, 0.3
    assert chosen == {"a": {"K": 3}, "b": {"K": 2}, "c": {"K": 2}}


@pytest.mark.parametrize("held_out", ["a", "b", "c"])
def test_the_held_out_scores_never_change_its_fold(bench, held_out):
    before = bench.choose_by_folds(SCORES, {"K": 1}, ["a", "b", "c"])[held_out]
    for value in (1, 2, 3):  # make each value in turn overwhelmingly best on the held-out conversation
        rigged = {"K": {v: {c: ([100.0] * len(s) if (c == held_out and v == value) else s) for c, s in per.items()}
                        for v, per in SCORES["K"].items()}}
        assert bench.choose_by_folds(rigged, {"K": 1}, ["a", "b", "c"])[held_out] == before
    # while the other folds do see it
    other = next(c for c in "abc" if c != held_out)
    rigged = {"K": {v: {c: ([100.0] * len(s) if (c == held_out and v == 1) else s) for c, s in per.items()}
                    for v, per in SCORES["K"].items()}}
    assert bench.choose_by_folds(rigged, {"K": 1}, ["a", "b", "c"])[other] == {"K": 1}


def test_a_candidate_must_beat_the_default_strictly_and_questions_weigh_equally(bench):
    tie = {"K": {1: {"a": [0.5], "b": [0.5]}, 2: {"a": [0.5], "b": [0.5]}}}
    assert bench.choose_by_folds(tie, {"K": 1}, ["a", "b"]) == {"a": {"K": 1}, "b": {"K": 1}}
    # pooled over questions, not averaged over conversations: b's four questions outweigh c's one
    # (pooled: 1 -> 0.40, 2 -> 0.36; a mean of the two conversations would say 0.25 against 0.45)
    weighted = {"K": {1: {"a": [0], "b": [0.5] * 4, "c": [0.0]}, 2: {"a": [0], "b": [0.3] * 4, "c": [0.6]}}}
    assert bench.choose_by_folds(weighted, {"K": 1}, ["a", "b", "c"])["a"] == {"K": 1}


def test_fold_summary(bench):
    assert bench.fold_summary([0.8, 0.7, 0.9]) == {"mean": 0.8, "worst": 0.7, "spread": 0.2}


def test_patched_reaches_bound_defaults_and_restores(bench):
    from z0_memory.stores import search

    from z0_memory.offline import fusion

    rrf = next(t for t in bench.TUNABLES if t.name == "search.RRF_K")
    later = next(t for t in bench.TUNABLES if t.name == "fusion.LATER_ROUND_WEIGHT")
    old_k, old_w = search.RRF_K, fusion.LATER_ROUND_WEIGHT
    before = search.rrf_ranking([["x", "y"], ["y"]], 2)
    with bench.patched({rrf: 1000, later: 0.125}):
        assert search.RRF_K == 1000 and fusion.LATER_ROUND_WEIGHT == 0.125
        assert search.rrf_ranking([["x"]], 1) == [("x", 1 / 1001)]  # the keyword default follows the constant
    assert search.RRF_K == old_k and fusion.LATER_ROUND_WEIGHT == old_w
    assert search.rrf_ranking([["x", "y"], ["y"]], 2) == before


def test_every_tunable_names_a_real_constant_whose_value_is_in_its_grid(bench):
    for tunable in bench.TUNABLES:
        assert bench.current_value(tunable) in tunable.grid, tunable.name
        assert len(set(tunable.grid)) == len(tunable.grid) >= 2


def test_a_variant_names_tunables_and_takes_their_types(bench):
    values = {t.name: v for t, v in bench.parse_variant("fusion.RRF_K=20, fusion.LATER_ROUND_WEIGHT=0.25").items()}
    assert values == {"fusion.RRF_K": 20, "fusion.LATER_ROUND_WEIGHT": 0.25}
    assert type(values["fusion.RRF_K"]) is int and type(values["fusion.LATER_ROUND_WEIGHT"]) is float
    for bad in ("nope=1", "fusion.RRF_K", "fusion.RRF_K=0.5", "", " , "):
        with pytest.raises(SystemExit):
            bench.parse_variant(bad)



def _rows(per_conversation):
    return {c: [{"r@10": v, "r@5": v, "category": "multi-hop"} for v in values]
            for c, values in per_conversation.items()}


def test_choose_variant_scores_each_held_out_conversation_with_the_variant_best_on_the_others(bench):
    # variant "x" is best on a, "y" on b and c; the defaults would win everywhere but are no candidate
    scored = {"defaults": _rows({"a": [0.9], "b": [0.9], "c": [0.9]}),
              "x": _rows({"a": [0.8], "b": [0.1], "c": [0.1]}),
              "y": _rows({"a": [0.2], "b": [0.6], "c": [0.5]})}
    base = {"r@10": {"a": 0.9, "b": 0.9, "c": 0.9}, "mean r@10": 0.9}
    out = bench.choose_variant(scored, ["x", "y"], ["a", "b", "c"], base)
    # held out a: b+c pooled -> x 0.1, y 0.55; held out b: a+c -> x 0.45, y 0.35; held out c: a+b -> x 0.45, y 0.4
    assert [f["chosen"] for f in out["folds"]] == ["y", "x", "x"]
    assert [f["r@10"] for f in out["folds"]] == [0.2, 0.1, 0.1]  # each scored on its held-out conversation only
    assert out["worst change r@10"] == -0.8 and not out["keeps recall"]
    # the held-out conversation's own scores never change its pick
    rigged = {**scored, "x": _rows({"a": [1.0], "b": [0.1], "c": [0.1]})}
    assert bench.choose_variant(rigged, ["x", "y"], ["a", "b", "c"], base)["folds"][0]["chosen"] == "y"


def test_choose_variant_keeps_recall_only_within_the_rule(bench):
    scored = {"x": _rows({"a": [0.8], "b": [0.695]}), "y": _rows({"a": [0.0], "b": [0.0]})}
    out = bench.choose_variant(scored, ["x", "y"], ["a", "b"], {"r@10": {"a": 0.7, "b": 0.7}, "mean r@10": 0.7})
    assert out["mean r@10"] == 0.7475 and out["worst change r@10"] == -0.005 and out["keeps recall"]
    out = bench.choose_variant(scored, ["x", "y"], ["a", "b"], {"r@10": {"a": 0.7, "b": 0.71}, "mean r@10": 0.705})
    assert out["worst change r@10"] == -0.015 and not out["keeps recall"]

# --- the answer-level check (answer string in the top-k evidence) ------------------------------------------------


def test_normalize_answer_casefolds_and_strips_punctuation(bench):
    assert bench.normalize_answer('  "Charlotte\'s   Web"! ') == "charlotte s web"
    assert bench.normalize_answer("C. S.Lewis") == "c s lewis"
    assert bench.normalize_answer("ＳＷＥＤＥＮ") == "sweden"  # NFKC folds full-width letters


@pytest.mark.parametrize(("answer", "span"), [
    ("Sweden", "sweden"),
    ('"Becoming Nicole"', "becoming nicole"),
    ("Two cats and a dog", "two cats and a dog"),  # five tokens: still short
    (2022, "2022"),  # LoCoMo stores some answers as numbers
    ("once or twice a year ago", None),  # six tokens
    ("Yes", None), ("No; she is not", None), ("Likely no", None), ("Yes, she is supportive", None),
    ("pottery, camping, painting", None),  # a list: several spans
    ("", None), ("?!", None), (None, None), (True, None),
])
def test_short_span(bench, answer, span):
    assert bench.short_span(answer) == span


def test_answer_in_top_matches_whole_tokens_within_one_hit_and_the_first_k_only(bench):
    contents = ["Melanie: My CATEGORY is art.", "Caroline: A gift from my grandma in my home country, Sweden.",
                "Melanie: my cat Luna!"]
    assert bench.answer_in_top(contents, "sweden", 2)
    assert not bench.answer_in_top(contents, "sweden", 1)
    assert not bench.answer_in_top(contents, "cat", 2)  # "category" does not hold the token "cat"
    assert bench.answer_in_top(contents, "cat luna", 3)
    assert not bench.answer_in_top(contents, "art caroline", 3)  # never across two hits
    assert bench.answer_in_top(contents, bench.short_span("Home-country"), 2)
