"""Judge configurations for ``z0-memory eval``: names, prices, token accounting, and the scripted judge.

A configuration is named on the command line:

``offline``                        the deterministic offline judge (no model, no tokens)
``scripted``                       :class:`ScriptedJudgeModel`: a fake chat model that reads the judge prompt and
                                   answers with a structured ``Verdict`` through the real model path (tool call,
                                   parser, usage metadata), so the harness is checked end to end without a key
``openai:<model>``                 an OpenAI model (``openai:gpt-4o``, ``openai:gpt-4o-mini``); needs OPENAI_API_KEY
``compatible:<model>@<base_url>``  any OpenAI-compatible server (key from OPENAI_API_KEY, or none)

Costs are estimates from :data:`PRICES` (US dollars per million tokens, the providers' list prices when this was
written); a model not in the table reports tokens and no cost unless ``--price MODEL=IN,OUT`` names its price.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult, LLMResult
from pydantic import ConfigDict, PrivateAttr

from z0_memory.errors import ConfigurationError
from z0_memory.text import tokens
from z0_memory.tokens import count_message_tokens, count_tokens

# USD per 1M tokens (input, output): OpenAI list prices, standard tier.
PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "scripted-judge": (0.0, 0.0),
}


def price_of(model: str, prices: dict[str, tuple[float, float]] | None = None) -> tuple[float, float] | None:
    """The (input, output) price of a model; dated snapshots ("gpt-4o-2024-08-06") take their family's price."""
    table = {**PRICES, **(prices or {})}
    if model in table:
        return table[model]
    family = re.sub(r"-\d{4}-\d{2}-\d{2}$", "", model)
    return table.get(family)


def estimate_cost(model: str | None, input_tokens: int, output_tokens: int,
                  prices: dict[str, tuple[float, float]] | None = None) -> float | None:
    if model is None:
        return 0.0
    price = price_of(model, prices)
    if price is None:
        return None
    return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000


def parse_price(spec: str) -> tuple[str, tuple[float, float]]:
    """``"my-model=0.2,0.8"`` -> ``("my-model", (0.2, 0.8))`` (USD per million input, output tokens)."""
    name, _, values = spec.partition("=")
    try:
        inp, out = (float(v) for v in values.split(","))
    except ValueError:
        raise ConfigurationError(f"--price {spec!r}: expected MODEL=INPUT,OUTPUT in USD per million tokens") from None
    if not name.strip():
        raise ConfigurationError(f"--price {spec!r}: the model name is missing")
    return name.strip(), (inp, out)


@dataclass(frozen=True)
class JudgeConfig:
    """One configuration to evaluate: a name, the context fields it sets, and the model it prices."""

    name: str
    judge_model: str
    model_name: str | None = None  # None: no language model (offline)
    base_url: str | None = None
    scripted: bool = False

    def context_overrides(self) -> dict[str, Any]:
        out: dict[str, Any] = {"judge_model": self.judge_model}
        if self.base_url:
            out["openai_base_url"] = self.base_url
        return out

    def unavailable(self) -> str | None:
        """Why this configuration cannot run here (no key), else None."""
        if self.judge_model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
            return "needs OPENAI_API_KEY"
        return None


def parse_config(spec: str) -> JudgeConfig:
    """A configuration from its command-line name (see the module docstring)."""
    spec = spec.strip()
    if spec == "offline":
        return JudgeConfig("offline", "offline")
    if spec == "scripted":
        return JudgeConfig("scripted", "offline", SCRIPTED_MODEL_NAME, scripted=True)
    cut = min((i for i in (spec.find(":"), spec.find("/")) if i >= 0), default=-1)  # "openai:x" or "openai/x"
    provider, sep, rest = (spec[:cut], spec[cut], spec[cut + 1:]) if cut >= 0 else (spec, "", "")
    if sep and provider == "openai" and rest:
        return JudgeConfig(spec, f"openai/{rest}", rest)
    if sep and provider == "compatible" and rest:
        model, at, url = rest.partition("@")
        if not model or not at or not re.match(r"^https?://", url):
            raise ConfigurationError(f"config {spec!r}: expected compatible:<model>@<http(s)://base_url>")
        return JudgeConfig(spec, f"compatible/{model}", model, base_url=url)
    raise ConfigurationError(
        f"unknown configuration {spec!r}: use offline, scripted, openai:<model> or compatible:<model>@<base_url>")


