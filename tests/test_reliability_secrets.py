"""Secrets said in a turn are redacted before anything is stored.

API keys, tokens and passwords are said in chat turns (offline extractor), handed back by an LLM extractor that
copies them into content, value and rationale, and left in a turn whose extraction fails (the retry queue). Then
every table long-term memory writes is read directly (z0_facts with its rationale/statement/provenance columns,
z0_memories with its metadata, z0_pending with its candidate json, z0_extraction_queue with its messages and error)
and no secret string appears anywhere.

By design the checkpointer's copy of the conversation is NOT redacted: it is the session layer, the user's own
thread, kept as said so the conversation can continue and be searched (``search_session``). Only what is distilled
out of it into long-term memory, which other sessions read, is redacted. The last test documents that boundary.
"""

from __future__ import annotations

import json
import os

import pytest
from fakes import ScriptedChatModel
from langchain_core.messages import HumanMessage
from reliability_support import fast_context, fast_database, fast_memory, fast_owner, record  # noqa: F401

from z0_memory.graphs.chat import builder as chat_builder
from z0_memory.graphs.extraction import builder as extraction_builder
from z0_memory.memory import Z0Memory
from z0_memory.nodes.extraction import ExtractionResult
from z0_memory.schemas import Candidate

pytestmark = pytest.mark.asyncio(loop_scope="session")

SECRETS = {
    "openai": "sk-proj-Q8f3kLm2Zx9Tt4Rr7Yy1Uu6Ii0Oo5Pp",
    "github": "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "slack": "xoxb-123456789012-abcdefghijkl",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "password": "hunter2-Very-Secret",
    "url_password": "s3cr3tPassw0rd",
    "chinese_password": "密钥值Abc12345",
}
TURNS = [
    f"We decided the CI uses the OpenAI key {SECRETS['openai']} for the eval job.",
    f"Remember: the GitHub token is {SECRETS['github']} and we use GitHub Actions for CI.",
    f"We chose AWS; the access key id is {SECRETS['aws']}.",
    f"The Slack bot token: {SECRETS['slack']} — we decided to post deploys to #ops.",
    f"Use Authorization: Bearer {SECRETS['jwt']} for the staging API.",
    f"The admin password is {SECRETS['password']}, we decided to rotate it monthly.",
    f"We decided to use Postgres at postgresql://app:{SECRETS['url_password']}@db.internal:5432/app",
    f"我们决定用 Redis 做缓存，密码是 {SECRETS['chinese_password']}",
]


async def dump_everything(memory) -> str:
    async with memory.db.connection() as conn:
        tables = {}
        for table in ("z0_facts", "z0_memories", "z0_pending", "z0_extraction_queue"):
            rows = await (await conn.execute(f"SELECT * FROM {table}")).fetchall()
            tables[table] = [{k: v for k, v in r.items() if k != "embedding"} for r in rows]
    return json.dumps(tables, default=str, ensure_ascii=False)


def leaks(dumped: str) -> list[str]:
    return [name for name, secret in SECRETS.items() if secret in dumped]


async def test_secrets_in_turns_never_reach_any_stored_column(fast_memory, fast_database, tmp_path):
    ctx = fast_context(fast_database, mode="chat", rules_root=str(tmp_path))
    graph = chat_builder.compile(store=fast_memory.store(), checkpointer=fast_memory.checkpointer())
    cfg = {"configurable": {"thread_id": f"secrets-{os.urandom(6).hex()}"}}
    for turn in TURNS:  # the offline extractor
        await graph.ainvoke({"messages": [HumanMessage(turn)]}, cfg, context=ctx)

    copying = ExtractionResult(candidates=[  # an LLM extractor that copies every secret everywhere it can
        Candidate(kind="decision", key="acme:tooling:ci_key", value=SECRETS["openai"], confidence=0.95,
                  content=f"CI uses {SECRETS['openai']}", rationale=f"token {SECRETS['github']}"),
        Candidate(kind="fact", content=f"The admin password is {SECRETS['password']} and AWS key {SECRETS['aws']}",
                  confidence=0.9, rationale=f"said with Bearer {SECRETS['jwt']}"),
        Candidate(kind="decision", key="acme:database:primary", value="Postgres", confidence=0.9,
                  content=f"Postgres at postgresql://app:{SECRETS['url_password']}@db.internal/app",
                  rationale=f"密码是 {SECRETS['chinese_password']}"),
        Candidate(kind="preference", content=f"maybe post to Slack with {SECRETS['slack']}", confidence=0.3,
                  hedged=True, rationale=f"password: {SECRETS['password']}"),
    ])
    failing = ScriptedChatModel([RuntimeError(f"HTTP 401: invalid key {SECRETS['openai']}")])
    for extractor, queued in ((ScriptedChatModel([copying]), False), (failing, True)):
        mctx = fast_context(fast_database, mode="chat", rules_root=str(tmp_path), model_retries=0)
        async with Z0Memory(mctx, chat_models={"extractor": extractor}) as memory:
            out = await extraction_builder.compile(store=memory.store()).ainvoke(
                {"messages": [HumanMessage(" ".join(TURNS))]}, context=mctx)
        assert any(o["action"] == "queued_for_retry" for o in out["extraction"]) == queued

    dumped = await dump_everything(fast_memory)
    assert leaks(dumped) == []
    assert dumped.count("[REDACTED]") >= len(SECRETS)  # the rest of each memory was kept
    assert "Postgres" in dumped and "Redis" in dumped
    record("secrets.redaction", operations=len(TURNS) + 2, bad_inputs=len(SECRETS), lost=0)


async def test_the_checkpointer_keeps_the_users_own_thread_as_said(fast_memory, fast_database, tmp_path):
    """The session layer is the user's own thread: kept verbatim (documented), unlike long-term memory."""
    ctx = fast_context(fast_database, mode="chat", rules_root=str(tmp_path))
    graph = chat_builder.compile(store=fast_memory.store(), checkpointer=fast_memory.checkpointer())
    cfg = {"configurable": {"thread_id": f"secrets-{os.urandom(6).hex()}"}}
    await graph.ainvoke({"messages": [HumanMessage(TURNS[5])]}, cfg, context=ctx)
    state = await graph.aget_state(cfg)
    assert SECRETS["password"] in state.values["messages"][0].content  # the thread, as the user said it
    assert leaks(await dump_everything(fast_memory)) == []  # long-term memory: redacted


@pytest.mark.parametrize("prose", ["the token budget is 3000", "our secret sauce is caching", "keep the api key rotation weekly",
                                   "the password policy needs twelve characters"])
async def test_prose_about_secrets_is_not_redacted(prose):
    """Words like token or secret followed by ordinary prose are not credentials (only assigned values are)."""
    from z0_memory.redaction import redact_secrets

    assert redact_secrets(prose) == prose
