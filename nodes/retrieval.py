"""Nodes of the adversarial retrieval loop: route -> retrieve -> evaluate -> (rewrite -> retrieve)*.

Rules the loop keeps (each visible in the trace):
* each round runs its recipes (and, when the question names a period, the ``hybrid`` recipe again limited to that
  period +- ``PERIOD_PAD_DAYS``, fused with them: the trace lists it as ``hybrid@period``), then expands the
  round's best hits with their conversation neighbours (the turn after a retrieved question,
  ``SearchEngine.neighbors``);
* evidence accumulates: every round's hits are fused with all earlier rounds' (``fuse_rounds``), weighted by
  confidence, supersession and recency (``fusion.memory_weight``) and closeness to a named period; then hits next
  to the best ones in a conversation gain part of their score (``fusion.context_boost``; not for list and
  comparison questions);
* the judge is the configured model when there is one, else the offline judge; a model call that fails after its
  retries (timeout, HTTP error, malformed output) falls back to the offline judge for that round, and the trace
  records the error: a failing judge never fails the caller;
* the rewrite takes the judge's proposed query and strategy when they are new, else the offline rewriter's; no query
  is ever run twice;
* the guard: the loop stops at ``max_rounds`` (per call, else the context's: 5 in code mode, 3 in chat mode) with
  the best evidence so far and the judge's last verdict.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import Runnable
from langgraph.runtime import Runtime

from z0_memory.config import Context
from z0_memory.settings import Settings
from z0_memory.llm import ModelCallError, invoke_structured
from z0_memory.nodes.common import scope_of
from z0_memory.offline.fusion import fuse_and_boost, memory_weight, time_weight
from z0_memory.offline.judge import analyze_question
from z0_memory.offline.judge import judge as offline_judge
from z0_memory.offline.rerank import rerank as offline_rerank
from z0_memory.offline.rewriter import rewrite as offline_rewrite
from z0_memory.offline.router import route as offline_route
from z0_memory.prompts import JUDGE_SYSTEM, JUDGE_USER
from z0_memory.rendering import render_evidence
from z0_memory.schemas import STRATEGIES, FactVersion, Hit, RoundTrace, Verdict
from z0_memory.state import RetrievalState
from z0_memory.stores.recipes import RECIPES, SearchRequest, run_recipe
from z0_memory.stores.search import rrf_fuse
from z0_memory.timewindow import TimeWindow

if TYPE_CHECKING:
    from z0_memory.memory import ProjectMemory

JUDGE_EVIDENCE_LIMIT = 10
ROUND_DEPTH = 30
MEMORIES_KEPT = 30  # the ranked evidence a round hands on (at least 3 x top_k); twice as many are re-scored
PERIOD_STRATEGY = "hybrid"
PERIOD_PAD_DAYS = 7.0
KEYWORD_RECIPE = "keyword"  # what a round runs instead of a recipe whose embedding call failed


QUESTION_MAX_CHARS = 4000  # a pasted log is a message, not a query: the loop searches by its beginning


def _question(state: RetrievalState) -> str:
    """The ``question`` channel, or else the latest human message of ``messages`` (a messages-only parent state)."""
    question = state.get("question")
    if question is not None and not isinstance(question, str):
        raise TypeError(f"the retrieval graph's 'question' must be text, got {type(question).__name__}")
    question = (question or "").strip()
    if not question:
        from langchain_core.messages import convert_to_messages

        from z0_memory.nodes.respond import last_request

        messages = state.get("messages")
        if messages is not None and not isinstance(messages, list):
            raise TypeError(f"the retrieval graph's 'messages' must be a list of messages, got "
                            f"{type(messages).__name__}")
        question = last_request(convert_to_messages(messages or []))[:QUESTION_MAX_CHARS]
    if not question:
        raise ValueError(
            "the retrieval graph needs a non-empty 'question', or a human message in 'messages': give your graph's "
            "state a 'question' or 'messages' channel (inherit z0_memory.RetrievalChannels and MessagesState)")
    return question


def route_decision(pm: ProjectMemory, question: str, facts: Sequence[FactVersion], *, include_history: bool = False,
                   max_rounds: int) -> RetrievalState:
    """The state a loop starts from: the router's pick of recipes for ``question`` and an empty history."""
    decision = offline_route(question, project=pm.scope.project,
                             known_categories=sorted({f.key.category for f in facts}),
                             known_keys=[str(f.key) for f in facts])
    return {
        "question": question, "route": decision.model_dump(), "query": question,
        "strategies": list(decision.strategies), "key": decision.key, "prefix": decision.prefix,
        "time_window": decision.time_window,
        "include_history": include_history or decision.include_history,
        "max_rounds": max_rounds,
        "round": 0, "queries_tried": [], "round_hits": [], "memories": [], "verdict": None, "trace": [],
        "stop_reason": "",
    }


