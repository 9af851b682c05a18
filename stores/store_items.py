"""Items of ``Z0Store`` that are not KV facts: any namespace, any JSON value, kept as semantic memories of a scope.

An item lives in the semantic table (``z0_memories``) as one row of the store's scope, whose

* id is derived from (scope, namespace, key) (:func:`item_id`): put, get and delete by key are primary-key
  operations, a put of the same key replaces the row (``UPSERT_SQL``), and no scope can take another's ids;
* ``metadata -> 'z0_store'`` holds the namespace (relative to the project, dot-joined as LangGraph's
  ``PostgresStore`` does: labels cannot contain '.'), the key, the value exactly as put, whether it is indexed and
  when it was first put; the ``created_at`` column is the time of the last put (``updated_at``);
* ``content`` is the text it is found by: the ``index`` fields' text (``PostgresStore``'s paths, ``"$"`` the whole
  value; default: every text of the value), secrets redacted, embedded and full-text indexed like any memory, so
  the retrieval loop and ``recall_memory`` find it too; with ``index=False`` nothing is embedded (a zero vector,
  which pgvector's HNSW index leaves out) nor full-text indexed, and searches with a query skip it;
* ``category`` is the namespace's first label (the category of ``(category,)`` namespaces), or ``general`` when that
  label is not a valid category name: search of a one-label prefix reads the ``(project, user_id, category)`` index.

Every statement runs in a transaction bound to the scope (row-level security): no namespace reaches another scope.
"""

from __future__ import annotations

import json
import operator
import uuid
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from z0_memory.stores.schema import SEMANTIC_TABLE, search_columns
from z0_memory.stores.scope import Scope
from z0_memory.stores.search import RowFilter, SearchEngine
from z0_memory.stores.vectors import VectorParam

from z0_memory.errors import ConfigurationError, InvalidKeyError
from z0_memory.redaction import redact_secrets
from z0_memory.schemas import Hit, validate_segment
from z0_memory.validation import check_value

if TYPE_CHECKING:
    from z0_memory.memory import Z0Memory

STORE_ID_NAMESPACE = uuid.UUID("5d0c7a4e-2b8f-4c71-9e36-0f7a1d2c9b84")
META = "z0_store"  # the metadata field of an item row
ITEM_MAX_BYTES = 64 * 1024  # an item's value, as JSON

# The namespace (relative to the project) of every current, non-mirror row: a store item's own, else its category.
ROW_NS = f"coalesce(metadata -> '{META}' ->> 'ns', category)"
# The value get and search return for a row: a store item's value as put; a semantic memory's fields.
ROW_VALUE = (f"CASE WHEN metadata -> '{META}' IS NOT NULL THEN metadata::jsonb -> '{META}' -> 'value' "
             "ELSE jsonb_build_object('content', content, 'kind', kind, 'confidence', confidence, "
             "'rationale', metadata::jsonb -> 'rationale') END")
_ROW_COLUMNS = (f"id, category, content, kind, confidence, created_at, metadata -> '{META}' AS item, "
                "metadata::jsonb -> 'rationale' AS rationale")
_CURRENT = ("project = %(project)s AND user_id = %(user_id)s AND fact_key IS NULL AND superseded_at IS NULL "
            "AND (%(category)s::text IS NULL OR category = %(category)s)")
_PREFIX = f"(%(ns)s::text IS NULL OR {ROW_NS} = %(ns)s OR left({ROW_NS}, length(%(ns)s) + 1) = %(ns)s || '.')"

