"""The memory inspector: an ASGI app (Starlette, server-rendered Jinja2 templates, no CDN) over one project's memory.

    z0-memory ui --project acme                       # http://127.0.0.1:8765/
    app = create_app(memory, projects=["acme"])       # or mount it in your own Starlette/FastAPI app

Every page is scoped to one project (``/p/{project}/...``) of the projects the app was given, and reads and writes
only through that project's scoped stores (``memory.scope(project)``), under the database's row-level security: a
URL naming any other project is a 404, whatever else it asks for. Output is escaped everywhere (memory text is user
data); every POST needs the CSRF field; see :mod:`z0_memory.ui.security` for the token and the Host check.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import jinja2
from starlette.applications import Starlette
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from z0_memory.config import Context
from z0_memory.settings import Settings
from z0_memory.errors import InvalidInputError, InvalidKeyError, Z0Error
from z0_memory.memory import ProjectMemory, Z0Memory
from z0_memory.schemas import Hit, MemoryKey, MemoryRecord, Provenance, validate_segment
from z0_memory.ui import security, views

HERE = Path(__file__).resolve().parent
EDITOR = "human/ui"
SEARCH_K = 50
LIST_LIMIT = 200
KINDS = ("fact", "decision", "preference", "context")
MAX_QUESTION_CHARS = 2000
CHART_TURNS = 10_000  # the chart counts at most this many turns of its period


class MemorySource:
    """Where the app's :class:`Z0Memory` comes from: one given (its owner opens and closes it), or one the app opens
    on the first request (so it works mounted, where a sub-app's lifespan never runs) and closes at shutdown."""

    def __init__(self, memory: Z0Memory | None = None, settings: Settings | None = None,
                 acquire: Callable[[], Awaitable[Z0Memory]] | None = None,
                 release: Callable[[], Awaitable[None]] | None = None) -> None:
        self._memory = memory
        self._settings = settings
        self._acquire, self._release = acquire, release
        self._owned = False
        self._lock = asyncio.Lock()

    async def get(self) -> Z0Memory:
        if self._memory is not None and self._memory.is_open:
            return self._memory
        async with self._lock:
            if self._memory is None or not self._memory.is_open:
                if self._acquire is not None:
                    self._memory = await self._acquire()
                else:
                    self._memory = self._memory or Z0Memory(self._settings)  # None: Settings.from_env()
                    await self._memory.open()
                self._owned = True
        return self._memory

    async def close(self) -> None:
        if self._owned and self._memory is not None:
            self._owned = False
            if self._release is not None:
                await self._release()
            else:
                await self._memory.close()


@dataclass
class UiSettings:
    projects: tuple[str, ...]
    user_id: str
    context: Context
    token: str | None
    check_host: bool
    source: MemorySource
    rules_root: str | None = None
    env: jinja2.Environment = field(init=False)

    def __post_init__(self) -> None:
        self.env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                                      trim_blocks=True, lstrip_blocks=True)
        self.env.filters["when"] = _when
        self.env.filters["num"] = lambda v, d=3: "" if v is None else f"{float(v):.{d}f}"


def _when(value: datetime | None) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if value else ""


class PageError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def _settings(request: Request) -> UiSettings:
    return request.scope["z0_ui"]


def _base(request: Request) -> str:
    return request.scope.get("root_path", "").rstrip("/")


