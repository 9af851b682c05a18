"""Code mode: the agent that reaches memory and its own thread only through tools.

Its prompt is the rules, the current request, and this turn's tool exchanges: never the thread's earlier turns, so
the prompt stays flat however long the thread grows. With a model, the model decides the tool calls. Offline, the
documented rule is:

1. on a new request (no tool result yet this turn): call ``recall_memory(request)`` unless the request is only a
   greeting or thanks; also call ``search_session(request)`` when the request points back into the conversation
   ("earlier", "before", "you said", "we discussed", "上次", "之前", "刚才", ...);
2. once tool results are in: answer with the offline responder, citing what the tools returned;
3. a turn never makes more than ``MAX_TOOL_ROUNDS`` rounds of tool calls; after that the agent answers.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Sequence

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.tool import ToolCall, tool_call
from langgraph.runtime import Runtime

from z0_memory.config import Context
from z0_memory.llm import ModelCallError, invoke_messages
from z0_memory.nodes.chat import QUESTION_MAX_CHARS
from z0_memory.nodes.common import scope_of
from z0_memory.nodes.respond import offline_answer, system_prompt
from z0_memory.prompts import CODE_SYSTEM
from z0_memory.rendering import escape
from z0_memory.schemas import Hit
from z0_memory.session_tools import search_session
from z0_memory.state import CodeState
from z0_memory.tokens import count_message_tokens, message_text
from z0_memory.tools import recall_memory

TOOLS = [recall_memory, search_session]
MAX_TOOL_ROUNDS = 4
_SMALL_TALK = re.compile(r"^\s*(hi|hello|hey|thanks|thank you|ok|okay|bye|你好|谢谢|好的)\W*$", re.I)
_LOOKS_BACK = re.compile(
    r"\b(earlier|before|previous(ly)?|you said|i said|we said|we discussed|mentioned|above|again|remind me)\b"
    r"|上次|之前|刚才|前面|先前|提到",
    re.I,
)


def current_turn(messages: Sequence[AnyMessage]) -> list[AnyMessage]:
    """The latest user message and everything after it (this turn's tool calls and results)."""
    start = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=None)
    return list(messages[start:]) if start is not None else []


def _tool_call(name: str, query: str) -> ToolCall:
    return tool_call(name=name, args={"query": query}, id=f"call_{uuid.uuid4().hex[:12]}")


def offline_step(turn: Sequence[AnyMessage], rules_sources: Sequence[str]) -> AIMessage:
    """One step of the documented offline agent rule."""
    request = message_text(turn[0]).strip() if turn else ""
    results = [m for m in turn if isinstance(m, ToolMessage)]
    if not results and request and not _SMALL_TALK.match(request):
        query = request[:QUESTION_MAX_CHARS]  # a pasted file is a request, not a query: search by its beginning
        calls = [_tool_call("recall_memory", query)]
        if _LOOKS_BACK.search(query):
            calls.append(_tool_call("search_session", query))
        return AIMessage(content="", tool_calls=calls)
    hits = [h for m in results if m.name == "recall_memory" for h in (m.artifact or []) if isinstance(h, Hit)]
    session_lines = [line for m in results if m.name == "search_session"
                     for line in message_text(m).splitlines() if line.startswith("turn ")]
    return AIMessage(content=offline_answer(request, hits, rules_sources, session_lines))


async def agent(state: CodeState, runtime: Runtime[Context]) -> CodeState:
    """Decide the next step of this turn: call tools, or answer."""
    ctx, memory, _ = scope_of(runtime)
    turn = current_turn(state.get("messages", []))
    prompt = [SystemMessage(system_prompt(CODE_SYSTEM, state.get("rules"))), *turn]
    tool_rounds = sum(1 for m in turn if isinstance(m, AIMessage) and m.tool_calls)
    model = memory.providers.chat("agent", ctx)
    if model is None:
        reply = offline_step(turn, state.get("rules_sources") or ())
    else:
        try:
            reply = await invoke_messages(model, prompt, memory.settings, what="code agent",
                                          tools=TOOLS if tool_rounds < MAX_TOOL_ROUNDS else None)
        except ModelCallError as exc:  # the documented offline rule takes this step (tools, then its answer)
            fallback = offline_step(turn, state.get("rules_sources") or ())
            note = f"(The model failed: {escape(str(exc))}; the offline agent took this step.)"
            reply = fallback.model_copy(update={"content": f"{message_text(fallback)}\n{note}".lstrip()})
    if tool_rounds >= MAX_TOOL_ROUNDS and reply.tool_calls:
        reply = AIMessage(content=message_text(reply) or "I stopped searching after several tool rounds.")
    # off the loop: the first count loads the tokenizer's files (a blocking call langgraph dev refuses)
    return {"messages": [reply], "prompt_tokens": await asyncio.to_thread(count_message_tokens, prompt)}


def route_after_agent(state: CodeState) -> str:
    last = state["messages"][-1]
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else "extract"
