"""Mermaid drawings of the graphs, generated from the compiled graphs, and the README section that shows them.

    python -m z0_memory.diagrams            # print the section
    python -m z0_memory.diagrams --write    # refresh README.md between the graphs markers
    python -m z0_memory.diagrams --check    # exit 1 when README.md is not current

The drawings come from ``graph.get_graph(xray=...).draw_mermaid()``: the chat graph is drawn with its retrieval
subgraph opened up, so a change to any node or edge shows up as a stale README.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from dataclasses import dataclass
from pathlib import Path

START_MARKER = "<!-- graphs:start -->"
END_MARKER = "<!-- graphs:end -->"
DEFAULT_README = Path(__file__).resolve().parent.parent / "README.md"


@dataclass(frozen=True)
class Drawing:
    name: str
    module: str
    xray: bool
    caption: str


DRAWINGS = (
    Drawing("chat", "z0_memory.graphs.chat", True,
            "Chat mode: rules, the retrieval loop on the user's turn (subgraph, at most 3 rounds), the answer with "
            "the injected memory block and the trimmed history, then post-turn extraction."),
    Drawing("code", "z0_memory.graphs.code", False,
            "Code mode: the agent sees the rules, the request and this turn's tool exchanges; it reaches memory "
            "(`recall_memory`, the loop, at most 5 rounds) and its own thread (`search_session`) through tools."),
    Drawing("retrieval", "z0_memory.graphs.retrieval", False,
            "The retrieval loop: route, retrieve, a sceptical judge, rewrite; the round guard ends it."),
    Drawing("extraction", "z0_memory.graphs.extraction", False,
            "Post-turn extraction: candidates through the confidence gate into KV facts, semantic memory or pending."),
)


def mermaid(drawing: Drawing) -> str:
    graph = importlib.import_module(drawing.module).graph
    return graph.get_graph(xray=drawing.xray).draw_mermaid().strip()


def section() -> str:
    """The README text between the markers (without them)."""
    parts = []
    for d in DRAWINGS:
        source = d.module.removeprefix("z0_memory.").replace(".", "/") + ".py"
        parts.append(f"### {d.name} (`{source}`)\n\n{d.caption}\n\n"
                     f"```mermaid\n{mermaid(d)}\n```")
    return "\n\n" + "\n\n".join(parts) + "\n\n"


def _bounds(text: str) -> tuple[int, int]:
    start, end = text.find(START_MARKER), text.find(END_MARKER)
    if start < 0 or end < start:
        raise ValueError(f"README has no {START_MARKER} ... {END_MARKER} section")
    return start + len(START_MARKER), end


def current_section(readme: str) -> str:
    start, end = _bounds(readme)
    return readme[start:end]


def updated(readme: str) -> str:
    start, end = _bounds(readme)
    return readme[:start] + section() + readme[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m z0_memory.diagrams", description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", action="store_true", help="refresh the README section")
    action.add_argument("--check", action="store_true", help="exit 1 when the README section is stale")
    parser.add_argument("--readme", type=Path, default=DEFAULT_README, help="the README to read or write")
    args = parser.parse_args(argv)
    if not (args.write or args.check):
        print(section().strip())
        return 0
    text = args.readme.read_text(encoding="utf-8")
    fresh = updated(text)
    if args.check:
        if fresh != text:
            print(f"{args.readme} is stale: run python -m z0_memory.diagrams --write", file=sys.stderr)
            return 1
        return 0
    if fresh != text:
        args.readme.write_text(fresh, encoding="utf-8")
        print(f"updated the graph drawings in {args.readme}")
    else:
        print(f"{args.readme} is current")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
