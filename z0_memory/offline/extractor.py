"""Deterministic, bilingual (English + Chinese) rule-based extractor: one turn in, memory candidates out.

No model, no database, no network: regular expressions over a small vocabulary of technical "slots". It is the
extractor used when no LLM is configured, and the baseline the LLM extractor is measured against.

Keys are ``{project}:{category}:{entity}``. Categories and entities come from ``SLOTS`` below:

==========  ===============================================================================================
stack       backend_framework, frontend_framework, language, runtime, css, auth, queue, payments
database    database, cache, orm, migrations, search, warehouse, vector_store, object_storage
tooling     testing, e2e_testing, package_manager, linter, formatter, type_checker, ci, bundler, monitoring,
            orchestration, bi, docs, monorepo, editor, issue_tracker
process     deploy, branching, merge_strategy, release
convention  timestamps, naming, indentation, quotes, commit_messages, api_style, ids, line_length,
            versioning, style
people      ``{area}_owner`` ("Alice owns the backend" -> backend_owner) and roles: tech_lead,
            product_manager, designer, on_call, release_manager, dba
preference  the slot's entity for the user ("I prefer tabs" -> preference:indentation) or
            ``{person}_{entity}`` for someone named ("Alice likes snake_case" -> preference:alice_naming)
==========  ===============================================================================================

Values use the vocabulary's canonical spelling ("postgresql" -> "Postgres", "两个空格" -> "2 spaces"); a value
the vocabulary does not know is kept as written when a slot phrase binds it ("testing: testify").

What it catches
  - decisions: "we'll use X for the Y", "let's go with X", "Y: X, not Z", "we decided to use X", "X it is",
    "我们决定用 X", "Y 定为 X", "用 X 做 Y 吧"  -> kind decision, confidence 0.9
  - switches: "we switched from X to Y because R", "replace X with Y", "drop X for Y", "不用 X 了，改用 Y，因为 R",
    "把 X 换成 Y", "从 X 迁移到 Y", "X 太慢了，换成 Y" -> decision, rationale R, supersedes the old value's memories
  - any firm statement of a new value for a key that already holds another value -> supersedes the old one
  - preferences: "I prefer X", "Alice likes X", "I'd rather avoid X", "我喜欢用 X", "小李更喜欢 X" -> preference
  - facts and conventions: "our API is deployed on X", "all timestamps are UTC", "we always write tests with X",
    "column names use snake_case", "Alice owns the backend", "张伟负责后端", "所有时间戳都用 UTC" -> fact, 0.85
  - hedges: "maybe we could try X", "what about X?", "should we use X?", "not sure, perhaps X", "也许可以试试 X",
    "考虑一下 X", "要不要用 X？" -> hedged, confidence 0.35, key kept so a later confirmation matches
  - confirmations: "yes, go with X", "ok, X for the Y", "agreed on X", "确定用 X", "X 就这么定了" -> confirms;
    a bare "yes, let's do that" / "agreed" / "可以，就这么办" resolves to the assistant's proposal just before
    it in the same turn, else to the newest pending memory in ``existing``
  - repeats of a stored value -> ``same_as`` that memory; restating a pending value firmly -> ``confirms``
  - secrets (API keys, tokens, passwords, private keys, credentials in URLs) -> "[REDACTED]"; a statement whose
    value would be a secret is dropped

What it misses (by design or by limitation)
  - anything outside the vocabulary with no slot phrase to bind it: "Releases go out every second Tuesday",
    "the dbt models live in transform/" are facts, but have no key and no convention marker
  - reasoning across turns ("the thing we discussed yesterday"), pronouns ("use it for the cache"), sarcasm,
    self-corrections mid-sentence ("moving to X... no wait, keep Y"), and statements spread over several messages
  - negative decisions without a replacement ("we're not using GraphQL") are not stored; nor are hedges that
    name no value ("maybe later"), and a sentence that contained a secret yields nothing at all
  - sentences over ``MAX_SENTENCE_CHARS`` (pasted text) are skipped; multi-word values the vocabulary only partly
    knows are cut to the known part ("cargo nextest" -> "Cargo")
  - assistant text never produces a memory on its own: only a proposal the user accepts in the same turn counts
  - text inside injected memory blocks (``<memory>...</memory>``, lines starting with ``[memory``), fenced or
    obvious code, questions, greetings, thanks and chit-chat are skipped
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Literal

from z0_memory.redaction import REDACTED, redact_secrets
from z0_memory.schemas import Candidate, normalize_segment
from z0_memory.text import ENGLISH_STOPWORDS, STOPWORDS, contains_cjk

OFFLINE_EXTRACTOR_NAME = "offline-rules/1"

__all__ = [
    "OFFLINE_EXTRACTOR_NAME",
    "SLOTS",
    "ExistingMemory",
    "Slot",
    "TurnMessage",
    "canonical_value",
    "extract_candidates",
    "redact_secrets",
]

CONF_DECISION = 0.9
CONF_SWITCH = 0.92
CONF_CONFIRM = 0.92
CONF_RESOLVED_CONFIRM = 0.88
CONF_FACT = 0.85
CONF_KEYLESS = 0.8
CONF_PREFERENCE = 0.85
CONF_OTHER_PREFERENCE = 0.8
CONF_HEDGE = 0.35
CONF_UNSURE = 0.3


@dataclass(frozen=True)
class TurnMessage:
    """One message of the turn being extracted (system and tool messages are filtered by the caller)."""

    role: Literal["user", "assistant"]
    text: str
    id: str | None = None


@dataclass(frozen=True)
class ExistingMemory:
    """A memory the store already holds for the project, with a local id the candidates can refer to."""

    local_id: int
    content: str
    key: str | None = None
    value: str | None = None
    pending: bool = False


# --- vocabulary --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Slot:
    """A structured fact's slot: where it lives in the key, how people name it, and values known to fill it.

    ``values`` entries are ``"Canonical|alias|alias"``; ``owner_area`` is the area name used for people keys.
    """

    category: str
    entity: str
    en: str
    zh: str
    phrases: tuple[str, ...]
    values: tuple[str, ...] = ()
    owner_area: str | None = None


def _slot(
    category: str, entity: str, en: str, zh: str, phrases: str, values: str = "", area: str | None = None
) -> Slot:
    split = lambda s: tuple(p.strip() for p in s.split(";") if p.strip())  # noqa: E731
    return Slot(category, entity, en, zh, split(phrases), split(values), area)


SLOTS: tuple[Slot, ...] = (
    _slot("stack", "backend_framework", "backend framework", "后端框架",
          "backend framework;backend;back end;back-end;server side;server-side;server framework;api framework;"
          "web framework;server;"
          "后端框架;后端;服务端框架;服务端",
          "Hono;Express|Express.js;Fastify;Koa;NestJS;Django;FastAPI;Flask;Rails|Ruby on Rails;Spring Boot;"
          "Gin;Echo;Actix|Actix Web;Axum;Laravel;Phoenix;Litestar;Starlette;Elysia", area="backend"),
    _slot("stack", "frontend_framework", "frontend framework", "前端框架",
          "frontend framework;frontend;front end;front-end;ui framework;web app;前端框架;前端",
          "React;Vue|Vue.js;Svelte;SvelteKit;SolidJS|Solid;Angular;Next.js|NextJS;Nuxt;Remix;Astro;Qwik",
          area="frontend"),
    _slot("stack", "language", "language", "开发语言",
          "programming language;language;编程语言;开发语言;语言",
          "TypeScript;JavaScript;Python;Golang|=Go|Go 语言|Go语言;Rust;Java;Kotlin;Ruby;Elixir;C#;Swift;Zig"),
    _slot("stack", "runtime", "runtime", "运行时", "runtime;运行时", "Node.js|NodeJS;Deno;Bun"),
    _slot("stack", "css", "styling", "样式方案",
          "css framework;styling;css;样式方案;样式", "Tailwind CSS|Tailwind|TailwindCSS;Bootstrap;CSS Modules;"
          "styled-components;UnoCSS;Sass"),
    _slot("stack", "auth", "authentication", "认证方案",
          "authentication;auth;login;sign-in;认证;鉴权;登录",
          "Clerk;Auth0;Supabase Auth;Keycloak;NextAuth;Auth.js;Cognito;Lucia;Firebase Auth", area="auth"),
    _slot("stack", "queue", "job queue", "消息队列",
          "message queue;job queue;task queue;background jobs;queue;消息队列;任务队列;队列",
          "Kafka;RabbitMQ;SQS;BullMQ;Celery;NATS;Sidekiq;Temporal;Pulsar"),
    _slot("stack", "payments", "payment provider", "支付服务", "payment provider;payments;支付",
          "Stripe;Paddle;Adyen;Braintree"),
    _slot("database", "database", "database", "数据库",
          "primary database;main database;database;datastore;db;主数据库;数据库",
          "Supabase Postgres;Postgres|PostgreSQL|psql;MySQL;MariaDB;SQLite;MongoDB|Mongo;DynamoDB;"
          "CockroachDB;PlanetScale;Neon;Firestore;Cassandra;TiDB;TimescaleDB;InfluxDB;Supabase", area="database"),
    _slot("database", "cache", "cache", "缓存", "cache layer;caching;cache;缓存层;缓存",
          "Redis;Memcached;Valkey;KeyDB;Dragonfly"),
    _slot("database", "orm", "ORM", "ORM", "orm;query builder;data access layer;数据访问层",
          "Drizzle|Drizzle ORM;Prisma;SQLAlchemy;TypeORM;Sequelize;Django ORM;Kysely;GORM;SQLModel;Peewee;"
          "MikroORM"),
    _slot("database", "migrations", "migration tool", "迁移工具",
          "schema migrations;migration tool;migrations;迁移工具;数据库迁移;迁移脚本",
          "Alembic;Flyway;Liquibase;Atlas;golang-migrate"),
    _slot("database", "search", "search engine", "搜索引擎",
          "search engine;full-text search;search;全文搜索;搜索引擎;搜索功能;搜索",
          "Elasticsearch;OpenSearch;Meilisearch;Typesense;Algolia"),
    _slot("database", "warehouse", "data warehouse", "数据仓库",
          "data warehouse;analytics warehouse;warehouse;数据仓库;数仓",
          "ClickHouse;DuckDB;BigQuery;Snowflake;Redshift;Databricks"),
    _slot("database", "vector_store", "vector store", "向量数据库",
          "vector store;vector database;vector db;向量数据库;向量库",
          "pgvector;Pinecone;Qdrant;Weaviate;Chroma;Milvus"),
    _slot("database", "object_storage", "object storage", "对象存储",
          "object storage;file storage;blob storage;对象存储;文件存储", "S3|Amazon S3;R2|Cloudflare R2;GCS;MinIO"),
    _slot("tooling", "testing", "test framework", "测试框架",
          "test framework;testing framework;unit tests;testing;tests;测试框架;单元测试;测试",
          "pytest;Jest;Vitest;Mocha;unittest;RSpec;JUnit;testify;Go test", area="testing"),
    _slot("tooling", "e2e_testing", "end-to-end test tool", "端到端测试",
          "end-to-end tests;e2e tests;e2e testing;e2e;端到端测试", "Playwright;Cypress;Selenium"),
    _slot("tooling", "package_manager", "package manager", "包管理器",
          "package manager;dependency management;包管理器;包管理;依赖管理", "pnpm;npm;Yarn;uv;Poetry;pip;pipenv;Cargo"),
    _slot("tooling", "linter", "linter", "代码检查工具",
          "linter;linting;lint;代码检查;静态检查", "ESLint;Biome;Ruff;flake8;pylint;golangci-lint;Clippy;oxlint"),
    _slot("tooling", "formatter", "formatter", "格式化工具",
          "code formatter;formatter;formatting;格式化工具;格式化", "Prettier;Black;gofmt;rustfmt;dprint"),
    _slot("tooling", "type_checker", "type checker", "类型检查", "type checker;type checking;类型检查",
          "mypy;Pyright;tsc"),
    _slot("tooling", "ci", "CI", "CI", "continuous integration;ci/cd;ci pipeline;ci;持续集成",
          "GitHub Actions;GitLab CI;CircleCI;Jenkins;Buildkite;Travis CI;Drone", area="ci"),
    _slot("tooling", "bundler", "bundler", "构建工具", "bundler;build tool;打包工具;构建工具",
          "Vite;webpack;esbuild;Rollup;Turbopack;Parcel;tsup;Rspack"),
    _slot("tooling", "monitoring", "monitoring", "监控",
          "error tracking;error monitoring;monitoring;observability;错误监控;监控;可观测性",
          "Sentry;Datadog;Grafana;Prometheus;New Relic;Honeycomb;OpenTelemetry"),
    _slot("tooling", "orchestration", "workflow orchestrator", "任务编排",
          "orchestration;orchestrator;workflow engine;scheduler;任务编排;调度;编排", "Airflow;Dagster;Prefect;Luigi"),
    _slot("tooling", "bi", "BI tool", "BI 工具", "dashboards;dashboard;bi tool;bi;报表;看板;仪表盘",
          "Metabase;Superset;Looker;Tableau;Power BI;Redash"),
    _slot("tooling", "docs", "documentation tool", "文档工具",
          "component docs;documentation;docs;组件文档;文档", "Storybook;Docusaurus;MkDocs;VitePress;Sphinx"),
    _slot("tooling", "monorepo", "monorepo tool", "monorepo 工具", "monorepo tool;monorepo;单仓库",
          "Turborepo;Nx;Lerna;Rush"),
    _slot("tooling", "editor", "editor", "编辑器", "editor;ide;编辑器",
          "Helix;Neovim;Vim;Emacs;VS Code|VSCode;Zed;Cursor;IntelliJ"),
    _slot("tooling", "issue_tracker", "issue tracker", "任务管理工具",
          "issue tracker;ticket tracker;tickets;任务管理;项目管理", "Linear;Jira;GitHub Issues;Trello"),
    _slot("process", "deploy", "deployment platform", "部署平台",
          "deployment platform;deployment;deploys;deploy;hosting;hosted;部署平台;部署;托管;上线",
          "Fly.io|Fly;Vercel;Render;Railway;Heroku;Netlify;Cloudflare Workers;Cloudflare Pages;Kubernetes|k8s;"
          "ECS;AWS Lambda|Lambda;DigitalOcean;Hetzner;Cloud Run;AWS;GCP;Azure", area="deploy"),
    _slot("process", "branching", "branching model", "分支策略",
          "branching model;branching strategy;branch strategy;branching;分支策略;分支模型",
          "trunk-based development|trunk-based|trunk based;Git Flow|GitFlow;GitHub Flow"),
    _slot("process", "merge_strategy", "merge strategy", "合并策略",
          "merge strategy;merging;merges;合并策略;合并", "squash merge|squash merges|squash and merge|squash;"
          "rebase merge|rebase;merge commits"),
    _slot("process", "release", "release cadence", "发布节奏", "release cadence;releases;release;发布节奏;发版;发布"),
    _slot("convention", "timestamps", "timestamp convention", "时间戳约定",
          "timestamps;timestamp;timezone;time zone;时间戳;时区;时间", "UTC;ISO 8601;Unix epoch|epoch seconds"),
    _slot("convention", "naming", "naming convention", "命名规范",
          "naming convention;column names;variable names;naming;命名规范;命名风格;命名",
          "snake_case;camelCase;PascalCase;kebab-case;SCREAMING_SNAKE_CASE"),
    _slot("convention", "indentation", "indentation", "缩进",
          "indentation;indent;缩进", "2 spaces|two spaces|两个空格|2 个空格|2个空格;4 spaces|four spaces|四个空格|"
          "4 个空格|4个空格;tabs|tab|制表符"),
    _slot("convention", "quotes", "string quotes", "字符串引号", "string quotes;quotes;字符串;引号",
          "single quotes|单引号;double quotes|双引号"),
    _slot("convention", "commit_messages", "commit message format", "提交信息规范",
          "commit messages;commit message;commits;提交信息;提交说明", "Conventional Commits;gitmoji"),
    _slot("convention", "api_style", "API style", "接口风格", "api style;api design;接口风格;接口",
          "REST;GraphQL;gRPC;tRPC;JSON-RPC"),
    _slot("convention", "ids", "ID format", "主键格式",
          "primary keys;primary key;ids;identifiers;主键;id 格式",
          "UUIDv7|UUID v7;UUIDv4|UUID v4;UUID|UUIDs;ULID|ULIDs;auto-increment|自增"),
    _slot("convention", "line_length", "maximum line length", "最大行宽",
          "max line length;maximum line length;line length;行宽;行长度"),
    _slot("convention", "versioning", "versioning scheme", "版本号规范", "versioning;version numbers;版本号",
          "SemVer|semantic versioning;CalVer"),
    _slot("convention", "style", "code style", "代码风格", "code style;style guide;代码风格;风格",
          "PEP 8|PEP8;Airbnb style;Google style;StandardJS"),
)

_ROLES: tuple[tuple[str, str, str, str], ...] = (  # pattern, entity, English label, Chinese label
    (r"tech(?:nical)? lead|技术负责人|技术 leader", "tech_lead", "tech lead", "技术负责人"),
    (r"product manager|\bpm\b|产品经理", "product_manager", "product manager", "产品经理"),
    (r"designer|设计师", "designer", "designer", "设计师"),
    (r"on-call(?: engineer)?|on call|值班", "on_call", "on-call engineer", "值班工程师"),
    (r"release manager|发布负责人", "release_manager", "release manager", "发布负责人"),
    (r"\bdba\b|数据库管理员", "dba", "DBA", "数据库管理员"),
)


def _term_pattern(term: str) -> str:
    """A regex for a vocabulary term: word boundaries on its Latin ends, none on CJK ends (no spaces in Chinese)."""
    body = re.escape(term).replace(r"\ ", r"\s*" if contains_cjk(term) else r"\s+")
    before = "" if contains_cjk(term[0]) else r"(?<![\w.\-/])"
    after = "" if contains_cjk(term[-1]) else r"(?![\w\-]|\.\w)"
    return f"{before}{body}{after}"


def _build_value_index() -> list[tuple[re.Pattern[str], str, Slot]]:
    entries = []
    for slot in SLOTS:
        for spec in slot.values:
            canonical, *aliases = spec.split("|")
            for term in (canonical, *aliases):
                entries.append((term, canonical, slot))
    entries.sort(key=lambda e: -len(e[0].lstrip("=")))
    return [(_value_regex(t), c, s) for t, c, s in entries]


def _value_regex(term: str) -> re.Pattern[str]:
    """A leading '=' marks a value that is also a common word ("Go"): exact case, and not "Go with ..."."""
    if term.startswith("="):
        guard = r"(?!\s+(?:with|ahead|for|to|back|live|on|through|over)\b)"
        return re.compile(_term_pattern(term[1:]) + guard)
    return re.compile(_term_pattern(term), re.IGNORECASE)


def _build_phrase_index() -> list[tuple[re.Pattern[str], Slot]]:
    entries = [(p, s) for s in SLOTS for p in s.phrases]
    entries.sort(key=lambda e: -len(e[0]))
    return [(re.compile(_term_pattern(p), re.IGNORECASE), s) for p, s in entries]


_VALUES = _build_value_index()
_PHRASES = _build_phrase_index()
_SLOT_BY_KEY = {(s.category, s.entity): s for s in SLOTS}


# --- cleaning and splitting -----------------------------------------------------------------------------

_MEMORY_BLOCK = re.compile(
    r"<(memory|memories|recalled[_-]?memor\w*|long[_-]?term[_-]?memory|retrieved[_-]?memor\w*)\b[^>]*>"
    r".*?(?:</\1\s*>|$)",
    re.I | re.S,
)
_MEMORY_LINE = re.compile(r"^\s*(?:[-*>]\s*)?\[(?:memory|memories|mem|recalled|pending|fact)\b", re.I)
_FENCE = re.compile(r"```.*?(?:```|$)|~~~.*?(?:~~~|$)", re.S)
_CODE_LINE = re.compile(
    r"^\s*(?:(?:import|from\s+\S+\s+import|def|class|const|var|function|fn|pub|return|export|SELECT|INSERT|"
    r"UPDATE|CREATE|if|for|while|elif|async|await|export|\$|>>>|#include|package)\b|[{}\[\]()<]"
    r"|.*(?:[;{]\s*$|=>|==|\)\s*\{))",
)
_ASSIGNMENT = re.compile(r"^\s*[\w.]+\s*(?:\[[^\]]*\])?\s*[+\-*/]?=\s*\S")


def _strip_noise(text: str) -> str:
    """Drop injected memory blocks, code and quoted memory lines; keep the prose."""
    text = _MEMORY_BLOCK.sub("\n", text)
    text = _FENCE.sub("\n", text)
    kept = [
        line
        for line in text.splitlines()
        if not (_MEMORY_LINE.match(line) or _CODE_LINE.match(line) or _ASSIGNMENT.match(line))
    ]
    return "\n".join(kept).replace("`", "")


MAX_SENTENCE_CHARS = 300  # longer "sentences" are pasted text, not statements; skipping them bounds the cost
MAX_MESSAGE_CHARS = 20_000

_SENTENCE = re.compile(r".+?(?:[。！？；;]+|[.!?]+(?=\s|$)|$)")


def _sentences(text: str) -> list[str]:
    """Sentences with their end punctuation kept (a question mark matters); "Fly.io" is not split."""
    out = []
    for line in text[:MAX_MESSAGE_CHARS].splitlines():
        out.extend(m.group(0).strip(" \t-*•") for m in _SENTENCE.finditer(line))
    return [s for s in out if s.strip(" \t-*•.。") and len(s) <= MAX_SENTENCE_CHARS]


_CLAUSE_SPLIT = re.compile(
    r"\s*[,，、]\s*(?:(?:and|but|while|whereas|so|then|also)\b\s*|(?:但是?|而且|而|不过|所以|然后|同时|并且))?"
    r"|\s+(?:but|whereas|while)\s+|\s+and\s+(?=(?:we|I|[A-Z][a-z]+|the|our|all|use|format|lint|test|deploy|host)\b)"
)


def _clauses(sentence: str) -> list[str]:
    return [c.strip() for c in _CLAUSE_SPLIT.split(sentence) if c and c.strip()]


# --- markers ----------------------------------------------------------------------------------------------

_GREETING = re.compile(
    r"^(?:hi|hello|hey|morning|good (?:morning|night|evening|afternoon)|thanks?(?: you)?|thx|ty|cheers|bye|lol|"
    r"haha|ugh|hmm+|你好|大家好|谢谢|多谢|感谢|哈哈+|再见|早上好|晚安)\b",
    re.I,
)
_QUESTION_START = re.compile(
    r"^(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|could|would|will|have|has|"
    r"any|anything|remind me)\b",
    re.I,
)
_QUESTION_ZH = re.compile(r"(?:吗|呢|么)[？?。]?$|什么|哪个|哪些|哪种|哪里|怎么(?!样)|为什么|是不是|有没有|多少|^请问")
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|possibly|might|could (?:try|use|go|consider|switch|move)|what about|how about|why not|"
    r"not sure|unsure|i wonder|wondering|thinking (?:about|of)|consider(?:ing)?|should we|shall we|"
    r"i (?:think|guess|suppose) we (?:should|could)|we (?:should|could) (?:try|consider|look at|evaluate)|"
    r"worth (?:a )?(?:try|trying|looking)|probably|tentative(?:ly)?|undecided|for now maybe|i think|i guess|"
    r"i feel like|i suspect|leaning (?:towards?|to)|inclined to|makes? (?:the most |more )?sense|"
    r"(?:can|could) we (?:use|try|go with|switch to|move to|adopt))\b"
    r"|也许|或许|可能|说不定|试试|试一下|要不要|要不|考虑|不确定|不一定|是不是可以|能不能|看看|评估一下|怎么样|如何|"
    r"行不行|好不好|倾向于?|待定|再看",
    re.I,
)
_UNSURE = re.compile(r"\b(?:not sure|unsure|undecided)\b|不确定|不一定|待定", re.I)
_NEGATION = re.compile(
    r"\b(?:not|no longer|never mind|nevermind|don't|do not|won't|will not|isn't|aren't|without|avoid|instead of|"
    r"rather than)\b|算了|不用|(?<!要)不要|别用|不考虑|暂时不|放弃|弃用|不是|而不是|不再",
    re.I,
)
_CONFIRM_PREFIX = re.compile(
    r"^(?:(?:yes|yeah|yep|yup|ok(?:ay)?|sure|agreed|confirmed|correct|right|absolutely|definitely|great|perfect|"
    r"sounds (?:good|great|right)|that works|works for me|deal|fine|fair|lgtm|approved|go ahead)\b"
    r"(?:\s*(?:please|then))?"
    r")[\s,，.!！。:：]*"
    r"|^(?:好的|好吧|好|行|可以|没问题|对的|对|嗯|OK|ok)(?:[\s,，.!！。:：]+|$)"
    r"|^(?:同意|确定|确认|就这么定了?|就这样吧?|就这么办吧?)[\s,，.!！。:：]*",
    re.I,
)
_CONFIRM_ANYWHERE = re.compile(r"\b(?:confirmed|agreed|final|it is|that's settled|settled)\b|确定|确认|就这么定|定了", re.I)
_ACCEPT_ONLY = re.compile(
    r"^(?:let'?s (?:do|go with|use|try) (?:that|it|this|those)|(?:go|going) with (?:that|it|this|your suggestion)|"
    r"do (?:that|it)|ship it|that works|works for me|sounds good|agreed|deal|please do|go ahead|make it so|"
    r"use (?:that|it|this)|就这么办吧?|就这样吧?|就这么定了?|就用这个吧?|按你说的(?:办|来)?吧?|照你说的办|听你的|同意|可以|好的?)"
    r"[\s.!！。]*$",
    re.I,
)
_DECISION = re.compile(
    r"\b(?:we(?:'ll| will| shall| are going to| 're going to)|let'?s|let us|going with|go with|we(?:'ve| have)? "
    r"decided|decided|decision|we chose|chose|we picked|picked|(?:we(?:'ve)? )?settled on|standardi[sz]e on|"
    r"from now on|going forward|it is|stick(?:ing)? with|switch(?:ing)? to|mov(?:e|ing) to|migrat(?:e|ing) to|"
    r"adopt(?:ing)?|"
    r"will be (?:built|written|done|using)|is going to be)\b|^(?:use|pick|choose)\b"
    r"|决定|定为|定成|定了|就用|选用|采用|选定|改用|换成|统一用|以后(?:都)?用|今后|从现在起|记一下|先用|就这么定|用.{1,30}吧$",
    re.I,
)
_STRONG_DECISION = re.compile(r"\b(?:decided|decision)\b|决定", re.I)
_FACT = re.compile(
    r"\b(?:we(?:'re| are)\s+(?:now\s+|still\s+|currently\s+)?on|"
    r"we(?:'re| are)?\s+(?:always\s+|never\s+|currently\s+|now\s+)?(?:use|using|run|deploy|host|write|lint|"
    r"format|store|keep|build|follow|are on|'re on)|our|all|every|always|never|must|is written in|are written in|"
    r"is built (?:with|on)|(?:is|are) (?:deployed|hosted|running|stored)|runs? on|lives? (?:in|on)|uses?|follows?|"
    r"owns?|handles?|leads?|maintains?|in charge of|responsible for)\b"
    r"|我们(?:一直|都|现在|目前)?(?:用|使用|采用|在用)|我们的|所有|一律|统一|都用|一直用|部署在|跑在|托管在|用的是|是用|负责",
    re.I,
)
_PROPOSAL_MARK = re.compile(
    r"\b(?:recommend|suggest|propose|could use|could go with|how about|what about|i'd go with|i would go with|"
    r"let's|we could|you could|should (?:we|i)|shall (?:we|i)|want me to|go with)\b|建议|推荐|要不要|要用|可以用|不如|"
    r"用.{1,20}吧",
    re.I,
)
_CONVENTION = re.compile(r"\b(?:always|never|must|every|everything|all)\b|一律|必须|统一|所有|总是|从不", re.I)
_REJECTED_BEFORE = re.compile(
    r"(?:\b(?:not|instead of|rather than|over|than|no|without|from|replace|replacing|drop|dropping|ditch)\s+"
    r"(?:the\s+|using\s+)?|(?:不用|不是|而不是|不要|别用|比|弃用|从|把|替换掉?)\s*)$",
    re.I,
)
_PREFERENCE = re.compile(
    r"(?P<who>\bI\b|\bwe\b|\b[A-Z][a-z]{1,20}\b)\s*(?:really\s+|strongly\s+|also\s+|still\s+|personally\s+)?"
    r"(?P<verb>prefers?|likes?|loves?|'d prefer|would prefer|'d rather|would rather|hates?|dislikes?|"
    r"(?:doesn't|don't|does not|do not) like|can't stand|am a fan of|is a fan of|favou?rs?)\b"
    r"|(?P<who_zh>我们|我|[A-Za-z]{2,20}|[\u4e00-\u9fff]{2,3}?)\s*(?:也|还是)?\s*(?:比较|更|很|最|一直|特别)?\s*"
    r"(?P<verb_zh>不喜欢|讨厌|喜欢|偏好|偏爱|习惯|爱用|倾向于?)(?:用|使用)?",
)
_MY_PREFERENCE = re.compile(r"\bmy (?:favou?rite|preference|preferred)\b|我(?:的)?(?:首选|偏好是)", re.I)
_NEGATIVE_PREFERENCE = re.compile(r"hate|dislike|n't like|not like|can't stand|rather avoid|不喜欢|讨厌", re.I)
_OWNER = re.compile(
    r"(?P<who>\b[A-Z][a-z]{1,20}\b)\s+(?:now\s+|also\s+)?(?:owns|will own|handles|will handle|leads|will lead|"
    r"maintains|is responsible for|is in charge of|takes care of|runs)\s+(?:the\s+|our\s+)?(?P<area>[\w\s./-]{2,40})"
    r"|(?P<who_zh>[\u4e00-\u9fff]{2,3}?|[A-Za-z]{2,20})\s*(?:现在|也|来)?负责(?!人)\s*(?P<area_zh>[\w\u4e00-\u9fff ]{1,12})",
)
_ROLE_STATEMENT = re.compile(
    r"(?P<who>\b[A-Z][a-z]{1,20}\b)\s+is\s+(?:our|the|now the|now our)\s+(?P<role>[\w\s-]{2,40})"
    r"|(?P<who_zh>[\u4e00-\u9fff]{2,3}?|[A-Za-z]{2,20})\s*是\s*(?:我们的?|团队的?)?(?P<role_zh>[\u4e00-\u9fff\w ]{2,10})",
)
_NOT_A_NAME = frozenset(
    "the this that it our we you they he she there here what which who how why when where also then so and but "
    "yes no ok okay maybe perhaps hmm please let lets all every our fair great sure thanks hi hello hey".split()
)
_RATIONALE = re.compile(
    r"\b(?:because|since|due to|given that|so that|as it|as they|as we)\b\s*(?P<why>.+)$"
    r"|(?:因为|由于|原因是|毕竟)\s*(?P<why_zh>.+)$",
    re.I | re.S,
)
_SO_RATIONALE = re.compile(r"^(?P<why>.+?)(?:[，,]\s*(?:so|所以|因此|于是)|[，,]\s*(?=换成|改用|换用))", re.I)


# --- switches ---------------------------------------------------------------------------------------------

_SWITCH = (
    re.compile(
        r"\b(?:switch(?:ed|ing)?|mov(?:ed|ing|e)|migrat(?:ed|ing|e)|went|go(?:ing)?|chang(?:ed|ing|e)|port(?:ed|ing)?|"
        r"transition(?:ed|ing)?)\s+(?:\w+\s+)?(?:over\s+)?(?:from|off(?: of)?|away from)\s+(?P<old>.+?)\s+"
        r"(?:over\s+)?(?:to|onto)\s+(?P<new>.+)",
        re.I,
    ),
    re.compile(r"\breplac(?:e|ed|ing)\s+(?P<old>.+?)\s+(?:with|by)\s+(?P<new>.+)", re.I),
    re.compile(
        r"\b(?:drop(?:ped|ping)?|ditch(?:ed|ing)?|dump(?:ed|ing)?)\s+(?P<old>.+?)\s+(?:for|in favou?r of)\s+"
        r"(?P<new>.+)",
        re.I,
    ),
    re.compile(r"\b(?P<new>\S.*?)\s+(?:replaces|instead of)\s+(?P<old>.+)", re.I),
    re.compile(r"(?:不再?用|弃用|放弃)\s*(?P<old>.+?)\s*了?\s*[，,、]\s*(?:改用|换成|换用|改成|用)\s*(?P<new>.+)"),
    re.compile(r"把\s*(?P<old>.+?)\s*(?:换成|改成|替换成|替换为|换为|改为)\s*(?P<new>.+)"),
    re.compile(r"从\s*(?P<old>.+?)\s*(?:换到|迁移到|迁到|切换到|切到|改到|转到|换成|改成|改为)\s*(?P<new>.+)"),
    re.compile(r"^(?P<old>[^，,]+)[，,]\s*(?:所以|因此)?\s*(?:改用|换成|换用|切换到|迁移到)\s*(?P<new>.+)"),
    re.compile(r"(?:改用|换成|换用|切换到|迁移到)\s*(?P<new>.+)"),
    re.compile(
        r"\b(?:switch(?:ed|ing)?|mov(?:ed|ing|e)|migrat(?:ed|ing|e))\s+(?:(?!from\b)[\w'-]+\s+){0,3}?(?:over\s+)?to\s+"
        r"(?P<new>.+)",
        re.I,
    ),
)


# --- analysis ---------------------------------------------------------------------------------------------

Mode = Literal["decision", "fact", "preference", "hedge", "skip"]


@dataclass
class _Statement:
    """One thing a clause says, before it is turned into a Candidate."""

    kind: str
    slot: Slot | None
    value: str | None
    confidence: float
    text: str
    hedged: bool = False
    confirms: bool = False
    person: str | None = None
    old_value: str | None = None
    rejected: str | None = None
    rationale: str | None = None
    negative: bool = False
    entity_override: str | None = None
    category_override: str | None = None
    label_override: str | None = None


@dataclass
class _Context:
    mode: Mode | None = None
    person: str | None = None
    negative: bool = False


@dataclass(frozen=True)
class _Found:
    start: int
    end: int
    value: str
    slot: Slot | None


def _find_values(text: str) -> list[_Found]:
    """Known vocabulary values in ``text``, longest match first, without overlaps, in text order."""
    return list(_find_values_cached(text))


def _find_phrases(text: str) -> list[_Found]:
    """Slot phrases in ``text``, longest first, without overlaps, in text order."""
    return list(_find_phrases_cached(text))


@lru_cache(maxsize=8192)
def _find_values_cached(text: str) -> tuple[_Found, ...]:
    taken: list[tuple[int, int]] = []
    found: list[_Found] = []
    for pattern, canonical, slot in _VALUES:
        for m in pattern.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            taken.append((m.start(), m.end()))
            found.append(_Found(m.start(), m.end(), canonical, slot))
    return tuple(sorted(found, key=lambda f: f.start))


@lru_cache(maxsize=8192)
def _find_phrases_cached(text: str) -> tuple[_Found, ...]:
    taken: list[tuple[int, int]] = []
    found: list[_Found] = []
    for pattern, slot in _PHRASES:
        for m in pattern.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            taken.append((m.start(), m.end()))
            found.append(_Found(m.start(), m.end(), m.group(0), slot))
    return tuple(sorted(found, key=lambda f: f.start))


_CONNECTORS = (
    r"(?:[:：=]|->|→|will be|should be|is going to be|is|are|uses?|using|runs? on|is (?:deployed|hosted|running)"
    r" (?:on|to|at)|(?:deployed|hosted|built|written) (?:on|to|in|with)|will be built in|goes? to|follows?|"
    r"(?:are|is) (?:run|written|done|managed|handled|built|tracked) (?:with|in|by|on)|"
    r"用的是|统一用|一律用|都用|就用|还是用|还是|使用|采用|选用|定为|定成|改为|改用|是|用|部署在|跑在|托管在|放在)"
)
_CONNECT_AFTER_SLOT = re.compile(rf"^\s*(?:{_CONNECTORS}|on|with|via|through|at)\s*(?:the\s+|our\s+)?$", re.I)
_GENERIC_AFTER_SLOT = re.compile(
    rf"^\s*{_CONNECTORS}\s*(?:the\s+|our\s+)?"
    r"(?P<v>[A-Za-z0-9][\w.+#/-]*(?:[ \t]+(?:[A-Z0-9][\w.+#/-]*|characters|chars|columns|spaces))?)",
    re.I,
)
_CONNECT_BEFORE_SLOT = re.compile(
    r"^\s*(?:(?:for|as|in|on)\s+(?:the\s+|our\s+|all\s+|a\s+|an\s+)?(?:[\w-]+\s+)?|做|作为|当|来做|来|管理|写|存)\s*$",
    re.I,
)


# Slots whose known values can stand in for each other ("Redis for the job queue"): a slot phrase bound to a
# known value re-files it only within its group; elsewhere the value's own slot wins ("用 Kotlin 写后端").
_INTERCHANGEABLE = (
    frozenset({"cache", "queue", "database", "search", "vector_store", "warehouse", "object_storage"}),
    frozenset({"backend_framework", "frontend_framework", "runtime"}),
    frozenset({"testing", "e2e_testing"}),
    frozenset({"linter", "formatter", "type_checker"}),
    frozenset({"monitoring", "bi"}),
)


def _rebind(value: _Found, phrase_slot: Slot | None) -> Slot | None:
    if value.slot is None or phrase_slot is None or value.slot == phrase_slot:
        return phrase_slot or value.slot
    same_group = any({value.slot.entity, phrase_slot.entity} <= group for group in _INTERCHANGEABLE)
    return phrase_slot if same_group else value.slot


def _bound_pairs(text: str, values: list[_Found], phrases: list[_Found]) -> list[_Found]:
    """(value, slot) pairs where a slot phrase is attached to a value: "cache: Redis", "Redis for caching"."""
    pairs: list[_Found] = []
    for phrase in phrases:
        for value in values:
            after = value.start >= phrase.end and _CONNECT_AFTER_SLOT.match(text[phrase.end : value.start])
            before = value.end <= phrase.start and _CONNECT_BEFORE_SLOT.match(text[value.end : phrase.start])
            if after or before:
                pairs.append(_Found(value.start, value.end, value.value, _rebind(value, phrase.slot)))
        if not any(p.slot == phrase.slot for p in pairs):
            generic = _generic_after(text, phrase)
            if generic is not None:
                pairs.append(generic)
    return pairs


def _generic_after(text: str, phrase: _Found) -> _Found | None:
    """An out-of-vocabulary value right after a slot phrase and its connector ("testing: testify")."""
    m = _GENERIC_AFTER_SLOT.match(text[phrase.end :])
    if m is None or not _looks_like_a_name(m.group("v")):
        return None
    start = phrase.end + m.start("v")
    value = m.group("v").rstrip(".,")
    return _Found(start, start + len(value), value, phrase.slot)


_NOT_NAME_WORD = re.compile(
    r"^(?:\w+(?:ed|ing)|run|built|written|done|set|made|up|out|also|still|now|currently|just|always|never|very|"
    r"really|pretty|quite|too|so|being|going|fine|good|great|bad|slow|fast|ok|okay|important|ready|broken)$",
    re.I,
)


def _looks_like_a_name(value: str) -> bool:
    """An out-of-vocabulary value must look like a thing's name, not a verb or filler ("written in", "so slow")."""
    first = value.split()[0].lower()
    return not (first in _NOT_A_NAME or first in ENGLISH_STOPWORDS or _NOT_NAME_WORD.match(first))


