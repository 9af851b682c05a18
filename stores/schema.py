"""Idempotent set-up and migration of every table z0-memory uses.

``setup()`` takes a Postgres advisory lock (so concurrent processes do not race), applies the migrations it has
not applied yet (``z0_schema_version`` records them), sets up LangGraph's checkpointer tables, and checks that the
configured embedding model matches the one the semantic table was built with. Re-running it is a no-op.

``z0_memory_stats`` holds, per (project, user), the document count and total length (in distinct lexemes) of all
semantic rows and of the current ones: BM25 needs both on every keyword search, and triggers on the semantic table
keep them exact at write time instead of a scan of the scope at read time.

Why KV facts live in a table of our own rather than LangGraph's ``PostgresStore``: its ``put`` overwrites blindly,
while a fact here is a chain of versions (valid_from / valid_to, provenance, confirmations), superseded inside one
transaction under a row lock, with a partial unique index guaranteeing one current version per key.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import asyncio
import logging

import psycopg
from langchain_postgres import Column
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langchain_postgres.v2.hybrid_search_config import HybridSearchConfig
from z0_memory.stores.database import APP_ROLE, Database
from z0_memory.stores.extraction_log import CREATE_SQL as EXTRACTION_LOG_SQL, LOG_TABLE as EXTRACTION_LOG_TABLE

from z0_memory.errors import ConfigurationError, DatabaseError, EmbeddingMismatchError
from z0_memory.text import search_text

SEMANTIC_TABLE = "z0_memories"
STATS_TABLE = "z0_memory_stats"
SEMANTIC_TSV_INDEX = "z0_memories_tsv_gin"
SETUP_LOCK_ID = 0x7A30_6D656D  # "z0mem"
SETUP_LOCK_POLL_S = 0.05
SETUP_LOCK_TIMEOUT_S = 300.0  # a first set-up builds indexes; another process waits for it this long at most

log = logging.getLogger(__name__)
# How much a term found only in a memory's search context (``NewMemory.context``: e.g. the turns around a
# conversation turn) counts next to the same term in its content: context lexemes carry tsvector weight D, content
# (with its category) weight A. Context finds the memory ("They were awestruck." by the memorial named the turn
# before), yet a memory that says the thing itself ranks above its neighbours that only mention it (the value
# chosen on LoCoMo's development conversations: bench/README.md).
CONTEXT_TERM_WEIGHT = 0.25

SEMANTIC_METADATA_COLUMNS = (
    ("project", "TEXT", False),
    ("user_id", "TEXT", False),
    ("category", "TEXT", False),
    ("kind", "TEXT", False),
    ("confidence", "REAL", False),
    ("created_at", "TIMESTAMPTZ", False),
    ("superseded_at", "TIMESTAMPTZ", True),
    ("fact_key", "TEXT", True),
    ("fact_version", "INTEGER", True),
    ("source_ids", "TEXT", True),
    ("search_text", "TEXT", False),
)

_CORE_SQL = """
CREATE TABLE IF NOT EXISTS z0_meta (
    key   text PRIMARY KEY,
    value jsonb NOT NULL
);
CREATE TABLE IF NOT EXISTS z0_facts (
    id            bigserial PRIMARY KEY,
    project       text NOT NULL,
    user_id       text NOT NULL DEFAULT '',
    category      text NOT NULL,
    entity        text NOT NULL,
    value         text NOT NULL,
    version       integer NOT NULL,
    valid_from    timestamptz NOT NULL DEFAULT now(),
    valid_to      timestamptz,
    thread_id     text,
    message_ids   text[] NOT NULL DEFAULT '{}',
    extractor     text NOT NULL,
    confidence    real NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    rationale     text,
    confirmations integer NOT NULL DEFAULT 1,
    recorded_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project, user_id, category, entity, version)
);
CREATE UNIQUE INDEX IF NOT EXISTS z0_facts_one_current
    ON z0_facts (project, user_id, category, entity) WHERE valid_to IS NULL;
