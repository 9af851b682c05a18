"""Shared helpers of the perf_*.py benchmark scripts: machine description, percentiles, synthetic memories, a
temporary embedded database. Not a test; nothing here is imported by the library."""

from __future__ import annotations

import os
import platform
import random
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

PROJECTS = [f"{a}{b}" for a in ("shop", "wiki", "ledger", "crm", "iot", "game", "docs", "pay", "ml", "ops")
            for b in ("", "2", "x", "pro", "lite")]
COMPONENTS = [("backend framework", "后端框架"), ("database", "数据库"), ("cache", "缓存"), ("queue", "消息队列"),
              ("search engine", "搜索引擎"), ("CI", "持续集成"), ("monitoring", "监控"), ("auth", "登录认证"),
              ("object storage", "对象存储"), ("frontend", "前端"), ("test runner", "测试框架"),
              ("deploy target", "部署平台"), ("warehouse", "数据仓库"), ("linter", "代码检查"), ("ORM", "ORM")]
TECH = ("Hono Fastify Express NestJS Django Flask FastAPI Rails Spring Gin Postgres MySQL SQLite MongoDB Redis "
        "Memcached Valkey Kafka RabbitMQ NATS SQS Elasticsearch Meilisearch Typesense OpenSearch GitHubActions "
        "GitLabCI Jenkins Buildkite Grafana Datadog Prometheus Sentry Keycloak Clerk Auth0 Cognito S3 R2 MinIO "
        "React Vue Svelte Solid Angular Vitest Jest pytest Playwright Vercel Fly Hetzner k3s ClickHouse Snowflake "
        "BigQuery Biome ESLint Ruff Prisma Drizzle SQLAlchemy TypeORM").split()
REASONS = [("cold starts were slow", "冷启动太慢"), ("the bill doubled", "账单翻倍了"),
           ("the team already knows it", "团队都熟悉"), ("we need clustering", "需要集群"),
           ("it was hard to debug", "太难调试"), ("latency was too high", "延迟太高"),
           ("hiring was impossible", "招不到人"), ("the data must stay in the region", "数据不能出境"),
           ("the old one lost messages", "旧的会丢消息"), ("licensing changed", "许可证变了")]
PEOPLE = [("Alice", "张伟"), ("Bob", "王芳"), ("Marta", "李娜"), ("Kenji", "刘洋"), ("Priya", "陈静"),
          ("Tomás", "赵敏"), ("Lea", "孙磊"), ("Olu", "何静"), ("Rin", "周杰"), ("Ana", "吴敏")]


def machine() -> str:
    import psutil

    return (f"machine: {platform.machine()} {platform.processor() or ''}".rstrip()
            + f", {os.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.1f} GiB RAM, "
              f"Python {platform.python_version()}, {platform.platform()}; load average at start "
              f"{os.getloadavg()[0]:.1f} (other processes share the cores)")


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def p50_p95(values: Sequence[float]) -> str:
    return f"p50 {pct(values, 0.5):8.2f} ms   p95 {pct(values, 0.95):8.2f} ms   (n={len(values)})"


def sentences(n: int, seed: int = 7) -> list[str]:
    """n distinct project-memory sentences, about 30% Chinese."""
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        project = rnd.choice(PROJECTS)
        comp_en, comp_zh = rnd.choice(COMPONENTS)
        tech, tech2 = rnd.sample(TECH, 2)
        reason_en, reason_zh = rnd.choice(REASONS)
        person_en, person_zh = rnd.choice(PEOPLE)
        zh = rnd.random() < 0.3
        kind = rnd.randrange(5)
        if zh:
            text = [f"{project} 的{comp_zh}用 {tech}，因为{reason_zh}。",
                    f"{person_zh}负责 {project} 的{comp_zh}。",
                    f"{project} 把{comp_zh}从 {tech} 换成了 {tech2}，原因是{reason_zh}。",
                    f"{person_zh}更喜欢用 {tech} 做{comp_zh}。",
                    f"{project} 的{comp_zh}规定：所有改动都要先在预发环境验证。"][kind]
        else:
            text = [f"The {comp_en} of {project} is {tech} because {reason_en}.",
                    f"{person_en} owns the {comp_en} of {project}.",
                    f"{project} switched its {comp_en} from {tech} to {tech2} because {reason_en}.",
                    f"{person_en} prefers {tech} for {comp_en} work.",
                    f"In {project}, every {comp_en} change is verified on staging first."][kind]
        out.append(f"{text} (#{i})")
    return out


def questions(n: int, seed: int = 11) -> list[str]:
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        project = rnd.choice(PROJECTS)
        comp_en, comp_zh = rnd.choice(COMPONENTS)
        if rnd.random() < 0.3:
            out.append(rnd.choice([f"{project} 的{comp_zh}用的是什么？", f"谁负责 {project} 的{comp_zh}？",
                                   f"{project} 为什么换了{comp_zh}？"]))
        else:
            out.append(rnd.choice([f"Which {comp_en} does {project} use?", f"Who owns the {comp_en} of {project}?",
                                   f"Why did {project} change its {comp_en}?"]))
    return out


async def timed(fn: Callable[[], Awaitable[Any]], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        await fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def temp_data_dir(given: str | None) -> str:
    from z0_memory.stores.embedded import temporary_data_dir

    return given or temporary_data_dir("z0-perf-")


def mean(values: Sequence[float]) -> float:
    return statistics.fmean(values)
