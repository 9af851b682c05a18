"""``Z0Store``: z0-memory behind LangGraph's ``BaseStore`` interface.

This is how graph nodes reach long-term memory, the LangGraph way: compile a graph with
``store=memory.store()`` (or let ``langgraph dev`` build it from ``langgraph.json``), and every node finds the
memory at ``runtime.store``. It is also a usable ``BaseStore`` for any other LangGraph code:

* namespace ``(project, category)`` + key ``entity`` is the KV fact ``project:category:entity``;
  ``put`` with ``{"value": "...", "rationale": ..., "confidence": ...}`` supersedes (history kept), ``put`` with
  ``None`` forgets the current version, ``get`` returns the current version;
* ``search((project,), query=...)`` is hybrid search over the project's memories; without a query it lists facts;
* ``list_namespaces`` lists the ``(project, category)`` pairs that hold facts in the context's user partition (the
  shared one unless the context names a user), as every other operation reads that partition.

Only the async API exists (``abatch``): the memory runs on psycopg's async pool.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from langgraph.store.base import BaseStore, GetOp, Item, ListNamespacesOp, PutOp, Result, SearchItem, SearchOp

from z0_memory.errors import ConfigurationError, Z0Error
from z0_memory.schemas import FactVersion, MemoryKey, Provenance

if TYPE_CHECKING:
    from z0_memory.memory import Z0Memory


def _item_value(fact: FactVersion) -> dict[str, Any]:
    return {"value": fact.value, "version": fact.version, "confidence": fact.provenance.confidence,
            "rationale": fact.provenance.rationale, "extractor": fact.provenance.extractor,
            "thread_id": fact.provenance.thread_id, "confirmations": fact.confirmations}


def _key(namespace: tuple[str, ...], key: str) -> MemoryKey:
    if len(namespace) != 2:
        raise ConfigurationError(f"Z0Store namespaces are (project, category); got {namespace!r}")
    return MemoryKey(project=namespace[0], category=namespace[1], entity=key)


class Z0Store(BaseStore):
    """A LangGraph store backed by a :class:`~z0_memory.memory.Z0Memory` (which it does not own)."""

    def __init__(self, memory: Z0Memory) -> None:
        self.memory = memory

    def batch(self, ops: Iterable[Any]) -> list[Result]:
        raise Z0Error("Z0Store is async-only: run the graph with ainvoke/astream (or call the a* store methods)")

    async def abatch(self, ops: Iterable[Any]) -> list[Result]:
        return [await self._one(op) for op in ops]

    async def _one(self, op: Any) -> Result:
        if isinstance(op, GetOp):
            k = _key(op.namespace, op.key)
            fact = await self.memory.scope(k.project).facts.get(k)
            return self._item(fact) if fact else None
        if isinstance(op, PutOp):
            k = _key(op.namespace, op.key)
            facts = self.memory.scope(k.project).facts
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
        if not op.namespace_prefix:
            raise ConfigurationError("Z0Store.search needs a namespace prefix starting with the project")
        project, category = op.namespace_prefix[0], (op.namespace_prefix[1] if len(op.namespace_prefix) > 1 else None)
        pm = self.memory.scope(project)
        if op.query:
            hits = await pm.semantic.hybrid_search(op.query, op.limit + op.offset, category=category)
            return [SearchItem(namespace=(project, h.category or ""), key=h.key or h.id,
                               value={"content": h.content, "kind": h.kind, "rationale": h.rationale},
                               created_at=h.created_at, updated_at=h.created_at, score=h.score)
                    for h in hits[op.offset:]]
        facts = await pm.facts.list(category)
        return [SearchItem(namespace=(project, f.key.category), key=f.key.entity, value=_item_value(f),
                           created_at=f.valid_from, updated_at=f.valid_from)
                for f in facts[op.offset:op.offset + op.limit]]

    async def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        async with self.memory.db.connection() as conn:
            rows = await (await conn.execute(
                "SELECT DISTINCT project, category FROM z0_facts WHERE valid_to IS NULL AND user_id = %s ORDER BY 1, 2",
                [self.memory.context.user_id],
            )).fetchall()
        spaces = [(r["project"], r["category"]) for r in rows]
        for cond in op.match_conditions or ():
            n = len(cond.path)
            spaces = [s for s in spaces if all(p in ("*", v) for p, v in zip(cond.path,
                      s[:n] if cond.match_type == "prefix" else s[-n:], strict=False))]
        if op.max_depth is not None:
            spaces = sorted(set(s[:op.max_depth] for s in spaces))
        return spaces[op.offset:op.offset + op.limit]