def _is_rejected(text: str, found: _Found) -> bool:
    return bool(_REJECTED_BEFORE.search(text[: found.start]))


def _pairs_in(text: str) -> list[_Found]:
    """The (value, slot) pairs a clause states, bound pairs first, rejected alternatives removed."""
    values = [v for v in _find_values(text) if REDACTED not in v.value]
    phrases = _find_phrases(text)
    bound = _bound_pairs(text, values, phrases)
    out: list[_Found] = []
    seen_slots: set[tuple[str, str]] = set()
    for pair in [*bound, *values]:
        if pair.slot is None or _is_rejected(text, pair) or REDACTED in pair.value:
            continue
        slot_id = (pair.slot.category, pair.slot.entity)
        if slot_id in seen_slots or any(o.start == pair.start for o in out):
            continue
        seen_slots.add(slot_id)
        out.append(pair)
    return sorted(out, key=lambda p: p.start)


def _rationale(text: str) -> tuple[str, str | None]:
    """Split a because-clause off ``text``: (the rest, the reason)."""
    m = _RATIONALE.search(text)
    if m:
        why = (m.group("why") or m.group("why_zh") or "").strip(" ,，.。!！")
        return text[: m.start()].rstrip(" ,，"), why or None
    return text, None


def _so_rationale(text: str) -> str | None:
    """"Prisma 太慢了，换成 Drizzle" / "cold starts hurt, so we moved to X": the reason before the switch."""
    m = _SO_RATIONALE.match(text)
    return m.group("why").strip(" ,，") or None if m else None


