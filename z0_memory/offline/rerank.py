"""A lexical reranker for the retrieval loop's final candidates: run once per question, after the last round.

No model and no new constant. Each candidate gets a lexical score against the *original question*:

    lexical(h) = ( coverage(turn h) + coverage(h with its neighbours) ) / 2 ,  ties broken by proximity(h)

* ``coverage(text)`` is the IDF-weighted share of the question's content stems (focus terms and entity words) found in
  the text, ``idf(t) = log(1 + N / df(t))`` over the N candidates (the pool is the collection the reranker sees:
  a word every candidate shares counts little). A candidate whose ``metadata['speaker']`` is an entity the question
  names covers that entity.
* the *neighbours* of a conversation turn are the candidates one turn before and after it in the same session
  (``schemas.conversation_position``): a reply often lacks the question's words its neighbour has. The two views
  are averaged with equal weights.
* ``proximity`` = matched stems / length (in tokens) of the shortest span of the turn holding every matched stem:
  1 when the question's words stand together.

The final order fuses the loop's order and the lexical order by reciprocal rank (``stores.search.rrf_ranking``) with
the fusion's own ``RRF_K`` (``offline.fusion.RRF_K``; ``sum 1 / (K + rank)``), equal weights, ties in the loop's
order: the reranker moves a candidate the loop placed low only when its words fit the question well, and never drops
one. The returned hits are
the same objects re-ordered (their scores untouched), so ``metadata['rounds']`` and the fused scores stay readable.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from z0_memory.offline import fusion
from z0_memory.offline.judge import analyze_question
from z0_memory.schemas import Hit, conversation_position
from z0_memory.stores.search import rrf_ranking
from z0_memory.text import contains_cjk, stem, tokens


def _turn_stems(hit: Hit) -> list[str]:
    """The hit's content as a sequence of stems (positions kept, for proximity)."""
    return [stem(t) for t in tokens(hit.content)]


def _proximity(sequence: Sequence[str], wanted: frozenset[str]) -> float:
    """Matched stems / tokens of the shortest span of ``sequence`` that holds every one of them (0 without match)."""
    present = wanted & set(sequence)
    if not present:
        return 0.0
    need, have, best = len(present), {}, len(sequence)
    left = 0
    for right, token in enumerate(sequence):
        if token in present:
            have[token] = have.get(token, 0) + 1
        while len(have) == need:
            best = min(best, right - left + 1)
            gone = sequence[left]
            if gone in have:
                have[gone] -= 1
                if not have[gone]:
                    del have[gone]
            left += 1
    return need / best


def lexical_scores(question: str, hits: Sequence[Hit]) -> list[tuple[float, float]]:
    """(coverage score, proximity) of each hit, in input order; see the module docstring."""
    qa = analyze_question(question)
    query = frozenset(qa.stems) | qa.entity_stems
    if not query or not hits:
        return [(0.0, 0.0)] * len(hits)
    sequences = [_turn_stems(h) for h in hits]
    own: list[set[str]] = []
    for hit, seq in zip(hits, sequences, strict=True):
        found = query & set(seq)
        found |= {s for s in query if contains_cjk(s) and s in hit.content}
        speaker = str(hit.metadata.get("speaker") or "")
        if speaker:
            found |= query & {stem(t) for t in tokens(speaker)}
        own.append(found)
    position = {conversation_position(h): i for i, h in enumerate(hits) if conversation_position(h) is not None}
    windows: list[set[str]] = []
    for i, hit in enumerate(hits):
        window = set(own[i])
        pos = conversation_position(hit)
        if pos is not None:
            for step in (-1, 1):
                j = position.get((pos[0], pos[1] + step))
                if j is not None:
                    window |= own[j]
        windows.append(window)
    n = len(hits)
    idf = {s: math.log(1 + n / max(1, sum(1 for w in own if s in w))) for s in query}
    total = sum(idf.values())
    out = []
    for i in range(n):
        coverage = (sum(idf[s] for s in own[i]) + sum(idf[s] for s in windows[i])) / (2 * total)
        out.append((coverage, _proximity(sequences[i], frozenset(own[i]))))
    return out


def rerank(question: str, hits: Sequence[Hit]) -> list[Hit]:
    """``hits`` (the loop's final ranking, best first) re-ordered by the fusion of that order with the lexical one."""
    if len(hits) < 2:
        return list(hits)
    scores = lexical_scores(question, hits)
    lexical_order = sorted(range(len(hits)), key=lambda i: (-scores[i][0], -scores[i][1], i))
    fused = rrf_ranking([list(range(len(hits))), lexical_order], len(hits), rrf_k=fusion.RRF_K)
    return [hits[i] for i, _ in fused]  # equal scores in the loop's order: first appearance
