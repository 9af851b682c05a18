"""The database connection owner: URL resolution, the psycopg pool, the PGEngine, and their lifecycle.

``DATABASE_URL`` (any PostgreSQL 15+ with pgvector) wins; otherwise an embedded server is started at the data
dir. One psycopg ``AsyncConnectionPool`` (autocommit, ``dict_row``, as LangGraph's Postgres checkpointer needs)
serves the checkpointer and our own SQL; langchain-postgres' ``PGEngine`` has its own SQLAlchemy pool on the
same database. :meth:`Database.close` closes both and releases the embedded server.
"""

from __future__ import annotations

import asyncio
import logging
import re
import select
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from psycopg import sql
from psycopg.pq import TransactionStatus
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from z0_memory.stores.embedded import EmbeddedPostgres
from z0_memory.stores.scope import Scope
from z0_memory.stores.vectors import VectorParam, VectorParamDumper
from z0_memory.settings import Settings
from z0_memory.errors import ConfigurationError, DatabaseError

log = logging.getLogger(__name__)

POOL_KWARGS: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
# Behind a transaction-mode pooler (PgBouncer, Supabase's port 6543) consecutive transactions of one client
# connection may run on different server connections: a statement prepared in one is unknown in the next, so
# statements are not prepared there.
POOLER_POOL_KWARGS: dict[str, Any] = {**POOL_KWARGS, "prepare_threshold": None}
# The role every scoped transaction runs as (``SET LOCAL ROLE``): it owns nothing and has no BYPASSRLS, so the
# row-level security policies of ``stores.schema`` apply to it even when the login role is a superuser or the
# tables' owner. Created by ``setup()`` when the login role may create roles.
APP_ROLE = "z0_app"


# psycopg parses a statement's %(name)s placeholders once and caches the result, for statements of at most this many
# bytes (psycopg._queries.MAX_CACHED_STATEMENT_LENGTH); a longer one is parsed again on every execution.
CACHED_STATEMENT_BYTES = 4096


def statement(sql: str) -> str:
    """A statement's text without its ``--`` comments and runs of whitespace (none may be inside a literal), so
    that the statements run on every search stay within :data:`CACHED_STATEMENT_BYTES`."""
    return " ".join(re.sub(r"--[^\n]*", " ", sql).split())


def validate_url(url: str) -> str:
    """Check that ``url`` is a Postgres URL psycopg can parse; return it in psycopg form."""
    if not isinstance(url, str) or not url.strip():
        raise ConfigurationError("DATABASE_URL is empty: unset it to use the embedded server, or give a Postgres URL")
    url = url.strip()
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme in {"postgresql+psycopg", "postgresql+psycopg2", "postgresql+asyncpg"}:
        url = "postgresql://" + url.split("://", 1)[1]
    elif scheme not in {"postgres", "postgresql"}:
        raise ConfigurationError(
            f"DATABASE_URL must start with postgresql:// (got {scheme or 'no scheme'!r}), "
            "e.g. postgresql://user:password@host:5432/dbname"
        )
    try:
        psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise ConfigurationError(f"DATABASE_URL is not a valid Postgres URL: {exc}") from None
    return url


def sqlalchemy_url(url: str) -> str:
    """The same URL for SQLAlchemy's async psycopg driver."""
    return "postgresql+psycopg://" + url.split("://", 1)[1]


def _redact(url: str) -> str:
    try:
        params = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "<invalid url>"
    host = params.get("host", "localhost")
    return f"postgresql://{params.get('user', '')}@{host}/{params.get('dbname', '')}"


