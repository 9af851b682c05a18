"""``z0-memory demo``: the seed's bug, fixed, in two sessions on the embedded defaults (no API key).

Session 1 (one thread, chat mode) settles decisions and floats a hedge; the post-turn extraction keeps the
decisions and holds the hedge as pending. Session 2 is a NEW thread in code mode: the agent asks for nothing it
already knows, because it recalls the settled facts through its memory tool. Then the memory table, the pending
list and one retrieval trace, round by round. The demo works in its own project (``demo`` unless ``--project``),
which it empties first so every run starts the same way.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from z0_memory.memory import Z0Memory
from z0_memory.schemas import WriteOutcome

if TYPE_CHECKING:
    from z0_memory.cli import CliOptions

DEMO_RULES = """# Project rules
- Write TypeScript in strict mode.
- Every API handler validates its input with zod.
"""

SESSION_1 = [
    "Let's settle the stack. For the backend we'll use Hono, not Express, because it runs on edge runtimes.",
    "We'll use Supabase Postgres as the database.",
    "Maybe we could try Redis for caching later?",
]
SESSION_2 = "Set up the API server and the database connection for the new orders service."
TRACE_QUESTION = "Why did we choose Hono over Express for the backend?"


def _turn_panel(who: str, text: str, style: str) -> Panel:
    return Panel(Text(text), title=who, title_align="left", border_style=style)


def _short(text: str, limit: int = 110) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _extraction_line(outcomes: Sequence[WriteOutcome]) -> str:
    if not outcomes:
        return "[dim]memory: nothing worth keeping[/]"
    parts = [f"{o.action} → {o.target} ({o.content})" for o in outcomes]
    return "[dim]memory: " + "; ".join(parts) + "[/]"


async def run_demo(options: CliOptions, console: Console) -> None:
    """``options``: the CLI's global options (``cli.CliOptions``)."""
    start = time.perf_counter()
    rules_dir = Path(tempfile.mkdtemp(prefix="z0-demo-rules-"))
    (rules_dir / "AGENTS.md").write_text(DEMO_RULES, encoding="utf-8")
    base = options.context(project=options.options.get("project", "demo"))
    async with Z0Memory(options.settings(rules_root=str(rules_dir))) as memory:
        from z0_memory.graphs.chat import builder as chat_builder
        from z0_memory.graphs.code import builder as code_builder
        from z0_memory.graphs.retrieval import builder as retrieval_builder

        project = memory.scope(base.project, base.user_id)
        await project.forget_everything(reread=True)
        console.print(f"[bold]z0-memory demo[/] — project [cyan]{project.scope.project}[/], "
                      f"{memory.db.description}, embeddings {memory.providers.embedding_name}, models: offline")
        store, saver = memory.store(base.project, base.user_id), memory.checkpointer(base.project, base.user_id)
        chat = chat_builder.compile(store=store, checkpointer=saver)
        code = code_builder.compile(store=store, checkpointer=saver)

        console.rule("Session 1 — a chat thread settles the stack")
        thread_1 = {"configurable": {"thread_id": f"demo-session-1-{time.time_ns()}"}}
        for text in SESSION_1:
            console.print(_turn_panel("user", text, "blue"))
            out = await chat.ainvoke({"messages": [("user", text)]}, thread_1, context=base.replace(mode="chat"))
            console.print(_extraction_line(out.get("extraction", [])))

        console.rule("Session 2 — a new thread, code mode: nothing injected, the agent recalls")
        thread_2 = {"configurable": {"thread_id": f"demo-session-2-{time.time_ns()}"}}
        console.print(_turn_panel("user", SESSION_2, "blue"))
        out = await code.ainvoke({"messages": [("user", SESSION_2)]}, thread_2, context=base.replace(mode="code"))
        calls = [c["name"] for m in out["messages"] for c in getattr(m, "tool_calls", None) or []]
        console.print(f"[dim]agent tool calls: {', '.join(calls) or 'none'}; prompt {out['prompt_tokens']} tokens[/]")
        console.print(_turn_panel("agent", out["messages"][-1].content, "green"))

        console.rule("What the project remembers")
        facts = Table(title="KV facts (current)")
        for col in ("key", "value", "confidence", "why", "from"):
            facts.add_column(col)
        for f in await project.facts.list():
            facts.add_row(str(f.key), f.value, f"{f.provenance.confidence:.2f}", f.provenance.rationale or "",
                          f.provenance.extractor)
        console.print(facts)
        pending = Table(title="Pending (below the threshold, waiting for a confirmation)")
        for col in ("id", "candidate", "confidence", "expires"):
            pending.add_column(col)
        for item in await project.pending.list():
            pending.add_row(str(item.id), item.candidate.content, f"{item.candidate.confidence:.2f}",
                            item.expires_at.strftime("%Y-%m-%d"))
        console.print(pending)

        console.rule(f"One retrieval trace: {TRACE_QUESTION}")
        loop = retrieval_builder.compile(store=store)
        result = await loop.ainvoke({"question": TRACE_QUESTION}, context=base.replace(mode="code"))
        trace = Table()
        for col in ("round", "query", "strategies", "hits", "verdict", "why / next"):
            trace.add_column(col)
        for r in result["trace"]:
            verdict = "sufficient" if r.verdict else "insufficient"
            trace.add_row(Text(str(r.round)), Text(r.query), Text("+".join(r.strategies)), Text(str(len(r.hits))),
                          Text(verdict), Text(_short(r.reason) + "\n→ " + _short(r.next_action)))
        console.print(trace)
        if result["memories"]:
            console.print(f"best evidence: {result['memories'][0].content}")
    console.print(f"[dim]done in {time.perf_counter() - start:.1f} s[/]")
