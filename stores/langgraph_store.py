"""``Z0Store``: z0-memory behind LangGraph's ``BaseStore`` interface.

This is how graph nodes reach long-term memory, the LangGraph way: compile a graph with
``store=memory.store(project)`` (or let ``langgraph dev`` build it from ``langgraph.json``), and every node finds the
memory at ``runtime.store``. It is also a usable ``BaseStore`` for any other LangGraph code:

* a store is bound to one scope (``memory.store(project, user_id)``) or is the operator's
  (``memory.operator_store()``, what ``langgraph dev`` gets): a bound store takes namespaces ``(category,)`` or
  ``(its project, category)`` and refuses any other project, and graphs run on it must run in its scope; the
  operator's store takes ``(project, category)`` for any project;
* namespace ``(project, category)`` + key ``entity`` is the KV fact ``project:category:entity``;
  ``put`` with ``{"value": "...", "rationale": ..., "confidence": ...}`` supersedes (history kept), ``put`` with
  ``None`` forgets the current version, ``get`` returns the current version;
* a semantic memory is the item ``(project, category)`` + key ``its id`` with value ``{"content", "kind",
  "confidence", "rationale"}``; a fact's value is the fact's fields (``value``, ``version``, ``confidence``, ...):
  ``get``, ``search`` with and without a query and ``list_namespaces`` return the same keys and value shapes;
* ``search((project,), query=...)`` ranks the project's memories as the retrieval loop's first round does (the
  same ranking as ``recall_memory`` and the loop for that question); without a query it lists facts, then memories;
* ``search`` and listing honour ``filter`` (equality on the returned value's fields) before ``limit``/``offset``;
* ``list_namespaces`` lists the ``(project, category)`` pairs that hold facts or memories in the store's user
  partition (the context's for the operator's store), as every other operation reads that partition;
* ``put`` with a ``ttl`` is refused (a ValueError: HTTP 400 through the API server): nothing here expires.

Only the async API exists (``abatch``): the memory runs on psycopg's async pool.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from langgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from z0_memory.errors import ConfigurationError, InvalidKeyError, Z0Error
from z0_memory.schemas import FactVersion, MemoryKey, Provenance, validate_segment
from z0_memory.stores.schema import SEMANTIC_TABLE
from z0_memory.stores.scope import Scope

if TYPE_CHECKING:
    from z0_memory.memory import Z0Memory


def _item_value(fact: FactVersion) -> dict[str, Any]:
    return {"value": fact.value, "version": fact.version, "confidence": fact.provenance.confidence,
            "rationale": fact.provenance.rationale, "extractor": fact.provenance.extractor,
            "thread_id": fact.provenance.thread_id, "confirmations": fact.confirmations}


def _memory_value(content: str, kind: str, confidence: float, rationale: str | None) -> dict[str, Any]:
    """A semantic memory's value: the same fields whether ``get``, ``search`` with or without a query returns it."""
    return {"content": content, "kind": kind, "confidence": confidence, "rationale": rationale}


def _looks_like_id(key: str) -> bool:
    try:
        uuid.UUID(str(key))
    except ValueError:
        return False
    return True


# The (project, category) pairs holding a current fact or a current semantic memory (fact mirrors excluded).
SCOPE_NAMESPACES_SQL = (
    "SELECT DISTINCT category FROM z0_facts WHERE project = %(project)s AND user_id = %(user_id)s "
    "AND valid_to IS NULL UNION SELECT DISTINCT category FROM " + SEMANTIC_TABLE + " WHERE project = %(project)s "
    "AND user_id = %(user_id)s AND fact_key IS NULL AND superseded_at IS NULL ORDER BY 1")
OPERATOR_NAMESPACES_SQL = (
    "SELECT DISTINCT project, category FROM z0_facts WHERE valid_to IS NULL AND user_id = %(user_id)s "
    "UNION SELECT DISTINCT project, category FROM " + SEMANTIC_TABLE + " WHERE user_id = %(user_id)s "
    "AND fact_key IS NULL AND superseded_at IS NULL ORDER BY 1, 2")


