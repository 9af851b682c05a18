"""How far two people labelling the same extraction turns agree, scored exactly as the extractor is scored.

    python bench/label_agreement.py REFERENCE.jsonl OTHER.jsonl [--json]

REFERENCE and OTHER hold the same messages in the same order (bench/data/README.md format): typically a blind batch
and the labels a second annotator gave its text without seeing the first labels. OTHER's labels of each user turn
are taken as what an extractor wrote on that turn and matched against REFERENCE's with ``bench/extraction.py``'s own
rules (strict: outcome, key, value and kind family; lenient: outcome and value), so the figures are the precision and
recall a perfect reader of the second annotator's judgement would get: a ceiling for the extractor's figures on
labels of this kind, and a measure of how much of the gap to a target is the labels' own uncertainty.

Also: turns both call an instruction, turns on which they disagree about it, and pending labels of one annotator
that the other settles (``extraction.hedge_persisted``, each way round: "hedges persisted" between two people).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from extraction import Report, Tally, hedge_persisted, is_instruction, matches, matches_lenient, read_rows  # noqa: E402
from extraction import _pair  # noqa: E402

from z0_memory.text import contains_cjk  # noqa: E402


def compare(reference: list[dict[str, Any]], other: list[dict[str, Any]]) -> dict[str, Any]:
    """Per split of language, the other annotator's labels scored against the reference's."""
    if len(reference) != len(other):
        raise SystemExit(f"the files hold {len(reference)} and {len(other)} messages: not the same turns")
    report = Report()
    instruction: Counter[str] = Counter()
    hedge_disputes = 0
    for ref, oth in zip(reference, other, strict=True):
        if (ref["conversation"], ref["session"], ref["turn"], ref["text"]) != (
                oth["conversation"], oth["session"], oth["turn"], oth["text"]):
            raise SystemExit(f"message {ref['conversation']}/s{ref['session']}/t{ref['turn']} differs between the files")
        if ref["role"] != "user":
            continue
        labels, given = ref["expected"], oth.get("expected") or []
        tally = Tally(predicted=len(given), expected=len(labels), turns=1)
        tally.matched_predicted, _, hits = _pair(given, labels, matches)
        tally.matched_expected = sum(hits)
        tally.lenient_predicted, _, lenient_hits = _pair(given, labels, matches_lenient)
        tally.lenient_expected = sum(lenient_hits)
        hedge_disputes += sum(hedge_persisted(p, given, labels) for p in labels if p["outcome"] == "pending")
        hedge_disputes += sum(hedge_persisted(p, labels, given) for p in given if p["outcome"] == "pending")
        said = (is_instruction(ref), is_instruction(oth))
        if any(said):
            instruction[{(True, True): "both", (True, False): "reference_only", (False, True): "other_only"}[said]] += 1
        lang = "zh" if contains_cjk(ref["text"]) else "en"
        report.totals["all"].add(tally)
        report.totals[lang].add(tally)
    out: dict[str, Any] = {}
    for name in ("all", "en", "zh"):
        figures = report.totals[name].figures()
        out[name] = {k: figures[k] for k in ("precision", "recall", "lenient_precision", "lenient_recall")}
        out[name].update(labels_reference=report.totals[name].expected, labels_other=report.totals[name].predicted,
                         user_turns=report.totals[name].turns)
    out["instruction_turns"] = {k: instruction[k] for k in ("both", "reference_only", "other_only")}
    out["pending_settled_by_the_other"] = hedge_disputes
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reference", type=Path)
    parser.add_argument("other", type=Path)
    parser.add_argument("--json", action="store_true", help="one JSON object")
    args = parser.parse_args(argv)
    result = compare(read_rows(args.reference), read_rows(args.other))
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{args.other.name} scored against {args.reference.name} (bench/extraction.py's matching)")
    for name in ("all", "en", "zh"):
        r = result[name]
        print(f"  {name:3} {r['user_turns']:4} user turns, labels {r['labels_reference']} vs {r['labels_other']}: "
              f"P {r['precision']} / R {r['recall']}  (lenient {r['lenient_precision']} / {r['lenient_recall']})")
    print(f"  instruction turns: {result['instruction_turns']}")
    print(f"  pending labels the other annotator settled: {result['pending_settled_by_the_other']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
