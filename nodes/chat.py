"""Chat-mode glue: the user's latest message becomes the retrieval loop's question."""

from __future__ import annotations

from langgraph.runtime import Runtime

from z0_memory.config import DEFAULT_ROUNDS, Context
from z0_memory.nodes.common import context_of
from z0_memory.nodes.respond import last_request
from z0_memory.state import ChatState

QUESTION_MAX_CHARS = 4000


async def take_question(state: ChatState, runtime: Runtime[Context]) -> ChatState:
    """Set the retrieval question to the user's turn; chat mode caps the loop at its own rounds (default 3)."""
    ctx = context_of(runtime)
    question = last_request(state.get("messages", []))
    if not question:
        raise ValueError("the chat graph needs a non-empty user message in 'messages'")
    # a pasted log or file is a message, not a search query: the loop searches by its beginning (the offline router,
    # judge and rewriter are linear in the question, and a 1 MB question would cost each round seconds)
    question = question[:QUESTION_MAX_CHARS]
    rounds = ctx.max_rounds if ctx.mode == "chat" else DEFAULT_ROUNDS["chat"]
    return {"question": question, "max_rounds": rounds, "include_history": False}
