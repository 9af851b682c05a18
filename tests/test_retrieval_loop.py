"""The retrieval loop on the real embedded Postgres: rounds, rewrite, strategy switch, the round guard, evidence
accumulation, judge faults, KV exact hits, Chinese, history questions, and the graph used as a subgraph."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from fakes import ScriptedChatModel, Sleep, configured, swapped_model
from z0_memory.config import Context
from z0_memory.graphs.retrieval import builder, graph as module_graph
from z0_memory.offline.judge import norm_query
from z0_memory.schemas import Provenance, Verdict
from z0_memory.stores.recipes import SearchRequest
from z0_memory.stores.semantic import NewMemory

pytestmark = pytest.mark.asyncio(loop_scope="session")

MEMORIES = [
    NewMemory("Alice prefers pnpm over npm for every package", category="tooling", kind="preference"),
    NewMemory("The API is deployed on Fly.io in the Frankfurt region", category="deploy", kind="fact"),
    NewMemory("Nightly backups of the database run at 02:00 UTC", category="ops", kind="fact"),
    NewMemory("Bob reviews pull requests every morning before standup", category="people", kind="preference"),
    NewMemory("We decided to use Supabase as the main database", category="database", kind="decision"),
    NewMemory("缓存层暂时不用 Redis，先用内存缓存", category="cache", kind="context"),
    NewMemory("我们决定使用 Supabase 作为主数据库，因为它自带认证", category="database", kind="decision"),
    NewMemory("前端部署在 Vercel 上", category="deploy", kind="fact"),
]


def judged_by(memory, model: BaseChatModel | None):
    return swapped_model(memory, "judge", model)


def insufficient(query: str | None = None, strategy: str | None = None, missing: str = "the region") -> Verdict:
    return Verdict(sufficient=False, missing=missing, reason="no hit names it", next_query=query,
                   next_strategy=strategy)


async def seed(memory, project: str = "acme"):
    pm = memory.scope(project)
    ids = await pm.semantic.add_many(MEMORIES)
    return pm, ids


async def run(memory, question: str, ctx: Context | None = None, **inputs: Any) -> dict[str, Any]:
    g = builder.compile(store=configured(memory, **FAST).store("acme"))
    return await g.ainvoke({"question": question, **inputs}, context=ctx or Context(project="acme"))


FAST = {"model_timeout_s": 0.2, "model_retries": 1}  # process settings: ``run`` compiles on a memory with them


def fast(**kw: Any) -> Context:
    return Context(project="acme", judge_model="offline", **kw)


# --- scripted judge: rounds, rewrite, strategy switch, accumulation ----------------------------------------------


async def test_insufficient_twice_then_sufficient(memory):
    pm, ids = await seed(memory)
    judge = ScriptedChatModel(script=[
        insufficient("Frankfurt region hosting", "keyword"),
        insufficient("database backups schedule", "semantic", missing="the backup time"),
        Verdict(sufficient=True, reason="both found"),
    ])
    with judged_by(memory, judge):
        out = await run(memory, "where is the API deployed?", fast(max_rounds=5))
    trace = out["trace"]
    assert [t.round for t in trace] == [1, 2, 3]
    assert out["stop_reason"] == "sufficient" and out["verdict"].sufficient
    assert len(judge.calls) == 3
    # the rewrite used the judge's next query and switched to its strategy
    assert [t.query for t in trace] == ["where is the API deployed?", "Frankfurt region hosting",
                                       "database backups schedule"]
    assert trace[0].strategies == ["hybrid"]
    assert trace[1].strategies == ["keyword"] and trace[2].strategies == ["semantic"]
    assert [t.verdict for t in trace] == [False, False, True]
    assert trace[0].reason == "no hit names it" and trace[0].missing == "the region"
    assert "rewrite" in trace[0].next_action and trace[-1].next_action.startswith("stop")
    # the judge saw the question, the round number and the queries already tried
    assert "Round 2 of at most 5" in judge.requests()[1]
    assert "Frankfurt region hosting" in judge.requests()[2]
    # evidence accumulated: every hit of round 1 and round 3 is still in the final memories
    final = {h.id for h in out["memories"]}
    for t in (trace[0], trace[2]):
        assert t.hits and {h["id"] for h in t.hits} <= final
    deploy = ids[1]
    backups = ids[2]
    assert deploy in final and backups in final
    backups_hit = next(h for h in out["memories"] if h.id == backups)
    assert 3 in backups_hit.metadata["rounds"]


async def test_judge_repeating_a_query_is_never_rerun(memory):
    await seed(memory)
    judge = ScriptedChatModel(script=[insufficient("where is the API deployed?"), insufficient("deploy region")])
    with judged_by(memory, judge):
        out = await run(memory, "where is the API deployed?", fast(max_rounds=5))
    queries = [norm_query(t.query) for t in out["trace"]]
    assert len(out["trace"]) == 5 and len(set(queries)) == 5
    # round 1's proposal was the question itself, so the offline rewriter chose round 2's query; round 2's proposal
    # ran in round 3, and rounds 3-4 proposed it again, so rounds 4-5 ran other queries
    assert norm_query(out["trace"][1].query) != norm_query("where is the API deployed?")
    assert out["trace"][2].query == "deploy region"
    assert "deploy region" not in [t.query for t in out["trace"][3:]]


# --- the guard -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 5])
async def test_guard_stops_at_exactly_n_rounds(memory, n):
    await seed(memory)
    verdicts = [insufficient(f"query number {i}", missing=f"gap {i}") for i in range(1, 8)]
    judge = ScriptedChatModel(script=verdicts)
    with judged_by(memory, judge):
        out = await run(memory, "what is the meaning of life?", fast(), max_rounds=n)
    assert len(out["trace"]) == n and len(judge.calls) == n
    assert out["stop_reason"] == "max_rounds"
    assert out["verdict"].sufficient is False and out["verdict"].missing == f"gap {n}"  # the last verdict
    assert f"{n} round(s) reached" in out["trace"][-1].next_action
    assert len({norm_query(t.query) for t in out["trace"]}) == n


@pytest.mark.parametrize(("mode", "expected"), [("code", 5), ("chat", 3)])
async def test_max_rounds_default_by_mode(memory, mode, expected):
    await seed(memory)
    judge = ScriptedChatModel(script=[insufficient()])
    with judged_by(memory, judge):
        out = await run(memory, "what is the meaning of life?",
                        Context(project="acme", mode=mode))
    assert len(out["trace"]) == expected and out["stop_reason"] == "max_rounds"


async def test_max_rounds_input_overrides_context(memory):
    await seed(memory)
    judge = ScriptedChatModel(script=[insufficient()])
    with judged_by(memory, judge):
        out = await run(memory, "what is the meaning of life?", fast(mode="code"), max_rounds=2)
        out_ctx = await run(memory, "what is the meaning of life?", fast(mode="chat", max_rounds=4))
    assert len(out["trace"]) == 2 and len(out_ctx["trace"]) == 4


# --- faults ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("script", "words"),
    [
        ([RuntimeError("HTTP 500 from the provider")], "RuntimeError"),
        ([Sleep(1.0, then=Verdict(sufficient=True, reason="too late"))], "timed out"),
        (['{"sufficient": tru'], "JSONDecodeError"),
        (['{"reason": "no verdict field"}'], "ValidationError"),
    ],
    ids=["raises", "times-out", "malformed-json", "invalid-schema"],
)
async def test_judge_faults_never_fail_the_caller(memory, script, words):
    await seed(memory)
    judge = ScriptedChatModel(script=script)
    with judged_by(memory, judge):
        out = await run(memory, "where is the API deployed?", fast(max_rounds=2))
    assert out["stop_reason"] in {"sufficient", "max_rounds"}
    assert out["memories"], "the loop still returns what it found"
    errors = [t.error for t in out["trace"]]
    assert all(e and words in e and "offline judge decided" in e for e in errors)
    assert len(judge.calls) == 2 * len(out["trace"])  # model_retries=1: two attempts per round


# --- offline end to end ----------------------------------------------------------------------------------------


async def test_kv_exact_hit_ends_in_round_one(memory):
    pm, _ = await seed(memory)
    await pm.facts.put("acme:stack:backend_framework", "Hono", Provenance(rationale="edge runtime support"))
    out = await run(memory, "which backend framework do we use?", fast())
    assert out["stop_reason"] == "sufficient" and len(out["trace"]) == 1
    assert out["trace"][0].strategies[0] == "kv_exact"
    top = out["memories"][0]
    assert top.key == "acme:stack:backend_framework" and top.metadata["value"] == "Hono"
    assert out["trace"][0].error is None


async def test_offline_chinese_query_finds_chinese_and_english(memory):
    pm, ids = await seed(memory)
    out = await run(memory, "我们的主数据库用的是什么？", fast())
    top = [h.id for h in out["memories"][:5]]
    assert ids[6] in top  # 我们决定使用 Supabase 作为主数据库
    assert ids[6] == out["memories"][0].id
    out_en = await run(memory, "Supabase 数据库", fast())
    top_en = {h.id for h in out_en["memories"][:5]}
    assert {ids[4], ids[6]} <= top_en  # the English and the Chinese decision
    assert all(t.error is None for t in out["trace"] + out_en["trace"])


async def test_history_question_reaches_the_superseded_version(memory):
    pm, _ = await seed(memory)
    await pm.facts.put("acme:stack:backend_framework", "Express", Provenance(rationale="the team knew it well"))
    await pm.facts.put("acme:stack:backend_framework", "Hono",
                       Provenance(rationale="Express could not run on the edge runtime"))
    plain = await run(memory, "which backend framework do we use?", fast())
    assert plain["memories"][0].metadata["value"] == "Hono" and not plain["memories"][0].superseded
    old = [h for h in plain["memories"] if h.key == "acme:stack:backend_framework" and h.superseded]
    assert all(h.score < plain["memories"][0].score for h in old)

    history = await run(memory, "why did we switch from Express to Hono?", fast())
    keyed = [h for h in history["memories"][:5] if h.key == "acme:stack:backend_framework"]
    values = {h.metadata["value"]: h for h in keyed}
    assert {"Express", "Hono"} <= set(values)
    assert values["Express"].superseded and values["Express"].rationale == "the team knew it well"
    assert "edge runtime" in values["Hono"].rationale


async def test_offline_loop_runs_more_rounds_when_evidence_is_missing(memory):
    await seed(memory)
    out = await run(memory, "When did Priscilla adopt her second greyhound?", fast(max_rounds=3))
    assert out["stop_reason"] == "max_rounds" and len(out["trace"]) == 3
    assert out["verdict"] is not None and not out["verdict"].sufficient
    assert "Priscilla" in out["verdict"].missing


# --- three ways to use the graph -------------------------------------------------------------------------------


class Parent(TypedDict, total=False):
    question: str
    memories: list[Any]
    stop_reason: str
    answer: str


async def test_retrieval_graph_as_a_subgraph(memory):
    _, ids = await seed(memory)

    def answer(state: Parent) -> dict[str, Any]:
        top = state["memories"][0]
        return {"answer": f"{top.content} ({state['stop_reason']})"}

    parent = StateGraph(Parent, context_schema=Context)
    parent.add_node("recall", builder.compile())
    parent.add_node("answer", answer)
    parent.add_edge(START, "recall")
    parent.add_edge("recall", "answer")
    parent.add_edge("answer", END)
    g = parent.compile(store=configured(memory, **FAST).store("acme"))
    out = await g.ainvoke({"question": "where is the API deployed?"}, context=fast())
    assert "Fly.io" in out["answer"]
    assert out["memories"][0].id == ids[1]


async def test_module_graph_runs_with_a_store(memory):
    _, ids = await seed(memory)
    g = module_graph.builder.compile(store=configured(memory, **FAST).store("acme"))
    out = await g.ainvoke({"question": "where is the API deployed?"}, context=fast())
    assert out["memories"][0].id == ids[1]
    with pytest.raises(Exception, match="store=memory.store"):
        await module_graph.ainvoke({"question": "where is the API deployed?"}, context=fast())


# --- recipes the loop relies on --------------------------------------------------------------------------------


def turn(speaker: str, text: str, session: int, position: int) -> NewMemory:
    return NewMemory(f"{speaker}: {text}", category="conversation",
                     metadata={"speaker": speaker, "session": session, "turn": position})


async def test_bm25_weighs_rare_terms_over_common_names(memory):
    from z0_memory.stores.recipes import run_recipe

    pm = memory.scope("acme")
    rows = [turn("Caroline", f"Caroline says hello number {i} to Caroline's friends", 1, i) for i in range(12)]
    rows.append(turn("Melanie", "I finally bought the pottery wheel", 1, 12))
    ids = await pm.semantic.add_many(rows)
    hits = await pm.semantic.search_engine.bm25("Caroline pottery wheel", 5)
    assert hits[0].id == ids[-1] and hits[0].strategy == "keyword"
    assert hits[0].score > 2 * hits[1].score
    via_recipe = await run_recipe(pm, "keyword", SearchRequest(query="Caroline pottery wheel", k=5))
    assert [h.id for h in via_recipe] == [h.id for h in hits]
    assert await pm.semantic.search_engine.bm25("the and of", 5) == []


async def test_neighbors_bring_the_answer_after_a_question(memory):

    pm = memory.scope("acme")
    ids = await pm.semantic.add_many([
        turn("Jon", "Which city did you pick for the dance studio?", 3, 0),
        turn("Gina", "Definitely Rotterdam, the rent is fair there.", 3, 1),
        turn("Jon", "Nice!", 3, 2),
        turn("Gina", "Which city did you pick for the dance studio?", 4, 0),
        NewMemory("The API is deployed on Fly.io", category="deploy"),
    ])
    hits = await pm.semantic.search_engine.hybrid("city for the dance studio", 2)
    assert ids[1] not in {h.id for h in hits}  # the answer shares no word with the query
    expanded = await pm.semantic.search_engine.neighbors(hits)
    order = [h.id for h in expanded]
    assert ids[1] in order and order.index(ids[1]) == order.index(ids[0]) + 1  # right after its question
    answer = expanded[order.index(ids[1])]
    assert answer.strategy == "neighbors" and answer.metadata["neighbor_of"] == ids[0]
    assert answer.score < expanded[order.index(ids[0])].score
    assert len(order) == len(set(order))
    plain = await pm.semantic.search_engine.hybrid("where is the API deployed?", 1)
    assert await pm.semantic.search_engine.neighbors(plain) == plain  # no conversation metadata: nothing added
    out = await run(memory, "Which city did Gina pick for the dance studio?", fast())
    assert ids[1] in [h.id for h in out["memories"][:5]]


async def test_a_named_period_ranks_memories_from_then_first(memory):
    from datetime import UTC, datetime

    pm = memory.scope("acme")
    ids = await pm.semantic.add_many([
        NewMemory("We picked Redis for the cache layer", category="cache", created_at=datetime(2023, 1, 10, tzinfo=UTC)),
        NewMemory("We picked Valkey for the cache layer", category="cache", created_at=datetime(2023, 6, 3, tzinfo=UTC)),
        NewMemory("We picked Memcached for the cache layer", category="cache", created_at=datetime(2024, 2, 1, tzinfo=UTC)),
    ])
    june = await run(memory, "Which cache layer did we pick on 3 June, 2023?", fast())
    assert june["memories"][0].id == ids[1]
    assert june["route"]["time_window"]["start"].startswith("2023-06-03") and "3 June, 2023" in june["route"]["reason"]
    january = await run(memory, "Which cache layer did we pick in January 2023?", fast())
    assert january["memories"][0].id == ids[0]
    plain = await run(memory, "Which cache layer did we pick?", fast())
    assert plain["route"]["time_window"] is None


async def test_a_named_period_is_also_searched_on_its_own(memory):
    from datetime import UTC, datetime


    pm = memory.scope("acme")
    filler = [NewMemory(f"We discussed the cache layer and its change log, part {i}", category="cache",
                        created_at=datetime(2024, 1, 1 + i, tzinfo=UTC)) for i in range(20)]
    ids = await pm.semantic.add_many([
        *filler,
        NewMemory("Switched the session store over to Valkey", category="infra",
                  created_at=datetime(2023, 6, 3, 15, tzinfo=UTC)),
    ])
    june = (datetime(2023, 6, 1, tzinfo=UTC), datetime(2023, 6, 8, tzinfo=UTC))
    assert [h.id for h in await pm.semantic.search_engine.dense("cache change", 5, since=june[0], until=june[1])] == [ids[-1]]
    assert await pm.semantic.search_engine.bm25("cache change", 5, since=june[0], until=june[1]) == []  # no shared word
    assert len(await pm.semantic.search_engine.bm25("cache change", 50, until=june[0])) == 0
    assert len(await pm.semantic.search_engine.bm25("cache change", 50, since=june[1])) == 20
    out = await run(memory, "What did we change in the cache on 3 June, 2023?", fast())
    assert ids[-1] in [h.id for h in out["memories"][:3]]
    assert "hybrid@period" in out["trace"][0].strategies