_WORD = re.compile(r"[\u3400-\u9fff]+|[^\W_][\w'+#.-]*", re.UNICODE)


def _terms(text: str) -> set[str]:
    """Content terms for overlap tests: English words without stop words, CJK character bigrams (no jieba)."""
    out: set[str] = set()
    for tok in _WORD.findall(text.lower()):
        if contains_cjk(tok):
            chars = [c for c in tok if c not in STOPWORDS]
            out.update(a + b for a, b in zip(chars, chars[1:]))
            if len(chars) == 1:
                out.add(chars[0])
        elif tok not in STOPWORDS and len(tok) > 1:
            out.add(tok.strip(".-"))
    return out


def _is_question(sentence: str) -> bool:
    s = sentence.strip()
    return s.endswith(("?", "？")) or bool(_QUESTION_START.match(s)) or bool(_QUESTION_ZH.search(s))


def _is_chitchat(sentence: str) -> bool:
    return bool(_GREETING.match(sentence.strip())) and not _find_values(sentence)


# --- sentence analysis ------------------------------------------------------------------------------------


def _analyse_sentence(sentence: str, *, proposal: bool = False) -> tuple[list[_Statement], bool]:
    """Statements in one sentence, and whether the sentence is a bare acceptance ("yes, let's do that")."""
    sentence = sentence.strip()
    if not sentence or REDACTED in sentence or (_is_chitchat(sentence) and not _CONFIRM_PREFIX.match(sentence)):
        return [], False
    confirms = False
    prefix = _CONFIRM_PREFIX.match(sentence)
    if prefix and not proposal:
        rest = sentence[prefix.end() :].strip()
        if not rest or _ACCEPT_ONLY.match(rest):
            return [], _is_strong_acceptance(sentence, rest)
        sentence, confirms = rest, True
    hedged = bool(_HEDGE.search(sentence))
    if _is_question(sentence) and not hedged and not proposal:
        return [], False
    if _is_chitchat(sentence):
        return [], False
    confirms = (confirms or bool(_CONFIRM_ANYWHERE.search(sentence))) and not hedged
    switched = _switch_statement(sentence, hedged=hedged, confirms=confirms)
    if switched is not None:
        return [switched], False
    return _clause_statements(sentence, hedged=hedged, confirms=confirms, proposal=proposal), False


