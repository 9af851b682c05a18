"""Run the reliability suite and print its figures: operations run, faults injected, bad inputs tried, items lost,
rows of one project returned to another, secret shapes redacted (found) and left in clear (missed).

    python bench/reliability.py            # runs tests/test_reliability_*.py on the embedded test database

Each reliability test records what it did (tests/reliability_support.py); this script sums the records by area.
The pytest exit status is this script's: a failing test fails the run, and figures from a failed run are not printed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from reliability_support import KINDS  # noqa: E402  (one list of figures, the tests' own)


def main() -> int:
    with tempfile.NamedTemporaryFile(prefix="z0-reliability-", suffix=".jsonl", delete=False) as f:
        path = f.name
    env = {**os.environ, "Z0_RELIABILITY_FIGURES": path}
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_reliability_*.py"))
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files], cwd=ROOT,
                            env=env)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        print("reliability tests failed; no figures", file=sys.stderr)
        return result.returncode
    by_area: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(KINDS, 0))
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            rec = json.loads(line)
            area = rec.pop("test").split(".")[0]
            for kind, n in rec.items():
                by_area[area][kind] += n
    os.unlink(path)
    width = {k: max(14, len(k) + 2) for k in KINDS}
    print(f"\n{'area':<14}" + "".join(f"{k:>{width[k]}}" for k in KINDS))
    for area in sorted(by_area):
        print(f"{area:<14}" + "".join(f"{by_area[area][k]:>{width[k]}}" for k in KINDS))
    totals = {k: sum(a[k] for a in by_area.values()) for k in KINDS}
    print(f"{'total':<14}" + "".join(f"{totals[k]:>{width[k]}}" for k in KINDS))
    print(f"({len(files)} test modules, {elapsed:.0f} s)")
    return 0 if totals["lost"] == 0 and totals["cross_project"] == 0 and totals["secrets_missed"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