# Every connection's session settings (pooled ones, and PGVectorStore's engine). Filtered HNSW scans (every search is
# filtered by scope) keep scanning until they have their k rows: with the default (off), a scan returns at most
# ef_search candidates before the scope filter drops some. In relaxed order, which the searches re-sort (strict
# order costs much more on a large scope). Statements are prepared (the pool's prepare_threshold 0: no
# parsing on each search) but planned for each execution: after five, Postgres may switch to one generic plan,
# blind to whether a scope holds 50 memories (read them all) or 50,000 (use the index).
SESSION_SETTINGS = ("SET hnsw.iterative_scan = relaxed_order", "SET plan_cache_mode = force_custom_plan")
# The pool runs the retrieval rounds, whose searches read 50 rows (``recipes.HYBRID_DEPTH``): ef_search well above
# that lets one pass of the index mostly suffice (at ef_search 50 many queries needed a second, iterative pass;
# 100 read more than it saved). PGVectorStore's engine (top-10 searches) keeps pgvector's 40.
HNSW_EF_SEARCH = 64
# How long the direct probe of a server that just timed out may take (libpq's connect_timeout is whole seconds).
FAIL_FAST_CONNECT_S = 1
POOL_SETTINGS = (*SESSION_SETTINGS, f"SET hnsw.ef_search = {HNSW_EF_SEARCH}")


# The same settings for one transaction: a scoped transaction repeats them with ``SET LOCAL``, so they hold behind a
# transaction-mode pooler too, where a connection's session settings may belong to another server connection.
LOCAL_SETTINGS = tuple(setting.replace("SET ", "SET LOCAL ", 1) for setting in POOL_SETTINGS)


def scope_settings(project: str, user_id: str, *, role: str | None, pooler: bool = False) -> str:
    """The statement that opens a scoped transaction: ``BEGIN``, the scope the row-level security policies read
    (``z0.project``, ``z0.user_id``), the application role when there is one, and, behind a transaction-mode
    pooler (``pooler``), the search settings that a direct connection holds for its whole session.

    One simple-protocol statement, so opening a scoped transaction costs one round trip. ``project`` and
    ``user_id`` are validated key segments (letters, digits, ``_ - .``) and are quoted as literals anyway.
    """
    parts = [
        "BEGIN",
        sql.SQL("SELECT set_config('z0.project', {}, true), set_config('z0.user_id', {}, true)").format(
            sql.Literal(project), sql.Literal(user_id)),
        *(sql.SQL(setting) for setting in (LOCAL_SETTINGS if pooler else ())),
    ]
    if role:
        parts.append(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(role)))
    return "; ".join(p if isinstance(p, str) else p.as_string(None) for p in parts)


# A scoped transaction's settings as one parameterised statement (for :meth:`Database.fetch`'s pipeline, where
# the multi-statement :func:`scope_settings` cannot run): ``set_config('role', ..., true)`` is ``SET LOCAL ROLE``.
SCOPE_NO_ROLE_SQL = "SELECT set_config('z0.project', %s, true), set_config('z0.user_id', %s, true)"
SCOPE_SQL = ("SELECT set_config('z0.project', %s, true), set_config('z0.user_id', %s, true), "
             "set_config('role', %s, true)")


async def configure_connection(conn: psycopg.AsyncConnection) -> None:
    """What every pooled connection needs before its first statement (the pool's ``configure`` callback)."""
    conn.adapters.register_dumper(VectorParam, VectorParamDumper)
    for setting in POOL_SETTINGS:
        await conn.execute(setting, prepare=False)


async def configure_pooler_connection(conn: psycopg.AsyncConnection) -> None:
    """The same behind a transaction-mode pooler, without session settings: the server connection a ``SET`` lands on
    serves other clients next. Scoped transactions set them with ``SET LOCAL`` (:data:`LOCAL_SETTINGS`)."""
    conn.adapters.register_dumper(VectorParam, VectorParamDumper)


async def check_connection(conn: psycopg.AsyncConnection) -> None:
    """The pool's check before it hands out a connection, without a round trip for a healthy one.

    An idle connection has nothing to read: a server that stopped or restarted sent its goodbye (or the socket hit
    EOF), so the socket is readable. Only then does this run psycopg_pool's own check (an empty statement), which
    raises on a dead connection and the pool takes another; anything else the server may have sent unasked (a
    parameter change) is consumed by that check. Checking every checkout with a round trip cost a millisecond of
    each search on a busy machine.
    """
    if conn.closed or conn.broken:
        raise psycopg.OperationalError("the pooled connection is closed")
    if _readable(conn.fileno()):
        await AsyncConnectionPool.check_connection(conn)


