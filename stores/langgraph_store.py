"""``Z0Store``: z0-memory behind LangGraph's ``BaseStore`` interface.

This is how graph nodes reach long-term memory, the LangGraph way: compile a graph with
``store=memory.store(project)`` (or let ``langgraph dev`` build it from ``langgraph.json``), and every node finds the
memory at ``runtime.store``. It is also a general ``BaseStore`` for any other LangGraph code (langmem's memory tools
included): any namespace, any JSON value.

* A store is bound to one scope (``memory.store(project, user_id)``) or is the operator's
  (``memory.operator_store()``, what ``langgraph dev`` gets). Every item lives in a scope: a bound store's own,
  whatever namespace is asked (a namespace may start with the store's project, which is then dropped:
  ``("acme", "stack")`` and ``("stack",)`` are one namespace of store acme), so another project's rows are never
  reached; the operator's store reads the project from the namespace's first element, for any project. The user
  partition is the store's (the context's for the operator's store), never the item's.
* Category namespaces, ``(category,)`` (``(project, category)`` spelled in full), hold the project's KV facts and
  semantic memories: key ``entity`` with ``{"value": "...", "rationale": ..., "confidence": ...}`` is the KV fact
  ``project:category:entity`` (a put supersedes, history kept; put ``None`` forgets the current version; the item's
  value is the fact's fields: ``value``, ``version``, ``confidence``, ...), and a semantic memory is the item keyed by
  its id with value ``{"content", "kind", "confidence", "rationale"}``. Keys there are entity names; a dict with a
  ``"value"`` there is a fact (a value that is not text, or fields a fact does not record, are refused, not lost).
* Every other namespace (``("memories", user_id)`` as langmem writes) and every other value (any dict) is an item
  kept as a semantic memory of the scope (``stores.store_items``), keyed by (namespace, key): ``get`` returns the
  value exactly as put, put replaces it, delete removes it. ``index`` picks what is embedded, as in
  ``PostgresStore`` (``False``: nothing; field paths; default: the value's text); the retrieval loop finds items
  too. Such items come back under the namespace as put (on the operator's store with the project first; items
  of a category namespace as ``(project, category)``, like the facts beside them).
* ``search`` with a query: under the project or a category, the retrieval loop's first round ranks facts,
  memories and items (the same ranking as ``recall_memory``); under a longer namespace, the same hybrid search
  (BM25 and dense, fused by reciprocal rank; score = the fused score) ranks that namespace's indexed items only,
  its ``filter`` applied inside the search. Without a query: facts first, then memories and items, newest first.
  ``filter`` (a value per field for equality, or ``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``) applies to
  the returned values before ``limit``/``offset``.
* ``list_namespaces`` lists the namespaces holding current facts, memories or items, as search and get return them,
  with ``prefix``/``suffix`` (``*`` matches one label), ``max_depth``, ``limit`` and ``offset``.
* ``put`` with a ``ttl`` is refused (a ValueError: HTTP 400 through the API server): nothing here expires.

Only the async API exists (``abatch``): the memory runs on psycopg's async pool.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

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
from z0_memory.stores import store_items
from z0_memory.stores.scope import Scope

from z0_memory.config import Context
from z0_memory.errors import ConfigurationError, Z0Error
from z0_memory.schemas import FactVersion, Hit, MemoryKey, Provenance, validate_segment
from z0_memory.validation import check_value

if TYPE_CHECKING:
    from z0_memory.memory import ProjectMemory, Z0Memory

ItemT = TypeVar("ItemT", bound=Item)  # what a fact is shown as: an Item, or a SearchItem with its score


def _item_value(fact: FactVersion) -> dict[str, Any]:
    return {"value": fact.value, "version": fact.version, "confidence": fact.provenance.confidence,
            "rationale": fact.provenance.rationale, "extractor": fact.provenance.extractor,
            "thread_id": fact.provenance.thread_id, "confirmations": fact.confirmations}


def _memory_value(content: str, kind: str, confidence: float, rationale: str | None) -> dict[str, Any]:
    """A semantic memory's value: the same fields whether ``get``, ``search`` with or without a query returns it."""
    return {"content": content, "kind": kind, "confidence": confidence, "rationale": rationale}


# A value with a "value" field put under a category namespace is a KV fact: a text "value" and nothing but what a
# fact records (what get returns for a fact can be put back as it is); anything else there is refused, not lost.
FACT_FIELDS = frozenset({"value", "rationale", "confidence", "extractor", "thread_id", "version", "confirmations"})


