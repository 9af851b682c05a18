"""The evaluation harness behind ``z0-memory eval``: ingest scenarios, run the retrieval loop per judge
configuration, score it against the labels.

Ingestion happens once, before any configuration runs, with the offline extractor (so configurations differ only in
their judge): every user turn goes through the extraction graph with the assistant message before it and the
replies after it, or, with ``seed_memories=True``, each expected memory is written directly (a key/value through
``FactStore.put`` so reversals keep their history, content through ``SemanticStore.add_many``). Every row carries
the ids of the turns it came from (extraction: the message ids; seeding: the turns plus ``mem:<id>``), which is
how a retrieved row is matched to the question's gold memories and turns.

All rows live under a scope of their own (user ``eval-<run id>`` in the scenario's project) and are deleted at the
end, so an evaluation can run against a database that also holds real memory.

Per question and configuration, scored (definitions also in ``bench/data/README.md``):

* recall@k: the share of the question's gold items found among the final top k memories (answerable questions);
  ``recall@k (round 1)`` the same after the first round, to show what the loop adds;
* round-1 verdict accuracy: the judge's first verdict equals ``first_search_suffices`` (labelled questions);
* final verdict accuracy: the judge's last verdict equals ``answerable``;
* over-retrieval: rounds run after the round at which the top k first held every gold item;
* rounds, latency of the whole loop, and the judge model's tokens (from the responses' ``usage_metadata``) and cost;
* the main figures again per half of the scenarios (``by_half``: :func:`scenario_half`), for tuning on one half and
  reading the other.
"""

from __future__ import annotations

import hashlib
import os
import platform
import statistics
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage

from z0_memory.config import Context
from z0_memory.evaluation.dataset import Question, Scenario, Turn
from z0_memory.evaluation.models import (
    JudgeConfig,
    ScriptedJudgeModel,
    UsageRecorder,
    estimate_cost,
)
from z0_memory.schemas import Hit, Provenance, RoundTrace
from z0_memory.settings import Settings
from z0_memory.stores.semantic import NewMemory

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph

    from z0_memory.memory import ProjectMemory, Z0Memory

Progress = Callable[[str, int, int], None]


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in [0, 1]); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def machine() -> dict[str, Any]:
    import psutil

    return {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
            "memory_gb": round(psutil.virtual_memory().total / 2**30, 1), "python": platform.python_version(),
            "platform": platform.platform()}


# --- ingestion -------------------------------------------------------------------------------------------------


def turn_groups(scenario: Scenario) -> list[list[Turn]]:
    """Per user turn: the assistant message just before it (same session), the turn, the replies after it."""
    groups: list[list[Turn]] = []
    previous_assistant = None
    for i, turn in enumerate(scenario.turns):
        if turn.role == "assistant":
            if groups and scenario.turns[i - 1].session == turn.session and groups[-1][-1].session == turn.session:
                groups[-1].append(turn)
            previous_assistant = turn
            continue
        group = [previous_assistant] if previous_assistant and previous_assistant.session == turn.session else []
        groups.append([*group, turn])
        previous_assistant = None
    return groups


def _message(turn: Turn) -> HumanMessage | AIMessage:
    cls = HumanMessage if turn.role == "user" else AIMessage
    return cls(content=turn.text, id=turn.id)


async def ingest_by_extraction(memory: Z0Memory, ctx: Context, scenario: Scenario, run_id: str) -> int:
    """Every user turn through the extraction graph; returns the number of turns extracted."""
    from z0_memory.graphs.extraction import builder

    graph = builder.compile(store=memory.store(ctx.project, ctx.user_id))
    groups = turn_groups(scenario)
    for group in groups:
        session = group[-1].session
        await graph.ainvoke({"messages": [_message(t) for t in group]},
                            {"configurable": {"thread_id": f"eval-{run_id}-{scenario.id}-s{session}"}}, context=ctx)
    return len(groups)


async def ingest_by_seeding(pm: ProjectMemory, scenario: Scenario, run_id: str) -> int:
    """Every expected memory written directly, in order; returns how many."""
    semantic: list[NewMemory] = []
    for m in scenario.memories:
        sources = [f"mem:{m.id}", *m.turns]
        if m.key:
            kind = m.kind if m.kind in {"fact", "decision", "preference"} else "fact"
            await pm.facts.put(m.key, m.value, Provenance(
                extractor="eval/seed", thread_id=f"eval-{run_id}-{scenario.id}", message_ids=sources,
                rationale=m.rationale), kind=kind, statement=m.content)
        else:
            semantic.append(NewMemory(content=m.text, category=m.kind, kind=m.kind, source_ids=sources,
                                      metadata={"rationale": m.rationale} if m.rationale else {}))
    if semantic:
        await pm.semantic.add_many(semantic)
    return len(scenario.memories)


