"""The code graph on the real database: the agent's prompt is the rules, the current request and this turn's tool
exchanges only; its size stays flat over a 30-turn thread while turn 3 stays reachable through search_session;
recall_memory runs through the real ToolNode with the 5-round guard; the documented offline agent rule."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from fakes import Call, ScriptedChatModel, configured, memory_with, thread, tool_call

from z0_memory.config import Context
from z0_memory.graphs.code import builder
from z0_memory.nodes.agent import MAX_TOOL_ROUNDS, current_turn
from z0_memory.prompts import CODE_SYSTEM, OFFLINE_NOTE, RULES_HEADER
from z0_memory.rendering import BLOCK_OPEN
from z0_memory.schemas import Verdict
from z0_memory.tokens import count_message_tokens

pytestmark = pytest.mark.asyncio(loop_scope="session")

FLAKY = "Note for later: the flaky test is test_refund_rounding in the billing suite, it fails on Mondays"


@pytest.fixture
def rules_dir(tmp_path: Path) -> Path:
    (tmp_path / "AGENTS.md").write_text("Run the linters before every commit.\n")
    return tmp_path


@pytest.fixture
def ctx() -> Context:
    return Context(project="acme", mode="code")


@pytest.fixture
def compiled(rules_dir: Path):
    """Compiles the code graph on a memory reading the rules under ``rules_dir`` (and other process settings)."""
    def compile_graph(memory, **settings):
        memory = configured(memory, rules_root=str(rules_dir), **settings)
        return builder.compile(store=memory.store("acme"), checkpointer=memory.checkpointer("acme"))
    return compile_graph


async def say(graph, cfg, ctx: Context, text: str) -> dict:
    return await graph.ainvoke({"messages": [HumanMessage(text)]}, cfg, context=ctx)


def assert_only_this_turn(call: Call, request: str) -> None:
    """The prompt is [system (instructions + rules), the current request, this turn's tool calls and results]."""
    system, human, *rest = call.messages
    assert isinstance(system, SystemMessage) and system.content.startswith(CODE_SYSTEM)
    assert RULES_HEADER in system.content and "Run the linters before every commit." in system.content
    assert BLOCK_OPEN not in system.content  # nothing from memory is injected
    assert isinstance(human, HumanMessage) and human.content == request
    assert all(isinstance(m, AIMessage) and m.tool_calls or isinstance(m, ToolMessage) for m in rest)


def session_agent(call: Call) -> AIMessage | str:
    """A scripted coding model: it looks back with search_session only when the request points back."""
    found = call.tool_results("search_session")
    if found:
        line = next(ln for ln in found[0].splitlines() if ln.startswith("turn "))
        return f"You told me at {line}"
    if "earlier" in call.request:
        return AIMessage(content="", tool_calls=[tool_call("search_session", query="flaky test")])
    return f"Done: {call.request[:20]}"


async def test_prompt_is_rules_request_and_this_turns_tools_only(memory, ctx, compiled):
    await memory.scope("acme").facts.put("acme:stack:backend_framework", "Hono")

    def agent_policy(call: Call) -> AIMessage | str:
        if not call.tool_results():
            return AIMessage(content="", tool_calls=[tool_call("recall_memory", query="which backend framework?")])
        return "Using Hono, as settled."

    agent = ScriptedChatModel(agent_policy)
    async with memory_with(memory, agent=agent) as mem:
        graph, cfg = compiled(mem), thread()
        await say(graph, cfg, ctx, "Set up the HTTP server skeleton")
        out = await say(graph, cfg, ctx, "Now add a health endpoint")
    assert len(agent.calls) == 4
    for call, request in zip(agent.calls, ["Set up the HTTP server skeleton"] * 2 + ["Now add a health endpoint"] * 2,
                             strict=True):
        assert_only_this_turn(call, request)
    first, second = agent.calls[2:]
    assert len(first.messages) == 2 and "Hono" not in first.text  # the agent decides; memory is not pushed
    assert [type(m) for m in second.messages] == [SystemMessage, HumanMessage, AIMessage, ToolMessage]
    assert "Hono" in second.tool_results("recall_memory")[0]
    assert "Set up the HTTP server skeleton" not in first.text + second.text  # the earlier turn is not there
    assert first.tools == ["recall_memory", "search_session"]
    assert out["messages"][-1].content == "Using Hono, as settled."
    assert len(out["messages"]) == 8  # the checkpointed thread still holds both turns


async def test_thirty_turns_prompt_stays_flat_and_turn_three_is_reachable(memory, ctx, compiled):
    agent = ScriptedChatModel(session_agent)
    requests = [f"Turn {i}: rename the helper v{i} in module m{i} to a clearer name" for i in range(1, 30)]
    requests[2] = FLAKY
    sizes: list[int] = []
    async with memory_with(memory, agent=agent) as mem:
        graph, cfg = compiled(mem), thread()
        for text in requests:
            out = await say(graph, cfg, ctx, text)
            sizes.append(out["prompt_tokens"])
        out = await say(graph, cfg, ctx, "Which test did I say was flaky earlier?")
    answer = out["messages"][-1].content
    assert answer.startswith("You told me at turn 3 (user):") and "test_refund_rounding" in answer

    plain = [s for i, s in enumerate(sizes) if i != 2]  # turn 3's request is longer than the others
    assert max(plain) - min(plain) <= 3, sizes  # flat: request-length noise only, no growth with the thread
    assert sizes[-1] <= sizes[3] + 3
    calls = agent.calls
    assert len(calls) == 31 and all(len(c.messages) == 2 for c in calls[:29])
    recorded = [count_message_tokens(c.messages) for c in calls[:29]]
    assert recorded == sizes  # state['prompt_tokens'] is what the model was actually sent
    assert_only_this_turn(calls[29], "Which test did I say was flaky earlier?")
    assert_only_this_turn(calls[30], "Which test did I say was flaky earlier?")
    assert count_message_tokens(calls[29].messages) <= max(plain) + 3
    assert FLAKY not in calls[29].text and "test_refund_rounding" in calls[30].tool_results()[0]
    thread_tokens = count_message_tokens(out["messages"])  # ~1,100 tokens of thread vs ~150 per prompt
    assert thread_tokens > 5 * max(sizes)  # the thread grew well past what any prompt carried
    assert len(out["messages"]) == 29 * 2 + 4


async def test_recall_memory_through_the_tool_node_caps_at_five_rounds(memory, ctx, compiled):
    judge = ScriptedChatModel(Verdict(sufficient=False, missing="the date", reason="nothing dated",
                                      next_query="greyhound adoption", next_strategy="keyword"))
    question = "When did Priscilla adopt her second greyhound?"

    def agent_policy(call: Call) -> AIMessage | str:
        if not call.tool_results():
            return AIMessage(content="", tool_calls=[tool_call("recall_memory", query=question)])
        return "Memory does not say; when was it?"

    agent = ScriptedChatModel(agent_policy)
    async with memory_with(memory, agent=agent, judge=judge) as mem:
        out = await say(compiled(mem), thread(), ctx, "Remind me about Priscilla's dogs")
    (tool_message,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert tool_message.name == "recall_memory" and tool_message.content.startswith(BLOCK_OPEN)
    assert "Memory search: 5 round(s), stopped: max_rounds, judge: insufficient" in tool_message.content
    assert len(judge.calls) == 5 and "Round 5 of at most 5" in judge.calls[-1].text
    assert question in judge.calls[0].text
    assert agent.calls[-1].tool_results("recall_memory") == [tool_message.content]


async def test_agent_stops_calling_tools_after_its_round_limit(memory, ctx, compiled):
    def always_tools(call: Call) -> AIMessage:
        query = f"search attempt {len(call.messages)}"
        return AIMessage(content="still looking", tool_calls=[tool_call("search_session", query=query)])

    agent = ScriptedChatModel(always_tools)
    async with memory_with(memory, agent=agent) as mem:
        out = await say(compiled(mem), thread(), ctx, "Find everything about the parser")
    tool_rounds = [m for m in out["messages"] if isinstance(m, AIMessage) and m.tool_calls]
    assert len(tool_rounds) == MAX_TOOL_ROUNDS
    assert [c.tools for c in agent.calls] == [["recall_memory", "search_session"]] * MAX_TOOL_ROUNDS + [None]
    final = out["messages"][-1]
    assert isinstance(final, AIMessage) and not final.tool_calls and final.content == "still looking"


async def test_offline_agent_follows_its_documented_rule(memory, ctx, compiled):
    await memory.scope("acme").facts.put("acme:stack:backend_framework", "Hono")
    graph, cfg = compiled(memory), thread()

    out = await say(graph, cfg, ctx, "thanks")  # rule 1: small talk calls no tool
    assert not any(isinstance(m, ToolMessage) for m in out["messages"])
    assert out["messages"][-1].content.startswith(OFFLINE_NOTE)

    out = await say(graph, cfg, ctx, FLAKY)  # rule 1: a request recalls memory, nothing else
    turn = current_turn(out["messages"])
    assert len(turn) == 4 and turn[0].content == FLAKY
    assert [c["name"] for c in turn[1].tool_calls] == ["recall_memory"]
    assert turn[1].tool_calls[0]["args"] == {"query": FLAKY}

    out = await say(graph, cfg, ctx, "Which backend framework did we pick? Also the flaky test I mentioned earlier")
    turn = current_turn(out["messages"])  # rule 1: pointing back adds search_session
    assert [c["name"] for c in turn[1].tool_calls] == ["recall_memory", "search_session"]
    answer = turn[-1].content  # rule 2: with the results in, the offline responder answers and cites them
    assert len([m for m in turn if isinstance(m, ToolMessage)]) == 2
    assert answer.startswith(OFFLINE_NOTE) and "offline responder" in answer
    assert "From earlier in this session:" in answer and "test_refund_rounding" in answer
    assert "Settled in project memory" in answer and "Hono" in answer  # from the recall_memory artifact
    assert "Following the project rules from AGENTS.md." in answer
    assert out["prompt_tokens"] > 0


async def test_a_failing_model_degrades_to_the_offline_agent(memory, ctx, compiled):
    await memory.scope("acme").facts.put("acme:stack:backend_framework", "Hono")
    agent = ScriptedChatModel(RuntimeError("HTTP 503 from the provider"))
    async with memory_with(memory, agent=agent) as mem:
        out = await say(compiled(mem, model_retries=0), thread(), ctx, "Which backend framework do we use?")
    final = out["messages"][-1]
    assert [m.name for m in out["messages"] if isinstance(m, ToolMessage)] == ["recall_memory"]  # rule 1 ran
    assert isinstance(final, AIMessage) and not final.tool_calls
    assert OFFLINE_NOTE in final.content and "Hono" in final.content
    assert "The model failed" in final.content and "HTTP 503" in final.content
    assert "tool_calls=" not in final.content and "additional_kwargs" not in final.content
