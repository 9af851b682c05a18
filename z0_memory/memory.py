"""``Z0Memory``: the one owner of z0-memory's shared resources and the entry point to its stores.

    async with Z0Memory.from_env() as memory:          # DATABASE_URL, or the embedded server; Z0_* settings
        acme = memory.scope("acme")                    # every read and write bound to project "acme"
        await acme.add([("user", "For the backend we'll use Hono, not Express")])   # extraction, the write gate
        found = await acme.search("which web framework do we use?")                # the retrieval loop
        found.hits, found.trace                        # evidence, and every round
        await acme.get("stack:backend_framework")      # a fact (or a semantic memory by id)
        await acme.forget("stack:backend_framework")   # for real

The stores stay reachable for everything else (``acme.facts``, ``acme.semantic``, ``acme.pending``).

It opens the database (embedded server or ``DATABASE_URL``), runs the idempotent ``setup()``, builds the
providers, and closes everything in ``close()``. Nothing here is global: two instances are two owners.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, MessageLikeRepresentation

from z0_memory.stores.database import Database
from z0_memory.stores.extraction_log import ExtractionLog
from z0_memory.stores.extraction_queue import ExtractionQueue
from z0_memory.stores.facts import FactStore
from z0_memory.stores.pending import PendingStore
from z0_memory.stores.provenance import memory_ids_with_prefix
from z0_memory.stores.rules import Rules, load_rules
from z0_memory.stores.maintenance import embedded_texts, forget_scope, swap_embeddings
from z0_memory.stores.schema import SEMANTIC_METADATA_COLUMNS, SEMANTIC_TABLE, EmbeddingSpec, setup, stored_embedding
from z0_memory.stores.scope import Scope
from z0_memory.stores.semantic import SemanticStore, indexed_text
from z0_memory.stores.session import ScopedCheckpointer, async_checkpointer
from z0_memory.config import Context
from z0_memory.schemas import FactVersion, Hit, MemoryKey, MemoryRecord, RoundTrace, Verdict, WriteOutcome
from z0_memory.settings import Settings
from z0_memory.errors import ConfigurationError, DatabaseError, InvalidKeyError
from z0_memory.providers import Providers

if TYPE_CHECKING:
    from langchain_postgres import PGVectorStore
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    from z0_memory.stores.langgraph_store import Z0Store


@dataclass(frozen=True)
class SearchResult:
    """What ``ProjectMemory.search`` found: the hits, the judge's last verdict, every round, and why it stopped."""

    question: str
    hits: list[Hit]
    verdict: Verdict | None
    trace: list[RoundTrace]
    stop_reason: str


@dataclass(frozen=True)
class Added:
    """What ``ProjectMemory.add`` did: user turns extracted, turns skipped (already extracted), the write outcomes."""

    turns: int
    skipped: int
    extraction: list[WriteOutcome]


def _messages(messages: Sequence[MessageLikeRepresentation]) -> list[BaseMessage]:
    from langchain_core.messages import convert_to_messages

    return list(convert_to_messages(list(messages)))


