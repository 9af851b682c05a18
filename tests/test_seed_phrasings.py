"""The seed's scenario in phrasings of our own (bench/data/seed_phrasings_dev.jsonl), played by bench/seed_phrasings.py
through the real chat graph: session 1 settles a backend framework with a reason and a rejected alternative and
floats a tentative idea; a new session recalls the chosen framework and its reason, never the rejected one, does
not ask again, and the idea stays pending until confirmed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_support import loaded_bench

DEV = Path(__file__).resolve().parents[1] / "bench" / "data" / "seed_phrasings_dev.jsonl"
# Known gaps, measured and not hidden (bench/README.md, "The seed's scenario in many phrasings"); none since round 4
# (a reason in a message of its own, "The reason is async support...", is kept with the fact: ``reasons``)
KNOWN_REASON_GAPS: set[str] = set()

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.fixture(scope="module")
def bench():
    with loaded_bench("seed_phrasings") as module:
        yield module


SCENARIOS = [json.loads(line) for line in DEV.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["id"] for s in SCENARIOS])
async def test_the_settled_framework_and_the_hedge_survive_into_a_new_session(bench, memory, scenario):
    checks = await bench.play(memory, scenario, f"seed-test-{scenario['id']}")
    expected = {name: True for name in bench.CHECKS}
    if scenario["id"] in KNOWN_REASON_GAPS:
        expected["reason"] = False  # if this starts passing, move the scenario out of KNOWN_REASON_GAPS
    assert checks == expected


@pytest.mark.asyncio(loop_scope="session")
async def test_a_value_is_matched_as_a_word(bench):
    assert bench.mentions("We use Hono, not Express.", "Hono")
    assert not bench.mentions("Honorable mention", "Hono")
    assert bench.mentions("缓存就用Redis吧", "Redis")  # CJK characters are word edges for a Latin value
    assert bench.mentions("为了依赖注入", "依赖注入")
