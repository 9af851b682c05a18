"""Project (and user) isolation lives in the stores: nothing of one scope is ever seen from another."""

from __future__ import annotations

import pytest

from z0_memory.config import Context
from z0_memory.schemas import Candidate, Provenance

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def fill(memory, project: str, user: str = ""):
    scope = memory.scope(project, user)
    await scope.facts.put(f"{project}:stack:backend_framework", f"Hono-{project}{user}")
    rec = await scope.semantic.add(f"{project}{user} prefers pnpm for packages", category="tooling")
    await scope.pending.add(Candidate(kind="decision", key=f"{project}:stack:cache", value="Redis",
                                      content="maybe Redis", confidence=0.3), Provenance())
    return scope, rec


async def test_nothing_of_one_project_comes_back_for_another(memory):
    a, rec_a = await fill(memory, "alpha")
    b, rec_b = await fill(memory, "beta")
    for scope, own, other in ((a, "alpha", rec_b), (b, "beta", rec_a)):
        assert [f.value for f in await scope.facts.list(include_superseded=True)] == [f"Hono-{own}"]
        for search in (scope.semantic.search, scope.semantic.keyword_search, scope.semantic.hybrid_search):
            hits = await search("pnpm packages backend framework Hono", 20, include_superseded=True)
            assert hits and all(own in h.content for h in hits)
        assert await scope.semantic.get(other.id) is None
        assert await scope.semantic.delete([other.id]) == 0
        assert await scope.semantic.supersede(other.id) is False
        assert len(await scope.pending.list(include_expired=True)) == 1
        assert all(r.project == own for r in await scope.semantic.list(include_superseded=True))


async def test_keys_of_another_project_are_refused(memory):
    a = memory.scope("alpha")
    with pytest.raises(ValueError, match="belongs to project 'beta'"):
        await a.facts.get("beta:stack:backend_framework")


async def test_forget_in_one_project_leaves_the_other_intact(memory):
    a, _ = await fill(memory, "alpha")
    b, _ = await fill(memory, "beta")
    assert await a.facts.forget("alpha:stack:backend_framework", include_history=True) == 1
    assert (await b.facts.get("beta:stack:backend_framework")).value == "Hono-beta"
    assert await b.semantic.count() == 2


async def test_users_inside_a_project_are_partitioned(memory):
    shared, _ = await fill(memory, "alpha")
    alice, _ = await fill(memory, "alpha", "alice")
    assert (await shared.facts.get("alpha:stack:backend_framework")).value == "Hono-alpha"
    assert (await alice.facts.get("alpha:stack:backend_framework")).value == "Hono-alphaalice"
    hits = await alice.semantic.keyword_search("pnpm", 10)
    assert [h.content for h in hits] == ["alphaalice prefers pnpm for packages"]


async def test_store_namespaces_are_those_of_its_user_partition(memory):
    """Z0Store reads and writes the context's user partition; listing namespaces shows that partition's only,
    never the categories another user keeps privately."""
    await memory.scope("alpha").facts.put("alpha:stack:backend_framework", "Hono")
    await memory.scope("alpha", "bob").facts.put("alpha:health:diagnosis", "private")
    await memory.scope("beta").facts.put("beta:deploy:region", "Frankfurt")
    assert Context.from_env().user_id == ""  # the operator's user (Z0_USER_ID): the shared partition
    assert await memory.operator_store().alist_namespaces() == [("alpha", "stack"), ("beta", "deploy")]
    assert await memory.store(project="alpha").alist_namespaces() == [("alpha", "stack")]
    assert await memory.operator_store().alist_namespaces(prefix=("alpha",)) == [("alpha", "stack")]
    assert await memory.store("acme").alist_namespaces() == []  # acme holds no facts
