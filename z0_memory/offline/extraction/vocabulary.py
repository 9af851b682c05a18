"""The vocabulary as data: slots (where a fact lives in the key, how people name it, values known to fill it),
roles, and the finders that locate values and slot phrases in a clause. The vocabulary only names keys; a value it
does not know is still a value (see ``statements``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from z0_memory.text import contains_cjk


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
          "api layer;api server;http server;http router;backend service;服务器框架;backend framework;backend;back end;back-end;server side;server-side;server framework;api framework;"
          "web framework;server;http framework;the api;HTTP 框架;Web 框架;"
          "后端框架;后端;服务端框架;服务端",
          "Hono;Express|Express.js;Fastify;Koa;NestJS|Nest.js|Nest;Django;FastAPI;Flask;Rails|Ruby on Rails;Spring Boot;"
          "Gin;Echo;Actix|Actix Web;Axum;Laravel;Phoenix;Litestar;Starlette;Elysia;"
          # the better-known rest, so that "Quarkus, not Spring Boot" or "Tornado vs aiohttp" names a framework
          "Quarkus;Micronaut;Ktor;Vert.x;Helidon;Dropwizard;Javalin;Play Framework;Sinatra;Hanami;Tornado;aiohttp;Sanic;"
          "Quart;~Falcon;~Bottle;~Pyramid;Kratos;go-zero;~Fiber;~Chi;Beego;~Rocket;~Warp;Poem;Midway;Egg.js;ThinkPHP;"
          "Symfony;CodeIgniter;CakePHP;Lumen;ASP.NET Core|ASP.NET|.NET Core;AdonisJS;LoopBack;Hapi;Restify;~Vapor", area="backend"),
    _slot("stack", "frontend_framework", "frontend framework", "前端框架",
          "web client;client side;client-side;spa;web frontend;客户端;frontend framework;frontend;front end;front-end;ui framework;web app;前端框架;前端",
          "React;Vue|Vue.js;Svelte;SvelteKit;SolidJS|=Solid;Angular;Next.js|NextJS;Nuxt;Remix;Astro;Qwik;Hotwire;htmx;"
          "Ember|Ember.js;Preact;Alpine.js;Blazor;LiveView|Phoenix LiveView;"
          # mobile and mini-program UI frameworks: what a mobile product's front end is written in
          "Flutter;React Native;Ionic;uni-app;Taro",
          area="frontend"),
    _slot("stack", "language", "language", "开发语言",
          "programming language;language;编程语言;开发语言;语言",
          "TypeScript|=TS;JavaScript;Python;Golang|=Go|Go 语言|Go语言;Rust;Java;Kotlin;Ruby;Elixir;C#;Swift;Zig;"
          "PHP;Dart;Lua;OCaml;C++|C++11|C++14|C++17|C++20|C++23;Scala;Haskell;Clojure;Erlang;F#;Julia;Perl;Gleam;Objective-C;Solidity"),
    _slot("stack", "runtime", "runtime", "运行时", "runtime;运行时", "Node.js|NodeJS|=Node;Deno;Bun"),
    _slot("stack", "css", "styling", "样式方案",
          "css framework;styling;css;样式方案;样式", "Tailwind CSS|Tailwind|TailwindCSS;Bootstrap;CSS Modules;"
          "styled-components;UnoCSS;Sass"),
    _slot("stack", "auth", "authentication", "认证方案",
          "authentication provider;identity provider;idp;sso;user auth;login system;身份认证;用户认证;authentication;auth;login;sign-in;认证;鉴权;登录",
          "Clerk;Auth0;Supabase Auth;Keycloak;NextAuth;Auth.js;Cognito;Lucia;Firebase Auth", area="auth"),
    _slot("stack", "queue", "job queue", "消息队列",
          "background processing;background workers;background job;job processing;async jobs;event bus;event streaming;message broker;pub/sub;pubsub;异步任务;后台任务;消息中间件;message queue;job queue;task queue;background jobs;queue;消息队列;任务队列;队列",
          "Kafka;RabbitMQ;SQS;BullMQ;Celery;NATS;Sidekiq;Temporal;Pulsar;RocketMQ;ActiveMQ;Dramatiq;RQ;Resque;Oban;"
          "Hangfire;Faktory;Procrastinate;Redpanda;Google Pub/Sub;"
          "arq;Inngest;pg-boss;Solid Queue;GoodJob;Asynq;Huey;django-q2;Redis Streams|Redis Stream;Machinery"),
    # devices publish to an MQTT broker; a project often runs one beside its job queue ("the mqtt broker is EMQX. not
    # sure whether to also put Oban on top"), so it is a slot of its own
    _slot("stack", "mqtt_broker", "MQTT broker", "MQTT 服务器", "mqtt broker;mqtt server;MQTT 服务器;MQTT 服务端;MQTT broker",
          "EMQX;Mosquitto|Eclipse Mosquitto;HiveMQ;VerneMQ"),
    _slot("stack", "payments", "payment provider", "支付服务", "billing;payment processing;checkout;收款;计费;payment provider;payments;支付",
          "Stripe;Paddle;Adyen;Braintree"),
    _slot("database", "database", "database", "数据库",
          "primary db;main db;data store;persistence;relational database;sql database;存储;primary database;main database;database;datastore;db;主数据库;数据库",
          "Supabase Postgres;Postgres|PostgreSQL|psql|=PG|=pg;MySQL;MariaDB;SQLite;MongoDB|Mongo;DynamoDB;"
          "CockroachDB;PlanetScale;Neon;Firestore;Cassandra;TiDB;TimescaleDB;InfluxDB;Supabase;"
          "ScyllaDB|Scylla;SQL Server;Oracle;TDengine;Turso;libSQL;Couchbase;Neo4j;SurrealDB;OceanBase;PolarDB;CouchDB;"
          "WatermelonDB;Isar;~Realm;D1|Cloudflare D1;Pocketbase|PocketBase;达梦", area="database"),
    _slot("database", "cache", "cache", "缓存", "caching layer;session store;in-memory store;缓存服务;cache layer;caching;cache;缓存层;缓存",
          "Redis;Memcached;Valkey;KeyDB;Dragonfly;Caffeine;Cachex;Ehcache;Hazelcast"),
    _slot("database", "orm", "ORM", "ORM", "database layer;db layer;data layer;persistence layer;orm;query builder;data access layer;数据访问层;持久层框架;持久层",
          "Drizzle|Drizzle ORM;Prisma;SQLAlchemy;TypeORM;Sequelize;Django ORM;Kysely;GORM;SQLModel;Peewee;"
          "MikroORM;SeaORM;~Exposed;Hibernate;MyBatis;Diesel;Ecto;Active Record|ActiveRecord;Eloquent;Doctrine;"
          "Entity Framework|EF Core;Mongoose;Tortoise ORM;Objection.js;sqlc;sqlx;Spring Data JPA|JPA;MyBatis-Plus;jOOQ;"
          "~Drift"),
    _slot("database", "migrations", "migration tool", "迁移工具",
          "db migrations;database migrations;schema migrations;migration tool;migrations;迁移工具;数据库迁移;迁移脚本",
          "Alembic;Flyway;Liquibase;Atlas;golang-migrate;goose;dbmate;Sqitch;drizzle-kit"),
    _slot("database", "search", "search engine", "搜索引擎",
          "search backend;full text search;site search;检索;search engine;full-text search;search;全文搜索;搜索引擎;搜索功能;搜索",
          "Elasticsearch;OpenSearch;Meilisearch;Typesense;Algolia;Solr|Apache Solr;Manticore;Pagefind;Easysearch;Vespa"),
    _slot("database", "warehouse", "data warehouse", "数据仓库",
          "analytics database;olap;reporting database;数据分析;data warehouse;analytics warehouse;warehouse;数据仓库;数仓",
          "ClickHouse;DuckDB;BigQuery;Snowflake;Redshift;Databricks"),
    _slot("database", "vector_store", "vector store", "向量数据库",
          "embeddings store;embedding store;vector index;向量检索;vector store;vector database;vector db;向量数据库;向量库",
          "pgvector;Pinecone;Qdrant;Weaviate;Chroma;Milvus"),
    _slot("database", "object_storage", "object storage", "对象存储",
          "file uploads;uploads;blob store;asset storage;media storage;文件上传;图片存储;object storage;file storage;blob storage;对象存储;文件存储", "S3|Amazon S3;R2|Cloudflare R2;GCS;MinIO;"
          "阿里云 OSS|Aliyun OSS|OSS;腾讯云 COS|Tencent COS|COS;七牛云|七牛|Qiniu;Backblaze B2|B2;Supabase Storage;Firebase Storage"),
    _slot("tooling", "testing", "test framework", "测试框架",
          "test runner;unit testing;test suite;测试工具;test framework;testing framework;unit tests;testing;tests;测试框架;单元测试;测试",
          "pytest;Jest;Vitest;Mocha;unittest;RSpec;JUnit;testify;Go test;"
          "Minitest;ExUnit;GoogleTest|gtest;PHPUnit;Kotest;TestNG;xUnit;NUnit;cargo-nextest|cargo nextest|nextest;Catch2;proptest;ppx_expect", area="testing"),
    _slot("tooling", "e2e_testing", "end-to-end test tool", "端到端测试",
          "browser tests;browser testing;system tests;system test;ui tests;end-to-end tests;end-to-end test;end-to-end testing;e2e tests;e2e test;e2e testing;e2e;端到端测试", "Playwright;Cypress;Selenium"),
    _slot("tooling", "package_manager", "package manager", "包管理器",
          "package manager;dependency management;包管理器;包管理;依赖管理", "pnpm;npm;Yarn;uv;Poetry;pip;pipenv;Cargo;pixi;Hatch;PDM;conda"),
    _slot("tooling", "linter", "linter", "代码检查工具",
          "static analysis;lint rules;linter;linting;lint;代码检查;静态检查", "ESLint;Biome;Ruff;flake8;pylint;golangci-lint;Clippy;oxlint;"
          "RuboCop|rubocop-rails-omakase;Credo;sqlfluff;Stylelint;Checkstyle;ktlint;detekt;clang-tidy;ShellCheck;P3C"),
    _slot("tooling", "formatter", "formatter", "格式化工具",
          "code formatting;auto-formatting;代码格式化;code formatter;formatter;formatting;格式化工具;格式化", "Prettier;Black;gofmt;rustfmt;dprint;ocamlformat;clang-format;mix format;Spotless;ktfmt;swift-format"),
    _slot("tooling", "type_checker", "type checker", "类型检查", "type checker;type checking;类型检查",
          "mypy;Pyright;tsc;Dialyzer;Sorbet"),
    _slot("tooling", "ci", "CI", "CI", "build pipeline;ci server;流水线;continuous integration;ci/cd;ci pipeline;ci;持续集成",
          "GitHub Actions;GitLab CI;CircleCI;Jenkins;Buildkite;Travis CI;Drone;"
          "Forgejo Actions;Gitea Actions;Woodpecker|Woodpecker CI;TeamCity;Azure Pipelines;Bitbucket Pipelines", area="ci"),
    _slot("tooling", "bundler", "bundler", "构建工具", "bundler;build tool;frontend build;打包工具;构建工具;前端构建",
          "Vite;webpack;esbuild;Rollup;Turbopack;Parcel;tsup;Rspack;"
          # build tools of compiled languages: what "build tool" names there
          "Gradle;Maven;CMake;Bazel;Meson;sbt;dune"),
    _slot("tooling", "monitoring", "monitoring", "监控",
          "error reporting;crash reporting;apm;metrics;alerting;tracing;告警;指标;error tracking;error monitoring;monitoring;observability;log management;logging;logs;错误监控;监控;可观测性;"
          "日志",
          "Sentry;Datadog;Grafana;Prometheus;New Relic;Honeycomb;OpenTelemetry;Honeybadger;Rollbar;Bugsnag;"
          "Papertrail;Better Stack;Logtail;Loki;Splunk;"
          "AppSignal;~Tempo|Grafana Tempo;Jaeger;Zipkin;SigNoz;VictoriaMetrics;ELK;Kibana;Graylog;Grafana Cloud"),
    _slot("tooling", "orchestration", "workflow orchestrator", "任务编排",
          "workflows;cron jobs;scheduled jobs;定时任务;工作流;orchestration;orchestrator;workflow engine;scheduler;任务编排;调度;编排", "Airflow;Dagster;Prefect;Luigi;Argo Workflows;Kestra;APScheduler"),
    _slot("tooling", "bi", "BI tool", "BI 工具", "analytics dashboards;reporting;数据看板;dashboards;dashboard;bi tool;bi;报表;看板;仪表盘",
          "Metabase;Superset;Looker;Tableau;Power BI;Redash"),
    _slot("tooling", "docs", "documentation tool", "文档工具",
          "docs site;documentation site;api docs;文档站;component docs;documentation;docs;组件文档;文档", "Storybook;Docusaurus;MkDocs;VitePress;Sphinx;odoc;mdBook|mdbook;Starlight;Apifox;Swagger UI|Swagger;Redoc"),
    _slot("tooling", "monorepo", "monorepo tool", "monorepo 工具", "monorepo tool;monorepo;单仓库",
          "Turborepo;Nx;Lerna;Rush"),
    _slot("tooling", "editor", "editor", "编辑器", "editor;ide;编辑器",
          "Helix;Neovim;Vim;Emacs;VS Code|VSCode;Zed;Cursor;IntelliJ;GoLand;WebStorm;PyCharm;Sublime Text;Xcode;"
          "Android Studio"),
    _slot("tooling", "issue_tracker", "issue tracker", "任务管理工具",
          "project management;task tracking;bug tracker;bug tracking;backlog;工单;issue tracker;ticket tracker;tickets;任务管理;项目管理;缺陷管理;缺陷跟踪", "Linear;Jira;GitHub Issues;GitLab Issues;Trello;YouTrack;Asana;ClickUp;Redmine;禅道"),
    _slot("process", "deploy", "deployment platform", "部署平台",
          "infra;infrastructure;cloud provider;hosting provider;production;prod;托管平台;云平台;服务器;生产环境;deployment platform;deployment;deploys;deploy;hosting;hosted;host;部署平台;部署;托管;上线",
          "Fly.io|Fly;Alibaba Cloud|阿里云;Tencent Cloud|腾讯云;Huawei Cloud|华为云;Vercel;Render;Railway;Heroku;Netlify;Cloudflare Workers;Cloudflare Pages;Kubernetes|k8s;"
          "ECS;AWS Lambda|Lambda;DigitalOcean;Hetzner;Cloud Run;AWS;GCP;Azure;"
          "Kamal;Dokku;Nomad;AKS;EKS;GKE;Coolify;Gigalixir;Scaleway;OpenShift;Argo CD|ArgoCD", area="deploy"),
    _slot("process", "branching", "branching model", "分支策略",
          "git workflow;branch model;分支管理;branching model;branching strategy;branch strategy;branching;分支策略;分支模型",
          "trunk-based development|trunk-based|trunk based;Git Flow|GitFlow;GitHub Flow"),
    _slot("process", "merge_strategy", "merge strategy", "合并策略",
          "merge strategy;merging;merges;合并策略;合并", "squash merge|squash merges|squash and merge|squash;"
          "rebase merge|rebase;merge commits"),
    _slot("process", "release", "release cadence", "发布节奏", "release process;shipping cadence;release cadence;release schedule;releases;release;发布节奏;发版节奏;发版;发布",
          "Changesets;semantic-release;release-please;cargo-release;GoReleaser"),
    _slot("convention", "timestamps", "timestamp convention", "时间戳约定",
          "date format;datetimes;日期格式;timestamps;timestamp;timezone;time zone;时间戳;时区;时间", "UTC;ISO 8601;Unix epoch|epoch seconds"),
    _slot("convention", "naming", "naming convention", "命名规范",
          "naming convention;column names;variable names;naming;命名规范;命名风格;命名",
          "snake_case;camelCase;PascalCase;kebab-case;SCREAMING_SNAKE_CASE"),
    _slot("convention", "indentation", "indentation", "缩进",
          "indentation;indent;缩进", "2 spaces|two spaces|2-space|2 space|two-space|两个空格|2 个空格|2个空格;4 spaces|four spaces|4-space|"
          "4 space|four-space|四个空格|"
          "4 个空格|4个空格;tabs|tab|制表符"),
    _slot("convention", "quotes", "string quotes", "字符串引号", "string quotes;quotes;字符串;引号",
          "single quotes|单引号;double quotes|双引号"),
    _slot("convention", "commit_messages", "commit message format", "提交信息规范",
          "commit style;commit format;commit messages;commit message;commits;提交信息;提交说明", "Conventional Commits;gitmoji"),
    _slot("convention", "api_style", "API style", "接口风格", "api style;api design;api 风格;接口风格;接口",
          "REST;GraphQL;gRPC;tRPC;JSON-RPC"),
    _slot("convention", "ids", "ID format", "主键格式",
          "primary keys;primary key;id format;ids;identifiers;主键;id 格式;ID 格式",
          "UUIDv7|UUID v7;UUIDv4|UUID v4;UUID|UUIDs;ULID|ULIDs;auto-increment|自增"),
    _slot("convention", "line_length", "maximum line length", "最大行宽",
          "max line length;maximum line length;line length;行宽;行长度"),
    _slot("convention", "versioning", "versioning scheme", "版本号规范", "versioning;version numbers;版本号",
          "SemVer|semantic versioning|语义化版本;CalVer"),
    _slot("convention", "style", "code style", "代码风格", "code style;style guide;代码风格;代码规范;编码规范;风格",
          "PEP 8|PEP8;Airbnb style;Google style;StandardJS"),
    # Categories people name as often as the ones above, each with its well-known products, so that a product said
    # without its slot ("我们用 Zustand", "Nacos 做注册中心") still lands under one key
    _slot("stack", "state_management", "state management", "状态管理",
          "state management;state library;状态管理库;状态管理",
          "Redux|Redux Toolkit;Zustand;Pinia;Vuex;MobX;Riverpod;~Bloc;Jotai;Recoil;NgRx;XState;Valtio"),
    _slot("stack", "push_notifications", "push notifications", "推送服务",
          "push notifications;push notification;push service;push 通知;推送服务;消息推送;推送",
          "OneSignal;极光推送|极光|JPush;Firebase Cloud Messaging|FCM;APNs;Pushy;个推"),
    _slot("stack", "model_serving", "model serving", "模型服务", "model serving;inference server;模型服务;推理服务",
          "vLLM;Triton|Triton Inference Server;Ray Serve;TorchServe;BentoML;KServe;Ollama;SGLang"),
    _slot("tooling", "infra_as_code", "infrastructure as code", "基础设施即代码",
          "infrastructure as code;infra as code;iac;基础设施即代码;基础设施",
          "Terraform;Pulumi;OpenTofu;CloudFormation;AWS CDK"),
    _slot("stack", "ui_library", "UI component library", "组件库",
          "ui library;component library;ui kit;ui components;UI 组件库;UI 库;组件库",
          "Element Plus|Element UI;Ant Design|antd;MUI|Material UI;shadcn/ui|shadcn;Chakra UI;Mantine;Vuetify;"
          "Naive UI;Vant;Radix UI;Headless UI;Quasar"),
    _slot("stack", "service_discovery", "service discovery", "服务发现",
          "service discovery;service registry;注册中心;服务发现;服务注册", "Nacos;Consul;Eureka;etcd;ZooKeeper"),
    _slot("tooling", "experiment_tracking", "experiment tracking", "实验追踪",
          "experiment tracking;experiment tracker;实验追踪;实验跟踪;实验管理",
          "MLflow;Weights & Biases|W&B|wandb;Comet ML;Neptune;ClearML;TensorBoard"),
    _slot("stack", "cms", "CMS", "内容管理系统", "headless cms;cms;内容管理系统",
          "~Sanity;Contentful;Strapi;Payload CMS;Directus;WordPress"),
)

ROLES: tuple[tuple[str, str, str, str], ...] = (  # pattern, entity, English label, Chinese label
    (r"tech(?:nical)? lead|技术负责人|技术 leader", "tech_lead", "tech lead", "技术负责人"),
    (r"product manager|\bpm\b|产品经理", "product_manager", "product manager", "产品经理"),
    (r"designer|设计师|^设计$", "designer", "designer", "设计师"),  # "设计是 Sophie": the role said as its field
    (r"on-call(?: engineer)?|on call|值班", "on_call", "on-call engineer", "值班工程师"),
    (r"release manager|发布负责人", "release_manager", "release manager", "发布负责人"),
    (r"\bdba\b|数据库管理员", "dba", "DBA", "数据库管理员"),
    (r"\b(?:software |solutions? )?architect\b|架构师", "architect", "architect", "架构师"),
    (r"project manager|项目经理", "project_manager", "project manager", "项目经理"),
)


def term_pattern(term: str) -> str:
    """A regex for a vocabulary term: word boundaries on its Latin ends, none on CJK ends (no spaces in Chinese)."""
    body = re.escape(term).replace(r"\ ", r"\s*" if contains_cjk(term) else r"\s+")
    # Latin boundaries only: Chinese runs straight into Latin names ("后端用Fastify", "ORM用Prisma")
    before = "" if contains_cjk(term[0]) else r"(?<![A-Za-z0-9_.\-/])"
    after = "" if contains_cjk(term[-1]) else r"(?![A-Za-z0-9_\-]|\.[A-Za-z0-9])"
    return f"{before}{body}{after}"


def _build_value_index() -> list[tuple[re.Pattern[str], str, Slot]]:
    entries = []
    for slot in SLOTS:
        for spec in slot.values:
            canonical, *aliases = spec.split("|")
            for term in (canonical, *aliases):
                entries.append((term, canonical.lstrip("=~"), slot))
    entries.sort(key=lambda e: -len(e[0].lstrip("=~")))
    return [(_value_regex(t), c, s) for t, c, s in entries]


def _value_regex(term: str) -> re.Pattern[str]:
    """A leading '=' marks a value that is also a common word ("Go"): exact case, and not "Go with ..."; a leading '~'
    one that is a common noun ("Falcon", "Rocket"): exact case only."""
    if term.startswith("~"):
        return re.compile(term_pattern(term[1:]))
    if term.startswith("="):
        guard = r"(?!\s+(?:with|ahead|for|to|back|live|on|through|over)\b)"
        return re.compile(term_pattern(term[1:]) + guard)
    return re.compile(term_pattern(term), re.IGNORECASE)


def _build_phrase_index() -> list[tuple[re.Pattern[str], Slot]]:
    entries = [(p, s) for s in SLOTS for p in {*s.phrases, s.en.lower(), s.zh}]  # its own labels name a slot too
    entries.sort(key=lambda e: -len(e[0]))
    return [(re.compile(_plural(term_pattern(p)), re.IGNORECASE), s) for p, s in entries]


def _plural(pattern: str) -> str:
    """A Latin slot phrase also in the plural ("queues", "caches"): an optional s/es before its end boundary."""
    marker = r"(?![A-Za-z0-9_\-]|\.[A-Za-z0-9])"
    return pattern.replace(marker, r"(?:e?s)?" + marker) if pattern.endswith(marker) else pattern


_VALUES = _build_value_index()
_PHRASES = _build_phrase_index()
SLOT_BY_KEY = {(s.category, s.entity): s for s in SLOTS}


@dataclass(frozen=True)
class Found:
    """A value (as the user spelled it, with the vocabulary's canonical form when it knows it) or a slot phrase."""

    start: int
    end: int
    value: str
    slot: Slot | None
    canonical: str | None = None


# whole clouds, not one of their products: named alone they are where the project runs only when the clause says so
# ("部署在阿里云", "we're on AWS"); "阿里云有托管版", "阿里云短信", "腾讯云 TRTC" name a vendor of something else
CLOUD_VENDORS = frozenset({"Alibaba Cloud", "Tencent Cloud", "Huawei Cloud", "AWS", "GCP", "Azure"})


def find_values(text: str) -> list[Found]:
    """Known vocabulary values in ``text``, longest match first, without overlaps, in text order."""
    return list(_find_values_cached(text))


def find_phrases(text: str) -> list[Found]:
    """Slot phrases in ``text``, longest first, without overlaps, in text order."""
    return list(_find_phrases_cached(text))


@lru_cache(maxsize=8192)
def _find_values_cached(text: str) -> tuple[Found, ...]:
    taken: list[tuple[int, int]] = []
    found: list[Found] = []
    for pattern, canonical, slot in _VALUES:
        for m in pattern.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            taken.append((m.start(), m.end()))
            found.append(Found(m.start(), m.end(), m.group(0), slot, canonical))
    return tuple(sorted(found, key=lambda f: f.start))


@lru_cache(maxsize=8192)
def _find_phrases_cached(text: str) -> tuple[Found, ...]:
    taken: list[tuple[int, int]] = []
    found: list[Found] = []
    for pattern, slot in _PHRASES:
        for m in pattern.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            taken.append((m.start(), m.end()))
            found.append(Found(m.start(), m.end(), m.group(0), slot))
    return tuple(sorted(found, key=lambda f: f.start))


def norm_value(value: str | None) -> str:
    """A value for comparison: the canonical form when the vocabulary knows it ("PostgreSQL" and "postgres" are one
    value), and case, spaces, dots, dashes and underscores ignored."""
    value = (value or "").strip()
    return re.sub(r"[\s\-_.]+", "", (canonical_value(value) or value).casefold())


def canonical_value(text: str) -> str | None:
    """The vocabulary's canonical spelling of a value written ``text`` ("PostgreSQL" -> "Postgres"), else None."""
    found = find_values(text.strip())
    if len(found) == 1 and found[0].start == 0 and found[0].end == len(text.strip()):
        return found[0].canonical
    return None
