"""``search_session``: the code-mode agent's way back into its own thread (layer 3).

In code mode the thread's earlier turns are not in the prompt; the agent calls this tool when it decides it needs
them. It scores every earlier user/assistant message of the thread by stemmed term overlap with the query (plus a
small bonus for recency) and returns the best turns with their turn numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.prebuilt import InjectedState

from z0_memory.rendering import escape, strip_memory_blocks
from z0_memory.text import content_terms, stem
from z0_memory.tokens import message_text

SESSION_RESULTS = 4
# Words that only say "look back" ("what did I mention earlier?"): they are not what the turn is about.
LOOK_BACK_WORDS = frozenset({"earlier", "before", "previous", "previously", "mention", "mentioned", "said", "say",
                             "told", "tell", "remind", "again", "之前", "上次", "刚才", "前面", "提到", "说过"})


def earlier_turns(messages: Sequence[AnyMessage]) -> list[tuple[int, str, str]]:
    """(turn number, role, text) of the messages before the current request; turn 1 is the first user message."""
    last_human = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    turns: list[tuple[int, str, str]] = []
    number = 0
    for message in messages[:last_human]:
        if isinstance(message, HumanMessage):
            number += 1
        if isinstance(message, HumanMessage | AIMessage):
            text = strip_memory_blocks(message_text(message))
            if text:
                turns.append((number, "user" if isinstance(message, HumanMessage) else "assistant", text))
    return turns


def search_turns(messages: Sequence[AnyMessage], query: str, k: int = SESSION_RESULTS) -> list[tuple[int, str, str]]:
    terms = {stem(t) for t in content_terms(query) if t not in LOOK_BACK_WORDS}
    turns = earlier_turns(messages)
    if not terms or not turns:
        return []
    last = max(n for n, _, _ in turns) or 1
    scored = []
    for number, role, text in turns:
        overlap = len(terms & {stem(t) for t in content_terms(text)})
        if overlap:
            user_bonus = 0.5 if role == "user" else 0.0  # what the user said is what "I mentioned" refers to
            scored.append((overlap + user_bonus + 0.1 * number / last, number, role, text))
    scored.sort(key=lambda s: s[0], reverse=True)
    return [(n, r, t) for _, n, r, t in scored[:k]]


@tool
def search_session(query: str, messages: Annotated[list[AnyMessage], InjectedState("messages")]) -> str:
    """Search the earlier turns of THIS conversation (what the user or you said before in this session).

    Use it when the request refers to something said earlier in the conversation.
    """
    found = search_turns(messages, query)
    if not found:
        return "No earlier turn of this session matches."
    lines = [f"turn {n} ({role}): {escape(text[:500])}" for n, role, text in found]
    return "<session>\n" + "\n".join(lines) + "\n</session>"
