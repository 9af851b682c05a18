"""Isolation under random operations: hypothesis drives every public way into memory across 3 projects x 2 users.

Each example starts from empty tables and runs a random program of operations, each on a random scope: KV facts
(put / forget / get / list / history), semantic memory (add / search / keyword / hybrid / delete / supersede), pending
(add / take), the LangGraph ``Z0Store`` (``abatch`` of Put / Get / Search), the retrieval graph, the
``recall_memory`` tool and the extraction graph. A model of what each scope should hold is kept alongside. After
every operation and at the end of each example it asserts:

* nothing crosses scopes: every hit, item, row and rendered block of a scope carries that scope's marker and no
  other scope's; ids of another scope cannot be read, deleted, superseded or taken; rows are stored under the scope
  whose marker they carry;
* the stores hold exactly what the model says (facts with their versions, pending ids, live memories found);
* forget / delete in one scope leaves every other scope's rows byte-for-byte intact;
* a forgotten fact version or deleted memory never comes back from any search, and is gone from the table.

Uses the ``hash`` embeddings on a scratch database (``reliability_support``): only scope boundaries matter here.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import HumanMessage
from langgraph.prebuilt import ToolRuntime
from langgraph.store.base import GetOp, PutOp, SearchOp
from reliability_support import fast_database, fast_memory, fast_owner, record, truncate  # noqa: F401

from z0_memory.config import Context
from z0_memory.graphs.extraction import builder as extraction_builder
from z0_memory.graphs.retrieval import builder as retrieval_builder
from z0_memory.schemas import Candidate, MemoryKey, Provenance
from z0_memory.stores.facts import mirror_id
from z0_memory.tools import recall_memory

pytestmark = pytest.mark.asyncio(loop_scope="session")

SCOPES = [(p, u) for p in ("alpha", "beta", "gamma") for u in ("", "alice")]
ENTITIES = ("ent0", "ent1", "ent2")
CATEGORY = "rel"  # the extraction graph never picks this category, so the fact model stays exact
OPS = ("fact_put", "fact_forget", "fact_read", "sem_add", "sem_delete", "sem_supersede", "search", "pending_add",
       "pending_take", "store_put", "store_get", "store_search", "store_forget", "retrieval", "recall", "extract")


def marker(scope: tuple[str, str]) -> str:
    return f"z{scope[0]}{scope[1] or 'shared'}q"


MARKERS = {s: marker(s) for s in SCOPES}
ALL_MARKERS = " ".join(MARKERS.values())


def foreign_markers(scope: tuple[str, str], text: str) -> list[str]:
    return [m for s, m in MARKERS.items() if s != scope and m in text]


@dataclass
class Model:
    """What each scope should hold."""

    facts: dict[tuple, list[list]] = field(default_factory=dict)  # (scope, entity) -> [[version, value, current]]
    live: dict[tuple, set[str]] = field(default_factory=lambda: {s: set() for s in SCOPES})
    pending: dict[tuple, set[int]] = field(default_factory=lambda: {s: set() for s in SCOPES})
    graveyard: set[str] = field(default_factory=set)  # deleted memories and forgotten fact mirrors
    superseded: set[str] = field(default_factory=set)  # live memories already marked superseded
    forgotten: set[tuple] = field(default_factory=set)  # (scope, entity, value) forgotten and not put again

    def put(self, scope, entity: str, value: str) -> None:
        versions = self.facts.setdefault((scope, entity), [])
        current = next((v for v in versions if v[2]), None)
        self.forgotten.discard((scope, entity, value))
        if current and current[1].casefold() == value.casefold():
            return
        if current:
            current[2] = False
        versions.append([max((v[0] for v in versions), default=0) + 1, value, True])
        # after forget(include_history=True) numbering restarts, so a new version 1 reuses its mirror id: that is a
        # new item, not the forgotten one back (the forgotten value is checked separately, by content)
        self.graveyard.discard(mirror_id(pm_scope(scope), MemoryKey(project=scope[0], category=CATEGORY,
                                                                    entity=entity), versions[-1][0]))

    def forget(self, scope, entity: str, everything: bool) -> None:
        versions = self.facts.get((scope, entity), [])
        gone = versions if everything else [v for v in versions if v[2]]
        key = MemoryKey(project=scope[0], category=CATEGORY, entity=entity)
        self.graveyard |= {mirror_id(pm_scope(scope), key, v[0]) for v in gone}
        self.facts[(scope, entity)] = [v for v in versions if v not in gone]
        kept = {v[1] for v in self.facts[(scope, entity)]}
        self.forgotten |= {(scope, entity, v[1]) for v in gone if v[1] not in kept}

    def fact_mirrors(self, scope) -> set[str]:
        key = lambda e: MemoryKey(project=scope[0], category=CATEGORY, entity=e)  # noqa: E731
        return {mirror_id(pm_scope(scope), key(e), v[0]) for (s, e), vs in self.facts.items() if s == scope
                for v in vs}


def pm_scope(scope):
    from z0_memory.stores.scope import Scope

    return Scope(*scope)


async def scope_rows(memory) -> dict[tuple, set]:
    """Every row of every z0 table, by scope (the byte-for-byte picture a forget elsewhere must not touch)."""
    out: dict[tuple, set] = {}
    async with memory.db.connection() as conn:
        for table, cols in (("z0_facts", "id::text, category, entity, value, version, valid_to"),
                            ("z0_memories", "id::text, content, superseded_at"),
                            ("z0_pending", "id::text, content, confirmations")):
            for row in await (await conn.execute(f"SELECT project, user_id, {cols} FROM {table}")).fetchall():
                out.setdefault((row.pop("project"), row.pop("user_id")), set()).add(
                    (table, *map(str, row.values())))
    return out


def check_hits(scope, hits, model: Model, what: str) -> None:
    for hit in hits:
        text = hit.content if hasattr(hit, "content") else str(hit.value)
        assert MARKERS[scope] in text or (getattr(hit, "key", None) or "").startswith(f"{scope[0]}:"), (what, text)
        assert not foreign_markers(scope, text), (what, text)
        assert getattr(hit, "id", None) not in model.graveyard, (what, "a forgotten/deleted item came back", text)
        key, value = getattr(hit, "key", None), (getattr(hit, "metadata", None) or {}).get("value")
        if key and value:
            assert (scope, key.rsplit(":", 1)[1], value) not in model.forgotten, (what, "a forgotten value came back")


async def check_scope(memory, scope, model: Model) -> None:
    pm = memory.scope(*scope)
    facts = await pm.facts.list(CATEGORY, include_superseded=True)
    expected = sorted((e, v[0], v[1], v[2]) for (s, e), vs in model.facts.items() if s == scope for v in vs)
    assert sorted((f.key.entity, f.version, f.value, f.is_current) for f in facts) == expected
    found = await pm.semantic.keyword_search(MARKERS[scope], 500, include_superseded=True)
    check_hits(scope, found, model, "keyword")
    assert model.live[scope] | model.fact_mirrors(scope) <= {h.id for h in found}
    for search in (pm.semantic.search, pm.semantic.hybrid_search):
        check_hits(scope, await search(f"{ALL_MARKERS} note option", 50, include_superseded=True), model, "dense")
    assert {i.id for i in await pm.pending.list(include_expired=True)} == model.pending[scope]


async def check_global(memory, model: Model) -> None:
    async with memory.db.connection() as conn:
        rows = await (await conn.execute("SELECT project, user_id, content, id::text AS id FROM z0_memories")).fetchall()
        rows += await (await conn.execute("SELECT project, user_id, content, id::text AS id FROM z0_pending")).fetchall()
        rows += await (await conn.execute(
            "SELECT project, user_id, value AS content, id::text AS id FROM z0_facts")).fetchall()
    for row in rows:
        owners = [s for s, m in MARKERS.items() if m in row["content"]]
        assert owners in ([], [(row["project"], row["user_id"])]), row  # stored under the scope it belongs to
        assert row["id"] not in model.graveyard, row


def ctx_for(scope) -> Context:
    return Context(project=scope[0], user_id=scope[1], mode="code", max_rounds=2, judge_model="offline",
                   extractor_model="offline", agent_model="offline")


async def run_op(memory, model: Model, op: str, scope, n: int) -> None:
    pm = memory.scope(*scope)
    mk = MARKERS[scope]
    entity = ENTITIES[n % len(ENTITIES)]
    key = f"{scope[0]}:{CATEGORY}:{entity}"
    others = [s for s in SCOPES if s != scope]
    other = others[n % len(others)]
    if op == "fact_put":
        await pm.facts.put(key, f"{mk}-v{n % 4}", Provenance(rationale=f"{mk} reason"))
        model.put(scope, entity, f"{mk}-v{n % 4}")
    elif op == "fact_forget":
        before = await scope_rows(memory)
        await pm.facts.forget(key, include_history=bool(n % 2))
        model.forget(scope, entity, bool(n % 2))
        after = await scope_rows(memory)
        assert all(after.get(s) == before.get(s) for s in others)  # forget here leaves every other scope intact
    elif op == "fact_read":
        current = [v for v in model.facts.get((scope, entity), []) if v[2]]
        got = await pm.facts.get(key)
        assert (got.value if got else None) == (current[0][1] if current else None)
        assert [v.value for v in await pm.facts.history(key)] == [v[1] for v in model.facts.get((scope, entity), [])]
        with pytest.raises(ValueError, match="belongs to project"):
            await pm.facts.get(f"{other[0]}:{CATEGORY}:{entity}") if other[0] != scope[0] else _raise()
    elif op == "sem_add":
        rec = await pm.semantic.add(f"{mk} note {n} about caching and deploys", category="notes")
        model.live[scope].add(rec.id)
    elif op in ("sem_delete", "sem_supersede"):
        mine, theirs = sorted(model.live[scope]), sorted(model.live[other])
        if theirs:  # another scope's id is neither readable nor changeable from here
            assert await pm.semantic.get(theirs[0]) is None
            assert await (pm.semantic.delete([theirs[0]]) if op == "sem_delete" else pm.semantic.supersede(theirs[0])) \
                in (0, False)
            assert await memory.scope(*other).semantic.get(theirs[0]) is not None
        if mine:
            target = mine[n % len(mine)]
            before = await scope_rows(memory)
            if op == "sem_delete":
                assert await pm.semantic.delete([target]) == 1
                model.live[scope].discard(target)
                model.graveyard.add(target)
                assert all(after == before.get(s) for s, after in (await scope_rows(memory)).items() if s != scope)
            else:  # a memory is superseded once: a second time changes nothing and says so
                assert await pm.semantic.supersede(target) is (target not in model.superseded)
                model.superseded.add(target)
    elif op == "search":
        for search in (pm.semantic.search, pm.semantic.keyword_search, pm.semantic.hybrid_search):
            check_hits(scope, await search(f"{ALL_MARKERS} caching", 30, include_superseded=bool(n % 2)), model,
                       search.__name__)
    elif op == "pending_add":
        write = await pm.pending.add(Candidate(kind="decision", key=f"{scope[0]}:{CATEGORY}:opt{n % 3}",
                                               value=f"{mk}{n % 3}", content=f"maybe {mk} option {n % 3}",
                                               confidence=0.3, hedged=True), Provenance())
        model.pending[scope].add(write.item.id)
    elif op == "pending_take":
        for item_id in sorted(model.pending[other])[:1]:
            assert await pm.pending.take(item_id) is None  # another scope's item cannot be taken from here
        mine = sorted(model.pending[scope])
        if mine:
            item = await pm.pending.take(mine[n % len(mine)])
            assert item is not None and mk in item.candidate.content
            model.pending[scope].discard(item.id)
    elif op.startswith("store_"):
        store = memory.store(scope[0])
        if scope[1]:  # the store API works on the project's shared memory; users go through the scoped stores
            scope = (scope[0], "")
            pm, mk, key = memory.scope(scope[0]), MARKERS[scope], f"{scope[0]}:{CATEGORY}:{entity}"
        ns = (scope[0], CATEGORY)
        if op == "store_put":
            await store.abatch([PutOp(ns, entity, {"value": f"{mk}-s{n % 3}", "rationale": f"{mk} via store"})])
            model.put(scope, entity, f"{mk}-s{n % 3}")
        elif op == "store_forget":
            await store.abatch([PutOp(ns, entity, None)])
            model.forget(scope, entity, False)
        elif op == "store_get":
            [item] = await store.abatch([GetOp(ns, entity)])
            current = [v for v in model.facts.get((scope, entity), []) if v[2]]
            assert (item.value["value"] if item else None) == (current[0][1] if current else None)
        else:
            [items] = await store.abatch([SearchOp((scope[0],), query=f"{ALL_MARKERS} note", limit=30)])
            for item in items:
                text = str(item.value)
                assert item.namespace[0] == scope[0] and not foreign_markers(scope, text), text
                assert mk in text or not any(m in text for m in MARKERS.values()), text
    elif op == "retrieval":
        graph = retrieval_builder.compile(store=memory.store(*scope))
        out = await graph.ainvoke({"question": f"what do we know about {ALL_MARKERS} ent0 caching?"},
                                  context=ctx_for(scope))
        check_hits(scope, out["memories"], model, "retrieval graph")
    elif op == "recall":
        runtime = ToolRuntime(state={}, context=ctx_for(scope), config={}, stream_writer=lambda _: None,
                              tool_call_id="call-1", store=memory.store(*scope))
        text = await recall_memory.ainvoke({"query": f"{ALL_MARKERS} notes and decisions", "runtime": runtime})
        block = text.rsplit("\n", 1)[0]  # the last line is the search summary, which repeats the query
        assert block.count("<memory>") == 1 and not foreign_markers(scope, block), text
    elif op == "extract":
        before = await scope_rows(memory)
        graph = extraction_builder.compile(store=memory.store(*scope))
        await graph.ainvoke({"messages": [HumanMessage(f"We decided to use {mk}db as the database for the app.")]},
                            context=ctx_for(scope))
        after = await scope_rows(memory)
        assert all(after.get(s) == before.get(s) for s in others)  # written, if at all, only to this scope
        new = after.get(scope, set()) - before.get(scope, set())
        for row in new:  # a new pending row from this turn is the model's too
            if row[0] == "z0_pending":
                model.pending[scope].add(int(row[1]))
    else:  # pragma: no cover - the strategy only draws names from OPS
        raise AssertionError(op)


def _raise():
    raise ValueError("belongs to project (same project: nothing to cross)")


programs = st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, len(SCOPES) - 1), st.integers(0, 11)),
                    min_size=4, max_size=18)
_counter = itertools.count()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(program=programs)
async def test_random_operations_never_cross_scopes(fast_memory, program):
    await truncate(fast_memory)
    model = Model()
    for op, s, n in program:
        await run_op(fast_memory, model, op, SCOPES[s], n)
    for scope in SCOPES:
        await check_scope(fast_memory, scope, model)
    await check_global(fast_memory, model)
    next(_counter)
    record("isolation.random_program", operations=len(program) + 4 * len(SCOPES))


async def test_every_operation_kind_runs_in_every_scope(fast_memory):
    """A fixed program touching every operation in every scope, so coverage never depends on what hypothesis drew."""
    model = Model()
    program = [(op, s, n) for n, op in enumerate(OPS * 2) for s in range(len(SCOPES))]
    for op, s, n in program:
        await run_op(fast_memory, model, op, SCOPES[s], n)
    for scope in SCOPES:
        await check_scope(fast_memory, scope, model)
    await check_global(fast_memory, model)
    assert model.graveyard, "the program deleted and forgot something"
    record("isolation.every_operation", operations=len(program) + 4 * len(SCOPES))