class Page:
    """What a handler gets: the request, the project's stores (for project pages) and a renderer."""

    def __init__(self, request: Request, settings: UiSettings, memory: Z0Memory, csrf: str,
                 project: str | None) -> None:
        self.request, self.settings, self.memory, self.csrf, self.project = request, settings, memory, csrf, project

    @property
    def pm(self) -> ProjectMemory:
        assert self.project is not None
        return self.memory.scope(self.project, self.settings.user_id)

    def url(self, path: str = "", **query: Any) -> str:
        prefix = f"/p/{self.project}" if self.project is not None else ""
        q = {k: v for k, v in query.items() if v not in (None, "")}
        return f"{_base(self.request)}{prefix}{path}" + (f"?{urlencode(q)}" if q else "")

    def render(self, template: str, status: int = 200, **values: Any) -> HTMLResponse:
        body = self.settings.env.get_template(template).render(
            page=self, project=self.project, projects=self.settings.projects, csrf=self.csrf,
            csrf_field=security.CSRF_FIELD, static=f"{_base(self.request)}/static", root=f"{_base(self.request)}/",
            nav=self.request.url.path, message=self.request.query_params.get("done", ""), **values)
        return HTMLResponse(body, status_code=status)

    def redirect(self, path: str, **query: Any) -> RedirectResponse:
        return RedirectResponse(self.url(path, **query), status_code=303)


Handler = Callable[[Page], Awaitable[Response]]