async def _end_transaction(conn: psycopg.AsyncConnection, command: str, *, fail: bool = False) -> None:
    """COMMIT or ROLLBACK a scoped transaction. A rollback after an error never hides that error: on a connection
    that broke, the pool discards it on return; a failed COMMIT raises (``fail``), since the block's writes are lost."""
    if conn.closed or conn.broken or conn.pgconn.transaction_status == TransactionStatus.IDLE:
        if fail and (conn.closed or conn.broken):
            raise DatabaseError("the connection to the database broke before the transaction committed")
        return
    try:
        await conn.execute(command, prepare=False)
    except psycopg.Error:
        if fail:
            raise
        log.debug("%s of a scoped transaction failed", command, exc_info=True)


def uses_transaction_pooler(url: str, setting: str) -> bool:
    """Whether ``url`` goes through a transaction-mode pooler: ``Settings.database_pooler`` says so ("transaction"
    or "none"), or, on "auto", the URL's port is 6543 (Supabase's transaction pooler)."""
    if setting != "auto":
        return setting == "transaction"
    try:
        port = psycopg.conninfo.conninfo_to_dict(url).get("port")
    except psycopg.ProgrammingError:
        return False
    return str(port) == "6543"


def _readable(fd: int) -> bool:
    if not hasattr(select, "poll"):  # Windows
        return bool(select.select([fd], [], [], 0)[0])
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLPRI)
    return bool(poller.poll(0))


