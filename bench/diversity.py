"""Diversity steps on the retrieval loop's final candidates, scored by the folds protocol (issue 21; bench/README.md,
"Diversity of the final top 10").

    python bench/diversity.py [DATA_DIR] [--json] [--max-rounds N]

Each conversation of DATA_DIR (default the dev split) is imported once, as ``bench/locomo_retrieval.py`` imports it;
the default loop runs once per question, and its final evidence (the 30 hits it hands back, best first) and every
round's hits are kept. Each variant below re-orders that final evidence after the last round, as a step at the
loop's end would (``Context.rerank`` is such a step): it never adds or drops a hit, so recall@10 is what it can
change. A variant with no constant is scored on every conversation; one with a constant (xQuAD's ``lambda``) is
chosen on the other four conversations and scored on the held-out one (``locomo_retrieval.choose_by_folds``).

* ``session round-robin``: the sessions in the order of their best hit; the best hit of each, then the second of
  each, ... (fused order inside a session);
* ``... (list/compare only)``: the same, only for the questions the loop itself treats as spread over sessions
  (``analysis.is_list or analysis.is_compare``: the ones ``fusion.context_boost`` leaves alone);
* ``coverage``: greedy: each next pick is the hit adding the most IDF-weighted question content (focus stems, and
  entities, a named speaker covering its entity; IDF over the 30 hits), ties by fused rank; once no hit adds
  anything, the rest in fused order;
* ``xQuAD (rounds)``: each round's query is an aspect (equal weights); a hit's relevance to an aspect is
  ``(K + 1) / (K + rank)`` in that round's list (K = ``fusion.RRF_K``), 0 if absent; the next pick maximises
  ``(1 - lambda) score / max score + lambda * sum_a P(a) P(d|a) prod_{s picked} (1 - P(s|a))``, lambda in
  0.25 / 0.5 / 0.75 chosen by the folds; a one-round question is unchanged;
* ``round round-robin``: the rounds in turn, each giving its best hit (in fused order) not yet picked.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import locomo_retrieval as lr  # noqa: E402

POOL = 30
LAMBDAS = (0.25, 0.5, 0.75)


def session_round_robin(cands: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    groups: dict[Any, list[dict[str, Any]]] = {}
    for c in cands:
        groups.setdefault(c["session"], []).append(c)
    out: list[dict[str, Any]] = []
    depth = 0
    while len(out) < len(cands):
        out += [g[depth] for g in groups.values() if depth < len(g)]
        depth += 1
    return out


def coverage_greedy(question: str, cands: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    from z0_memory.offline.judge import analyze_question, entity_in, hit_stems

    qa = analyze_question(question)
    stems = [hit_stems(c["hit"]) for c in cands]
    items: list[tuple[str, str]] = [("term", s) for s in qa.focus] + [("entity", e) for e in qa.entities]

    def has(i: int, item: tuple[str, str]) -> bool:
        kind, value = item
        if kind == "term":
            return value in stems[i]
        speaker = str(cands[i]["hit"].metadata.get("speaker") or "").casefold()
        return speaker == value.casefold() or entity_in(value, cands[i]["hit"], stems[i])

    n = len(cands)
    covers = [{item for item in items if has(i, item)} for i in range(n)]
    weight = {item: math.log(1 + n / max(1, sum(item in c for c in covers))) for item in items}
    left, covered, out = list(range(n)), set(), []
    while left:
        gains = [sum(weight[t] for t in covers[i] - covered) for i in left]
        best = max(range(len(left)), key=lambda j: (gains[j], -j))
        if gains[best] <= 0:
            out += left
            break
        i = left.pop(best)
        out.append(i)
        covered |= covers[i]
    return [cands[i] for i in out]


def xquad_rounds(cands: Sequence[dict[str, Any]], rounds: Sequence[Sequence[str]], lam: float,
                 rrf_k: int) -> list[dict[str, Any]]:
    if len(rounds) < 2:
        return list(cands)
    ranks = [{hid: r for r, hid in enumerate(dict.fromkeys(ids), 1)} for ids in rounds]
    rel = [[(rrf_k + 1) / (rrf_k + ranks[a][c["id"]]) if c["id"] in ranks[a] else 0.0 for a in range(len(rounds))]
           for c in cands]
    top = max(c["score"] for c in cands) or 1.0
    novelty = [1.0] * len(rounds)
    left, out = list(range(len(cands))), []
    while left:
        def value(i: int) -> float:
            return (1 - lam) * cands[i]["score"] / top + lam * sum(
                rel[i][a] * novelty[a] for a in range(len(rounds))) / len(rounds)
        best = max(range(len(left)), key=lambda j: (value(left[j]), -j))
        i = left.pop(best)
        out.append(i)
        novelty = [nv * (1 - rel[i][a]) for a, nv in enumerate(novelty)]
    return [cands[i] for i in out]


def round_round_robin(cands: Sequence[dict[str, Any]], rounds: Sequence[Sequence[str]]) -> list[dict[str, Any]]:
    if len(rounds) < 2:
        return list(cands)
    lists = [[c for c in cands if c["id"] in set(ids)] for ids in rounds]
    out, seen, at = [], set(), [0] * len(lists)
    while len(out) < len(cands):
        moved = False
        for a, hits in enumerate(lists):
            while at[a] < len(hits) and hits[at[a]]["id"] in seen:
                at[a] += 1
            if at[a] < len(hits):
                out.append(hits[at[a]])
                seen.add(hits[at[a]]["id"])
                moved = True
        if not moved:
            out += [c for c in cands if c["id"] not in seen]
            break
    return out


async def collect(args: argparse.Namespace) -> tuple[list[str], list[dict[str, Any]]]:
    """The default loop's final evidence and rounds for every question of every conversation."""
    rows: list[dict[str, Any]] = []
    async with lr.imported_conversations(args) as (graph, convs, ctxs, _, _):
        for conv in convs:
            for question, category, evidence, _ in conv.questions:
                out = await graph.ainvoke({"question": question}, context=ctxs[conv.name],
                                          output_keys=["memories", "round_hits"])
                rows.append({
                    "conv": conv.name, "question": question, "category": category, "evidence": evidence,
                    "cands": [{"id": h.id, "dia": conv.id_to_dia.get(h.id), "score": h.score, "hit": h,
                               "session": conv.id_to_dia.get(h.id, "").split(":")[0]} for h in out["memories"][:POOL]],
                    "rounds": [[h.id for h in hits] for hits in out["round_hits"]],
                })
            print(f"conversation {conv.name}: {len(conv.questions)} questions", file=sys.stderr, flush=True)
        return [c.name for c in convs], rows