def _is_strong_acceptance(sentence: str, rest: str) -> bool:
    """"ok" alone is too weak to accept a proposal; "agreed", "sounds good", "yes, let's do that" are not."""
    weak = re.fullmatch(
        r"(?:ok(?:ay)?|sure|yes|yeah|yep|right|fine|fair|great|perfect|嗯|好|对|行)[\s.!！。,，]*", sentence, re.I
    )
    return not weak or bool(rest)


def _switch_statement(sentence: str, *, hedged: bool, confirms: bool) -> _Statement | None:
    body, why = _rationale(sentence)
    for pattern in _SWITCH:
        m = pattern.search(body)
        if not m:
            continue
        new_pairs = _pairs_in(m.group("new"))
        if not new_pairs:
            continue
        new = new_pairs[0]
        old_text = m.groupdict().get("old") or body[: m.start("new")]
        old_values = [v for v in _find_values(old_text) if v.value != new.value]
        same_slot = [v for v in old_values if v.slot == new.slot]
        old = (same_slot or old_values or [None])[0]
        if why is None and old is not None:
            why = _so_rationale(body)
            why = why if why and _norm(why) != _norm(old.value) and len(_terms(why)) > 1 else None
        return _Statement(
            kind="decision",
            slot=new.slot,
            value=new.value,
            confidence=CONF_HEDGE if hedged else CONF_SWITCH,
            text=sentence,
            hedged=hedged,
            confirms=confirms,
            old_value=old.value if old else None,
            rationale=why,
        )
    return None


