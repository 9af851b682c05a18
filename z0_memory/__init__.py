"""z0-memory: layered, self-correcting memory for LangGraph agents.

Everything a user needs is importable from here::

    from z0_memory import Context, Settings, Z0Memory, Z0MemoryMiddleware

    async with Z0Memory.from_env() as memory:
        acme = memory.scope("acme")
        await acme.add([("user", "For the backend we'll use Hono, not Express")])
        found = await acme.search("which web framework do we use?")

* ``Z0Memory`` (``from_url`` / ``from_env``), ``ProjectMemory`` (``memory.scope(project)``: ``add``, ``search``,
  ``get``, ``forget``, and the stores), ``Settings`` (the process's: database, keys, models, rules,
  timeouts),
  ``Context`` (a run's: project, user, mode, rounds, thresholds, model names);
* ``Z0MemoryMiddleware`` for ``langchain.agents.create_agent`` (needs ``langchain>=1``: the ``agents`` extra);
* ``retrieval_subgraph(State)`` (the retrieval loop as a checked subgraph node; ``RetrievalChannels`` is the state
  mixin its parent inherits), ``build_retrieval_graph``, ``extract`` (the post-turn extraction node), ``build_extraction_graph``;
* the tools ``recall_memory`` and ``search_session``;
* ``STATE_TYPES``: the models the graphs' channels hold, for one's own checkpointer's serializer
  (``JsonPlusSerializer(allowed_msgpack_modules=STATE_TYPES)``).

Names load on first use, so ``import z0_memory`` stays cheap and ``langchain`` stays optional.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Z0Memory": "z0_memory.memory",
    "ProjectMemory": "z0_memory.memory",
    "SearchResult": "z0_memory.memory",
    "Added": "z0_memory.memory",
    "Context": "z0_memory.config",
    "Settings": "z0_memory.settings",
    "Z0MemoryMiddleware": "z0_memory.middleware",
    "build_retrieval_graph": "z0_memory.graphs.retrieval",
    "retrieval_subgraph": "z0_memory.graphs.retrieval",
    "build_extraction_graph": "z0_memory.graphs.extraction",
    "extract": "z0_memory.nodes.extraction",
    "RetrievalChannels": "z0_memory.state",
    "STATE_TYPES": "z0_memory.state",
    "recall_memory": "z0_memory.tools",
    "search_session": "z0_memory.session_tools",
    "Z0Error": "z0_memory.errors",
    "ConfigurationError": "z0_memory.errors",
}

__all__ = [
    "Added",
    "ConfigurationError",
    "Context",
    "ProjectMemory",
    "RetrievalChannels",
    "STATE_TYPES",
    "SearchResult",
    "Settings",
    "Z0Error",
    "Z0Memory",
    "Z0MemoryMiddleware",
    "build_extraction_graph",
    "build_retrieval_graph",
    "extract",
    "recall_memory",
    "retrieval_subgraph",
    "search_session",
]

if TYPE_CHECKING:
    from z0_memory.config import Context
    from z0_memory.errors import ConfigurationError, Z0Error
    from z0_memory.graphs.extraction import build_extraction_graph
    from z0_memory.graphs.retrieval import build_retrieval_graph, retrieval_subgraph
    from z0_memory.memory import Added, ProjectMemory, SearchResult, Z0Memory
    from z0_memory.middleware import Z0MemoryMiddleware
    from z0_memory.nodes.extraction import extract
    from z0_memory.session_tools import search_session
    from z0_memory.settings import Settings
    from z0_memory.state import STATE_TYPES, RetrievalChannels
    from z0_memory.tools import recall_memory


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'z0_memory' has no attribute {name!r}")
    if name == "Z0MemoryMiddleware":
        try:
            import langchain.agents  # noqa: F401
        except ImportError as exc:
            raise ImportError(
                "Z0MemoryMiddleware needs LangChain 1.x: pip install \"z0-memory[agents]\" (or langchain>=1)") from exc
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