def is_fact_value(value: Any) -> bool:
    """Whether a value put under a category namespace is a fact; a malformed fact is a ConfigurationError."""
    if not isinstance(value, dict) or "value" not in value:
        return False
    extra = sorted(str(f) for f in set(value) - FACT_FIELDS)
    if not isinstance(value["value"], str) or extra:
        what = (f"fields {extra} are not a fact's" if extra
                else f"its 'value' is {type(value['value']).__name__}, not text")
        raise ConfigurationError(
            f"Z0Store.put: a dict with a 'value' under a category namespace is a KV fact, and {what}: put a text "
            f"'value' with optional {sorted(FACT_FIELDS - {'value', 'version', 'confirmations'})}, or keep other "
            "JSON as an item without a 'value' field or under a longer namespace, e.g. ('notes', 'team')")
    return True


def _looks_like_id(key: str) -> bool:
    try:
        uuid.UUID(str(key))
    except ValueError:
        return False
    return True


# The categories holding a current fact, in a scope and (the operator's view) in every project of a user.
SCOPE_FACT_CATEGORIES_SQL = ("SELECT DISTINCT category FROM z0_facts WHERE project = %(project)s "
                             "AND user_id = %(user_id)s AND valid_to IS NULL")
OPERATOR_FACT_CATEGORIES_SQL = ("SELECT DISTINCT project, category FROM z0_facts WHERE valid_to IS NULL "
                                "AND user_id = %(user_id)s")

# How many candidates a filtered search with a query reads per result asked for, under a project or a category
# (the filter runs on the values after the loop's ranking); longer namespaces filter in SQL, exactly.
FILTER_DEPTH = 5


def _namespace_matches(space: tuple[str, ...], match_type: str, path: tuple[str, ...]) -> bool:
    if len(path) > len(space):
        return False
    part = space[:len(path)] if match_type == "prefix" else space[len(space) - len(path):]
    return all(p in ("*", v) for p, v in zip(path, part, strict=True))


