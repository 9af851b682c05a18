"""The seed's bug, end to end: what session 1 settled, session 2 (a new thread of the same project) uses instead of
asking again; another project does not see it.

Each case runs in both graphs (chat: memory injected; code: the agent recalls it) with the offline agent and with
a scripted LLM agent that behaves like the models that caused the bug: it asks "Which backend framework should I
use?" unless the fact is somewhere in what it was shown. Extraction is the offline extractor throughout, so the
facts reach session 2 only through z0-memory: never through the thread (session 2 is a new thread).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from fakes import Call, ScriptedChatModel, configured, memory_with, thread, tool_call

from z0_memory.config import Context
from z0_memory.graphs.chat import builder as chat_builder
from z0_memory.graphs.code import builder as code_builder
from z0_memory.prompts import OFFLINE_NOTE

pytestmark = pytest.mark.asyncio(loop_scope="session")

SESSION_1 = ["For the backend we'll use Hono, not Express", "We'll use Supabase Postgres as the database"]
WORK = "Write the users API endpoint and its database schema"
QUESTIONS = {"Hono": "Which backend framework should I use?", "Supabase": "Which database should I use?"}
OFFLINE_ASKS = "Project memory has nothing settled on this yet"


def asking_agent(call: Call) -> AIMessage | str:
    """A model that asks about every decision it cannot see in its prompt.

    Statements of decisions get "Noted."; a work request first recalls memory when it has the tool (as the code
    prompt tells it to), then answers only if both decisions are in its context, else asks about the missing ones.
    """
    if call.request != WORK:
        return "Noted."
    if call.tools and not call.tool_results():
        return AIMessage(content="", tool_calls=[tool_call("recall_memory", query=call.request)])
    context = call.text.replace(call.request, "")
    missing = [question for fact, question in QUESTIONS.items() if fact not in context]
    if missing:
        return " ".join(missing)
    return ("Here is the users endpoint as a Hono route (app.get('/users')), backed by a `users` table in "
            "Supabase Postgres with id uuid primary key, email text unique, created_at timestamptz.")


def compiled(memory, mode: str, project: str = "acme"):
    """A graph for one project: its store and checkpointer are bound to that project's scope."""
    builder = chat_builder if mode == "chat" else code_builder
    return builder.compile(store=memory.store(project), checkpointer=memory.checkpointer(project))


async def run_sessions(memory, mode: str, rules_root: Path) -> tuple[str, str]:
    """Session 1 (thread A, project acme), then session 2 in a new thread of acme and one of project other."""
    memory = configured(memory, rules_root=str(rules_root))  # the rules are the process's settings
    graph = compiled(memory, mode)
    acme = Context(project="acme", mode=mode)
    cfg_a = thread()
    for text in SESSION_1:
        await graph.ainvoke({"messages": [HumanMessage(text)]}, cfg_a, context=acme)
    facts = {f.key.entity: f for f in await memory.scope("acme").facts.list()}
    assert facts["backend_framework"].value == "Hono" and facts["database"].value == "Supabase Postgres"
    assert facts["backend_framework"].provenance.thread_id == cfg_a["configurable"]["thread_id"]

    same = await graph.ainvoke({"messages": [HumanMessage(WORK)]}, thread(), context=acme)
    assert [m.content for m in same["messages"] if isinstance(m, HumanMessage)] == [WORK]  # a new thread
    other = await compiled(memory, mode, "other").ainvoke({"messages": [HumanMessage(WORK)]}, thread(),
                                context=acme.replace(project="other"))
    return same["messages"][-1].content, other["messages"][-1].content


@pytest.mark.parametrize("mode", ["chat", "code"])
async def test_offline_session_two_uses_settled_facts(memory, mode, tmp_path):
    answer, other = await run_sessions(memory, mode, tmp_path)
    assert answer.startswith(OFFLINE_NOTE)
    assert "Hono" in answer and "Supabase Postgres" in answer
    assert OFFLINE_ASKS not in answer and "?" not in answer
    # the reverse: project "other" never sees acme's decisions
    assert "Hono" not in other and "Supabase" not in other
    assert OFFLINE_ASKS in other  # both modes: nothing settled there, so the responder asks


@pytest.mark.parametrize("mode", ["chat", "code"])
async def test_llm_agent_session_two_uses_settled_facts_and_does_not_ask(memory, mode, tmp_path):
    agent = ScriptedChatModel(asking_agent)
    async with memory_with(memory, agent=agent) as mem:
        answer, other = await run_sessions(mem, mode, tmp_path)
    assert "Hono" in answer and "Supabase Postgres" in answer
    assert "?" not in answer and not any(q in answer for q in QUESTIONS.values())
    work_calls = [c for c in agent.calls if c.request == WORK]
    same_calls, other_calls = work_calls[: len(work_calls) // 2], work_calls[len(work_calls) // 2:]
    for call in same_calls:  # session 1's turns never reach session 2's prompt: the facts came from memory
        assert not any(text in m.content for m in call.messages if isinstance(m, HumanMessage) for text in SESSION_1)
    assert "Hono" in same_calls[-1].text and "Supabase" in same_calls[-1].text
    # the reverse: in project "other" the same agent finds nothing and has to ask
    assert other == "Which backend framework should I use? Which database should I use?"
    assert "Hono" not in other_calls[-1].text and "Supabase" not in other_calls[-1].text
    if mode == "code":
        assert len(same_calls) == 2 and same_calls[-1].tool_results("recall_memory")
