"""Dense pseudo-relevance feedback (vector Rocchio): a query vector moved towards the best hits found so far.

    q' = normalize(q / |q| + ALPHA * mean over the first HITS hits h of h / |h|)

The hits' vectors are the stored embeddings of the memories (turn + context, as imported), so the new query sits
between the question and what answered it best, and a dense search with it can reach turns that say the same thing
in other words than the question (paraphrases no query word matches). ``FEEDBACK`` says where the loop uses it
(``nodes.retrieval.run_round``):

``off``     never;
``first``   round 1: a dense search with q' built from round 1's own best hits, fused into the round;
``later``   rounds 2+: the round's recipes search with q' built from the rewritten query and the evidence so far;
``both``    ``first`` and ``later``;
``add``     rounds 2+: a dense search with q' built from the *question* and the evidence so far, fused into the round;
``bridge``  round 1: a dense search of the question followed by the names its best hits give that it does not
            (``rewriter.bridge_terms``, at most ``alpha`` of them), fused into the round;
``refine``  round 1 twice: its recipes with the question's vector give the best hits, then run again with q' (the
            dense halves searching with q', BM25 as before), and only the second pass counts;
``hop``     round 1: for each of the best hits, a dense search of the question followed by the hit's text (the
            next hop conditioned on the evidence, as multi-hop dense retrieval (MDR) encodes it; lists fused first),
            fused into the round;
``list``    as ``first``, only for a question asking for several things or comparing (the judge's ``is_list`` /
            ``is_compare``), whose evidence is several turns alike;
``graph``   round 1: each of the best hits' own nearest neighbours (a dense search with the hit's stored vector; the
            lists fused first), fused into the round (adaptive retrieval over a corpus graph, as GAR).

Experimental: ``FEEDBACK`` may also carry its constants, ``where:alpha:hits`` (``first:0.5:5``), so that the folds
protocol of bench/locomo_retrieval.py can choose the three together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

FEEDBACK = "off"
ALPHA = 0.5
HITS = 5
WHERE = ("off", "first", "later", "both", "add", "bridge", "graph", "refine", "hop", "list")


@dataclass(frozen=True)
class Feedback:
    where: str
    alpha: float
    hits: int

    def in_round(self, number: int) -> bool:
        """Whether round ``number`` (1-based) searches with a feedback vector instead of the query's own."""
        return self.where in ("later", "both") and number > 1

    def extra_in_round(self, number: int) -> bool:
        """Whether round ``number`` adds a dense search with a feedback vector to its recipes."""
        return (self.where in ("first", "both", "bridge", "graph", "hop", "list") and number == 1) or (
            self.where == "add" and number > 1)


def setting() -> Feedback:
    """The current setting: ``FEEDBACK`` with ``ALPHA`` and ``HITS`` unless it names its own."""
    where, *rest = FEEDBACK.split(":")
    if where not in WHERE:
        raise ValueError(f"dense_feedback.FEEDBACK: {FEEDBACK!r} is not one of {WHERE}")
    alpha = float(rest[0]) if rest else ALPHA
    hits = int(rest[1]) if len(rest) > 1 else HITS
    return Feedback(where, alpha, hits)


def unit(vector: Sequence[float]) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float64)
    norm = np.linalg.norm(v)
    return v / norm if norm > 0 else v


def rocchio(query: Sequence[float], hits: Sequence[Sequence[float]], alpha: float) -> list[float]:
    """``normalize(q + alpha * mean of the hits)``, every vector taken at unit length; the query itself when there
    is no hit or ``alpha`` is 0."""
    q = unit(query)
    if not hits or alpha == 0:
        return q.tolist()
    centroid = np.mean([unit(h) for h in hits], axis=0)
    return unit(q + alpha * centroid).tolist()