def per_question(rows: Sequence[dict[str, Any]], order: Callable[[dict[str, Any]], list[dict[str, Any]]]
                 ) -> dict[str, list[tuple[str, float, float]]]:
    out: dict[str, list[tuple[str, float, float]]] = {}
    for row in rows:
        ranked = [c["dia"] for c in order(row)]
        out.setdefault(row["conv"], []).append((row["category"], lr.recall(ranked, row["evidence"], 10),
                                                lr.recall(ranked, row["evidence"], 5)))
    return out


def figures(names: Sequence[str], scored: dict[str, list[tuple[str, float, float]]]) -> dict[str, Any]:
    """Recall@10 per conversation, its mean over the conversations (the folds), mean recall@5, mean multi-hop r@10."""
    per = {c: round(statistics.fmean(r for _, r, _ in scored[c]), 4) for c in names}
    multi = [statistics.fmean(r for cat, r, _ in scored[c] if cat == "multi-hop") for c in names
             if any(cat == "multi-hop" for cat, _, _ in scored[c])]
    return {"r@10": per, "mean": round(statistics.fmean(per.values()), 4),
            "r@5": round(statistics.fmean(statistics.fmean(r5 for _, _, r5 in scored[c]) for c in names), 4),
            "multi-hop": round(statistics.fmean(multi), 4)}


def evaluate(names: Sequence[str], rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    from z0_memory.offline import fusion
    from z0_memory.offline.judge import analyze_question

    def spread(row: dict[str, Any]) -> bool:
        qa = analyze_question(row["question"])
        return qa.is_list or qa.is_compare

    fixed: dict[str, Callable[[dict[str, Any]], list[dict[str, Any]]]] = {
        "defaults": lambda r: r["cands"],
        "session round-robin": lambda r: session_round_robin(r["cands"]),
        "session round-robin (list/compare only)":
            lambda r: session_round_robin(r["cands"]) if spread(r) else r["cands"],
        "coverage": lambda r: coverage_greedy(r["question"], r["cands"]),
        "coverage (list/compare only)":
            lambda r: coverage_greedy(r["question"], r["cands"]) if spread(r) else r["cands"],
        "round round-robin": lambda r: round_round_robin(r["cands"], r["rounds"]),
    }
    results = {name: figures(names, per_question(rows, fn)) for name, fn in fixed.items()}
    # xQuAD: lambda chosen on the other conversations (pooled recall@10), scored on the held-out one
    by_lambda = {lam: per_question(rows, lambda r, lam=lam: xquad_rounds(r["cands"], r["rounds"], lam, fusion.RRF_K))
                 for lam in LAMBDAS}
    base = per_question(rows, fixed["defaults"])
    scores = {"lambda": {0.0: {c: [r for _, r, _ in base[c]] for c in names},
                         **{lam: {c: [r for _, r, _ in s[c]] for c in names} for lam, s in by_lambda.items()}}}
    chosen = lr.choose_by_folds(scores, {"lambda": 0.0}, names)
    folded = {c: (base if chosen[c]["lambda"] == 0.0 else by_lambda[chosen[c]["lambda"]])[c] for c in names}
    results["xQuAD (rounds), lambda by the folds"] = figures(names, folded)
    results["xQuAD (rounds), lambda by the folds"]["chosen"] = {c: chosen[c]["lambda"] for c in names}
    for lam, s in by_lambda.items():
        results[f"xQuAD (rounds), lambda {lam} (all folds, for reading)"] = figures(names, s)
    ref = results["defaults"]
    for row in results.values():
        row["worst change"] = round(min(row["r@10"][c] - ref["r@10"][c] for c in names), 4)
        row["adopt"] = row["mean"] > ref["mean"] and row["worst change"] >= -0.01
    return results


def render(names: Sequence[str], results: dict[str, Any]) -> str:
    lines = ["variant | " + " | ".join(names) + " | mean | worst change | mean r@5 | multi-hop | rule"]
    for name, row in results.items():
        lines.append(f"{name} | " + " | ".join(f"{row['r@10'][c]:.4f}" for c in names)
                     + f" | {row['mean']:.4f} | {row['worst change']:+.4f} | {row['r@5']:.4f} | {row['multi-hop']:.4f} | "
                     + ("reference" if name == "defaults" else "passes" if row["adopt"] else "fails") + (f" (chosen {row['chosen']})" if "chosen" in row else ""))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", default=str(lr.DEFAULT_DATA))
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--max-rounds", type=int, default=5)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--embedding-model", default=None)
    args = parser.parse_args(argv)
    args.limit_conversations = None
    os.environ.setdefault("LANGSMITH_TRACING", "false")
    names, rows = asyncio.run(collect(args))
    results = evaluate(names, rows)
    print(render(names, results))
    if args.json:
        print(json.dumps(results, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
