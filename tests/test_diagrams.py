"""The README's graph drawings are generated from the compiled graphs and must be current."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from z0_memory import diagrams

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_drawings_are_current():
    text = README.read_text(encoding="utf-8")
    assert diagrams.current_section(text) == diagrams.section(), (
        "README.md's graph drawings are stale: run python -m z0_memory.diagrams --write")


def test_each_drawing_comes_from_its_compiled_graph():
    chat = diagrams.mermaid(diagrams.DRAWINGS[0])
    assert chat.count("```") == 0 and "graph TD;" in chat
    for node in ("load_rules", "take_question", "respond", "extract", "subgraph recall", "recall\\3arewrite"):
        assert node in chat  # the retrieval loop is drawn inside the chat graph (xray)
    code = diagrams.mermaid(diagrams.DRAWINGS[1])
    assert "agent -.-> tools;" in code and "tools --> agent;" in code and "recall_memory, search_session" in code
    retrieval = diagrams.mermaid(diagrams.DRAWINGS[2])
    assert "rewrite --> retrieve;" in retrieval and "evaluate -.-> rewrite;" in retrieval
    assert [d.name for d in diagrams.DRAWINGS] == ["chat", "code", "retrieval", "extraction"]


def test_check_fails_on_a_stale_readme_and_write_fixes_only_the_section(tmp_path):
    readme = tmp_path / "README.md"
    before, after = "# Title\n\nintro\n\n", "\n\n## Later\n\ntext\n"
    readme.write_text(f"{before}{diagrams.START_MARKER}\nold drawing\n{diagrams.END_MARKER}{after}")
    check = [sys.executable, "-m", "z0_memory.diagrams", "--check", "--readme", str(readme)]
    stale = subprocess.run(check, capture_output=True, text=True)
    assert stale.returncode == 1 and "stale" in stale.stderr
    assert diagrams.main(["--write", "--readme", str(readme)]) == 0
    text = readme.read_text()
    assert text.startswith(before + diagrams.START_MARKER) and text.endswith(diagrams.END_MARKER + after)
    assert "old drawing" not in text and text.count("```mermaid") == 4
    assert diagrams.main(["--check", "--readme", str(readme)]) == 0
    assert diagrams.updated(text) == text  # idempotent


def test_a_readme_without_markers_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="graphs:start"):
        diagrams.updated("# no section here\n")
