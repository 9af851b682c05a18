"""Answering the user: the chat responder (memory injected) and the offline responder both graphs fall back to.

The offline responder is deterministic and says so: it lists the current memories relevant to the request (the
settled facts it builds on, cited [n]), mentions superseded ones only as history, names the rules it follows, and
asks only about what memory does not cover. What it quotes (memories, earlier turns) is inside marked ``<memory>``
blocks, like everywhere else recalled text appears; its answer is stored in the thread, and the history a model is
given later (``trimmed_history``) drops those blocks, so recalled memory never comes back as something the
assistant said.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    SystemMessage,
    trim_messages,
)
from langgraph.runtime import Runtime
from z0_memory.nodes.common import scope_of

from z0_memory.config import Context
from z0_memory.llm import ModelCallError, invoke_messages
from z0_memory.prompts import CHAT_SYSTEM, OFFLINE_NOTE, RULES_HEADER
from z0_memory.rendering import BLOCK_OPEN, escape, memory_block, quoted_block, strip_memory_blocks
from z0_memory.schemas import Hit
from z0_memory.state import ChatState
from z0_memory.text import content_terms, stem
from z0_memory.tokens import count_message_tokens, message_text

INJECTED_MEMORIES = 8


def last_request(messages: Sequence[AnyMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return message_text(message).strip()
    return ""


def system_prompt(base: str, rules: str | None, memories: Sequence[Hit] | None = None) -> str:
    parts = [base]
    if rules:
        parts.append(f"{RULES_HEADER}\n{rules}")
    if memories is not None:
        parts.append(memory_block(list(memories), limit=INJECTED_MEMORIES))
    return "\n\n".join(parts)


def _relevant(request: str, hit: Hit) -> bool:
    terms = {stem(t) for t in content_terms(request)}
    return hit.key is not None or bool(terms & {stem(t) for t in content_terms(hit.content)})


def offline_answer(request: str, memories: Sequence[Hit], rules_sources: Sequence[str] = (),
                   session_lines: Sequence[str] = ()) -> str:
    current = [h for h in memories if not h.superseded and _relevant(request, h)][:5]
    history = [h for h in memories if h.superseded and _relevant(request, h)][:2]
    lines = [OFFLINE_NOTE]
    if current:
        lines.append("Settled in project memory, so I build on it instead of asking again: "
                     + _cites(1, len(current)) + ".")
    if history:
        lines.append("Earlier, now superseded (history only): " + _cites(len(current) + 1, len(history)) + ".")
    if current or history:  # the memories themselves, numbered as cited, only inside the marked block
        lines.append(memory_block(current + history))
    if session_lines:
        lines.append("From earlier in this session:")
        lines.append(quoted_block(session_lines))
    if not current and not session_lines:
        lines.append("Project memory has nothing settled on this yet; tell me what you decide and I will remember it.")
    if rules_sources:
        lines.append(f"Following the project rules from {', '.join(rules_sources)}.")
    return "\n".join(lines)


def _cites(first: int, n: int) -> str:
    return ", ".join(f"[{i}]" for i in range(first, first + n))


def without_memory_blocks(message: AnyMessage) -> AnyMessage:
    """An assistant message as history: the memory blocks it quoted (offline answers) taken out.

    What the user typed is theirs and stays as it is; recalled memory reaches a model only through this turn's
    block in the system prompt.
    """
    if not isinstance(message, AIMessage):
        return message
    text = message_text(message)
    if BLOCK_OPEN not in text:
        return message
    return message.model_copy(update={"content": strip_memory_blocks(text)})


def trimmed_history(messages: Sequence[AnyMessage], budget: int) -> list[AnyMessage]:
    """The thread's messages without old memory blocks, oldest dropped first, to fit ``budget`` tokens (starting on
    a user message)."""
    return trim_messages([without_memory_blocks(m) for m in messages], max_tokens=budget,
                         token_counter=count_message_tokens, strategy="last", start_on="human", include_system=False,
                         allow_partial=False)


async def respond(state: ChatState, runtime: Runtime[Context]) -> ChatState:
    """Chat mode: rules + injected memory block + the thread's recent history -> the model (or offline) answer."""
    ctx, memory, _ = scope_of(runtime)
    memories: list[Hit] = state.get("memories") or []
    model = memory.providers.chat("agent", ctx)
    request = last_request(state.get("messages", []))
    if model is None:
        return {"messages": [AIMessage(offline_answer(request, memories, state.get("rules_sources") or ()))]}
    prompt = [SystemMessage(system_prompt(CHAT_SYSTEM, state.get("rules"), memories)),
              *trimmed_history(state.get("messages", []), int(ctx.history_tokens))]
    try:
        reply = await invoke_messages(model, prompt, memory.settings, what="chat responder")
    except ModelCallError as exc:
        text = offline_answer(request, memories, state.get("rules_sources") or ())
        reply = AIMessage(f"{text}\n(The model failed: {escape(str(exc))})")
    return {"messages": [reply]}