def _clause_statements(sentence: str, *, hedged: bool, confirms: bool, proposal: bool) -> list[_Statement]:
    body, why = _rationale(sentence)
    ctx = _Context()
    out: list[_Statement] = []
    for clause in _clauses(body):
        ctx_mode_before = ctx.mode
        mode, person, negative = _clause_mode(clause, ctx, hedged=hedged, confirms=confirms, proposal=proposal)
        if mode is None:
            continue
        ctx = _Context(mode, person, negative)
        if mode == "skip":
            _attach_rejection(out, clause)
            continue
        inherited = mode == ctx_mode_before and not _PREFERENCE.search(clause) and not _MY_PREFERENCE.search(clause)
        out.extend(_statements_for(clause, mode, person, negative, hedged=hedged, confirms=confirms, sentence=sentence,
                                   inherited=inherited))
    if why and out:
        out[-1].rationale = why
    return out


def _attach_rejection(out: list[_Statement], clause: str) -> None:
    rejected = [v.value for v in _find_values(clause)]
    if out and rejected and out[-1].rejected is None and rejected[0] != out[-1].value:
        out[-1].rejected = rejected[0]


def _clause_mode(
    clause: str, ctx: _Context, *, hedged: bool, confirms: bool, proposal: bool
) -> tuple[Mode | None, str | None, bool]:
    """Decide what a clause is; a clause with no marker of its own continues the previous clause's mode."""
    pref = _PREFERENCE.search(clause)
    if pref and _person(pref) != "__invalid__":
        return "preference", _person(pref), bool(_NEGATIVE_PREFERENCE.search(clause))
    if _MY_PREFERENCE.search(clause):
        return "preference", None, False
    if _NEGATION.search(clause) and not _pairs_before_negation(clause):
        return "skip", None, False
    if hedged and (_HEDGE.search(clause) or ctx.mode in (None, "hedge", "skip")):
        return "hedge", None, False
    if proposal:
        return ("decision", None, False) if _PROPOSAL_MARK.search(clause) else (None, None, False)
    if _DECISION.search(clause) or confirms:
        return "decision", None, False
    if _FACT.search(clause) or _OWNER.search(clause) or _ROLE_STATEMENT.search(clause) or _has_bound_pair(clause):
        return "fact", None, False
    if ctx.mode in ("decision", "fact", "preference", "hedge"):
        return ctx.mode, ctx.person, ctx.negative
    return None, None, False


