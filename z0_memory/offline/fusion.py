"""Fuse the hits of every round of the retrieval loop into one ranked, de-duplicated list.

Each round searched a different query, so its scores are on its own scale (BM25, cosine, RRF...): only ranks are
comparable. A hit's fused score is

    score(h) = sum over rounds r where h appears at rank i (1-based) of  w_r / (K + i)      (reciprocal-rank fusion)
             + BETA * overlap(h, question) / (K + 1)

* ``K`` = :data:`RRF_K` is small, so each round's top few hits stay near the top: a later round, which searched for
  what was missing (the second hop of a multi-hop question), gets its best hits into the final top 10 rather than
  being drowned by hits that recur in every round. The sum is ``stores.search.rrf_ranking``, the function the hybrid
  search fuses BM25 and dense with, called with this k: the hybrid's k (``stores.search.RRF_K`` = 20) here, or one k
  for both (5 or 10), lost 0.006-0.02 of LoCoMo recall@10 whatever the round weight, BETA or CONTEXT_WEIGHT
  (bench/README.md, "One RRF constant?"), so the two fusions keep two k. One stage instead of two (every round's BM25
  and dense rankings in one sum with the hybrid's k) was measured there too, its k and weights also chosen
  leave-one-conversation-out, and lost more than 0.01 on a held-out conversation.
* ``w_r`` is 1 for the first round (the user's own question) and :data:`LATER_ROUND_WEIGHT` (0.5) for later rounds:
  a rewritten query adds evidence below the question's own best hits rather than reordering them.
* ``overlap`` in [0, 1] re-scores every hit against the *original question* (not the round's rewritten query): the
  share of the question's entities found in the hit (text, key or ``metadata['speaker']``) and of its focus terms,
  each term weighted by its rarity among the pooled hits (``log(1 + N / df)``), so a generic word shared by every
  hit counts little. This pulls drifted rewrites back towards the question.

Conversational context (:func:`context_boost`, applied after the memory weights): a hit imported from a
conversation gets part of the score of a better hit one or two turns away in the same session, because a turn's
meaning often lives next to it (the answer to a question, a story continued over the speaker's next turn):

    score'(h) = score(h) + CONTEXT_WEIGHT * max over anchors a near h of  score(a) * CONTEXT_DISTANCE_WEIGHTS[|d|]

A named period (:func:`time_weight`, when the question names one): a hit's fused score is multiplied by
``1 + TIME_WEIGHT * closeness``, where closeness is 1 for a memory created inside the period and decays outside it
(:meth:`z0_memory.timewindow.TimeWindow.closeness`). ``TIME_WEIGHT`` = 3: a period the user names is a strong
constraint (with a weight of 1, a memory from that day lost to word matches from other years).

Duplicates (same ``id``) are merged: the copy with the best original score is kept and returned with the fused
score in ``score``; its original score and the rounds that found it are kept in ``metadata['raw_score']`` and
``metadata['rounds']`` (1-based). Ties break on first appearance, so the function is deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from datetime import UTC, datetime

from z0_memory.offline.judge import (
    QuestionAnalysis,
    analyze_question,
    entity_in,
    hit_stems,
)
from z0_memory.schemas import Hit, conversation_position
from z0_memory.stores.search import rrf_ranking
from z0_memory.timewindow import TimeWindow

RRF_K = 5  # the cross-round fusion's k (the hybrid search's is stores.search.RRF_K: see above)
LATER_ROUND_WEIGHT = 0.5
BETA = 2.0
SPEAKER_WEIGHT = 2.0
CONTEXT_ANCHORS = 5
CONTEXT_WEIGHT = 0.5
CONTEXT_DISTANCE_WEIGHTS = {1: 0.4, 2: 0.5}
TIME_WEIGHT = 3.0


def _overlap_scorer(qa: QuestionAnalysis, hits: Sequence[Hit]):
    stems = {h.id: hit_stems(h) for h in hits}
    n = max(1, len(stems))
    df = {s: sum(1 for st in stems.values() if s in st) for s in qa.focus}
    weights = {s: math.log(1 + n / max(1, d)) for s, d in df.items()}
    total = sum(weights.values())

    def overlap(hit: Hit) -> float:
        st = stems[hit.id]
        term_part = sum(w for s, w in weights.items() if s in st) / total if total else 0.0
        if not qa.entities:
            return term_part
        speaker = str(hit.metadata.get("speaker") or "").casefold()
        entity_part = sum(
            SPEAKER_WEIGHT if speaker and e.casefold() == speaker else float(entity_in(e, hit, st)) for e in qa.entities
        ) / len(qa.entities)
        return 0.5 * entity_part + 0.5 * term_part if total else entity_part

    return overlap


def fuse_rounds(rounds: Sequence[Sequence[Hit]], question: str, *,
                weight: Callable[[Hit], float] | None = None, limit: int | None = None) -> list[Hit]:
    """Merge the ranked hits of all rounds into one list, best first (see the module docstring).

    ``weight`` (optional) multiplies each fused score before sorting: the memory's own weight (confidence,
    supersession, recency: ``memory_weight``) times :func:`time_weight`. Applying it here rather than in
    another pass keeps the loop at one copy of each hit per round. ``limit`` returns (and copies) only the best
    ``limit`` hits.
    """
    fused = _Fused(rounds, question, weight)
    return [fused.copy(hid, fused.score[hid]) for hid in fused.order[:limit]]


def fuse_and_boost(rounds: Sequence[Sequence[Hit]], question: str, *, weight: Callable[[Hit], float] | None = None,
                   candidates: int, keep: int, spread: bool = False) -> list[Hit]:
    """``context_boost(fuse_rounds(rounds, question, weight=weight, limit=candidates), spread=spread)[:keep]``.

    The same hits and scores, but only the ``keep`` hits returned are copied: the loop re-scores twice as many
    candidates as it keeps, and a round's copies were most of the cost of fusing it.
    """
    fused = _Fused(rounds, question, weight)
    order = fused.order[:candidates]
    scores = [fused.score[hid] for hid in order]
    if not spread:
        boosted = _boosted_order([(hid, score, conversation_position(fused.best[hid]))
                                  for hid, score in zip(order, scores, strict=True)])
        if boosted is not None:
            order, scores = [order[i] for i, _, _ in boosted], [score for _, score, _ in boosted]
    return [fused.copy(hid, score) for hid, score in zip(order[:keep], scores[:keep], strict=True)]


class _Fused:
    """The fused ranking of all rounds' hits: ``order`` (best first), ``score``, and each hit's best copy."""

    def __init__(self, rounds: Sequence[Sequence[Hit]], question: str, weight: Callable[[Hit], float] | None) -> None:
        best: dict[str, Hit] = {}
        found_in: dict[str, list[int]] = {}
        rankings: list[list[str]] = []  # each round's ids, best first, once each
        for r, hits in enumerate(rounds):
            ranking: dict[str, None] = {}
            for hit in hits:
                if hit.id in ranking:
                    continue
                ranking[hit.id] = None
                found_in.setdefault(hit.id, []).append(r + 1)
                if hit.id not in best or hit.score > best[hit.id].score:
                    best[hit.id] = hit
            rankings.append(list(ranking))
        weights = [1.0 if r == 0 else LATER_ROUND_WEIGHT for r in range(len(rankings))]
        fused = dict(rrf_ranking(rankings, len(best), weights=weights, rrf_k=RRF_K))
        if best:
            overlap = _overlap_scorer(analyze_question(question), list(best.values()))
            for hid, hit in best.items():
                fused[hid] += BETA * overlap(hit) / (RRF_K + 1)
                if weight is not None:
                    fused[hid] *= weight(hit)
        self.best, self.score, self.found_in = best, fused, found_in
        self.order = sorted(best, key=lambda hid: -fused[hid])  # stable: ties keep first appearance

    def copy(self, hid: str, score: float) -> Hit:
        hit = self.best[hid]
        return hit.model_copy(update={
            "score": score, "metadata": {**hit.metadata, "raw_score": hit.score, "rounds": self.found_in[hid]},
        })


def context_boost(hits: Sequence[Hit], *, spread: bool = False) -> list[Hit]:
    """Re-score ranked ``hits`` (best first) by conversational locality; see the module docstring.

    The first :data:`CONTEXT_ANCHORS` hits are the anchors. A hit within ``max(CONTEXT_DISTANCE_WEIGHTS)`` turns of an
    anchor in the same session gains ``CONTEXT_WEIGHT * anchor score * distance weight`` (the best anchor counts, not
    the sum). The distance weights favour two turns away (the same speaker going on) slightly over the reply in
    between. Only hits already found are re-scored: no new rows are fetched.

    ``spread=True`` (list and comparison questions, whose evidence is spread over many sessions) returns the hits
    unchanged: there, clustering around the best session would push other sessions' items out of the top k.
    Hits without conversation metadata (facts, extracted memories) are never boosted, so elsewhere this is a no-op.
    """
    if spread:
        return list(hits)
    boosted = _boosted_order([(h.id, h.score, conversation_position(h)) for h in hits])
    if boosted is None:
        return list(hits)
    return [hits[i].model_copy(update={"score": score}) if gained else hits[i] for i, score, gained in boosted]


def _boosted_order(ranked: Sequence[tuple[str, float, tuple[str, int] | None]]) -> list[tuple[int, float, bool]] | None:
    """The context-boosted ranking of (id, score, conversation position) triples: (index into ``ranked``, boosted
    score, whether it gained) best first, ties in their old order; None when no top hit is a conversation turn."""
    gains = _context_gains(ranked)
    if gains is None:
        return None
    boosted = [(i, score + CONTEXT_WEIGHT * gain if gain else score, bool(gain))
               for i, ((_, score, _), gain) in enumerate(zip(ranked, gains, strict=True))]
    return sorted(boosted, key=lambda item: item[1], reverse=True)  # stable: ties keep their order


def _context_gains(ranked: Sequence[tuple[str, float, tuple[str, int] | None]]) -> list[float] | None:
    """The context gain of each (id, score, conversation position) of a ranked list; None when it has no anchor."""
    anchors = [(hid, score, pos) for hid, score, pos in ranked[:CONTEXT_ANCHORS] if pos]
    if not anchors:
        return None
    reach = max(CONTEXT_DISTANCE_WEIGHTS)
    out: list[float] = []
    for hid, _, pos in ranked:
        gain = 0.0
        if pos is not None:
            for anchor_id, anchor_score, (group, order) in anchors:
                distance = abs(pos[1] - order)
                if anchor_id != hid and group == pos[0] and 0 < distance <= reach:
                    gain = max(gain, anchor_score * CONTEXT_DISTANCE_WEIGHTS[distance])
        out.append(gain)
    return out


def time_weight(hit: Hit, window: TimeWindow | None) -> float:
    """``1 + TIME_WEIGHT * closeness`` of the hit's time to the period the question names; 1 without a period."""
    return 1.0 if window is None else 1.0 + TIME_WEIGHT * window.closeness(hit.created_at)


# What a memory itself says about its weight: confidence, supersession (decay), recency.
SUPERSEDED_WEIGHT = 0.35
RECENCY_HALF_LIFE_DAYS = 180.0
RECENCY_WEIGHT = 0.1


def memory_weight(hit: Hit, *, include_history: bool, now: datetime | None = None) -> float:
    """Multiplier from what the memory itself says: confidence, supersession (decay), recency."""
    weight = 0.5 + 0.5 * hit.confidence
    if hit.superseded and not include_history:
        weight *= SUPERSEDED_WEIGHT
    if hit.created_at is not None:
        age_days = max(0.0, ((now or datetime.now(UTC)) - hit.created_at).total_seconds() / 86400)
        weight *= 1.0 + RECENCY_WEIGHT * math.exp(-age_days * math.log(2) / RECENCY_HALF_LIFE_DAYS)
    return weight