@dataclass(frozen=True)
class ProjectMemory:
    """The long-term stores of one scope, and the verbs most callers need (``add``, ``search``, ``get``, ``forget``)."""

    scope: Scope
    facts: FactStore
    semantic: SemanticStore
    pending: PendingStore
    extraction_queue: ExtractionQueue
    extraction_log: ExtractionLog
    memory: Z0Memory | None = field(default=None, repr=False, compare=False)

    def _owner(self) -> Z0Memory:
        """The Z0Memory behind this scope, which the verbs run on."""
        if self.memory is None:
            raise ConfigurationError("this ProjectMemory has no Z0Memory: get it with memory.scope(...)")
        return self.memory

    def _context(self, **changes: Any) -> Context:
        """The run context of this scope's verbs: the scope, ``changes``, then the operator's ``Z0_*`` run settings."""
        self._owner()
        return Context.from_env(project=self.scope.project, user_id=self.scope.user_id, **changes)

    async def add(self, messages: Sequence[MessageLikeRepresentation], *, thread_id: str | None = None) -> Added:
        """Extract every user turn of ``messages``, in order, each with the assistant message before it.

        ``messages``: LangChain messages, ``(role, text)`` tuples or ``{"role", "content"}`` dicts. The same write
        gate as after a live turn (confidence threshold, pending, supersession, redaction), and the same code: the
        extraction node's ``extract_conversation``. Idempotent by message id: a user message this scope has already
        extracted (logged after its writes, or queued for retry) is skipped, so adding a conversation again changes nothing
        (messages without an id get a stable one from their position, role and text).
        """
        from z0_memory.nodes.extraction import extract_conversation

        done = await extract_conversation(self, self.memory, _messages(messages), self._context(), thread_id)
        return Added(turns=done.turns, skipped=done.skipped, extraction=done.outcomes)

    async def search(self, query: str, *, mode: str = "code", max_rounds: int | None = None) -> SearchResult:
        """The retrieval loop on ``query`` (``mode``'s round cap: 5 for code, 3 for chat): hits, verdict and trace."""
        from z0_memory.tools import run_recall

        ctx = self._context(mode=mode, **({"max_rounds": max_rounds} if max_rounds is not None else {}))
        out = await run_recall(query, self._owner().store(self.scope.project, self.scope.user_id), ctx)
        return SearchResult(question=out.get("question", query), hits=list(out.get("memories") or []),
                            verdict=out.get("verdict"), trace=list(out.get("trace") or []),
                            stop_reason=out.get("stop_reason") or "")

    def key(self, key: str) -> MemoryKey:
        """A fact key of this scope from ``project:category:entity`` or, inside the project, ``category:entity``."""
        return self.scope.key(f"{self.scope.project}:{key}" if key.count(":") == 1 else key)

    async def memory_id(self, given: str) -> str | None:
        """The full id of a semantic memory from its id or a unique prefix (``memories list`` prints 8 characters)."""
        given = given.strip().lower()
        if len(given) < 4 or any(c not in "0123456789abcdef-" for c in given):
            return None
        if await self.semantic.get(given) is not None:
            return given
        matches = await memory_ids_with_prefix(self.facts.db, self.scope, given)
        if len(matches) > 1:
            raise InvalidKeyError(f"memory id prefix {given!r} matches several memories; give more characters")
        return matches[0] if matches else None

    async def get(self, key: str) -> FactVersion | MemoryRecord | None:
        """The current fact for ``key`` (``category:entity`` or the full key), or the semantic memory with that id (or
        unique id prefix); None when there is neither."""
        if ":" in key:
            return await self.facts.get(self.key(key))
        memory_id = await self.memory_id(key)
        return await self.semantic.get(memory_id) if memory_id else None

    async def forget(self, key: str, *, include_history: bool = False) -> int:
        """Delete a fact (current version, or every version with ``include_history``) or a semantic memory (id or
        unique id prefix), for real; returns the rows deleted (0: nothing matched)."""
        if ":" in key:
            return await self.facts.forget(self.key(key), include_history=include_history)
        memory_id = await self.memory_id(key)
        if memory_id is None:
            return 0
        record = await self.semantic.get(memory_id)
        if record is not None and record.fact_key:  # deleting the entry alone would leave the fact unsearchable
            raise InvalidKeyError(f"{key} is the search entry of fact {record.fact_key}: forget the fact by its key "
                                  f"({record.fact_key.split(':', 1)[1]})")
        return await self.semantic.delete([memory_id])

    async def forget_everything(self, *, reread: bool = False) -> int:
        """Delete every fact version, memory, pending item, queued and logged turn of this scope (only); rows deleted.

        The messages already read stay marked as read (their ids only, in the extraction log), so a thread that goes on
        afterwards, whose messages still hold the old turns, does not bring back what was forgotten. ``reread=True``
        starts the scope afresh: the same messages given again (``add``, ``ingest``, a re-run demo) are read again.
        """
        return await forget_scope(self.facts.db, self.scope, keep_read_marks=not reread)


