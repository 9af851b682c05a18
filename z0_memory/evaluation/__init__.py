"""Evaluation of z0-memory's retrieval loop and judge: data sets, the harness, and reports (``z0-memory eval``)."""

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
from z0_memory.evaluation.models import PRICES, JudgeConfig, ScriptedJudgeModel, parse_config

__all__ = [
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