def page(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """The guards every route shares: token, Host, project, CSRF (POST); then the handler's page."""

    async def endpoint(request: Request) -> Response:
        settings = _settings(request)
        if settings.check_host and not security.host_allowed(request):
            return PlainTextResponse("this page answers on the loopback address only", status_code=421)
        if settings.token:
            if not security.same(security.presented_token(request), settings.token):
                return PlainTextResponse("a token is required: open the page with ?token=<your token>", 401)
            if request.query_params.get("token"):  # keep it in a cookie, out of the URL and the history
                rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
                clean = request.url.path + (f"?{urlencode(rest)}" if rest else "")
                response = RedirectResponse(clean, status_code=303)
                response.set_cookie(security.TOKEN_COOKIE, settings.token, httponly=True, samesite="strict",
                                    path="/")
                return response
        csrf = request.cookies.get(security.CSRF_COOKIE) or security.new_csrf()
        project = request.path_params.get("project")
        try:
            if project is not None and project not in settings.projects:
                raise PageError(404, f"project {project!r} is not served by this inspector")
            if request.method == "POST":
                form = await request.form()
                request.state.form = form
                if not (security.origin_ok(request) and security.same(form.get(security.CSRF_FIELD),
                                                                       request.cookies.get(security.CSRF_COOKIE))):
                    raise PageError(403, "the form's CSRF token is missing or wrong: reload the page and try again")
            memory = await settings.source.get()
            pg = Page(request, settings, memory, csrf, project)
            response = await handler(pg)
        except PageError as exc:
            response = _error_page(request, settings, csrf, project, exc.status, exc.message)
        except (InvalidKeyError, InvalidInputError, ValueError) as exc:
            response = _error_page(request, settings, csrf, project, 400, str(exc))
        except Z0Error as exc:  # the database is down, a model is misconfigured...: said on the page
            response = _error_page(request, settings, csrf, project, 503, str(exc))
        if request.cookies.get(security.CSRF_COOKIE) != csrf:
            response.set_cookie(security.CSRF_COOKIE, csrf, httponly=True, samesite="strict", path="/")
        response.headers.setdefault("Content-Security-Policy",
                                    "default-src 'self'; img-src 'self' data:; style-src 'self'; "
                                    "script-src 'self'; frame-ancestors 'none'; form-action 'self'")
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        response.headers.setdefault("Cache-Control", "no-store")
        return response

    endpoint.__name__ = handler.__name__
    return endpoint


def _error_page(request: Request, settings: UiSettings, csrf: str, project: str | None, status: int,
                message: str) -> HTMLResponse:
    body = settings.env.get_template("error.html").render(
        page=None, project=project if project in settings.projects else None, projects=settings.projects,
        csrf=csrf, csrf_field=security.CSRF_FIELD, static=f"{_base(request)}/static", root=f"{_base(request)}/",
        nav=request.url.path, message="", status=status, error=message)
    return HTMLResponse(body, status_code=status)


def _form(pg: Page) -> FormData:
    return pg.request.state.form


def _date(value: str | None, name: str) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise InvalidInputError(f"{name} must be a date like 2026-01-31, got {value!r}") from None


def _start(day: date | None) -> datetime | None:
    return datetime(day.year, day.month, day.day, tzinfo=UTC) if day else None


# ---- pages ---------------------------------------------------------------------------------------------------


async def _counts(pm: ProjectMemory) -> dict[str, int]:
    versions = await pm.facts.list(include_superseded=True)
    current = sum(1 for v in versions if v.valid_to is None)
    # every fact version has one searchable mirror row in the semantic table: the rest are semantic memories
    return {"facts": current, "memories": max(0, await pm.semantic.count() - len(versions)),
            "pending": len(await pm.pending.list()), "turns": await pm.extraction_log.count()}


@page
async def overview(pg: Page) -> Response:
    rows = []
    for name in pg.settings.projects:
        pm = pg.memory.scope(name, pg.settings.user_id)
        rows.append({"name": name, "counts": await _counts(pm), "recent": await pm.extraction_log.recent(3)})
    return pg.render("overview.html", rows=rows)


@page
async def project_home(pg: Page) -> Response:
    pm = pg.pm
    since = datetime.now(UTC) - timedelta(days=views.CHART_DAYS)
    return pg.render("project.html", counts=await _counts(pm), recent=await pm.extraction_log.recent(10),
                     chart=views.outcome_chart(await pm.extraction_log.recent(CHART_TURNS, since=since)),
                     groups=views.GROUPS)


@page
async def facts(pg: Page) -> Response:
    category = pg.request.query_params.get("category") or None
    if category is not None:
        validate_segment(category, "category")
    return pg.render("facts.html", facts=await pg.pm.facts.list(category), categories=await pg.pm.facts.categories(),
                     category=category or "")


def _key(pg: Page) -> MemoryKey:
    try:
        return pg.pm.scope.key(pg.request.path_params["key"])
    except InvalidKeyError as exc:
        raise PageError(404, str(exc)) from None


@page
async def fact(pg: Page) -> Response:
    key = _key(pg)
    versions = await pg.pm.facts.history(key)
    if not versions:
        raise PageError(404, f"no fact {str(key)!r} in project {pg.project!r}")
    current = next((v for v in versions if v.valid_to is None), None)
    return pg.render("fact.html", key=str(key), current=current, timeline=views.timeline(versions))


@page
async def fact_edit(pg: Page) -> Response:
    key = _key(pg)
    form = _form(pg)
    value = str(form.get("value") or "").strip()
    if not value:
        raise InvalidInputError("the new value must not be empty")
    reason = str(form.get("reason") or "").strip() or "edited in the memory inspector"
    await pg.pm.facts.put(key, value, Provenance(extractor=EDITOR, confidence=1.0, rationale=reason))
    return pg.redirect(f"/facts/{key}", done=f"{key} set to {value}")


@page
async def pending(pg: Page) -> Response:
    return pg.render("pending.html", items=await pg.pm.pending.list(), now=datetime.now(UTC))


def _pending_id(pg: Page) -> int:
    from z0_memory.stores.pending import pending_id

    return pending_id(pg.request.path_params["item"])


@page
async def pending_confirm(pg: Page) -> Response:
    from z0_memory.writes import promote

    item = _pending_id(pg)
    outcome = await promote(pg.pm, item, Provenance(extractor=EDITOR, confidence=1.0,
                                                     rationale="confirmed in the memory inspector"))
    if outcome is None:
        raise PageError(404, f"pending item {item} does not exist (or expired) in project {pg.project!r}")
    return pg.redirect("/pending", done=f"confirmed: {outcome.content} -> {outcome.target}")


@page
async def pending_reject(pg: Page) -> Response:
    item = _pending_id(pg)
    if await pg.pm.pending.take(item) is None:
        raise PageError(404, f"pending item {item} does not exist (or expired) in project {pg.project!r}")
    return pg.redirect("/pending", done=f"rejected pending item {item}")


@page
async def memories(pg: Page) -> Response:
    params = pg.request.query_params
    query = (params.get("q") or "").strip()
    kind = params.get("kind") or None
    if kind is not None and kind not in KINDS:
        raise InvalidInputError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    since, until = _date(params.get("since"), "since"), _date(params.get("until"), "until")
    pm = pg.pm
    if query:  # the period goes to the engine (created in [since, until + 1 day)); the kind is filtered after
        found: Sequence[Hit | MemoryRecord] = await pm.semantic.search_engine.hybrid(
            query, SEARCH_K, include_history=True, since=_start(since),
            until=_start(until + timedelta(days=1)) if until else None)
        found = [h for h in found if kind is None or h.kind == kind]
    else:
        found = await pm.semantic.list(kind=kind, include_superseded=True, limit=LIST_LIMIT)
    found = [m for m in found if views.in_period(m.created_at, since, until)]
    current, superseded = views.split_superseded(found)
    return pg.render("memories.html", query=query, kind=kind or "", kinds=KINDS, since=params.get("since") or "",
                     until=params.get("until") or "", current=current, superseded=superseded, searched=bool(query))


@page
async def recall(pg: Page) -> Response:
    question = (pg.request.query_params.get("q") or "").strip()[:MAX_QUESTION_CHARS]
    mode = pg.request.query_params.get("mode") or "code"
    if mode not in ("code", "chat"):
        raise InvalidInputError(f"mode must be code or chat, got {mode!r}")
    if not question:
        return pg.render("recall.html", question="", mode=mode, out=None, rounds=[], results=[])
    from z0_memory.ui.recall import run_traced

    ctx = pg.settings.context.replace(project=pg.project, user_id=pg.settings.user_id, mode=mode)
    run = await run_traced(pg.memory, pg.pm, question, ctx)
    out = run.state
    found = {h.id: h for h in out.get("memories") or []}
    rounds = []
    for trace in out.get("trace") or []:
        hits = []
        for h in trace.hits:
            hit = found.get(h["id"])
            content = hit.content if hit is not None else None
            if content is None:
                record = await pg.pm.semantic.get(h["id"])
                content = record.content if record is not None else "(no longer stored)"
            hits.append({**h, "content": content})
        rounds.append({"trace": trace, "hits": hits})
    include_history = bool(out.get("include_history"))
    results = [{"hit": h, "parts": views.score_parts(h, include_history=include_history),
                "found_by": run.found_by.get(h.id, [])}
               for h in (out.get("memories") or [])[: int(ctx.top_k)]]
    return pg.render("recall.html", question=question, mode=mode, out=out, rounds=rounds, results=results)


@page
async def rules(pg: Page) -> Response:
    process = pg.memory.settings  # the rules are the process's settings
    root = pg.settings.rules_root or process.rules_root
    try:
        loaded = pg.memory.rules(root)
        error = ""
    except Z0Error as exc:
        loaded, error = None, str(exc)
    return pg.render("rules.html", rules=loaded, error=error, order=list(process.rules_files),
                     rules_root=str(Path(root).resolve()), max_bytes=int(process.rules_max_bytes))


@page
async def extraction_log(pg: Page) -> Response:
    return pg.render("log.html", entries=await pg.pm.extraction_log.recent(200), group=_group)


def _group(action: str) -> str:
    from z0_memory.stores.extraction_log import outcome_group

    return outcome_group(action)


async def _forget_target(pg: Page, target: str) -> dict[str, Any]:
    """What forgetting ``target`` (a fact key of this project or a memory id) would delete."""
    if target.count(":") == 2:
        try:
            key = pg.pm.scope.key(target)
        except InvalidKeyError as exc:
            raise PageError(404, str(exc)) from None
        versions = await pg.pm.facts.history(key)
        if not versions:
            raise PageError(404, f"no fact {target!r} in project {pg.project!r}")
        return {"kind": "fact", "target": str(key), "versions": versions, "memory": None}
    record = await pg.pm.semantic.get(target)
    if record is None:
        raise PageError(404, f"no memory {target!r} in project {pg.project!r}")
    return {"kind": "memory", "target": record.id, "versions": [], "memory": record}


@page
async def forget_confirm(pg: Page) -> Response:
    target = (pg.request.query_params.get("target") or "").strip()
    if not target:
        raise InvalidInputError("name what to forget: ?target=<fact key or memory id>")
    return pg.render("forget.html", **await _forget_target(pg, target))


@page
async def forget(pg: Page) -> Response:
    form = _form(pg)
    what = await _forget_target(pg, str(form.get("target") or "").strip())
    if form.get("confirm") != "yes":
        raise InvalidInputError("tick the confirmation box to forget it")
    if what["kind"] == "fact":
        n = await pg.pm.facts.forget(what["target"], include_history=form.get("history") == "yes")
    else:
        n = await pg.pm.semantic.delete([what["target"]])
    return pg.redirect("/", done=f"forgot {what['target']} ({n} row(s) deleted)")


def create_app(memory: Z0Memory | None = None, *, context: Context | None = None, settings: Settings | None = None,
               projects: Sequence[str] | None = None, token: str | None = None, host: str = "127.0.0.1",
               check_host: bool | None = None, rules_root: str | None = None,
               acquire: Callable[[], Awaitable[Z0Memory]] | None = None,
               release: Callable[[], Awaitable[None]] | None = None) -> Starlette:
    """The inspector as an ASGI app.

    ``memory``: an open or unopened :class:`Z0Memory` owned by the caller; without one the app opens one from
    ``settings`` (default: ``Settings.from_env()``) on the first request, or gets it from ``acquire``. ``context``:
    the run settings of its recall page (default: ``Context.from_env()``). ``projects``: the projects it serves
    (default: the context's project); no page reaches any other. ``host``: the address it is
    served on; a non-loopback one needs ``token``. ``check_host`` (default: on when ``host`` is the loopback)
    refuses requests whose Host header is not the loopback.
    """
    ctx = context or Context.from_env()
    names = tuple(dict.fromkeys(projects or [ctx.project]))
    for name in names:
        validate_segment(name, "project")
    security.check_bind(host, token)
    ui = UiSettings(projects=names, user_id=ctx.user_id, context=ctx, token=token or None,
                    check_host=security.is_loopback(host) if check_host is None else check_host,
                    source=MemorySource(memory, settings, acquire, release), rules_root=rules_root)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await ui.source.close()

    p = "/p/{project}"
    routes = [
        Route("/", overview),
        Route(f"{p}/", project_home),
        Route(f"{p}/facts", facts),
        Route(f"{p}/facts/{{key}}", fact),
        Route(f"{p}/facts/{{key}}/edit", fact_edit, methods=["POST"]),
        Route(f"{p}/pending", pending),
        Route(f"{p}/pending/{{item}}/confirm", pending_confirm, methods=["POST"]),
        Route(f"{p}/pending/{{item}}/reject", pending_reject, methods=["POST"]),
        Route(f"{p}/memories", memories),
        Route(f"{p}/recall", recall),
        Route(f"{p}/rules", rules),
        Route(f"{p}/log", extraction_log),
        Route(f"{p}/forget", forget_confirm),
        Route(f"{p}/forget", forget, methods=["POST"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.z0_ui = ui

    class _Settings:  # every request carries the settings (also when the app is mounted in another)
        def __init__(self, inner: ASGIApp) -> None:
            self.inner = inner

        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] in ("http", "websocket"):
                scope["z0_ui"] = ui
            await self.inner(scope, receive, send)

    app.add_middleware(_Settings)
    return app