UPSERT_SQL = (
    f"INSERT INTO {SEMANTIC_TABLE} AS m (id, content, embedding, content_tsv, project, user_id, category, kind, "
    "confidence, created_at, superseded_at, fact_key, fact_version, source_ids, search_text, search_context, context, "
    "metadata) VALUES (%(id)s, %(content)s, %(embedding)s::vector, ''::tsvector, %(project)s, %(user_id)s, "
    "%(category)s, 'context', 1.0, %(now)s, NULL, NULL, NULL, '[]', %(search_text)s, NULL, NULL, %(metadata)s::json) "
    "ON CONFLICT (id) DO UPDATE SET content = EXCLUDED.content, embedding = EXCLUDED.embedding, "
    "category = EXCLUDED.category, created_at = EXCLUDED.created_at, superseded_at = NULL, "
    "search_text = EXCLUDED.search_text, search_context = NULL, context = NULL, "
    f"metadata = jsonb_build_object('{META}', EXCLUDED.metadata::jsonb -> '{META}' || jsonb_build_object("
    f"'created_at', coalesce(m.metadata::jsonb -> '{META}' -> 'created_at', to_jsonb(m.created_at))))::json")
GET_SQL = (f"SELECT {_ROW_COLUMNS} FROM {SEMANTIC_TABLE} WHERE id = %(id)s AND project = %(project)s "
           f"AND user_id = %(user_id)s AND metadata -> '{META}' IS NOT NULL")
DELETE_SQL = (f"DELETE FROM {SEMANTIC_TABLE} WHERE id = %(id)s AND project = %(project)s AND user_id = %(user_id)s "
              f"AND metadata -> '{META}' IS NOT NULL")
# The scope's current items and semantic memories under a namespace prefix, matching a filter, newest first.
LIST_SQL = (f"SELECT {_ROW_COLUMNS} FROM {SEMANTIC_TABLE} WHERE {_CURRENT} AND {_PREFIX} {{filter}} "
            "ORDER BY created_at DESC, id LIMIT %(limit)s OFFSET %(offset)s")
# The rows a search with a query ranks (:func:`item_filter`): the scope's current, indexed items under a namespace
# prefix; the search itself is the memory's hybrid search (``stores.search.SearchEngine.hybrid``).
ITEM_SEARCH_CONDITION = f"fact_key IS NULL AND {_PREFIX} AND (metadata -> '{META}' ->> 'indexed')::boolean"
NAMESPACES_SQL = (f"SELECT DISTINCT category, metadata -> '{META}' ->> 'ns' AS ns FROM {SEMANTIC_TABLE} "
                  "WHERE project = %(project)s AND user_id = %(user_id)s AND fact_key IS NULL "
                  "AND superseded_at IS NULL")
OPERATOR_NAMESPACES_SQL = (f"SELECT DISTINCT project, category, metadata -> '{META}' ->> 'ns' AS ns "
                           f"FROM {SEMANTIC_TABLE} WHERE user_id = %(user_id)s AND fact_key IS NULL "
                           "AND superseded_at IS NULL")


def ns_text(rel: Sequence[str]) -> str:
    return ".".join(rel)


def item_id(scope: Scope, rel: Sequence[str], key: str) -> str:
    """The row id of the item (namespace ``rel`` relative to the project, ``key``) in ``scope``."""
    return str(uuid.uuid5(STORE_ID_NAMESPACE, "\x1f".join((scope.project, scope.user_id, ns_text(rel), key))))


def category_of(rel: Sequence[str]) -> str:
    try:
        return validate_segment(rel[0], "category")
    except InvalidKeyError:
        return "general"


# ---- the text an item is found by ----------------------------------------------------------------------------------

def _leaves(value: Any, field: str | None = None) -> Iterator[str]:
    if isinstance(value, str):
        if value.strip():
            yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, str(k))
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _leaves(v, field)
    elif value is not None:  # numbers and booleans say little alone: with their field's name
        yield f"{field}: {json.dumps(value)}" if field else json.dumps(value)