async def route(state: RetrievalState, runtime: Runtime[Context]) -> RetrievalState:
    """The gateway: pick KV exact / prefix / semantic / keyword / hybrid from the question."""
    ctx, _, pm = scope_of(runtime)
    question = _question(state)
    return route_decision(pm, question, await pm.facts.list(), include_history=bool(state.get("include_history")),
                          max_rounds=int(state.get("max_rounds") or ctx.max_rounds))


async def run_round(pm: ProjectMemory, state: RetrievalState, top_k: int) -> RetrievalState:
    """One round: this round's recipes, then fusion with every earlier round's evidence; the state update."""
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    req = SearchRequest(query=state["query"], k=max(top_k * 3, ROUND_DEPTH),
                        include_history=bool(state.get("include_history")), key=state.get("key"),
                        prefix=state.get("prefix"))
    window, now = TimeWindow.from_dict(state.get("time_window")), datetime.now(UTC)
    names = [name for name in state["strategies"] if name in RECIPES]
    errors: list[str] = []
    per_strategy = [await _recipe_or_keywords(pm, name, req, errors) for name in names]
    if window is not None:  # the period on its own: what was said then, even in other words than the query's
        period = window.padded(PERIOD_PAD_DAYS)
        per_strategy.append(await _recipe_or_keywords(pm, PERIOD_STRATEGY,
                                                      replace(req, since=period.start, until=period.end), errors))
        names.append(f"{PERIOD_STRATEGY}@period")
    round_hits = per_strategy[0] if len(per_strategy) == 1 else rrf_fuse(per_strategy, req.k, "+".join(names))
    round_hits = await pm.semantic.search_engine.neighbors(round_hits, include_history=req.include_history)
    rounds = [*state.get("round_hits", []), round_hits]
    keep = max(top_k * 3, MEMORIES_KEPT)
    analysis = analyze_question(state["question"])
    memories = fuse_and_boost(rounds, state["question"], candidates=2 * keep, keep=keep,
                              spread=analysis.is_list or analysis.is_compare, weight=lambda h: memory_weight(
                                  h, include_history=req.include_history, now=now) * time_weight(h, window))
    number = int(state.get("round", 0)) + 1
    trace = RoundTrace(
        round=number, query=req.query, strategies=names, started_at=started,
        hits=[{"id": h.id, "score": round(h.score, 4), "strategy": h.strategy} for h in round_hits[:top_k]],
        duration_ms=(time.perf_counter() - t0) * 1000,
        error="; ".join(errors) or None,
    )
    return {"round": number, "round_hits": rounds, "memories": memories,
            "queries_tried": [*state.get("queries_tried", []), req.query],
            "trace": [*state.get("trace", []), trace]}


async def _recipe_or_keywords(pm: ProjectMemory, name: str, req: SearchRequest, errors: list[str]) -> list[Hit]:
    """A recipe's hits; when its embedding call fails after its retries, the keyword recipe's (noted in ``errors``):
    a failing embeddings endpoint degrades the round to BM25 instead of failing the turn."""
    try:
        return await run_recipe(pm, name, req)
    except ModelCallError as exc:
        errors.append(f"{exc}; '{name}' ran as a keyword search")
        return await run_recipe(pm, KEYWORD_RECIPE, req)


async def retrieve(state: RetrievalState, runtime: Runtime[Context]) -> RetrievalState:
    """Run this round's recipes, then fuse with every earlier round's evidence."""
    ctx, _, pm = scope_of(runtime)
    return await run_round(pm, state, int(ctx.top_k))