async def row_sources(pm: ProjectMemory) -> dict[str, frozenset[str]]:
    """id -> the source ids of every row in the scope (facts' mirror rows included)."""
    return await pm.semantic.source_ids()


# --- scoring -----------------------------------------------------------------------------------------------------


def covered(hits: Sequence[Hit], units: Sequence[frozenset[str]], sources: dict[str, frozenset[str]]) -> list[bool]:
    """For each gold unit: does some hit's row cite it?"""
    cited = [sources.get(h.id, frozenset()) for h in hits]
    return [any(unit & c for c in cited) for unit in units]


@dataclass
class QuestionResult:
    config: str
    scenario: str
    question: str
    text: str
    type: str
    lang: str
    answerable: bool
    first_search_suffices: bool | None
    rounds: int
    stop_reason: str
    round1_verdict: bool | None
    final_verdict: bool | None
    recall: float | None
    recall_round1: float | None
    sufficed_at: int | None
    over_retrieval: int
    latency_ms: float
    input_tokens: int
    output_tokens: int
    model_calls: int
    judge_errors: int
    top: list[str] = field(default_factory=list)


async def run_question(graph: CompiledStateGraph[Any, Context, Any, Any], ctx: Context, scenario: Scenario,
                       question: Question, sources: dict[str, frozenset[str]], k: int, config: str) -> QuestionResult:
    recorder = UsageRecorder()
    per_round: list[list[Hit]] = []
    verdicts: list[bool | None] = []
    trace: list[RoundTrace] = []
    stop = ""
    t0 = time.perf_counter()
    async for update in graph.astream({"question": question.text}, {"callbacks": [recorder]}, context=ctx,
                                      stream_mode="updates"):
        for node, values in update.items():
            if node == "retrieve":
                per_round.append(list(values["memories"]))
            elif node == "evaluate":
                verdict = values.get("verdict")
                verdicts.append(None if verdict is None else bool(verdict.sufficient))
                trace = values.get("trace", trace)
                stop = values.get("stop_reason", stop)
    latency = (time.perf_counter() - t0) * 1000
    units = scenario.gold_units(question)
    recall = recall1 = None
    sufficed_at = None
    if question.answerable and units:
        cover = [covered(hits[:k], units, sources) for hits in per_round]
        recall = sum(cover[-1]) / len(units)
        recall1 = sum(cover[0]) / len(units)
        sufficed_at = next((i + 1 for i, c in enumerate(cover) if all(c)), None)
    rounds = len(per_round)
    final = per_round[-1] if per_round else []
    return QuestionResult(
        config=config, scenario=scenario.id, question=question.id, text=question.text, type=question.type,
        lang=question.lang, answerable=question.answerable, first_search_suffices=question.first_search_suffices,
        rounds=rounds, stop_reason=stop, round1_verdict=verdicts[0] if verdicts else None,
        final_verdict=verdicts[-1] if verdicts else None, recall=recall, recall_round1=recall1,
        sufficed_at=sufficed_at, over_retrieval=max(0, rounds - sufficed_at) if sufficed_at else 0,
        latency_ms=latency, input_tokens=recorder.input_tokens, output_tokens=recorder.output_tokens,
        model_calls=recorder.calls, judge_errors=sum(1 for r in trace if getattr(r, "error", None)),
        top=[h.content[:120] for h in final[:3]],
    )