def indexed_text(value: dict[str, Any], index: Any) -> str:
    """The text of the ``index`` fields (``PostgresStore``'s field paths: ``"a.b"``, ``"a[*].b"``, ``"$"``), or of the
    whole value with ``index=None``; empty when nothing is to be indexed."""
    if index is False:
        return ""
    if index is None:
        return "\n".join(_leaves(value))
    if isinstance(index, str) or not all(isinstance(f, str) for f in index):
        raise ConfigurationError(f"Z0Store.put index must be False, None or a list of field paths, got {index!r}")
    from langgraph.store.base.embed import get_text_at_path, tokenize_path

    texts: list[str] = []
    for path in index:
        for found in get_text_at_path(value, tokenize_path(path)):
            texts.extend(_leaves(json.loads(found)) if found.startswith(("{", "[")) else [found])
    return "\n".join(t for t in texts if t.strip())


def check_item_value(value: Any) -> None:
    if not isinstance(value, dict):
        raise ConfigurationError(f"Z0Store.put needs a dict value (or None to delete), got {type(value).__name__}")
    check_value("a store item's value", value)
    try:
        size = len(json.dumps(value).encode("utf-8"))
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(f"a store item's value must be JSON (dicts, lists, text, numbers): {exc}") from None
    if size > ITEM_MAX_BYTES:
        raise ConfigurationError(f"a store item's value is {size} bytes of JSON; the limit is {ITEM_MAX_BYTES}")


# ---- filters: PostgresStore's operators, in SQL on the row's value and in Python on a fact's ---------------------

_COMPARE = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}
_PY_COMPARE = {"$gt": operator.gt, "$gte": operator.ge, "$lt": operator.lt, "$lte": operator.le}


def _operations(cond: Any) -> list[tuple[str, Any]]:
    """A filter's conditions on one field: a dict of ``$`` operators, or any value (a dict too) for equality."""
    if isinstance(cond, dict) and cond and all(str(k).startswith("$") for k in cond):
        return list(cond.items())
    return [("$eq", cond)]


def filter_sql(wanted: dict[str, Any] | None, params: dict[str, Any]) -> str:
    """``AND`` conditions for ``wanted`` on :data:`ROW_VALUE`, their parameters added to ``params``."""
    clauses = []
    for n, (field, cond) in enumerate((wanted or {}).items()):
        ops = _operations(cond)
        for m, (op, expected) in enumerate(ops):
            f, x = f"f{n}_{m}", f"x{n}_{m}"
            params[f] = str(field)
            value = f"(({ROW_VALUE}) -> %({f})s)"
            if op in ("$eq", "$ne"):
                params[x] = json.dumps(expected)
                clauses.append(f"{value} {'=' if op == '$eq' else '!='} %({x})s::jsonb")
            elif op in _COMPARE:
                if isinstance(expected, int | float) and not isinstance(expected, bool):
                    params[x] = expected
                    clauses.append(f"(CASE WHEN jsonb_typeof({value}) = 'number' THEN ({value})::text::numeric "
                                   f"{_COMPARE[op]} %({x})s ELSE false END)")
                else:
                    params[x] = str(expected)
                    clauses.append(f"(CASE WHEN jsonb_typeof({value}) = 'string' THEN ({value}) #>> '{{}}' "
                                   f"{_COMPARE[op]} %({x})s ELSE false END)")
            else:
                raise ConfigurationError(
                    f"unsupported filter operator {op!r} on {field!r}: use a value (equality) or one of "
                    "$eq, $ne, $gt, $gte, $lt, $lte")
    return "".join(f" AND {c}" for c in clauses)


def matches(value: dict[str, Any], wanted: dict[str, Any] | None) -> bool:
    """:func:`filter_sql`'s semantics in Python (for values computed here, such as a fact's)."""
    for field, cond in (wanted or {}).items():
        ops = _operations(cond)
        present, got = field in value, value.get(field)
        for op, expected in ops:
            if op == "$eq":
                ok = present and got == expected
            elif op == "$ne":
                ok = present and got != expected
            elif op in _COMPARE:
                if isinstance(expected, int | float) and not isinstance(expected, bool):
                    ok = isinstance(got, int | float) and not isinstance(got, bool)
                else:
                    ok, expected = isinstance(got, str), str(expected)
                ok = ok and _PY_COMPARE[op](got, expected)
            else:
                raise ConfigurationError(
                    f"unsupported filter operator {op!r} on {field!r}: use a value (equality) or one of "
                    "$eq, $ne, $gt, $gte, $lt, $lte")
            if not ok:
                return False
    return True