CREATE TABLE IF NOT EXISTS z0_pending (
    id            bigserial PRIMARY KEY,
    project       text NOT NULL,
    user_id       text NOT NULL DEFAULT '',
    match_key     text,
    content       text NOT NULL,
    candidate     jsonb NOT NULL,
    confirmations integer NOT NULL DEFAULT 1,
    first_seen    timestamptz NOT NULL DEFAULT now(),
    last_seen     timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    thread_id     text,
    message_ids   text[] NOT NULL DEFAULT '{}',
    extractor     text NOT NULL,
    confidence    real NOT NULL
);
CREATE INDEX IF NOT EXISTS z0_pending_scope ON z0_pending (project, user_id, match_key);
CREATE TABLE IF NOT EXISTS z0_extraction_queue (
    id              bigserial PRIMARY KEY,
    project         text NOT NULL,
    user_id         text NOT NULL DEFAULT '',
    thread_id       text,
    messages        jsonb NOT NULL,
    error           text NOT NULL,
    attempts        integer NOT NULL DEFAULT 1,
    created_at      timestamptz NOT NULL DEFAULT now(),
    last_attempt_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS z0_extraction_queue_scope ON z0_extraction_queue (project, user_id);
"""

_SEMANTIC_TSV_V1_SQL = f"""
CREATE OR REPLACE FUNCTION z0_memories_tsv() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.content_tsv := to_tsvector('english', coalesce(NEW.search_text, NEW.content));
    RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS z0_memories_tsv ON {SEMANTIC_TABLE};
CREATE TRIGGER z0_memories_tsv BEFORE INSERT OR UPDATE OF content, search_text ON {SEMANTIC_TABLE}
    FOR EACH ROW EXECUTE FUNCTION z0_memories_tsv();
"""
# Since migration 7: content (``search_text``) at weight A, then the segmented context (``search_context``) at D.
_SEMANTIC_TSV_SQL = f"""
ALTER TABLE {SEMANTIC_TABLE} ADD COLUMN IF NOT EXISTS search_context text;
CREATE OR REPLACE FUNCTION z0_memories_tsv() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.content_tsv := setweight(to_tsvector('english', coalesce(NEW.search_text, NEW.content)), 'A')
                       || setweight(to_tsvector('english', coalesce(NEW.search_context, '')), 'D');
    RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS z0_memories_tsv ON {SEMANTIC_TABLE};
CREATE TRIGGER z0_memories_tsv BEFORE INSERT OR UPDATE OF content, search_text, search_context ON {SEMANTIC_TABLE}
    FOR EACH ROW EXECUTE FUNCTION z0_memories_tsv();
"""
_SEMANTIC_INDEX_SQL = f"""
{_SEMANTIC_TSV_V1_SQL}
CREATE INDEX IF NOT EXISTS z0_memories_tsv_gin ON {SEMANTIC_TABLE} USING gin (content_tsv);
CREATE INDEX IF NOT EXISTS z0_memories_hnsw ON {SEMANTIC_TABLE} USING hnsw (embedding vector_cosine_ops);
CREATE INDEX IF NOT EXISTS z0_memories_scope ON {SEMANTIC_TABLE} (project, user_id, category);
CREATE INDEX IF NOT EXISTS z0_memories_fact ON {SEMANTIC_TABLE} (project, user_id, fact_key);
"""


_STATS_ROWS = {  # the rows a statement added (+1) and removed (-1), per trigger event
    "INSERT": "SELECT project, user_id, 1 AS sign, content_tsv, superseded_at FROM z0_new_rows",
    "DELETE": "SELECT project, user_id, -1 AS sign, content_tsv, superseded_at FROM z0_old_rows",
    "UPDATE": "SELECT project, user_id, 1 AS sign, content_tsv, superseded_at FROM z0_new_rows UNION ALL "
              "SELECT project, user_id, -1, content_tsv, superseded_at FROM z0_old_rows",
}
_STATS_TRANSITION = {"INSERT": "NEW TABLE AS z0_new_rows", "DELETE": "OLD TABLE AS z0_old_rows",
                     "UPDATE": "OLD TABLE AS z0_old_rows NEW TABLE AS z0_new_rows"}


def _stats_trigger_sql(event: str) -> str:
    """A statement-level trigger adding what one statement changed to the per-scope statistics.

    Statement-level with transition tables rather than row-level: a statement touching many rows of a scope
    (``forget_everything`` of a large scope) updates its statistics row once, not once per row (each update of a
    row leaves a version the next one must walk past until the transaction ends), and a statement touching several
    scopes upserts them in key order, so two such statements do not deadlock. Updates that change neither the text
    nor the supersession (confirmations, re-embedding) add nothing and take no lock (``HAVING``). Writers of one
    scope queue on its statistics row from their first write to their commit; our transactions are short.
    """
    name = f"z0_memory_stats_{event.lower()}"
    return f"""
CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {STATS_TABLE} AS s (project, user_id, docs, doc_len, current_docs, current_len)
    SELECT project, user_id, sum(sign), sum(sign * len), sum(sign * cur), sum(sign * cur * len)
    FROM (SELECT project, user_id, sign, coalesce(length(content_tsv), 0) AS len, (superseded_at IS NULL)::int AS cur
          FROM ({_STATS_ROWS[event]}) r) d
    GROUP BY project, user_id
    HAVING (sum(sign), sum(sign * len), sum(sign * cur), sum(sign * cur * len)) <> (0, 0, 0, 0)
    ORDER BY project, user_id
    ON CONFLICT (project, user_id) DO UPDATE SET
        docs = s.docs + EXCLUDED.docs, doc_len = s.doc_len + EXCLUDED.doc_len,
        current_docs = s.current_docs + EXCLUDED.current_docs, current_len = s.current_len + EXCLUDED.current_len;
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS {name} ON {SEMANTIC_TABLE};
CREATE TRIGGER {name} AFTER {event} ON {SEMANTIC_TABLE} REFERENCING {_STATS_TRANSITION[event]}
    FOR EACH STATEMENT EXECUTE FUNCTION {name}();
"""


_STATS_SQL = f"""
LOCK TABLE {SEMANTIC_TABLE} IN SHARE ROW EXCLUSIVE MODE;
CREATE TABLE IF NOT EXISTS {STATS_TABLE} (
    project      text NOT NULL,
    user_id      text NOT NULL,
    docs         bigint NOT NULL,
    doc_len      bigint NOT NULL,
    current_docs bigint NOT NULL,
    current_len  bigint NOT NULL,
    PRIMARY KEY (project, user_id)
);
{"".join(_stats_trigger_sql(event) for event in _STATS_ROWS)}
CREATE OR REPLACE FUNCTION z0_memory_stats_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM {STATS_TABLE};
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS z0_memory_stats_truncate ON {SEMANTIC_TABLE};
CREATE TRIGGER z0_memory_stats_truncate AFTER TRUNCATE ON {SEMANTIC_TABLE}
    FOR EACH STATEMENT EXECUTE FUNCTION z0_memory_stats_truncate();
DELETE FROM {STATS_TABLE};
INSERT INTO {STATS_TABLE} (project, user_id, docs, doc_len, current_docs, current_len)
SELECT project, user_id, count(*), coalesce(sum(length(content_tsv)), 0),
       count(*) FILTER (WHERE superseded_at IS NULL),
       coalesce(sum(length(content_tsv)) FILTER (WHERE superseded_at IS NULL), 0)
FROM {SEMANTIC_TABLE} GROUP BY project, user_id;
"""


# Row-level security. A scoped transaction (``Database.connection(scope)``) sets ``z0.project`` and ``z0.user_id``
# and runs as the application role; these policies then admit only that scope's rows, for reading and for writing,
# whatever a statement asks for: a bug in the Python layer that names another project gets nothing, and its
# writes are refused. A connection that set no scope (set-up, statistics, the operator surfaces) sees every row,
# as a superuser always does; ``FORCE`` makes the policies apply to the tables' owner too, for databases whose
# login role may not create the application role. LangGraph's checkpoint tables have no project column: their
# thread ids are project-qualified by ``stores.session.ScopedCheckpointer`` ("{project}:{user}:{thread}").
# Each ``current_setting`` is wrapped in a scalar subquery: Postgres then evaluates it once per statement (an
# InitPlan) instead of once per row the policy filters; a keyword search over a conversation's BM25 candidates
# spent about a tenth of its time in the per-row calls.
SCOPE_SETTING_EMPTY = "(SELECT coalesce(current_setting('z0.project', true), '')) = ''"
_SCOPED_TABLES_V8 = ("z0_facts", "z0_pending", "z0_extraction_queue", SEMANTIC_TABLE, STATS_TABLE)
SCOPED_TABLES = (*_SCOPED_TABLES_V8, EXTRACTION_LOG_TABLE)  # since migration 9
CHECKPOINT_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
_SCOPE_MATCH = ("(project = (SELECT current_setting('z0.project', true)) "
                "AND user_id = (SELECT current_setting('z0.user_id', true)))")
_THREAD_PREFIX = ("(SELECT current_setting('z0.project', true) || ':' || current_setting('z0.user_id', true) || ':')")
_THREAD_MATCH = f"(left(thread_id, length({_THREAD_PREFIX})) = {_THREAD_PREFIX})"


def _policy_sql(table: str, match: str) -> str:
    condition = f"({SCOPE_SETTING_EMPTY} OR {match})"
    return (f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY; ALTER TABLE {table} FORCE ROW LEVEL SECURITY; "
            f"DROP POLICY IF EXISTS z0_scope ON {table}; "
            f"CREATE POLICY z0_scope ON {table} USING {condition} WITH CHECK {condition};\n")


_RLS_SQL = ("".join(_policy_sql(t, _SCOPE_MATCH) for t in _SCOPED_TABLES_V8)
            + "".join(_policy_sql(t, _THREAD_MATCH) for t in CHECKPOINT_TABLES))
# ``@@`` (ts_match_vq) is not marked leakproof in PostgreSQL, and under row-level security the planner may not use a
# qual that is not leakproof as an index condition: keyword search would filter every row of the scope instead of
# reading the GIN index, at a cost growing with the scope. It reveals nothing of its
# arguments but its result (it raises no error that depends on a row's text), so set-up marks it leakproof where it
# may (a superuser, as the embedded server's role is), and says what to run where it may not.
LEAKPROOF_SQL = "ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) LEAKPROOF"
_APP_ROLE_READ_ONLY = ("z0_meta", "z0_schema_version", "checkpoint_migrations")


async def _grant_app_role(db: Database) -> None:
    """Create the application role where the login role may, grant it the tables, and mark ``@@`` leakproof.

    Each step is tried on its own: a managed database's login role may create roles but not alter a built-in
    function, or neither. What could not be done is logged with the statement a superuser can run.
    """
    async with db.connection() as conn:
        schema = (await (await conn.execute("SELECT current_schema() AS s")).fetchone())["s"]
        present = {r["t"] for r in await (await conn.execute(
            "SELECT tablename AS t FROM pg_tables WHERE schemaname = %s", [schema])).fetchall()}
        grants = [f"GRANT USAGE ON SCHEMA {schema} TO {APP_ROLE}",
                  f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {schema} TO {APP_ROLE}"]
        grants += [f"GRANT SELECT, INSERT, UPDATE, DELETE ON {t} TO {APP_ROLE}"
                   for t in SCOPED_TABLES + CHECKPOINT_TABLES if t in present]
        grants += [f"GRANT SELECT ON {t} TO {APP_ROLE}" for t in _APP_ROLE_READ_ONLY if t in present]
        steps = [
            (f"DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{APP_ROLE}') THEN "
             f"CREATE ROLE {APP_ROLE} NOLOGIN NOBYPASSRLS; END IF; END $$",
             f"CREATE ROLE {APP_ROLE} NOLOGIN; GRANT {APP_ROLE} TO <your login role>"),
            *((grant, grant) for grant in grants),
        ]
        for statement, advice in steps:
            try:
                async with conn.transaction():
                    await conn.execute(statement, prepare=False)
            except psycopg.Error as exc:
                log.warning("row-level security: %s failed (%s); a superuser can run: %s",
                            statement.split(" ")[0], str(exc).splitlines()[0], advice)
        leakproof = await (await conn.execute(
            "SELECT proleakproof AS ok FROM pg_proc WHERE oid = 'pg_catalog.ts_match_vq(tsvector, tsquery)'"
            "::regprocedure")).fetchone()
        if not leakproof["ok"]:
            try:
                async with conn.transaction():
                    await conn.execute(LEAKPROOF_SQL, prepare=False)
            except psycopg.Error:
                log.warning("keyword search cannot use its full-text index under row-level security until a "
                            "superuser runs: %s", LEAKPROOF_SQL)


async def _app_role(db: Database) -> str | None:
    """The application role if this login role may switch to it (a superuser may switch to any role), else None:
    then the scoped transactions run as the login role, under the ``FORCE``d policies."""
    async with db.connection() as conn:
        row = await (await conn.execute(
            "SELECT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser, "
            "EXISTS (SELECT 1 FROM pg_roles WHERE rolname = %s) AS exists", [APP_ROLE])).fetchone()
        if not row["exists"]:
            if row["superuser"]:
                raise DatabaseError(f"role {APP_ROLE} is missing: run `z0-memory setup` again")
            return None
        member = await (await conn.execute(
            "SELECT pg_has_role(%s, 'MEMBER') AND has_table_privilege(%s, 'z0_facts', 'INSERT') AS ok",
            [APP_ROLE, APP_ROLE])).fetchone()
    if not member["ok"]:
        log.warning("scoped transactions run as the login role: role %s is not usable here (see `z0-memory setup`)",
                    APP_ROLE)
    return APP_ROLE if member["ok"] else None


def search_columns(category: str, content: str, context: str | None) -> dict[str, str | None]:
    """The two texts the trigger builds a memory's tsvector from: the category and content (weight A) and the
    context (weight D), each with its Chinese runs segmented (:func:`z0_memory.text.search_text`)."""
    return {"search_text": search_text(f"{category.replace('_', ' ')} {content}"),
            "search_context": search_text(context) if context else None}


def hybrid_config() -> HybridSearchConfig:
    """The tsvector column of the semantic table (filled by our trigger from ``search_text`` and ``search_context``)."""
    return HybridSearchConfig(tsv_column="content_tsv", tsv_lang="english")


@dataclass(frozen=True)
class EmbeddingSpec:
    name: str
    dims: int


async def create_semantic_table(db: Database, embedding: EmbeddingSpec, table: str = SEMANTIC_TABLE) -> None:
    """Create the PGVectorStore table with our metadata columns (no-op if it exists)."""
    async with db.connection() as conn:
        exists = await (await conn.execute("SELECT to_regclass(%s) AS t", [table])).fetchone()
    if exists["t"] is None:
        await db.engine.ainit_vectorstore_table(
            table_name=table,
            vector_size=embedding.dims,
            id_column=Column("id", "UUID", nullable=False),
            metadata_columns=[Column(n, t, nullable=nullable) for n, t, nullable in SEMANTIC_METADATA_COLUMNS],
            metadata_json_column="metadata",
            hybrid_search_config=hybrid_config(),
        )


async def _migration_1(db: Database, embedding: EmbeddingSpec) -> None:
    async with db.connection() as conn:
        await conn.execute(_CORE_SQL, prepare=False)


async def _migration_2(db: Database, embedding: EmbeddingSpec) -> None:
    await create_semantic_table(db, embedding)
    async with db.connection() as conn:
        await conn.execute(_SEMANTIC_INDEX_SQL, prepare=False)
        await write_embedding_meta(conn, embedding)


async def _migration_3(db: Database, embedding: EmbeddingSpec) -> None:
    async with db.connection() as conn:
        await conn.execute("ALTER TABLE z0_facts ADD COLUMN IF NOT EXISTS statement text")


async def _migration_4(db: Database, embedding: EmbeddingSpec) -> None:
    """Per-scope BM25 statistics (document count and total length, all rows and current rows), kept by triggers.

    Keyword search needs N and the mean document length of its scope; counting them on every query scanned the
    whole scope (most of a search's time in a large scope). Table, triggers and backfill commit in one
    transaction while writes to the semantic table wait (SHARE ROW EXCLUSIVE), so no write is missed or counted
    twice; re-running it recomputes the same figures. Rows written with triggers off (``session_replication_role =
    replica``) are not counted: delete version 4 from ``z0_schema_version`` and open the memory to recount.
    """
    async with db.connection() as conn, conn.transaction():
        await conn.execute(_STATS_SQL, prepare=False)


async def _migration_5(db: Database, embedding: EmbeddingSpec) -> None:
    """The full-text GIN index writes its entries at once (``fastupdate = off``) and its pending list is flushed.

    With GIN's default fast update, new rows' entries wait in an unsorted pending list (up to
    ``gin_pending_list_limit``, 4 MB) until a vacuum or an overflowing insert merges them, and every search reads
    the whole list, whatever it looks for, and a large-scope BM25 search runs a dozen index scans (one per candidate
    branch and rare-lexeme count), so most of its time was the list. Inserting the entries directly costs little
    next to the embedding and the HNSW insert of the same write. Turning the option off does not flush what is
    already pending, hence ``gin_clean_pending_list``.
    """
    async with db.connection() as conn:
        await conn.execute(f"ALTER INDEX {SEMANTIC_TSV_INDEX} SET (fastupdate = off)")
        await conn.execute("SELECT gin_clean_pending_list(%s::regclass)", [SEMANTIC_TSV_INDEX])


async def _migration_6(db: Database, embedding: EmbeddingSpec) -> None:
    """Semantic rows keep their search context (``NewMemory.context``, e.g. a conversation turn's neighbours), so
    ``reembed`` embeds the same text the row was first embedded from. Rows written before have none (NULL)."""
    async with db.connection() as conn:
        await conn.execute(f"ALTER TABLE {SEMANTIC_TABLE} ADD COLUMN IF NOT EXISTS context text")


async def _migration_7(db: Database, embedding: EmbeddingSpec) -> None:
    """The full-text index weighs a memory's search context below its content (:data:`CONTEXT_TERM_WEIGHT`).

    Until now ``search_text`` held the category, content and context as one text, all at the same weight. The
    context moves to a column of its own, ``search_context`` (segmented the same way), and the trigger marks content
    lexemes A and context lexemes D. Rows that kept their context (migration 6) are split again (the segmentation is
    Python's); every other row is re-indexed as it is, all content. Rows written before migration 6 stored no
    context apart from their text: it stays in ``search_text``, at content weight. One transaction, writers wait.
    """
    async with db.connection() as conn, conn.transaction():
        await conn.execute(f"LOCK TABLE {SEMANTIC_TABLE} IN SHARE ROW EXCLUSIVE MODE")
        await conn.execute(_SEMANTIC_TSV_SQL, prepare=False)
        rows = await (await conn.execute(
            f"SELECT id, category, content, context FROM {SEMANTIC_TABLE} WHERE context IS NOT NULL")).fetchall()
        if rows:
            async with conn.cursor() as cur:
                await cur.executemany(
                    f"UPDATE {SEMANTIC_TABLE} SET search_text = %(search_text)s, "
                    "search_context = %(search_context)s WHERE id = %(id)s",
                    [{"id": r["id"], **search_columns(r["category"], r["content"], r["context"])} for r in rows])
        await conn.execute(f"UPDATE {SEMANTIC_TABLE} SET search_text = search_text WHERE context IS NULL")


async def _migration_8(db: Database, embedding: EmbeddingSpec) -> None:
    """Row-level security on every table that holds a scope's data (see :data:`_RLS_SQL`); LangGraph's checkpoint
    tables are created first, so their policies can be made too."""
    await AsyncPostgresSaver(db.pool).setup()
    async with db.connection() as conn, conn.transaction():
        await conn.execute(_RLS_SQL, prepare=False)


async def _migration_9(db: Database, embedding: EmbeddingSpec) -> None:
    """The extraction log (``stores.extraction_log``): per extracted turn, what was written, confirmed, held pending
    or ignored, and why. Scoped like every table holding a scope's rows (row-level security ``z0_scope``, forced;
    the application role's grants follow in ``_grant_app_role``)."""
    async with db.connection() as conn, conn.transaction():
        await conn.execute(EXTRACTION_LOG_SQL, prepare=False)
        await conn.execute(_policy_sql(EXTRACTION_LOG_TABLE, _SCOPE_MATCH), prepare=False)


Migration = Callable[[Database, EmbeddingSpec], Awaitable[None]]
MIGRATIONS: tuple[tuple[int, str, Migration], ...] = (
    (1, "core tables: meta, facts, pending, extraction queue", _migration_1),
    (2, "semantic memory table (PGVectorStore) with full-text trigger, GIN and HNSW indexes", _migration_2),
    (3, "facts keep the statement each version was stated in", _migration_3),
    (4, "per-scope BM25 statistics kept by triggers on the semantic table", _migration_4),
    (5, "full-text GIN index without a pending list (fastupdate off): searches stop scanning it", _migration_5),
    (6, "semantic rows keep their search context, for re-embedding", _migration_6),
    (7, "full text weighs a memory's search context below its content", _migration_7),
    (8, "row-level security: a scoped transaction reads and writes only its own project's and user's rows",
     _migration_8),
    (9, "extraction log: per extracted turn, what was written, confirmed, held pending or ignored", _migration_9),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]


# z0_meta: one JSON value per key (the embedding model under 'embedding'; benches may mark what they loaded).
META_VALUE_SQL = "SELECT value FROM z0_meta WHERE key = %s"
META_SET_SQL = ("INSERT INTO z0_meta (key, value) VALUES (%s, %s::jsonb) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value")
META_ADD_SQL = "INSERT INTO z0_meta (key, value) VALUES (%s, %s::jsonb) ON CONFLICT (key) DO NOTHING"
EMBEDDING_META_KEY = "embedding"


async def meta_value(db: Database, key: str) -> Any | None:
    """The JSON value z0_meta holds under ``key``, or None."""
    async with db.connection() as conn:
        row = await (await conn.execute(META_VALUE_SQL, [key])).fetchone()
    return row["value"] if row else None


async def add_meta(db: Database, key: str, value: Any) -> None:
    """Record ``value`` (JSON) under ``key`` in z0_meta unless the key already holds one."""
    async with db.connection() as conn:
        await conn.execute(META_ADD_SQL, [key, json.dumps(value)])


async def write_embedding_meta(conn, embedding: EmbeddingSpec) -> None:
    value = {"model": embedding.name, "dims": embedding.dims}
    await conn.execute(META_SET_SQL, [EMBEDDING_META_KEY, json.dumps(value)])


async def stored_embedding(db: Database) -> EmbeddingSpec | None:
    value = await meta_value(db, EMBEDDING_META_KEY)
    return EmbeddingSpec(value["model"], int(value["dims"])) if value is not None else None


def check_embedding(stored: EmbeddingSpec | None, configured: EmbeddingSpec) -> None:
    if stored is None or stored == configured:
        return
    raise EmbeddingMismatchError(
        f"the semantic memory was built with embedding model {stored.name!r} ({stored.dims} dims), but "
        f"{configured.name!r} ({configured.dims} dims) is configured. Either set Z0_EMBEDDING_MODEL={stored.name}, "
        f"or run `z0-memory reembed` to re-embed every memory with {configured.name!r}."
    )


async def _take_setup_lock(conn: psycopg.AsyncConnection, timeout: float) -> None:
    """The session-level set-up lock, taken by polling rather than by a blocking ``pg_advisory_lock``.

    A process blocked inside ``pg_advisory_lock`` sits in an open transaction, and the process holding the lock runs
    LangGraph's checkpointer set-up, whose ``CREATE INDEX CONCURRENTLY`` waits for every open transaction: each
    waited for the other and nothing timed out. Between two polls nothing is open, so the index build proceeds.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        row = await (await conn.execute("SELECT pg_try_advisory_lock(%s) AS ok", [SETUP_LOCK_ID])).fetchone()
        if row["ok"]:
            return
        if loop.time() >= deadline:
            raise DatabaseError(
                f"another process has been setting up the database for {timeout:g} s (advisory lock {SETUP_LOCK_ID}); "
                "wait for it, or end a stuck one (SELECT pid FROM pg_locks WHERE locktype = 'advisory')"
            )
        await asyncio.sleep(SETUP_LOCK_POLL_S)


async def _applied(conn: psycopg.AsyncConnection) -> set[int]:
    exists = await (await conn.execute("SELECT to_regclass('z0_schema_version') AS t")).fetchone()
    if exists["t"] is None:
        return set()
    return {r["version"] for r in await (await conn.execute("SELECT version FROM z0_schema_version")).fetchall()}


VECTOR_EXISTS_SQL = "SELECT 1 FROM pg_extension WHERE extname = 'vector'"
CREATE_VECTOR_SQL = "CREATE EXTENSION IF NOT EXISTS vector"
WHO_SQL = "SELECT current_user AS role, current_database() AS db, current_schema() AS schema"


async def _who(conn: psycopg.AsyncConnection) -> dict[str, str]:
    return await (await conn.execute(WHO_SQL)).fetchone()


async def _create_vector_extension(conn: psycopg.AsyncConnection) -> None:
    """pgvector, created when missing; a role without the right gets one line saying what a superuser must run."""
    if await (await conn.execute(VECTOR_EXISTS_SQL)).fetchone():
        return  # present: no CREATE EXTENSION (which needs rights even with IF NOT EXISTS on some servers)
    try:
        await conn.execute(CREATE_VECTOR_SQL)
    except psycopg.errors.InsufficientPrivilege:
        who = await _who(conn)
        raise DatabaseError(
            f"database {who['db']} has no pgvector extension and role {who['role']} may not create it: a superuser "
            f"must run `CREATE EXTENSION vector;` in database {who['db']} (psql -d {who['db']} -c 'CREATE EXTENSION "
            "vector;'), then run `z0-memory setup` again") from None
    except (psycopg.errors.FeatureNotSupported, psycopg.errors.UndefinedFile, psycopg.errors.UndefinedObject) as exc:
        who = await _who(conn)
        raise DatabaseError(
            f"the PostgreSQL server has no pgvector to install ({exc.diag.message_primary or exc}): install pgvector "
            f"on the server (https://github.com/pgvector/pgvector), then a superuser must run `CREATE EXTENSION "
            f"vector;` in database {who['db']}") from None


async def _no_rights_error(conn: psycopg.AsyncConnection, exc: psycopg.Error) -> DatabaseError:
    who = await _who(conn)
    return DatabaseError(
        f"role {who['role']} may not create z0-memory's tables in database {who['db']} "
        f"({exc.diag.message_primary or exc}): a superuser must run `GRANT CREATE ON SCHEMA {who['schema'] or 'public'} "
        f"TO {who['role']};` in database {who['db']} (or run `z0-memory setup` once as the database owner)")


async def setup(db: Database, embedding: EmbeddingSpec, *, checkpointer_setup: bool = True,
                lock_timeout: float = SETUP_LOCK_TIMEOUT_S) -> list[int]:
    """Create or migrate everything; return the migration versions applied now (empty when up to date).

    A login role without the rights to create the tables gets one line naming the GRANT a superuser must run.
    """
    try:
        return await _setup(db, embedding, checkpointer_setup=checkpointer_setup, lock_timeout=lock_timeout)
    except psycopg.errors.InsufficientPrivilege as exc:
        async with db.connection() as conn:
            raise await _no_rights_error(conn, exc) from None


async def _setup(db: Database, embedding: EmbeddingSpec, *, checkpointer_setup: bool,
                 lock_timeout: float) -> list[int]:
    """:func:`setup` itself.

    Behind a transaction-mode pooler a session-level lock is not held by one server connection, so there set-up
    only checks that the schema is current and otherwise asks for a direct connection.
    """
    if db.pooler:
        async with db.connection() as conn:
            missing = [v for v, _, _ in MIGRATIONS if v not in await _applied(conn)]
        if missing:
            raise ConfigurationError(
                "the database behind this transaction-mode pooler is not set up (migrations "
                f"{', '.join(map(str, missing))} are missing): run `z0-memory setup` once with a direct connection "
                "URL (session mode, e.g. port 5432), then use the pooler"
            )
        check_embedding(await stored_embedding(db), embedding)
        db.app_role = await _app_role(db)
        return []
    applied_now: list[int] = []
    async with db.connection() as lock_conn:
        await _take_setup_lock(lock_conn, lock_timeout)
        try:
            await _create_vector_extension(lock_conn)
            await lock_conn.execute(
                "CREATE TABLE IF NOT EXISTS z0_schema_version (version integer PRIMARY KEY, description text NOT NULL,"
                " applied_at timestamptz NOT NULL DEFAULT now())"
            )
            done = await _applied(lock_conn)
            if 2 in done:
                check_embedding(await stored_embedding(db), embedding)
            for version, description, migrate in MIGRATIONS:
                if version in done:
                    continue
                await migrate(db, embedding)
                await lock_conn.execute(
                    "INSERT INTO z0_schema_version (version, description) VALUES (%s, %s)", [version, description]
                )
                applied_now.append(version)
            if checkpointer_setup:
                await AsyncPostgresSaver(db.pool).setup()
            await _grant_app_role(db)
        finally:
            await lock_conn.execute("SELECT pg_advisory_unlock(%s)", [SETUP_LOCK_ID])
    db.app_role = await _app_role(db)
    return applied_now