class Z0Memory:
    """Owner of the database, the providers and the vector store; use as an async context manager."""

    def __init__(self, settings: Settings | None = None, *, chat_models: dict[str, BaseChatModel] | None = None,
                 embeddings: Embeddings | None = None, embedding_name: str | None = None) -> None:
        if settings is not None and not isinstance(settings, Settings):
            raise ConfigurationError(
                f"Z0Memory takes Settings (the process's database, keys, models), got {type(settings).__name__}; "
                "a run's Context (project, mode...) goes to each run: memory.scope(project) or context=Context(...)")
        self.settings = settings if settings is not None else Settings.from_env()
        self.providers = Providers(self.settings, chat_models=dict(chat_models or {}), embeddings=embeddings,
                                   embedding_name=embedding_name)
        self.db = Database(self.settings)
        self.vectorstore: PGVectorStore | None = None
        self._embedding: EmbeddingSpec | None = None

    @classmethod
    def from_url(cls, url: str, **settings: Any) -> Z0Memory:
        """A memory on the PostgreSQL at ``url`` (pgvector required); other ``Settings`` fields as keywords, the
        rest from the environment (``Settings.from_env``).

        ``async with Z0Memory.from_url("postgresql://...") as memory:`` (like ``PostgresStore.from_conn_string``).
        """
        return cls(Settings.from_env(database_url=url, **settings))

    @classmethod
    def from_env(cls, **settings: Any) -> Z0Memory:
        """A memory configured from the environment (``DATABASE_URL`` or the embedded server, ``Z0_*``); keywords
        (``Settings`` fields) win over it."""
        return cls(Settings.from_env(**settings))

    @property
    def is_open(self) -> bool:
        return self.vectorstore is not None

    async def open(self) -> Z0Memory:
        if self.is_open:
            return self
        await self.db.open()
        try:
            dims = await self.providers.embedding_dims()
            self._embedding = EmbeddingSpec(self.providers.embedding_name, dims)
            await setup(self.db, self._embedding)
            self.vectorstore = await self._vectorstore()
        except BaseException:
            await self.db.close()
            raise
        return self

    async def _vectorstore(self) -> PGVectorStore:
        from langchain_postgres import PGVectorStore

        return await PGVectorStore.create(
            self.db.engine, self.providers.embeddings, SEMANTIC_TABLE, id_column="id", content_column="content",
            embedding_column="embedding", metadata_json_column="metadata",
            metadata_columns=[name for name, _, _ in SEMANTIC_METADATA_COLUMNS if name != "search_text"],
        )

    async def close(self) -> None:
        self.vectorstore = None
        await self.db.close()

    async def __aenter__(self) -> Z0Memory:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _require_open(self) -> PGVectorStore:
        """The open memory's vector store; a DatabaseError when the memory is not open."""
        if self.vectorstore is None:
            raise DatabaseError("Z0Memory is not open: use `async with Z0Memory(...) as memory` or await open()")
        return self.vectorstore

    @staticmethod
    def _scope(project: str, user_id: str | None) -> Scope:
        if project is None:  # "" is an invalid name (Scope says so), never silently some default project
            raise ConfigurationError(
                "no project: name one with memory.scope(\"<project>\") (a run names its own with "
                "context=Context(project=\"...\"))")
        return Scope(project, user_id or "")

    def scope(self, project: str, user_id: str = "", *, pending_ttl_days: float | None = None) -> ProjectMemory:
        """The stores bound to a project and optional user. ``pending_ttl_days``: how long new pending candidates
        wait (a run's ``Context.pending_ttl_days``; None: ``Z0_PENDING_TTL_DAYS``, else 14 days)."""
        vectorstore = self._require_open()
        scope = self._scope(project, user_id)
        emb = self.providers.embeddings
        if pending_ttl_days is None:
            pending_ttl_days = Context.from_env().pending_ttl_days
        return ProjectMemory(
            scope=scope,
            facts=FactStore(self.db, scope, emb),
            semantic=SemanticStore(self.db, scope, emb, vectorstore),
            pending=PendingStore(self.db, scope, timedelta(days=float(pending_ttl_days))),
            extraction_queue=ExtractionQueue(self.db, scope),
            extraction_log=ExtractionLog(self.db, scope),
            memory=self,
        )

    def checkpointer(self, project: str, user_id: str = "") -> ScopedCheckpointer:
        """LangGraph's async Postgres checkpointer for the threads (sessions, layer 3) of one scope: the same thread
        id under another project is another thread, which this one cannot read."""
        self._require_open()
        return ScopedCheckpointer(self.db, self._scope(project, user_id))

    def operator_checkpointer(self) -> AsyncPostgresSaver:
        """The unscoped checkpointer over every project's threads, for servers that own thread ids themselves
        (``langgraph dev``: see ``z0_memory.server``) and for administration."""
        self._require_open()
        return async_checkpointer(self.db)

    def store(self, project: str, user_id: str = "") -> Z0Store:
        """This memory as a LangGraph ``BaseStore`` bound to one scope: compile graphs with
        ``store=memory.store("<project>")``. Namespaces name a category inside that project; another project's rows are
        unreachable, whatever namespace is asked for."""
        from z0_memory.stores.langgraph_store import Z0Store

        self._require_open()
        return Z0Store(self, self._scope(project, user_id))

    def operator_store(self) -> Z0Store:
        """The unbound store: the project is the namespace's first element, for any project (``langgraph dev``'s
        server-wide store, which has no caller identity; an operator surface, not for agents)."""
        from z0_memory.stores.langgraph_store import Z0Store

        self._require_open()
        return Z0Store(self, None)

    def rules(self, root: str | None = None) -> Rules:
        """The rules (layer 1) under ``root`` (default: the settings' rules_root)."""
        return load_rules(root or self.settings.rules_root, self.settings.rules_files,
                          max_bytes=int(self.settings.rules_max_bytes))

    async def reembed(self, *, batch_size: int = 256,
                      progress: Callable[[int, int], None] | None = None) -> int:
        """Re-embed every semantic row, of every project, with the configured model (after an embedding-model
        change: one model and one vector column serve the whole database).

        New vectors are computed first (``progress(done, total)`` after each batch); the column swap and index
        rebuild then happen in one transaction, so a failure leaves the old vectors in place. Returns the number of
        rows re-embedded.
        """
        await self.db.open()
        dims = await self.providers.embedding_dims()
        spec = EmbeddingSpec(self.providers.embedding_name, dims)
        rows = await embedded_texts(self.db)
        vectors: list[list[float]] = []
        for start in range(0, len(rows), batch_size):
            vectors += await self.providers.embeddings.aembed_documents(
                [indexed_text(r["content"], r["context"]) for r in rows[start:start + batch_size]])
            if progress is not None:
                progress(len(vectors), len(rows))
        await swap_embeddings(self.db, spec, [r["id"] for r in rows], vectors)
        return len(rows)

    async def stored_embedding(self) -> EmbeddingSpec | None:
        await self.db.open()
        return await stored_embedding(self.db)