def _pairs_before_negation(clause: str) -> bool:
    """"Hono, not Express" / "用 Gin，不用 Echo": the clause states a value before it rejects another."""
    neg = _NEGATION.search(clause)
    return bool(neg and [v for v in _pairs_in(clause[: neg.start()])])


def _has_bound_pair(clause: str) -> bool:
    values = _find_values(clause)
    phrases = _find_phrases(clause)
    return any(p.value for p in _bound_pairs(clause, values, phrases))


def _person(match: re.Match[str]) -> str | None:
    who = (match.group("who") or match.group("who_zh") or "").strip()
    if who in ("I", "我") or (who.startswith("我") and not who.startswith("我们")):
        return None
    if who.lower() in ("we", "我们"):
        return "team"
    if who.lower() in _NOT_A_NAME or re.search(r"[的了是在就都也还用说]", who):
        return "__invalid__"
    return who


def _statements_for(
    clause: str,
    mode: Mode,
    person: str | None,
    negative: bool,
    *,
    hedged: bool,
    confirms: bool,
    sentence: str,
    inherited: bool = False,
) -> list[_Statement]:
    people = _people_statement(clause) if mode == "fact" else None
    if people is not None:
        return [people]
    pairs = _pairs_in(clause)
    if mode == "preference":
        return _preference_statements(clause, pairs, person, negative, keyless_ok=not inherited)
    if not pairs:
        return _keyless(clause, mode, sentence)
    if mode in ("hedge", "preference"):
        pairs = pairs[:1]
    conf = {"hedge": CONF_UNSURE if _UNSURE.search(sentence) else CONF_HEDGE, "decision": CONF_DECISION}.get(
        mode, CONF_FACT
    )
    if confirms and mode != "hedge":
        conf = CONF_CONFIRM
    kind = "fact" if mode == "fact" else "decision"
    return [
        _Statement(kind=kind, slot=p.slot, value=p.value, confidence=conf, text=clause, hedged=mode == "hedge",
                   confirms=confirms and mode != "hedge")
        for p in pairs
    ]