async def first_round(pm: ProjectMemory, question: str, *, top_k: int = 10,
                      include_history: bool = False) -> list[Hit]:
    """The loop's first round without the judge (route, the routed recipes, fusion and ranking): what every
    one-shot search of a project returns (``Z0Store.search`` with a query), so that the same question gets the same
    ranking whatever the entry point."""
    state = route_decision(pm, question, await pm.facts.list(), include_history=include_history, max_rounds=1)
    return (await run_round(pm, state, top_k))["memories"]


async def _llm_verdict(model: BaseChatModel, state: RetrievalState, settings: Settings,
                       runnable: Runnable | None = None) -> Verdict:
    prompt = JUDGE_USER.format(
        question=state["question"], round=state["round"], max_rounds=state["max_rounds"],
        queries_tried="; ".join(state.get("queries_tried", [])),
        evidence=render_evidence(state.get("memories", []), limit=JUDGE_EVIDENCE_LIMIT),
    )
    return await invoke_structured(model, Verdict, [SystemMessage(JUDGE_SYSTEM), HumanMessage(prompt)], settings,
                                   what="retrieval judge", runnable=runnable)


async def evaluate(state: RetrievalState, runtime: Runtime[Context]) -> RetrievalState:
    """The sceptical judge: is the accumulated evidence enough? If not, what is missing and how to search next."""
    ctx, memory, _ = scope_of(runtime)
    t0 = time.perf_counter()
    error = None
    model = memory.providers.chat("judge", ctx)
    hits: list[Hit] = state.get("memories", [])
    offline = lambda: offline_judge(state["question"], hits[: ctx.top_k], round=state["round"],  # noqa: E731
                                    max_rounds=state["max_rounds"], queries_tried=state.get("queries_tried", []))
    if model is None:
        verdict = offline()
    else:
        try:
            verdict = await _llm_verdict(model, state, memory.settings, memory.providers.structured(
                model, Verdict, memory.settings.structured_output_method))
        except ModelCallError as exc:
            error = f"{exc}; the offline judge decided this round"
            verdict = offline()
    last_round = state["round"] >= state["max_rounds"]
    if verdict.sufficient:
        stop, action = "sufficient", "stop: the judge found the evidence sufficient"
    elif last_round:
        stop, action = "max_rounds", f"stop: {state['max_rounds']} round(s) reached, returning the best evidence"
    else:
        stop, action = "", "rewrite the query and search again"
    update: RetrievalState = {}
    if stop and ctx.rerank:  # once per question: the evidence the loop hands back, not every round's
        update["memories"] = offline_rerank(state["question"], hits)
    trace = list(state.get("trace", []))
    trace[-1] = trace[-1].model_copy(update={
        "verdict": verdict.sufficient, "reason": verdict.reason, "missing": verdict.missing, "next_action": action,
        "error": "; ".join(e for e in (trace[-1].error, error) if e) or None, "duration_ms": trace[-1].duration_ms + (time.perf_counter() - t0) * 1000,
    })
    return {"verdict": verdict, "trace": trace, "stop_reason": stop, **update}


async def after_evaluate(state: RetrievalState) -> str:
    """Conditional edge: END when sufficient or when the round guard is reached, else rewrite.

    ``async`` on purpose: LangGraph runs a sync edge function of an async graph through ``run_in_executor``, a
    thread hop every round (milliseconds when the machine is busy) for one dictionary lookup.
    """
    return "done" if state.get("stop_reason") else "rewrite"


async def rewrite(state: RetrievalState, runtime: Runtime[Context]) -> RetrievalState:
    """Turn the judge's feedback into the next round's query and strategies (never a query already run)."""
    verdict = state["verdict"] or Verdict(sufficient=False)
    query, strategies, why = offline_rewrite(
        state["question"], verdict, queries_tried=state.get("queries_tried", []),
        last_strategies=state.get("strategies", []), hits=state.get("memories", []),
    )
    chosen: list[str] = [s for s in strategies if s in STRATEGIES] or ["hybrid"]
    trace = list(state.get("trace", []))
    trace[-1] = trace[-1].model_copy(update={"next_action": f"{trace[-1].next_action}: {why}"})
    key = state.get("key")
    if "kv_exact" in chosen and verdict.next_query and verdict.next_query.count(":") == 2:
        key = verdict.next_query
    return {"query": query, "strategies": chosen, "key": key, "trace": trace}
