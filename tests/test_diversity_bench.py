"""What bench/diversity.py's re-orderings of the loop's final evidence do (issue 21; measured, none adopted)."""

from __future__ import annotations

import pytest
from bench_support import loaded_bench

from z0_memory.schemas import Hit


@pytest.fixture(scope="module")
def bench():
    with loaded_bench("diversity") as module:
        yield module


def cand(dia: str, content: str, score: float, speaker: str = "Tim") -> dict:
    hit = Hit(id=dia, source="semantic", content=f"{speaker}: {content}", score=score,
              metadata={"speaker": speaker})
    return {"id": dia, "dia": dia, "score": score, "hit": hit, "session": dia.split(":")[0]}


def ids(order) -> list[str]:
    return [c["id"] for c in order]


def test_session_round_robin_takes_each_sessions_best_before_any_second(bench):
    cands = [cand("D1:1", "a", 0.9), cand("D1:2", "b", 0.8), cand("D2:5", "c", 0.7), cand("D1:3", "d", 0.6),
             cand("D3:1", "e", 0.5), cand("D2:6", "f", 0.4)]
    assert ids(bench.session_round_robin(cands)) == ["D1:1", "D2:5", "D3:1", "D1:2", "D2:6", "D1:3"]


def test_coverage_picks_the_hit_with_the_words_still_missing_then_the_fused_order(bench):
    question = "Which books, movies and games does Tim like?"
    cands = [cand("D1:1", "I love books and movies.", 0.9),
             cand("D1:2", "Books are great, reading books all day.", 0.8),
             cand("D1:3", "Movies too, fantasy movies.", 0.7),
             cand("D2:1", "Board games every Friday.", 0.6)]
    # D1:1 covers books and movies (and Tim, the speaker); D1:2 and D1:3 add nothing new; D2:1 adds games: it moves
    # up, the rest keep the fused order
    assert ids(bench.coverage_greedy(question, cands)) == ["D1:1", "D2:1", "D1:2", "D1:3"]


def test_xquad_leaves_a_one_round_question_alone_and_covers_a_later_rounds_aspect(bench):
    cands = [cand("D1:1", "a", 1.0), cand("D1:2", "b", 0.95), cand("D1:3", "c", 0.9), cand("D4:4", "d", 0.5)]
    one_round = [["D1:1", "D1:2", "D1:3", "D4:4"]]
    assert ids(bench.xquad_rounds(cands, one_round, 0.75, 5)) == ids(cands)
    # round 2 found only D4:4, at its top: once D1:1 has covered round 1's aspect, D4:4 is the next pick
    two_rounds = [["D1:1", "D1:2", "D1:3"], ["D4:4"]]
    assert ids(bench.xquad_rounds(cands, two_rounds, 0.75, 5))[:2] == ["D1:1", "D4:4"]
    assert ids(bench.xquad_rounds(cands, two_rounds, 0.0, 5)) == ids(cands)  # lambda 0: the fused order


def test_round_round_robin_alternates_the_rounds_in_fused_order(bench):
    cands = [cand("D1:1", "a", 1.0), cand("D1:2", "b", 0.9), cand("D2:1", "c", 0.8), cand("D2:2", "d", 0.7)]
    rounds = [["D1:2", "D1:1"], ["D2:2", "D2:1", "D1:1"]]
    assert ids(bench.round_round_robin(cands, rounds)) == ["D1:1", "D2:1", "D1:2", "D2:2"]