def _preference_statements(
    clause: str, pairs: list[_Found], person: str | None, negative: bool, *, keyless_ok: bool = True
) -> list[_Statement]:
    conf = CONF_PREFERENCE if person in (None, "team") else CONF_OTHER_PREFERENCE
    if pairs and not negative:
        p = pairs[0]
        return [_Statement(kind="preference", slot=p.slot, value=p.value, confidence=conf, text=clause, person=person)]
    if keyless_ok and _substantive(clause):
        return [_Statement(kind="preference", slot=None, value=None, confidence=conf, text=clause, person=person,
                           negative=negative)]
    return []


def _substantive(clause: str) -> bool:
    """Enough content to stand alone as a keyless memory: not "I like this idea"."""
    terms = _terms(clause) - {"idea", "prefer", "like", "rather", "think", "喜欢", "觉得"}
    return len(terms) >= 2 and not re.search(r"\b(?:this|that|it|these|those)\b\s*[.!]?$", clause, re.I)


def _keyless(clause: str, mode: Mode, sentence: str) -> list[_Statement]:
    """A statement with no slot: only strong decisions ("we decided ...") and conventions ("we never ...")."""
    if mode == "decision" and _STRONG_DECISION.search(clause) and _substantive(clause):
        return [_Statement(kind="decision", slot=None, value=None, confidence=CONF_DECISION, text=sentence)]
    if mode == "fact" and _CONVENTION.search(clause) and _substantive(clause) and not _is_question(clause):
        return [_Statement(kind="fact", slot=None, value=None, confidence=CONF_KEYLESS, text=sentence)]
    return []


def _people_statement(clause: str) -> _Statement | None:
    owner = _OWNER.search(clause)
    if owner:
        who = (owner.group("who") or owner.group("who_zh") or "").strip()
        area = (owner.group("area") or owner.group("area_zh") or "").strip(" .。")
        if who and who.lower() not in _NOT_A_NAME and area:
            entity = f"{_owner_area(area)}_owner"
            return _Statement(kind="fact", slot=None, value=who, confidence=CONF_FACT, text=clause,
                              category_override="people", entity_override=entity, label_override=area)
    role = _ROLE_STATEMENT.search(clause)
    if role:
        who = (role.group("who") or role.group("who_zh") or "").strip()
        text = role.group("role") or role.group("role_zh") or ""
        for pattern, entity, en, zh in _ROLES:
            if re.search(pattern, text, re.I) and who.lower() not in _NOT_A_NAME:
                return _Statement(kind="fact", slot=None, value=who, confidence=CONF_FACT, text=clause,
                                  category_override="people", entity_override=entity,
                                  label_override=zh if contains_cjk(clause) else en)
    return None


def _owner_area(area: str) -> str:
    phrases = _find_phrases(area)
    if phrases and phrases[0].start == 0 and phrases[0].slot and phrases[0].slot.owner_area:
        rest = area[phrases[0].end :].strip()
        if not rest or contains_cjk(area):
            return phrases[0].slot.owner_area
    words = re.findall(r"[\w\u4e00-\u9fff-]+", area)[:3]
    return normalize_segment(" ".join(words)) if words else "area"


# --- turn level -------------------------------------------------------------------------------------------


def _analyse_message(text: str, *, proposal: bool = False) -> tuple[list[_Statement], bool]:
    statements: list[_Statement] = []
    accepted = False
    for sentence in _sentences(_strip_noise(redact_secrets(text))):
        found, bare = _analyse_sentence(sentence, proposal=proposal)
        statements.extend(found)
        accepted = accepted or bare
    return statements, accepted




def _proposals(text: str, existing: Sequence[ExistingMemory], project: str) -> list[_Statement]:
    """Keyed values an assistant message proposes, minus echoes of stored facts and ambiguous alternatives."""
    props: list[_Statement] = []
    for sentence in _sentences(_strip_noise(redact_secrets(text))):
        if not _PROPOSAL_MARK.search(sentence):
            continue
        found, _ = _analyse_sentence(sentence, proposal=True)
        props.extend(s for s in found if s.slot is not None and s.value and s.kind != "preference")
    by_key: dict[str, list[_Statement]] = {}
    for s in props:
        by_key.setdefault(_key_for(s, project) or "", []).append(s)
    stored = {(m.key, _norm(m.value)) for m in existing if not m.pending and m.key}
    chosen = []
    for key, items in by_key.items():
        values = {_norm(s.value) for s in items}
        if key and len(values) == 1 and (key, values.pop()) not in stored:
            chosen.append(items[0])
    return chosen


def _resolve_acceptance(
    previous_assistant: TurnMessage | None, existing: Sequence[ExistingMemory], project: str
) -> tuple[list[_Statement], list[str]]:
    """What a bare "yes, let's do that" accepts: the assistant's proposal, else the newest pending memory."""
    if previous_assistant is not None:
        props = _proposals(previous_assistant.text, existing, project)
        if props:
            ids = [previous_assistant.id] if previous_assistant.id else []
            return [replace(p, confirms=True, hedged=False, confidence=CONF_RESOLVED_CONFIRM, kind="decision",
                            rationale=None) for p in props], ids
    pending = [m for m in existing if m.pending]
    if not pending:
        return [], []
    newest = max(pending, key=lambda m: m.local_id)
    return [_statement_from_memory(newest)], []


_ANSWER_FILLER = re.compile(
    r"\b(?:obviously|of course|definitely|please|probably|i guess|i think|for sure|then|still|just|the|our)\b|"
    r"当然|肯定|吧|呀|啊|还是|就|用",
    re.I,
)
CONF_ANSWER = 0.85


def _short_answer(text: str, question: TurnMessage | None) -> list[_Statement]:
    """"Postgres, obviously." right after the assistant asked "Which database?": one value answering the question."""
    if question is None:
        return []
    asked = [s for s in _sentences(_strip_noise(question.text)) if _is_question(s)]
    clean = _strip_noise(redact_secrets(text[:MAX_SENTENCE_CHARS])).strip()
    if not asked or REDACTED in clean or _is_question(clean):
        return []
    rest = _ANSWER_FILLER.sub(" ", clean)
    if len(re.findall(r"[A-Za-z0-9][\w.+#-]*|[\u3400-\u9fff]", rest)) > 6:
        return []
    values = [v for v in _find_values(clean) if not _is_rejected(clean, v)]
    if len({v.value for v in values}) != 1:
        return []
    asked_slots = [p.slot for p in _find_phrases(asked[-1])]
    slot = _rebind(values[0], asked_slots[0]) if asked_slots else values[0].slot
    hedged = bool(_HEDGE.search(clean))
    return [_Statement(kind="decision", slot=slot, value=values[0].value, text=clean, hedged=hedged,
                       confidence=CONF_HEDGE if hedged else CONF_ANSWER)]


def _statement_from_memory(memory: ExistingMemory) -> _Statement:
    slot = None
    category = entity = None
    if memory.key and memory.key.count(":") == 2:
        _, category, entity = memory.key.split(":")
        slot = _SLOT_BY_KEY.get((category, entity))
    return _Statement(kind="decision", slot=slot, value=memory.value, confidence=CONF_RESOLVED_CONFIRM,
                      text=memory.content, confirms=True, category_override=category, entity_override=entity)


