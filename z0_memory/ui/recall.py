"""The recall page's run of the retrieval loop: the graph itself, streamed node by node, so the page knows each
round's query, recipes, key and prefix; then each round's recipes are run again on their own to say which recipe
ranked each returned memory, and where (the loop keeps only a round's fused list)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from z0_memory.config import Context
from z0_memory.memory import ProjectMemory, Z0Memory
from z0_memory.nodes.retrieval import ROUND_DEPTH
from z0_memory.stores.recipes import RECIPES, SearchRequest, run_recipe


@dataclass
class RecallRun:
    state: dict[str, Any]
    rounds: list[dict[str, Any]]  # per round: query, strategies, key, prefix
    found_by: dict[str, list[str]] = field(default_factory=dict)  # memory id -> ["hybrid #2 (round 1)", ...]


async def run_traced(memory: Z0Memory, pm: ProjectMemory, question: str, ctx: Context) -> RecallRun:
    from z0_memory.graphs.retrieval import builder

    graph = builder.compile(store=memory.store(pm.scope.project, pm.scope.user_id))
    state: dict[str, Any] = {}
    rounds: list[dict[str, Any]] = []
    async for update in graph.astream({"question": question}, context=ctx, stream_mode="updates"):
        for node, values in update.items():
            if node == "retrieve":  # the round just run used the state as it was before this update
                rounds.append({"query": state.get("query", question), "strategies": list(state.get("strategies", [])),
                               "key": state.get("key"), "prefix": state.get("prefix")})
            state.update(values or {})
    run = RecallRun(state, rounds)
    wanted = {h.id for h in (state.get("memories") or [])[: int(ctx.top_k)]}
    k = max(int(ctx.top_k) * 3, ROUND_DEPTH)
    for number, r in enumerate(rounds, 1):
        req = SearchRequest(query=r["query"], k=k, include_history=bool(state.get("include_history")),
                            key=r["key"], prefix=r["prefix"])
        for name in r["strategies"]:
            if name not in RECIPES:
                continue
            for rank, hit in enumerate(await run_recipe(pm, name, req), 1):
                if hit.id in wanted:
                    run.found_by.setdefault(hit.id, []).append(f"{name} #{rank} (round {number})")
    return run