class Database:
    """Owns the connection pools (and the embedded server, when used) for one process."""

    def __init__(self, settings: Settings, *, pool_max_size: int = 10, open_timeout: float = 15.0,
                 connection_timeout: float | None = None) -> None:
        self.settings = settings
        self.pool_max_size = pool_max_size
        self.open_timeout = open_timeout
        # how long a statement waits for a pooled connection: short enough for an interactive turn to fail fast
        # when the server is gone (Settings.database_timeout_s)
        self.connection_timeout = (float(settings.database_timeout_s) if connection_timeout is None
                                   else connection_timeout)
        self.url: str | None = None
        self.embedded: EmbeddedPostgres | None = None
        self.pool: AsyncConnectionPool | None = None
        self.engine: Any = None  # langchain_postgres.PGEngine
        self.pooler = False  # behind a transaction-mode pooler (resolved at open)
        self._unreachable = False  # the last wait for a connection timed out: probe before waiting again
        self.app_role: str | None = None  # the role scoped transactions run as (resolved by setup)

    @property
    def description(self) -> str:
        if self.embedded is not None:
            return f"embedded PostgreSQL at {self.embedded.data_dir}"
        return _redact(self.url) if self.url else "not connected"

    async def open(self) -> Database:
        if self.pool is not None:
            return self
        if self.settings.database_url:
            self.url = validate_url(self.settings.database_url)
            self.pooler = uses_transaction_pooler(self.url, self.settings.database_pooler)
        else:
            self.embedded = EmbeddedPostgres(self.settings.data_dir,
                                             allow_permission_changes=self.settings.allow_permission_changes)
            self.url = await asyncio.to_thread(self.embedded.start)
            if self.embedded.created:
                log.warning("z0-memory created its embedded database at %s (set Z0_DATA_DIR to move it)",
                            self.embedded.data_dir)
        try:
            await self._open_pool()
            await self._check_server()
            self._open_engine()
        except BaseException:
            await self.close()
            raise
        return self

    async def _probe(self) -> None:
        """One direct connection first, so an unreachable or refusing server fails now, with its own reason."""
        try:
            conn = await psycopg.AsyncConnection.connect(self.url, connect_timeout=max(1, int(self.open_timeout)))
        except psycopg.OperationalError as exc:
            reason = " ".join(str(exc).split())
            raise DatabaseError(
                f"cannot connect to {self.description}: {reason}. Check DATABASE_URL, that the server runs, "
                "and that it accepts this user (or unset DATABASE_URL to use the embedded server)"
            ) from None
        await conn.close()

    async def _open_pool(self) -> None:
        await self._probe()
        self.pool = AsyncConnectionPool(
            self.url, min_size=1, max_size=self.pool_max_size,
            kwargs=dict(POOLER_POOL_KWARGS if self.pooler else POOL_KWARGS), open=False,
            configure=configure_pooler_connection if self.pooler else configure_connection,
            check=check_connection, name="z0-memory", timeout=self.connection_timeout,
        )
        try:
            await self.pool.open(wait=True, timeout=self.open_timeout)
        except PoolTimeout as exc:
            raise DatabaseError(
                f"cannot connect to {self.description} within {self.open_timeout:g} s: check DATABASE_URL, "
                "that the server runs, "
                "and that it accepts this user"
            ) from exc

    async def _check_server(self) -> None:
        async with self.connection() as conn:
            row = await (await conn.execute("SHOW server_version_num")).fetchone()
            version = int(row["server_version_num"])
            if version < 150000:
                raise DatabaseError(f"{self.description} runs PostgreSQL {version // 10000}; z0-memory needs 15+")
            ext = await (
                await conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
            ).fetchone()
            if ext is None:
                raise DatabaseError(
                    f"{self.description} has no pgvector extension: install pgvector on the server "
                    "(on Supabase: Database > Extensions > vector), or unset DATABASE_URL for the embedded server"
                )

    def _open_engine(self) -> None:
        from langchain_postgres import PGEngine
        from sqlalchemy import event
        from sqlalchemy.ext.asyncio import create_async_engine

        # behind a transaction pooler: no prepared statements, and no session settings (they would stay on a server
        # connection that other clients get next)
        connect_args = {"prepare_threshold": None} if self.pooler else {}
        engine = create_async_engine(sqlalchemy_url(self.url), pool_size=5, max_overflow=5, pool_pre_ping=True,
                                     connect_args=connect_args)
        self.engine = PGEngine.from_engine(engine)
        if self.pooler:
            return

        @event.listens_for(engine.sync_engine, "connect")
        def _session_settings(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            try:
                for setting in SESSION_SETTINGS:
                    cur.execute(setting)
            finally:
                cur.close()
            dbapi_conn.commit()

    @asynccontextmanager
    async def connection(self, scope: Scope | None = None) -> AsyncIterator[psycopg.AsyncConnection]:
        """``async with db.connection() as conn``: a pooled autocommit connection with dict rows.

        With a ``scope``, the block is one transaction bound to that scope (:func:`scope_settings`): the database's
        row-level security admits only that project's and user's rows, whatever the statements ask for; it commits
        when the block ends and rolls back on an error. Without one, it is the login role's connection: set-up,
        statistics, and the operator surfaces (the server-wide store, ``z0-memory`` admin commands).

        The pool checks a connection before handing it out, so after a server restart the next statement gets a
        fresh one; while the server is unreachable this raises :class:`DatabaseError` after ``connection_timeout``.
        """
        async with self._checkout() as conn:
            if scope is None:
                yield conn
                return
            await conn.execute(scope_settings(scope.project, scope.user_id, role=self.app_role, pooler=self.pooler),
                               prepare=False)
            try:
                yield conn
            except BaseException:
                await _end_transaction(conn, "ROLLBACK")
                raise
            await _end_transaction(conn, "COMMIT", fail=True)

    async def fetch(self, scope: Scope, query: str, params: Any = None) -> list[dict[str, Any]]:
        """The rows of one read-only statement, in a transaction bound to ``scope`` like :meth:`connection`'s,
        in one round trip: the transaction's opening, the scope, the statement and the commit are pipelined
        (:meth:`reading`).

        The searches read this way: each round trip of a scoped transaction cost about a millisecond on a busy
        2-core machine. Behind a transaction-mode pooler it runs as a :meth:`connection` block.
        """
        async with self.reading(scope) as conn:
            cursor = await conn.execute(query, params)
        return await cursor.fetchall()

    @asynccontextmanager
    async def reading(self, scope: Scope) -> AsyncIterator[psycopg.AsyncConnection]:
        """``async with db.reading(scope) as conn``: a transaction bound to ``scope`` like :meth:`connection`'s, in
        pipeline mode: the transaction's opening and the scope are sent with the block's first statement and the
        commit with its last, so a block of statements whose results are fetched after it costs one round trip;
        a cursor fetched inside the block costs one (a flush, the transaction stays open). For reads that need
        several statements (a hybrid search) in one transaction. Behind a transaction-mode pooler it is a
        :meth:`connection` block (each statement its own round trip).
        """
        if self.pooler:
            async with self.connection(scope) as conn:
                yield conn
            return
        async with self._checkout() as conn:
            try:
                async with conn.pipeline():
                    await conn.execute("BEGIN", prepare=False)
                    await conn.execute(SCOPE_SQL if self.app_role else SCOPE_NO_ROLE_SQL,
                                       [scope.project, scope.user_id, *([self.app_role] if self.app_role else [])])
                    yield conn
                    await conn.execute("COMMIT", prepare=False)
            except BaseException:
                await _end_transaction(conn, "ROLLBACK")
                raise

    @asynccontextmanager
    async def _checkout(self) -> AsyncIterator[psycopg.AsyncConnection]:
        """A pooled connection; a broken one raises :class:`DatabaseError` with its cause, and it goes back to the
        pool whatever happens (the pool discards a broken one)."""
        pool = self.pool
        if pool is None:
            raise DatabaseError("the database is not open: use `async with Z0Memory.open(...)` or call open() first")
        if self._unreachable:
            await self._fail_fast()
        try:
            conn = await pool.getconn()
        except PoolTimeout as exc:
            self._unreachable = True
            raise DatabaseError(
                f"no connection to {self.description} within {pool.timeout:g} s: the server is down or unreachable, "
                f"or all {self.pool_max_size} connections stayed busy (Z0_DATABASE_TIMEOUT_S sets the wait)"
            ) from exc
        self._unreachable = False
        try:
            yield conn
        except psycopg.OperationalError as exc:
            # the server went away or the connection broke under a statement: a typed error, the cause kept
            reason = " ".join(str(exc).split())[:300]
            raise DatabaseError(f"the connection to {self.description} failed: {reason}") from exc
        finally:
            await pool.putconn(conn)

    async def _fail_fast(self) -> None:
        """After a wait for a connection timed out, each statement first tries one direct connection (about a
        second at most): while the server stays unreachable a turn fails at once instead of waiting out the pool's
        timeout for every statement it would run (one turn took 246 s of successive timeouts before)."""
        try:
            conn = await psycopg.AsyncConnection.connect(self.url, connect_timeout=FAIL_FAST_CONNECT_S)
        except psycopg.OperationalError as exc:
            reason = " ".join(str(exc).split())[:300]
            raise DatabaseError(f"{self.description} is unreachable: {reason}") from exc
        await conn.close()
        self._unreachable = False

    async def close(self) -> None:
        """Close the pools and release the embedded server. Never raises: it runs while another error may be on its
        way out (a server killed under a turn), and must not replace it; what fails here is logged."""
        pool, self.pool = self.pool, None
        engine, self.engine = self.engine, None
        embedded, self.embedded = self.embedded, None
        steps = [("the connection pool", pool.close if pool is not None else None),
                 ("the SQLAlchemy engine", engine.close if engine is not None else None),
                 ("the embedded server", (lambda: asyncio.to_thread(embedded.stop)) if embedded is not None else None)]
        for what, close in steps:
            if close is None:
                continue
            try:
                await close()
            except Exception as exc:  # noqa: BLE001 - closing must not hide the error that led here
                log.info("closing %s failed: %s: %s", what, type(exc).__name__, exc)

    async def __aenter__(self) -> Database:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
