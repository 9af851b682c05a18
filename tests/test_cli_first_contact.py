"""The CLI paths a user takes first: forget what list shows, show by category:entity, --json everywhere it reads,
re-importing a file. Typed as a user types them (typer's runner on the real test database)."""

from __future__ import annotations

import json
import re

import pytest

from cli_support import cli_invoker, runner, write_locomo_sample
from z0_memory.cli import app

TRANSCRIPT = ("user: For the backend we'll use Hono, not Express\nassistant: Noted.\n"
              "user: Alice prefers dark mode in every editor\n"
              "user: maybe we could try Redis for caching\n")


@pytest.fixture
def cli(database_url, tmp_path):
    invoke = cli_invoker(database_url, "first", columns=80)
    path = tmp_path / "chat.txt"
    path.write_text(TRANSCRIPT, encoding="utf-8")
    invoke.transcript = path
    return invoke


def as_json(result) -> object:
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_forget_of_nothing_fails_and_short_ids_work(cli):
    assert cli("ingest", str(cli.transcript)).exit_code == 0
    missing = cli("memories", "forget", "stack:never_settled")
    assert missing.exit_code == 1 and "nothing to forget" in missing.output  # before: "deleted 0 row(s)", exit 0
    assert cli("memories", "forget", "0123abcd").exit_code == 1
    listing = cli("memories", "list", "--json")
    memories = as_json(listing)["memories"]
    assert memories, listing.output
    short = memories[0]["id"][:8]
    assert short in cli("memories", "list").output  # the id the table prints
    forgot = cli("memories", "forget", short)
    assert forgot.exit_code == 0 and "deleted 1 row(s)" in forgot.output
    assert short not in cli("memories", "list").output


def test_show_and_history_take_category_entity_under_project(cli):
    assert cli("ingest", str(cli.transcript)).exit_code == 0
    show = cli("memories", "show", "stack:backend_framework")
    assert show.exit_code == 0 and "Hono" in show.output  # before: it wanted the full key
    full = f"{cli.project}:stack:backend_framework"
    assert "Hono" in cli("memories", "show", full).output
    history = cli("memories", "history", "stack:backend_framework")
    assert history.exit_code == 0 and "Hono" in history.output
    assert cli("memories", "show", "stack:nothing").exit_code == 1


def test_json_on_every_reading_command(cli, tmp_path):
    assert cli("ingest", str(cli.transcript)).exit_code == 0
    listing = as_json(cli("memories", "list", "--json"))
    assert [(f["key"], f["value"]) for f in listing["facts"]] == [
        (f"{cli.project}:stack:backend_framework", "Hono")]
    fact = as_json(cli("memories", "show", "stack:backend_framework", "--json"))
    assert fact["value"] == "Hono" and fact["provenance"]["extractor"]
    history = as_json(cli("memories", "history", "stack:backend_framework", "--json"))
    assert [v["version"] for v in history] == [1]
    pending = as_json(cli("memories", "pending", "--json"))
    assert "Redis" in pending[0]["candidate"]["content"]
    recall = as_json(cli("recall", "which backend framework do we use?", "--json"))
    assert recall["memories"][0]["key"] == f"{cli.project}:stack:backend_framework"
    assert recall["rounds"][0]["query"] and recall["stop_reason"]
    (tmp_path / "AGENTS.md").write_text("Write TypeScript.\n", encoding="utf-8")
    rules = as_json(runner.invoke(app, ["--rules-root", str(tmp_path), "rules", "--json"]))
    assert rules["files"] == [{"source": "AGENTS.md", "text": "Write TypeScript.\n"}]


def test_reimporting_the_same_file_changes_nothing(cli, tmp_path):
    path = write_locomo_sample(tmp_path)
    assert "2 new turns stored" in cli("ingest", str(path)).output
    before = as_json(cli("memories", "list", "--json"))
    again = cli("ingest", str(path))
    assert again.exit_code == 0 and "0 new turns stored as memories (already imported)" in again.output
    assert as_json(cli("memories", "list", "--json")) == before
    assert cli("ingest", str(cli.transcript)).exit_code == 0
    facts = as_json(cli("memories", "list", "--json"))
    assert "0 memories written" in cli("ingest", str(cli.transcript)).output
    assert as_json(cli("memories", "list", "--json")) == facts
    assert [p["confirmations"] for p in as_json(cli("memories", "pending", "--json"))] == [1]  # not seen twice


def test_tables_read_at_80_columns(cli):
    """At 80 columns keys and ids are printed whole (they are what show/forget take), nothing is cut with "…", and
    the judge's reasons read as lines, not one word per table row."""
    assert cli("ingest", str(cli.transcript)).exit_code == 0
    listing = cli("memories", "list")
    assert listing.exit_code == 0
    assert "stack:backend_framework" in listing.output and "…" not in listing.output
    short = as_json(cli("memories", "list", "--json"))["memories"][0]["id"][:8]
    assert short in listing.output
    recall = cli("recall", "why did we pick Hono for the backend?")
    assert recall.exit_code == 0 and "…" not in recall.output
    assert "[stack:backend_framework]" in recall.output
    assert re.search(r"^round 1: .{20,}", recall.output, re.MULTILINE)  # the reason, at full width
    assert max(len(line) for line in (listing.output + recall.output).splitlines()) <= 80
    wide = cli("memories", "list", env={"COLUMNS": "200"})
    assert f"{cli.project}:stack:backend_framework" in wide.output and "valid to" in wide.output