def summarize(results: Sequence[QuestionResult], config: JudgeConfig,
              prices: dict[str, tuple[float, float]] | None = None) -> dict[str, Any]:
    """The per-configuration figures of the report."""
    answerable = [r for r in results if r.recall is not None]
    labelled1 = [r for r in results if r.first_search_suffices is not None and r.round1_verdict is not None]
    judged = [r for r in results if r.final_verdict is not None]
    acc1 = _mean([float(r.round1_verdict == r.first_search_suffices) for r in labelled1])
    accf = _mean([float(r.final_verdict == r.answerable) for r in judged])
    both = [float(r.round1_verdict == r.first_search_suffices) for r in labelled1] + \
           [float(r.final_verdict == r.answerable) for r in judged]
    latencies = [r.latency_ms for r in results]
    inp, out = sum(r.input_tokens for r in results), sum(r.output_tokens for r in results)
    cost = estimate_cost(config.model_name, inp, out, prices)
    return {
        "config": config.name, "judge_model": config.judge_model, "model": config.model_name,
        "questions": len(results), "answerable": len(answerable),
        "recall_at_k": _mean([r.recall for r in answerable]),
        "recall_at_k_round1": _mean([r.recall_round1 for r in answerable]),
        "full_recall_share": _mean([float(r.recall == 1.0) for r in answerable]),
        "verdict_accuracy": _mean(both),
        "round1_verdict_accuracy": acc1, "round1_labelled": len(labelled1),
        "final_verdict_accuracy": accf,
        "final_confusion": {
            "sufficient_answerable": sum(1 for r in judged if r.final_verdict and r.answerable),
            "sufficient_unanswerable": sum(1 for r in judged if r.final_verdict and not r.answerable),
            "insufficient_answerable": sum(1 for r in judged if not r.final_verdict and r.answerable),
            "insufficient_unanswerable": sum(1 for r in judged if not r.final_verdict and not r.answerable),
        },
        "over_retrieval_rounds": _mean([float(r.over_retrieval) for r in results]),
        "over_retrieval_share": _mean([float(r.over_retrieval > 0) for r in results]),
        "mean_rounds": _mean([float(r.rounds) for r in results]),
        "latency_p50_ms": percentile(latencies, 0.5), "latency_p95_ms": percentile(latencies, 0.95),
        "input_tokens": inp, "output_tokens": out, "model_calls": sum(r.model_calls for r in results),
        "tokens_per_question": (inp + out) / len(results) if results else None,
        "cost_usd": cost, "judge_errors": sum(r.judge_errors for r in results),
    }


HALVES = ("dev", "holdout")
HALF_FIGURES = ("questions", "recall_at_k", "verdict_accuracy", "round1_verdict_accuracy", "final_verdict_accuracy",
                "over_retrieval_rounds", "mean_rounds")


def scenario_half(scenario_id: str) -> str:
    """The half a scenario belongs to for blind development: ``dev`` when the MD5 of its id is even, else
    ``holdout``. Choose a constant on one half, read the other: a fixed function of the id, so adding scenarios
    never moves the old ones from one half to the other."""
    return HALVES[int(hashlib.md5(scenario_id.encode("utf-8")).hexdigest(), 16) % 2]


def by_half(results: Sequence[QuestionResult], config: JudgeConfig,
            prices: dict[str, tuple[float, float]] | None = None) -> dict[str, dict[str, Any]]:
    """The main figures of :func:`summarize` on each half (:func:`scenario_half`)."""
    out = {}
    for half in HALVES:
        rs = [r for r in results if scenario_half(r.scenario) == half]
        if rs:
            summary = summarize(rs, config, prices)
            out[half] = {k: summary[k] for k in HALF_FIGURES}
    return out


def breakdown(results: Sequence[QuestionResult], attr: str) -> dict[str, dict[str, Any]]:
    """Recall and verdict accuracy per question type or language."""
    groups: dict[str, list[QuestionResult]] = defaultdict(list)
    for r in results:
        groups[getattr(r, attr) or "-"].append(r)
    out = {}
    for name, rs in sorted(groups.items()):
        rec = [r.recall for r in rs if r.recall is not None]
        out[name] = {"questions": len(rs), "recall_at_k": _mean(rec),
                     "final_verdict_accuracy": _mean([float(r.final_verdict == r.answerable) for r in rs
                                                      if r.final_verdict is not None]),
                     "mean_rounds": _mean([float(r.rounds) for r in rs])}
    return out


# --- the run -------------------------------------------------------------------------------------------------------


def scripted_needles(scenarios: Sequence[Scenario]) -> dict[str, list[list[str]]]:
    """What the scripted judge looks for per question text: per gold item, its value or its sentence."""
    needles: dict[str, list[list[str]]] = {}
    for s in scenarios:
        turn_text = {t.id: t.text for t in s.turns}
        for q in s.questions:
            items: list[list[str]] = [[q.answer]] if q.answer else []
            for mid in q.memories:
                m = s.memory(mid)
                items.append([m.value] if m.value else [m.text, *(turn_text[t] for t in m.turns)])
            items += [[turn_text[t]] for t in q.turns]
            needles[q.text] = items if q.answerable else []
    return needles


@dataclass
class EvalOptions:
    k: int = 10
    seed_memories: bool = False
    mode: str = "code"
    max_rounds: int | None = None
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    slip_rate: float = 0.1