# --- candidates ---------------------------------------------------------------------------------------------


def _key_for(s: _Statement, project: str) -> str | None:
    try:
        if s.category_override and s.entity_override:
            return f"{project}:{normalize_segment(s.category_override)}:{normalize_segment(s.entity_override)}"
        if s.slot is None:
            return None
        if s.kind == "preference":
            entity = s.slot.entity if s.person in (None, "team") else f"{s.person}_{s.slot.entity}"
            return f"{project}:preference:{normalize_segment(entity)}"
        return f"{project}:{s.slot.category}:{s.slot.entity}"
    except ValueError:
        return None


def _norm(value: str | None) -> str:
    return re.sub(r"[\s\-_.]+", "", (value or "").casefold())


def _label(s: _Statement, zh: bool) -> str:
    if s.slot is not None:
        return s.slot.zh if zh else s.slot.en
    return (s.entity_override or "").replace("_", " ")


def _who(s: _Statement, zh: bool) -> str:
    if s.person is None:
        return "用户" if zh else "The user"
    if s.person == "team":
        return "团队" if zh else "The team"
    return s.person


def _content(s: _Statement, project: str) -> str:
    zh = contains_cjk(s.text)
    if s.value is None:
        return _keyless_content(s, project, zh)
    if s.category_override == "people":
        return _people_content(s, project, zh)
    if s.kind == "preference":
        return (f"{_who(s, zh)}偏好{_label(s, zh)}用 {s.value}。" if zh
                else f"{_who(s, zh)} prefers {s.value} as the {_label(s, zh)}.")
    return _decision_content(s, project, zh)


def _decision_content(s: _Statement, project: str, zh: bool) -> str:
    label = _label(s, zh)
    if zh:
        head = f"{project} 项目可能用 {s.value} 作为{label}（未定）" if s.hedged else f"{project} 项目的{label}是 {s.value}"
        tail = f"（替换 {s.old_value}）" if s.old_value else (f"（不用 {s.rejected}）" if s.rejected else "")
        why = f"，因为{s.rationale}" if s.rationale else ""
        return f"{head}{tail}{why}。"
    head = (f"The {project} project might use {s.value} as its {label} (tentative)" if s.hedged
            else f"The {project} project uses {s.value} as its {label}")
    tail = f", replacing {s.old_value}" if s.old_value else (f", not {s.rejected}" if s.rejected else "")
    why = f", because {s.rationale}" if s.rationale else ""
    return f"{head}{tail}{why}."


def _people_content(s: _Statement, project: str, zh: bool) -> str:
    role = s.label_override or _label(s, zh).removesuffix(" owner")
    owner = (s.entity_override or "").endswith("_owner")
    if zh:
        return f"{project} 项目中{s.value}负责{role}。" if owner else f"{project} 项目中{s.value}是{role}。"
    if owner:
        return f"In the {project} project, {s.value} owns the {role}."
    return f"In the {project} project, {s.value} is the {role}."


def _keyless_content(s: _Statement, project: str, zh: bool) -> str:
    """No slot to template: the statement itself, said where it applies (and by whom, for preferences)."""
    text = s.text.strip().rstrip("。.!！")
    if zh:
        speaker = "用户说" if s.kind == "preference" and s.person is None else ""
        return f"{project} 项目：{speaker}{text}。"
    if s.kind == "preference" and s.person is None:
        return f"In the {project} project, the user said: {text}."
    return f"In the {project} project: {text}."


def _link(
    s: _Statement, key: str | None, existing: Sequence[ExistingMemory], project: str
) -> tuple[int | None, list[int], bool]:
    """(same_as, supersedes, confirms) for a statement against the stored memories."""
    if key is None:
        return _link_keyless(s, existing, project), [], s.confirms
    same_key = [m for m in existing if m.key == key]
    stored_same = [m for m in same_key if not m.pending and _norm(m.value) == _norm(s.value)]
    if stored_same:
        return max(m.local_id for m in stored_same), [], s.confirms
    if s.hedged:
        return None, [], False
    pending_same = [m for m in same_key if m.pending and _norm(m.value) == _norm(s.value)]
    supersedes = [m.local_id for m in same_key if _norm(m.value) != _norm(s.value)]
    if s.old_value:
        supersedes += [m.local_id for m in existing if m.key is None and _names(m.content, s.old_value)
                       and m.local_id not in supersedes]
    return None, sorted(supersedes), s.confirms or bool(pending_same)


def _names(content: str, value: str) -> bool:
    return bool(re.search(_term_pattern(value), content, re.I))


def _link_keyless(s: _Statement, existing: Sequence[ExistingMemory], project: str) -> int | None:
    """A stored memory saying the same thing: nearly all of its content terms (template words aside) recur."""
    template = _terms(f"{project} project 项目") | {project.lower()}
    mine = _terms(s.text) - template
    if not mine:
        return None
    for m in existing:
        theirs = _terms(m.content) - template
        shared = len(mine & theirs)
        if theirs and shared / len(mine) >= 0.8 and shared / len(theirs) >= 0.8:
            return m.local_id
    return None


def _candidate(s: _Statement, project: str, existing: Sequence[ExistingMemory], ids: list[str]) -> Candidate | None:
    key = _key_for(s, project)
    if s.value is not None and (REDACTED in s.value or not s.value.strip()):
        return None
    same_as, supersedes, confirms = _link(s, key, existing, project)
    return Candidate(
        kind=s.kind,  # type: ignore[arg-type]
        content=redact_secrets(_content(s, project)),
        key=key,
        value=redact_secrets(s.value) if (key and s.value) else None,
        rationale=redact_secrets(s.rationale) if s.rationale else None,
        confidence=s.confidence,
        hedged=s.hedged,
        confirms=confirms,
        supersedes=supersedes,
        same_as=same_as,
        source_message_ids=list(ids),
    )


def _dedupe(statements: Iterable[tuple[_Statement, list[str]]], project: str) -> list[tuple[_Statement, list[str]]]:
    """One statement per key: a firm statement beats a hedge, a later one beats an earlier one."""
    out: dict[str, tuple[_Statement, list[str]]] = {}
    for n, (s, ids) in enumerate(statements):
        key = _key_for(s, project) or f"__keyless_{n}"
        prior = out.get(key)
        if prior is not None and s.hedged and not prior[0].hedged:
            continue
        out.pop(key, None)
        out[key] = (s, ids)
    return list(out.values())


@dataclass
class _TurnState:
    previous_assistant: TurnMessage | None = None
    found: list[tuple[_Statement, list[str]]] = field(default_factory=list)


def extract_candidates(
    messages: Sequence[TurnMessage], *, project: str, existing: Sequence[ExistingMemory] = ()
) -> list[Candidate]:
    """Memory candidates stated by the user in ``messages`` (one turn), linked to the ``existing`` memories.

    Only user messages are read for statements; an assistant message counts only as the proposal a following user
    message accepts ("yes, let's do that"). Output order follows the text; at most one candidate per key.
    """
    normalize_segment(project)
    state = _TurnState()
    for message in messages:
        if message.role == "assistant":
            state.previous_assistant = message
            continue
        if message.role != "user":
            continue
        ids = [message.id] if message.id else []
        statements, accepted = _analyse_message(message.text)
        if not statements and not accepted:
            statements = _short_answer(message.text, state.previous_assistant)
        if accepted and not any(s.slot for s in statements):
            resolved, extra_ids = _resolve_acceptance(state.previous_assistant, existing, project)
            state.found.extend((s, [*extra_ids, *ids]) for s in resolved)
        state.found.extend((s, ids) for s in statements)
    candidates = (_candidate(s, project, existing, ids) for s, ids in _dedupe(state.found, project))
    return [c for c in candidates if c is not None]


def canonical_value(text: str) -> str | None:
    """The vocabulary's canonical spelling of a value written ``text`` ("PostgreSQL" -> "Postgres"), else None."""
    found = _find_values(text.strip())
    if len(found) == 1 and found[0].start == 0 and found[0].end == len(text.strip()):
        return found[0].value
    return None