# How many candidates a filtered search reads per result asked for: the filter runs on the values, after ranking.
FILTER_DEPTH = 5


def _matches(value: dict[str, Any], wanted: dict[str, Any] | None) -> bool:
    return not wanted or all(value.get(field) == expected for field, expected in wanted.items())


class Z0Store(BaseStore):
    """A LangGraph store backed by a :class:`~z0_memory.memory.Z0Memory` (which it does not own), bound to
    ``scope`` or, with ``scope=None``, the operator's store over every project."""

    def __init__(self, memory: Z0Memory, scope: Scope | None = None) -> None:
        self.memory = memory
        self.scope = scope

    def _project(self, namespace: tuple[str, ...], what: str) -> tuple[str, tuple[str, ...]]:
        """The project a namespace reaches and the rest of it; a bound store refuses any project but its own."""
        if self.scope is None:
            if not namespace:
                raise ConfigurationError(f"Z0Store.{what} needs a namespace starting with the project")
            return namespace[0], tuple(namespace[1:])
        if len(namespace) >= 2 and namespace[0] != self.scope.project:
            raise InvalidKeyError(
                f"this store is bound to project {self.scope.project!r}; namespace {namespace!r} names another "
                "project. Open a store for that project with memory.store(project=...)")
        if len(namespace) >= 2 or (namespace and namespace[0] == self.scope.project):
            return self.scope.project, tuple(namespace[1:])
        return self.scope.project, tuple(namespace)

    def _key(self, namespace: tuple[str, ...], key: str) -> MemoryKey:
        project, rest = self._project(tuple(namespace), "get/put")
        if len(rest) != 1:
            raise ConfigurationError(
                f"Z0Store namespaces are (category,) or (project, category); got {tuple(namespace)!r}")
        return MemoryKey(project=project, category=rest[0], entity=key)

    def _stores(self, project: str) -> Any:
        user_id = self.scope.user_id if self.scope is not None else None
        return self.memory.scope(project, user_id)

    async def aput(self, namespace: tuple[str, ...], key: str, value: dict[str, Any] | None,
                   index: Any = None, *, ttl: Any = NOT_PROVIDED) -> None:
        """``BaseStore.aput``; a ``ttl`` is refused with a ConfigurationError (a ValueError: HTTP 400 through the API
        server, not a 500 that drops the client's connection): memory here is superseded or forgotten, never expired."""
        if ttl not in (NOT_PROVIDED, None):
            raise ConfigurationError(
                f"Z0Store does not expire items (ttl={ttl!r}): put without ttl; a fact stays until superseded "
                "(history kept) or forgotten (put None)")
        await super().aput(namespace, key, value, index)

    def batch(self, ops: Iterable[Any]) -> list[Result]:
        raise Z0Error("Z0Store is async-only: run the graph with ainvoke/astream (or call the a* store methods)")

    async def abatch(self, ops: Iterable[Any]) -> list[Result]:
        return [await self._one(op) for op in ops]

    async def _one(self, op: Any) -> Result:
        if isinstance(op, GetOp):
            k = self._key(op.namespace, op.key)
            pm = self._stores(k.project)
            fact = await pm.facts.get(k)
            if fact is not None:
                return self._item(fact)
            if _looks_like_id(op.key):  # a semantic memory, under the key search returned for it
                record = await pm.semantic.get(op.key)
                if record is not None and record.fact_key is None and record.category == k.category:
                    return Item(value=_memory_value(record.content, record.kind, record.confidence,
                                                    record.metadata.get("rationale")),
                                key=record.id, namespace=(k.project, record.category),
                                created_at=record.created_at, updated_at=record.created_at)
            return None
        if isinstance(op, PutOp):
            k = self._key(op.namespace, op.key)
            facts = self._stores(k.project).facts
            if op.value is None:
                await facts.forget(k)
                return None
            value = op.value.get("value")
            if not isinstance(value, str):
                raise ConfigurationError("Z0Store.put needs a dict with a text 'value' (and optional 'rationale')")
            try:
                prov = Provenance(extractor=str(op.value.get("extractor", "store-api")),
                                  confidence=float(op.value.get("confidence", 1.0)),
                                  rationale=op.value.get("rationale"), thread_id=op.value.get("thread_id"))
            except (TypeError, ValueError) as exc:
                raise ConfigurationError(
                    f"Z0Store.put {k}: 'confidence' must be a number in [0, 1] and 'rationale' / 'thread_id' text "
                    f"({exc.__class__.__name__}: {str(exc).splitlines()[0][:120]})"
                ) from None
            await facts.put(k, value, prov)
            return None
        if isinstance(op, SearchOp):
            return await self._search(op)
        if isinstance(op, ListNamespacesOp):
            return await self._namespaces(op)
        raise ConfigurationError(f"unsupported store operation {type(op).__name__}")

    @staticmethod
    def _item(fact: FactVersion) -> Item:
        return Item(value=_item_value(fact), key=fact.key.entity, namespace=(fact.key.project, fact.key.category),
                    created_at=fact.valid_from, updated_at=fact.valid_from)

    async def _search(self, op: SearchOp) -> list[SearchItem]:
        project, rest = self._project(tuple(op.namespace_prefix), "search")
        category = validate_segment(rest[0], "category") if rest else None
        pm = self._stores(project)
        wanted = op.filter or None
        if op.query:
            from z0_memory.nodes.retrieval import first_round  # the loop's first round: one ranking everywhere

            depth = (op.limit + op.offset) * (FILTER_DEPTH if wanted else 1)
            hits = await first_round(pm, op.query, top_k=depth)
            if category is not None:
                hits = [h for h in hits if h.category == category]
            items = []
            for h in hits:  # a fact comes back as get returns it: key = entity, value = the fact's fields
                fact = await pm.facts.get(h.key) if h.key else None
                if fact is not None:
                    items.append(SearchItem(namespace=(project, fact.key.category), key=fact.key.entity,
                                            value=_item_value(fact), created_at=fact.valid_from,
                                            updated_at=fact.valid_from, score=h.score))
                elif not h.key:
                    items.append(SearchItem(namespace=(project, h.category or "general"), key=h.id,
                                            value=_memory_value(h.content, h.kind, h.confidence, h.rationale),
                                            created_at=h.created_at, updated_at=h.created_at, score=h.score))
        else:  # facts, then semantic memories: the items get and search-with-a-query return, in the same shapes
            items = [SearchItem(namespace=(project, f.key.category), key=f.key.entity, value=_item_value(f),
                                created_at=f.valid_from, updated_at=f.valid_from)
                     for f in await pm.facts.list(category)]
            depth = (op.limit + op.offset) * (FILTER_DEPTH if wanted else 1)
            items += [SearchItem(namespace=(project, r.category), key=r.id,
                                 value=_memory_value(r.content, r.kind, r.confidence, r.metadata.get("rationale")),
                                 created_at=r.created_at, updated_at=r.created_at)
                      for r in await pm.semantic.list(category=category, limit=depth) if r.fact_key is None]
        items = [item for item in items if _matches(item.value, wanted)]
        return items[op.offset:op.offset + op.limit]

    async def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        if self.scope is not None:
            async with self.memory.db.connection(self.scope) as conn:
                rows = await (await conn.execute(SCOPE_NAMESPACES_SQL, self.scope.params)).fetchall()
            spaces = [(self.scope.project, r["category"]) for r in rows]
        else:
            from z0_memory.config import Context

            async with self.memory.db.connection() as conn:  # the operator's view: every project (Z0_USER_ID's rows)
                rows = await (await conn.execute(
                    OPERATOR_NAMESPACES_SQL, {"user_id": Context.from_env().user_id})).fetchall()
            spaces = [(r["project"], r["category"]) for r in rows]
        for cond in op.match_conditions or ():
            n = len(cond.path)
            spaces = [s for s in spaces if all(p in ("*", v) for p, v in zip(cond.path,
                      s[:n] if cond.match_type == "prefix" else s[-n:], strict=False))]
        if op.max_depth is not None:
            spaces = sorted(set(s[:op.max_depth] for s in spaces))
        return spaces[op.offset:op.offset + op.limit]