async def run_evaluation(settings: Settings, base: Context, scenarios: Sequence[Scenario],
                         configs: Sequence[JudgeConfig],
                         options: EvalOptions, *, models: dict[str, BaseChatModel] | None = None,
                         embeddings: Embeddings | None = None, embedding_name: str | None = None,
                         progress: Progress | None = None, dataset: str = "") -> dict[str, Any]:
    """Ingest, run every configuration on every question, and return the report (a JSON-able dict).

    ``settings``: the process's (database, embeddings, endpoint); ``base``: the run settings every question starts
    from. ``models`` injects a chat model per configuration name (tests use scripted models for ``openai:*``).
    """
    from z0_memory.graphs.retrieval import builder
    from z0_memory.memory import Z0Memory

    models = dict(models or {})
    run_id = uuid.uuid4().hex[:8]
    user = f"eval-{run_id}"
    runnable, skipped = [], {}
    for config in configs:
        reason = None if config.name in models or config.scripted else config.unavailable()
        if reason:
            skipped[config.name] = reason
        else:
            runnable.append(config)
    ctx_of = lambda s, **kw: base.replace(  # noqa: E731
        project=s.project, user_id=user, mode=options.mode, top_k=options.k, extractor_model="offline",
        **({"max_rounds": options.max_rounds} if options.max_rounds else {}), **kw)
    report: dict[str, Any] = {
        "dataset": dataset, "date": datetime.now(UTC).isoformat(timespec="seconds"), "machine": machine(),
        "ingestion": "seeded memories" if options.seed_memories else "turns through the extraction graph (offline)",
        "k": options.k, "mode": options.mode, "scenarios": len(scenarios),
        "questions": sum(len(s.questions) for s in scenarios), "configs": [], "skipped": skipped, "results": [],
    }
    owner = Z0Memory(settings.replace(judge_model="offline", extractor_model="offline"), embeddings=embeddings,
                     embedding_name=embedding_name)
    await owner.open()
    sources: dict[str, dict[str, frozenset[str]]] = {}
    try:
        from z0_memory.text import search_text

        await owner.providers.embeddings.aembed_query("warm-up")  # model load and jieba's dictionary: not timed
        search_text("预热 warm-up")
        t0 = time.perf_counter()
        turns = 0
        for i, s in enumerate(scenarios, 1):
            ctx = ctx_of(s)
            pm = owner.scope(s.project, user)
            if options.seed_memories:
                await ingest_by_seeding(pm, s, run_id)
            else:
                turns += await ingest_by_extraction(owner, ctx, s, run_id)
            sources[s.id] = await row_sources(pm)
            if progress:
                progress("ingest", i, len(scenarios))
        elapsed = time.perf_counter() - t0
        rows = sum(len(v) for v in sources.values())
        report["ingest"] = {"seconds": round(elapsed, 2), "rows": rows, "turns_extracted": turns,
                            "turns_per_s": round(turns / elapsed, 1) if turns and elapsed else None,
                            "rows_per_s": round(rows / elapsed, 1) if elapsed else None}
        for config in runnable:
            model = models.get(config.name)
            if model is None and config.scripted:
                model = ScriptedJudgeModel(needles=scripted_needles(scenarios), slip_rate=options.slip_rate)
            overrides = config.context_overrides()
            process = {k: v for k, v in overrides.items() if k == "openai_base_url"}  # the endpoint is the process's
            # Joins the owner's database by URL: a second owner of the embedded server would stop it on close.
            memory = Z0Memory(settings.replace(database_url=owner.db.url, **overrides),
                              chat_models={"judge": model} if model else None,
                              embeddings=owner.providers.embeddings, embedding_name=owner.providers.embedding_name)
            await memory.open()
            try:
                # one graph for every scenario's project: the operator's store takes the scope of each run's context
                graph = builder.compile(store=memory.operator_store())
                results: list[QuestionResult] = []
                total = sum(len(s.questions) for s in scenarios)
                for s in scenarios:
                    ctx = ctx_of(s, **{k: v for k, v in overrides.items() if k not in process})
                    if not results:  # warm-up (model load, connections), not timed
                        await graph.ainvoke({"question": s.questions[0].text, "max_rounds": 1}, context=ctx)
                    for q in s.questions:
                        results.append(await run_question(graph, ctx, s, q, sources[s.id], options.k, config.name))
                        if progress:
                            progress(config.name, len(results), total)
            finally:
                await memory.close()
            summary = summarize(results, config, options.prices)
            summary["by_type"] = breakdown(results, "type")
            summary["by_lang"] = breakdown(results, "lang")
            summary["by_half"] = by_half(results, config, options.prices)
            report["configs"].append(summary)
            report["results"] += [r.__dict__ for r in results]
    finally:
        try:
            for s in scenarios:
                await owner.scope(s.project, user).forget_everything(reread=True)
        finally:
            await owner.close()
    return report