# ---- rows ----------------------------------------------------------------------------------------------------------

async def put_item(memory: Z0Memory, scope: Scope, rel: Sequence[str], key: str, value: dict[str, Any],
                   index: Any) -> None:
    """Store (or replace) the item; embed its indexed text unless there is none."""
    check_item_value(value)
    text = redact_secrets(indexed_text(value, index))  # no secret goes to the embedding model or into recall
    indexed = bool(text.strip())
    if indexed:
        vector = (await memory.providers.embeddings.aembed_documents([text]))[0]
        content, search = text, search_columns(category_of(rel), text, None)["search_text"]
    else:  # a zero vector: no model call, and pgvector's HNSW index does not hold it
        vector = [0.0] * await memory.providers.embedding_dims()
        content, search = redact_secrets("\n".join(_leaves(value))) or key, ""
    now = datetime.now(UTC)
    meta = {META: {"ns": ns_text(rel), "key": key, "value": value, "indexed": indexed, "created_at": now.isoformat()}}
    params = {**scope.params, "id": item_id(scope, rel, key), "content": content, "embedding": VectorParam(vector),
              "category": category_of(rel), "now": now, "search_text": search, "metadata": json.dumps(meta)}
    async with memory.db.connection(scope) as conn:
        await conn.execute(UPSERT_SQL, params)


async def get_item(memory: Z0Memory, scope: Scope, rel: Sequence[str], key: str) -> dict[str, Any] | None:
    async with memory.db.connection(scope) as conn:
        return await (await conn.execute(GET_SQL, {**scope.params, "id": item_id(scope, rel, key)})).fetchone()


async def delete_item(memory: Z0Memory, scope: Scope, rel: Sequence[str], key: str) -> int:
    async with memory.db.connection(scope) as conn:
        cur = await conn.execute(DELETE_SQL, {**scope.params, "id": item_id(scope, rel, key)})
        return cur.rowcount


def _params(scope: Scope, rel: Sequence[str], limit: int, offset: int) -> dict[str, Any]:
    return {**scope.params, "category": category_of(rel) if rel else None, "ns": ns_text(rel) if rel else None,
            "limit": limit, "offset": offset}


async def list_rows(memory: Z0Memory, scope: Scope, rel: Sequence[str], wanted: dict[str, Any] | None, *,
                    limit: int, offset: int) -> list[dict[str, Any]]:
    """The scope's items and semantic memories under ``rel`` matching ``wanted``, newest first."""
    params = _params(scope, rel, limit, offset)
    sql = LIST_SQL.format(filter=filter_sql(wanted, params))
    async with memory.db.connection(scope) as conn:
        return await (await conn.execute(sql, params)).fetchall()


def item_filter(rel: Sequence[str], wanted: dict[str, Any] | None) -> RowFilter:
    """The search engine's filter for indexed items under ``rel`` (relative to the project) matching ``wanted``."""
    params: dict[str, Any] = {"ns": ns_text(rel) if rel else None}
    condition = ITEM_SEARCH_CONDITION + filter_sql(wanted, params)
    return RowFilter(condition, params)


async def ranked_items(engine: SearchEngine, rel: Sequence[str], query: str, wanted: dict[str, Any] | None, *,
                       limit: int, offset: int) -> list[Hit]:
    """Indexed items under ``rel`` matching ``wanted``, best for ``query`` first: the scope's hybrid search over
    those items only; each hit's ``metadata[META]`` is its item."""
    hits = await engine.hybrid(query, limit + offset, category=category_of(rel) if rel else None,
                               where=item_filter(rel, wanted))
    return hits[offset:offset + limit]
