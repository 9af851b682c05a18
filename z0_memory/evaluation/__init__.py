"""Evaluation of z0-memory's retrieval loop and judge: data sets, the harness, and reports (``z0-memory eval``)."""

from pathlib import Path

from z0_memory.evaluation.dataset import (
    DatasetError,
    ExpectedMemory,
    Question,
    Scenario,
    Turn,
    load_locomo,
    load_scenarios,
)
from z0_memory.evaluation.harness import EvalOptions, run_evaluation

# The labelled scenarios `z0-memory eval` runs by default; shipped in the wheel (see bench/data/README.md).
DEFAULT_EVAL_DATASET = Path(__file__).resolve().parent / "data" / "project_memory_eval.jsonl"
from z0_memory.evaluation.models import PRICES, JudgeConfig, ScriptedJudgeModel, parse_config

__all__ = [
    "DEFAULT_EVAL_DATASET",
    "PRICES",
    "DatasetError",
    "EvalOptions",
    "ExpectedMemory",
    "JudgeConfig",
    "Question",
    "Scenario",
    "ScriptedJudgeModel",
    "Turn",
    "load_locomo",
    "load_scenarios",
    "parse_config",
    "run_evaluation",
]