class Z0Store(BaseStore):
    """A LangGraph store backed by a :class:`~z0_memory.memory.Z0Memory` (which it does not own), bound to
    ``scope`` or, with ``scope=None``, the operator's store over every project."""

    def __init__(self, memory: Z0Memory, scope: Scope | None = None) -> None:
        self.memory = memory
        self.scope = scope

    # ---- namespaces --------------------------------------------------------------------------------------------

    def _resolve(self, namespace: tuple[str, ...], what: str) -> tuple[ProjectMemory, tuple[str, ...]]:
        """The stores of the scope a namespace reaches and the namespace relative to its project.

        A bound store reaches its own scope whatever the namespace (a leading element naming its project is
        dropped); the operator's store reads the project from the first element."""
        namespace = tuple(namespace)
        if self.scope is None:
            if not namespace:
                raise ConfigurationError(f"Z0Store.{what} needs a namespace starting with the project "
                                         "(the operator's store serves every project)")
            pm, rel = self._stores(validate_segment(namespace[0], "project")), namespace[1:]
        else:
            if namespace and namespace[0] == self.scope.project:
                namespace = namespace[1:]
            pm, rel = self._stores(self.scope.project), namespace
        if len(rel) > 1:  # category namespaces are checked as category names
            check_value("a store namespace", list(rel))
        return pm, rel

    def _stores(self, project: str) -> ProjectMemory:
        user_id = self.scope.user_id if self.scope is not None else None
        return self.memory.scope(project, user_id)

    def _shown(self, project: str, rel: tuple[str, ...]) -> tuple[str, ...]:
        """The namespace an item is returned under."""
        if len(rel) == 1 or self.scope is None:
            return (project, *rel)
        return rel

    # ---- operations --------------------------------------------------------------------------------------------

    async def aput(self, namespace: tuple[str, ...], key: str, value: dict[str, Any] | None,
                   index: Any = None, *, ttl: Any = NOT_PROVIDED) -> None:
        """``BaseStore.aput``; a ``ttl`` is refused with a ConfigurationError (a ValueError: HTTP 400 through the API
        server, not a 500 that drops the client's connection): memory here is superseded or forgotten, never expired."""
        self._refuse_ttl(ttl)
        await super().aput(namespace, key, value, index)

    @staticmethod
    def _refuse_ttl(ttl: Any) -> None:
        if ttl not in (NOT_PROVIDED, None):
            raise ConfigurationError(
                f"Z0Store does not expire items (ttl={ttl!r}): put without ttl; a fact stays until superseded "
                "(history kept) or forgotten (put None), an item until put again or deleted")

    def batch(self, ops: Iterable[Any]) -> list[Result]:
        raise Z0Error("Z0Store is async-only: run the graph with ainvoke/astream (or call the a* store methods)")

    async def abatch(self, ops: Iterable[Any]) -> list[Result]:
        return [await self._one(op) for op in ops]

    async def _one(self, op: Any) -> Result:
        if isinstance(op, GetOp):
            return await self._get(op)
        if isinstance(op, PutOp):
            self._refuse_ttl(op.ttl)
            return await self._put(op)
        if isinstance(op, SearchOp):
            return await self._search(op)
        if isinstance(op, ListNamespacesOp):
            return await self._namespaces(op)
        raise ConfigurationError(f"unsupported store operation {type(op).__name__}")

    async def _get(self, op: GetOp) -> Item | None:
        pm, rel = self._resolve(op.namespace, "get")
        if not rel:
            return None  # the project itself holds no item
        project = pm.scope.project
        if len(rel) == 1:
            k = MemoryKey(project=project, category=rel[0], entity=op.key)
            fact = await pm.facts.get(k)
            if fact is not None:
                return self._fact_item(fact, Item)
        else:
            check_value("a store key", op.key)
        row = await store_items.get_item(self.memory, pm.scope, rel, op.key)
        if row is not None:
            return self._row_item(project, row, Item)
        if len(rel) == 1 and _looks_like_id(op.key):  # a semantic memory, under the key search returned for it
            record = await pm.semantic.get(op.key)
            if record is not None and record.fact_key is None and record.category == rel[0] \
                    and store_items.META not in record.metadata:
                return Item(value=_memory_value(record.content, record.kind, record.confidence,
                                                record.metadata.get("rationale")),
                            key=record.id, namespace=(project, record.category),
                            created_at=record.created_at, updated_at=record.created_at)
        return None

    async def _put(self, op: PutOp) -> None:
        pm, rel = self._resolve(op.namespace, "put")
        if not rel:
            raise ConfigurationError(
                f"Z0Store namespaces are (category,) (or (project, category)) for facts and memories, or any longer "
                f"namespace for items, e.g. ('memories', user_id); {tuple(op.namespace)!r} is the project itself")
        if len(rel) > 1:
            check_value("a store key", op.key)
            if op.value is None:
                await store_items.delete_item(self.memory, pm.scope, rel, op.key)
            else:
                await store_items.put_item(self.memory, pm.scope, rel, op.key, op.value, op.index)
            return
        k = MemoryKey(project=pm.scope.project, category=rel[0], entity=op.key)  # one key: one item at a time
        if op.value is None:
            await pm.facts.forget(k)
            await store_items.delete_item(self.memory, pm.scope, rel, op.key)
            if _looks_like_id(op.key):
                record = await pm.semantic.get(op.key)
                if record is not None and record.fact_key is None and record.category == rel[0]:
                    await pm.semantic.delete([op.key])
            return
        if not is_fact_value(op.value):
            if await pm.facts.get(k) is not None:
                await pm.facts.forget(k)
            await store_items.put_item(self.memory, pm.scope, rel, op.key, op.value, op.index)
            return
        try:
            prov = Provenance(extractor=str(op.value.get("extractor", "store-api")),
                              confidence=float(op.value.get("confidence", 1.0)),
                              rationale=op.value.get("rationale"), thread_id=op.value.get("thread_id"))
        except (TypeError, ValueError) as exc:
            raise ConfigurationError(
                f"Z0Store.put {k}: 'confidence' must be a number in [0, 1] and 'rationale' / 'thread_id' text "
                f"({exc.__class__.__name__}: {str(exc).splitlines()[0][:120]})"
            ) from None
        await pm.facts.put(k, op.value["value"], prov)
        await store_items.delete_item(self.memory, pm.scope, rel, op.key)
        return

    # ---- shapes --------------------------------------------------------------------------------------------------

    @staticmethod
    def _fact_item(fact: FactVersion, cls: type[ItemT], score: float | None = None) -> ItemT:
        extra = {"score": score} if cls is SearchItem else {}
        return cls(value=_item_value(fact), key=fact.key.entity, namespace=(fact.key.project, fact.key.category),
                   created_at=fact.valid_from, updated_at=fact.valid_from, **extra)

    def _row_item(self, project: str, row: dict[str, Any], cls: type, score: float | None = None) -> Any:
        """A row of ``stores.store_items``' statements as the item get and search return."""
        extra = {"score": score} if cls is SearchItem else {}
        item = row["item"]
        if item is None:  # a semantic memory
            return cls(value=_memory_value(row["content"], row["kind"], row["confidence"], row["rationale"]),
                       key=str(row["id"]), namespace=(project, row["category"]), created_at=row["created_at"],
                       updated_at=row["created_at"], **extra)
        return self._stored_item(project, item, cls, row["created_at"], **extra)

    def _hit_item(self, project: str, hit: Hit) -> SearchItem:
        """A store item found by a search, as search returns it (its hit's ``metadata[META]`` is the item)."""
        return self._stored_item(project, hit.metadata[store_items.META], SearchItem, hit.created_at, score=hit.score)

    def _stored_item(self, project: str, item: dict[str, Any], cls: type, updated_at: datetime, **extra: Any) -> Any:
        """A store item (a row's ``metadata[META]``) as get and search return it; ``updated_at``: its last put."""
        return cls(value=item["value"], key=item["key"], namespace=self._shown(project, tuple(item["ns"].split("."))),
                   created_at=datetime.fromisoformat(item["created_at"]), updated_at=updated_at, **extra)

    # ---- search --------------------------------------------------------------------------------------------------

    async def _search(self, op: SearchOp) -> list[SearchItem]:
        pm, rel = self._resolve(op.namespace_prefix, "search")
        if len(rel) == 1:
            validate_segment(rel[0], "category")
        wanted = op.filter or None
        if op.query and len(rel) > 1:  # items of one namespace: the hybrid search, filtered inside it
            hits = await store_items.ranked_items(pm.semantic.search_engine, rel, op.query, wanted,
                                                  limit=op.limit, offset=op.offset)
            return [self._hit_item(pm.scope.project, h) for h in hits]
        if op.query:
            items = await self._first_round(pm, rel, op.query, (op.limit + op.offset) * (FILTER_DEPTH if wanted else 1))
            items = [item for item in items if store_items.matches(item.value, wanted)]
            return items[op.offset:op.offset + op.limit]
        facts: list[SearchItem] = []
        if len(rel) <= 1:  # facts first, in the fact store's order
            facts = [item for item in (self._fact_item(f, SearchItem) for f in await pm.facts.list(rel[0] if rel else None))
                     if store_items.matches(item.value, wanted)]
        page = facts[op.offset:op.offset + op.limit]
        room = op.limit - len(page)
        if room > 0:
            rows = await store_items.list_rows(self.memory, pm.scope, rel, wanted, limit=room,
                                               offset=max(0, op.offset - len(facts)))
            page += [self._row_item(pm.scope.project, r, SearchItem) for r in rows]
        return page

    async def _first_round(self, pm: ProjectMemory, rel: tuple[str, ...], query: str, depth: int) -> list[SearchItem]:
        """The retrieval loop's first round over the project (or one category), as items."""
        from z0_memory.nodes.retrieval import first_round  # the loop's first round: one ranking everywhere

        project = pm.scope.project
        items = []
        for h in await first_round(pm, query, top_k=depth):
            stored = h.metadata.get(store_items.META)
            if h.key:  # a fact comes back as get returns it: key = entity, value = the fact's fields
                fact = await pm.facts.get(h.key)
                if fact is not None and (not rel or fact.key.category == rel[0]):
                    items.append(self._fact_item(fact, SearchItem, h.score))
            elif stored is not None:
                item_rel = tuple(stored["ns"].split("."))
                if stored.get("indexed") and item_rel[:len(rel)] == rel:
                    items.append(self._hit_item(project, h))
            elif not rel or h.category == rel[0]:
                items.append(SearchItem(namespace=(project, h.category or "general"), key=h.id,
                                        value=_memory_value(h.content, h.kind, h.confidence, h.rationale),
                                        created_at=h.created_at, updated_at=h.created_at, score=h.score))
        return items

    # ---- namespaces ----------------------------------------------------------------------------------------------

    async def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        spaces: set[tuple[str, ...]] = set()
        if self.scope is not None:
            async with self.memory.db.connection(self.scope) as conn:
                facts = await (await conn.execute(SCOPE_FACT_CATEGORIES_SQL, self.scope.params)).fetchall()
                rows = await (await conn.execute(store_items.NAMESPACES_SQL, self.scope.params)).fetchall()
            project = self.scope.project
            spaces |= {(project, r["category"]) for r in facts}
            spaces |= {self._shown(project, (r["category"],) if r["ns"] is None else tuple(r["ns"].split(".")))
                       for r in rows}
        else:
            params = {"user_id": Context.from_env().user_id}  # the operator store reads Z0_USER_ID's partition
            async with self.memory.db.connection() as conn:  # the operator's view: every project
                facts = await (await conn.execute(OPERATOR_FACT_CATEGORIES_SQL, params)).fetchall()
                rows = await (await conn.execute(store_items.OPERATOR_NAMESPACES_SQL, params)).fetchall()
            spaces |= {(r["project"], r["category"]) for r in facts}
            spaces |= {(r["project"], *((r["category"],) if r["ns"] is None else r["ns"].split("."))) for r in rows}
        for cond in op.match_conditions or ():
            spaces = {s for s in spaces if _namespace_matches(s, cond.match_type, tuple(cond.path))}
        if op.max_depth is not None:
            spaces = {s[:op.max_depth] for s in spaces}
        return sorted(spaces)[op.offset:op.offset + op.limit]
