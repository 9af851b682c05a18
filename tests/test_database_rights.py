"""A DATABASE_URL whose role cannot create pgvector or z0-memory's tables: one line saying what a superuser must run,
exit status 2 (before: an 89-line psycopg traceback and status 1). Run as the user types it: the installed command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from checkout.sitecustomize import subprocess_env

DB = "z0_rights_test"
ROLE = "z0_rights_user"


@pytest.fixture
def plain_role_url(database_url: str):
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DB}")
        conn.execute(f"DROP ROLE IF EXISTS {ROLE}")
        conn.execute(f"CREATE ROLE {ROLE} LOGIN PASSWORD 'pw'")
        conn.execute(f"CREATE DATABASE {DB}")  # owned by the superuser: no pgvector, no CREATE for the role
    yield url_for(database_url, DB, ROLE, "pw"), url_for(database_url, DB)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
        conn.execute(f"DROP ROLE IF EXISTS {ROLE}")


def url_for(url: str, dbname: str, user: str | None = None, password: str | None = None) -> str:
    """``url`` (the test server's) on another database, optionally as another role."""
    parts = urlsplit(url)
    where = f"{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}"
    login = f"{user}:{password}" if user else f"{parts.username or ''}:{parts.password or ''}"
    return urlunsplit((parts.scheme, f"{login}@{where}", f"/{dbname}", parts.query, ""))


def z0(url: str, *args: str) -> subprocess.CompletedProcess:
    script = str(Path(sys.executable).with_name("z0-memory"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("Z0_", "DATABASE_URL"))}
    env.update(DATABASE_URL=url, Z0_EMBEDDING_MODEL="hash", COLUMNS="80")
    return subprocess.run([script, *args], env=subprocess_env(env), capture_output=True, text=True, timeout=120, check=False)


def test_no_pgvector_and_no_right_to_create_it(plain_role_url):
    url, _ = plain_role_url
    result = z0(url, "setup")
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "CREATE EXTENSION vector" in lines[0] and "superuser" in lines[0] and DB in lines[0]


def test_pgvector_present_but_no_right_to_create_tables(plain_role_url):
    url, superuser_url = plain_role_url
    with psycopg.connect(superuser_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vector")
    result = z0(url, "setup")
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"GRANT CREATE ON SCHEMA public TO {ROLE}" in lines[0] and "superuser" in lines[0]
    # what the line says works
    with psycopg.connect(superuser_url, autocommit=True) as conn:
        conn.execute(f"GRANT CREATE ON SCHEMA public TO {ROLE}")
    result = z0(url, "setup")
    assert result.returncode == 0, result.stderr