class UsageRecorder(BaseCallbackHandler):
    """Adds up ``usage_metadata`` of every model response (whatever the provider names its model)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0
        self.input_tokens = 0
        self.output_tokens = 0

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        for generations in response.generations:
            for gen in generations:
                message = getattr(gen, "message", None)
                usage = getattr(message, "usage_metadata", None) if isinstance(message, AIMessage) else None
                self.calls += 1
                if usage:
                    self.input_tokens += int(usage.get("input_tokens", 0))
                    self.output_tokens += int(usage.get("output_tokens", 0))


_QUESTION_RE = re.compile(r"^QUESTION:\s*(.*)$", re.M)
_ROUND_RE = re.compile(r"^Round (\d+) of at most (\d+)", re.M)
_LINE_RE = re.compile(r"^\[(\d+)\] \((.*?)\) (.*)$")
SCRIPTED_MODEL_NAME = "scripted-judge"
VERDICT_SCHEMA_TOKENS = 180  # what the Verdict tool schema adds to a real prompt (counted once, cl100k_base)


def _overlap(needle: str, haystack_tokens: set[str]) -> float:
    words = [t for t in tokens(needle) if len(t) > 1 or not t.isascii()]
    return sum(w in haystack_tokens for w in words) / len(words) if words else 0.0


def needle_found(needle: str, lines: Sequence[str], *, overlap: float = 0.6) -> bool:
    """A short needle (a value) appears in some line; a long one (a sentence) shares most of its words with one."""
    low = needle.casefold()
    if len(needle) <= 40 and any(low in line.casefold() for line in lines):
        return True
    return len(needle) > 12 and any(_overlap(needle, set(tokens(line))) >= overlap for line in lines)


class ScriptedJudgeModel(BaseChatModel):
    """A fake judge that answers like a careful but imperfect model, through the real structured-output path.

    It knows, per question, what the answer must contain (``needles``: one list of alternative texts per gold
    item; an empty list for a question memory cannot answer). It reads the judge prompt, finds the question and the
    evidence lines, and says ``sufficient`` when every gold item is matched by some evidence line (a value as a
    substring, a sentence by word overlap), naming the items; otherwise it says what is missing and proposes a
    keyword search for it. With ``slip_rate`` it gets a deterministic share of its verdicts wrong (hashed from the
    question and round), as real judges do. It answers as a ``Verdict`` tool call with ``usage_metadata`` counted
    with cl100k_base (the prompt, plus the tool schema, plus the call's arguments), so token and cost accounting is
    exercised as it is with OpenAI. Every call is kept in ``calls``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)
    needles: dict[str, list[list[str]]]
    slip_rate: float = 0.1
    name: str = SCRIPTED_MODEL_NAME
    _calls: list[list[BaseMessage]] = PrivateAttr(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "z0-scripted-judge"

    @property
    def calls(self) -> list[list[BaseMessage]]:
        return self._calls

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        names = [getattr(t, "__name__", None) or getattr(t, "name", str(t)) for t in tools]
        return self.bind(tool_names=names)

    def _slips(self, question: str, round_no: int) -> bool:
        digest = hashlib.blake2b(f"{question}|{round_no}".encode(), digest_size=8).digest()
        return int.from_bytes(digest, "little") / 2**64 < self.slip_rate

    def verdict(self, prompt: str) -> dict[str, Any]:
        """The structured answer to one judge prompt."""
        match = _QUESTION_RE.search(prompt)
        question = match.group(1).strip() if match else ""
        round_match = _ROUND_RE.search(prompt)
        round_no = int(round_match.group(1)) if round_match else 1
        evidence = prompt.split("EVIDENCE:", 1)[-1]
        lines = [m.group(3) for m in map(_LINE_RE.match, evidence.strip().splitlines()) if m]
        gold = self.needles.get(question, [])
        found = [any(needle_found(n, lines) for n in alternatives) for alternatives in gold]
        sufficient = bool(gold) and all(found)
        if self._slips(question, round_no):
            sufficient = not sufficient
        if sufficient:
            return {"sufficient": True, "missing": "",
                    "reason": f"The evidence states what the question asks ({len(lines)} item(s) checked)."}
        missing = [alts[0] for alts, ok in zip(gold, found, strict=True) if not ok]
        what = "a statement that answers the question" if not gold else "the specific value or reason asked for"
        subject = " ".join(t for t in tokens(question) if len(t) > 3 or not t.isascii())[:80]
        return {"sufficient": False, "missing": f"no evidence item gives {what}",
                "reason": f"{len(lines)} item(s) are on the topic but {len(missing) or 'none'} needed fact(s) are "
                          "not stated",
                "next_query": subject or None, "next_strategy": "keyword" if round_no == 1 else "semantic"}

    def _answer(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> AIMessage:
        self._calls.append(list(messages))
        prompt = "\n".join(str(m.content) for m in messages)
        args = self.verdict(prompt)
        tool = (kwargs.get("tool_names") or ["Verdict"])[0]
        out_tokens = count_tokens(json.dumps(args, ensure_ascii=False)) + 8
        in_tokens = count_message_tokens(messages) + VERDICT_SCHEMA_TOKENS
        return AIMessage(
            content="", id=f"scripted-{uuid.uuid4().hex[:10]}",
            tool_calls=[{"name": tool, "args": args, "id": f"call_{uuid.uuid4().hex[:10]}", "type": "tool_call"}],
            usage_metadata={"input_tokens": in_tokens, "output_tokens": out_tokens,
                            "total_tokens": in_tokens + out_tokens},
            response_metadata={"model_name": self.name},
        )

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._answer(messages, kwargs))])

    async def _agenerate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                         **kwargs: Any) -> ChatResult:
        return self._generate(messages, stop, None, **kwargs)

