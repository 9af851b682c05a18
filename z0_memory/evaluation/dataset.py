"""Evaluation data sets: z0-memory's multi-session scenario JSONL, and LoCoMo's JSON.

Both load into the same shape, a list of :class:`Scenario`: the turns of a conversation (in order, with sessions),
the memories a careful reader would keep from them, and questions labelled with the memories or turns that answer
them, whether the first search should already suffice, and whether memory holds an answer at all. The format is
documented in ``bench/data/README.md``; :func:`load_scenarios` validates a file and says which line is wrong.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from z0_memory.errors import Z0Error
from z0_memory.schemas import MemoryKey, validate_segment

ROLES = ("user", "assistant")
KINDS = ("fact", "decision", "preference", "context")


class DatasetError(Z0Error, ValueError):
    """The evaluation data set is malformed."""


@dataclass(frozen=True)
class Turn:
    id: str
    session: int
    role: str
    text: str


@dataclass(frozen=True)
class ExpectedMemory:
    """What should be remembered: a KV fact (``key`` + ``value``) or a semantic memory (``content``)."""

    id: str
    turns: tuple[str, ...]
    kind: str = "fact"
    key: str | None = None
    value: str | None = None
    content: str | None = None
    rationale: str | None = None

    @property
    def text(self) -> str:
        """The memory as one sentence (what is stored in --seed-memories mode)."""
        if self.content:
            return self.content
        return f"{self.key} = {self.value}"


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    memories: tuple[str, ...] = ()
    turns: tuple[str, ...] = ()
    first_search_suffices: bool | None = None
    answerable: bool = True
    answer: str | None = None
    type: str = ""
    lang: str = "en"


@dataclass
class Scenario:
    id: str
    project: str
    turns: list[Turn]
    memories: list[ExpectedMemory]
    questions: list[Question]
    lang: str = "en"
    source: str = "z0"
    _memory_index: dict[str, ExpectedMemory] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._memory_index = {m.id: m for m in self.memories}

    def memory(self, memory_id: str) -> ExpectedMemory:
        return self._memory_index[memory_id]

    def gold_units(self, question: Question) -> list[frozenset[str]]:
        """What a retrieved row must carry (in its source ids) to count as evidence, one set per gold item.

        A gold memory is found by a row whose sources name the memory itself (``mem:<id>``, set when memories are
        seeded directly) or any turn that states it (set by extraction); a gold turn by a row citing that turn.
        """
        units = [frozenset({f"mem:{m}", *self.memory(m).turns}) for m in question.memories]
        units += [frozenset({t}) for t in question.turns]
        return units


def _need(obj: dict[str, Any], name: str, typ: type | tuple[type, ...], where: str) -> Any:
    if name not in obj:
        raise DatasetError(f"{where}: missing field {name!r}")
    value = obj[name]
    if not isinstance(value, typ) or (isinstance(value, bool) and typ in (int, (int,))):
        raise DatasetError(f"{where}: field {name!r} must be {getattr(typ, '__name__', typ)}, got {value!r}")
    return value


def _opt_bool(obj: dict[str, Any], name: str, where: str, default: bool | None) -> bool | None:
    value = obj.get(name, default)
    if value is not None and not isinstance(value, bool):
        raise DatasetError(f"{where}: field {name!r} must be true, false or null, got {value!r}")
    return value


def parse_scenario(obj: Any, where: str) -> Scenario:
    """One scenario from its JSON object, validated (ids unique and resolvable, keys in the scenario's project)."""
    if not isinstance(obj, dict):
        raise DatasetError(f"{where}: a scenario must be a JSON object")
    sid = _need(obj, "id", str, where)
    where = f"{where} ({sid})"
    project = _need(obj, "project", str, where)
    try:
        validate_segment(project, "project")
    except Z0Error as exc:
        raise DatasetError(f"{where}: {exc}") from None
    turns: list[Turn] = []
    for i, t in enumerate(_need(obj, "turns", list, where)):
        tw = f"{where} turn {i + 1}"
        if not isinstance(t, dict):
            raise DatasetError(f"{tw}: must be an object")
        role = _need(t, "role", str, tw)
        if role not in ROLES:
            raise DatasetError(f"{tw}: role must be 'user' or 'assistant', got {role!r}")
        turns.append(Turn(_need(t, "id", str, tw), _need(t, "session", int, tw), role, _need(t, "text", str, tw)))
    turn_ids = [t.id for t in turns]
    if len(set(turn_ids)) != len(turn_ids):
        raise DatasetError(f"{where}: turn ids must be unique")
    if any(b.session < a.session for a, b in zip(turns, turns[1:])):
        raise DatasetError(f"{where}: turns must be in session order")
    memories: list[ExpectedMemory] = []
    for i, m in enumerate(obj.get("memories", [])):
        mw = f"{where} memory {i + 1}"
        if not isinstance(m, dict):
            raise DatasetError(f"{mw}: must be an object")
        mid = _need(m, "id", str, mw)
        kind = m.get("kind", "fact")
        if kind not in KINDS:
            raise DatasetError(f"{mw}: kind must be one of {KINDS}, got {kind!r}")
        key, value, content = m.get("key"), m.get("value"), m.get("content")
        if key is not None:
            try:
                parsed = MemoryKey.parse(key)
            except Z0Error as exc:
                raise DatasetError(f"{mw}: {exc}") from None
            if parsed.project != project:
                raise DatasetError(f"{mw}: key {key!r} must start with the scenario's project {project!r}")
            if not isinstance(value, str) or not value.strip():
                raise DatasetError(f"{mw}: a memory with a key needs a text 'value'")
        elif not isinstance(content, str) or not content.strip():
            raise DatasetError(f"{mw}: a memory needs 'key' and 'value', or 'content'")
        sources = tuple(_need(m, "turns", list, mw))
        unknown = [t for t in sources if t not in turn_ids]
        if unknown:
            raise DatasetError(f"{mw}: unknown turn ids {unknown}")
        memories.append(ExpectedMemory(mid, sources, kind, key, value, content, m.get("rationale")))
    memory_ids = {m.id for m in memories}
    if len(memory_ids) != len(memories):
        raise DatasetError(f"{where}: memory ids must be unique")
    questions: list[Question] = []
    for i, q in enumerate(_need(obj, "questions", list, where)):
        qw = f"{where} question {i + 1}"
        if not isinstance(q, dict):
            raise DatasetError(f"{qw}: must be an object")
        mems, qturns = tuple(q.get("memories", [])), tuple(q.get("turns", []))
        if bad := [m for m in mems if m not in memory_ids]:
            raise DatasetError(f"{qw}: unknown memory ids {bad}")
        if bad := [t for t in qturns if t not in turn_ids]:
            raise DatasetError(f"{qw}: unknown turn ids {bad}")
        answerable = _opt_bool(q, "answerable", qw, True)
        first = _opt_bool(q, "first_search_suffices", qw, None)
        if answerable and not (mems or qturns):
            raise DatasetError(f"{qw}: an answerable question must name the memories or turns that answer it")
        if not answerable and (mems or qturns or first):
            raise DatasetError(f"{qw}: an unanswerable question names no evidence and cannot suffice at once")
        questions.append(Question(
            _need(q, "id", str, qw), _need(q, "text", str, qw), mems, qturns, first, bool(answerable),
            q.get("answer"), str(q.get("type", "")), str(q.get("lang", obj.get("lang", "en")))))
    if len({q.id for q in questions}) != len(questions):
        raise DatasetError(f"{where}: question ids must be unique")
    return Scenario(sid, project, turns, memories, questions, str(obj.get("lang", "en")))


def load_scenarios(path: str | Path) -> list[Scenario]:
    """A z0 scenario ``.jsonl`` file (one scenario a line), or LoCoMo JSON (a file or a folder of files)."""
    path = Path(path)
    if path.is_dir() or path.suffix == ".json":
        return load_locomo(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"cannot read {path}: {exc}") from exc
    scenarios: list[Scenario] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{number}: not JSON ({exc})") from None
        scenarios.append(parse_scenario(obj, f"{path.name}:{number}"))
    if len({s.id for s in scenarios}) != len(scenarios):
        raise DatasetError(f"{path}: scenario ids must be unique")
    if not scenarios:
        raise DatasetError(f"{path} holds no scenarios")
    return scenarios


LOCOMO_ADVERSARIAL = 5
LOCOMO_CATEGORIES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop", 5: "adversarial"}


def locomo_scenario(item: dict[str, Any], name: str) -> Scenario:
    """One LoCoMo conversation as a scenario.

    Every turn is an expected memory (id = its ``dia_id``), so ``--seed-memories`` stores the raw turns as
    ``z0-memory ingest`` does. Questions cite their ``evidence`` turns; adversarial questions (category 5) have no
    answer in the conversation and are labelled unanswerable. LoCoMo does not say whether one search suffices, so
    ``first_search_suffices`` is unlabelled (null) and those questions are left out of the round-1 accuracy.
    """
    import re

    from z0_memory.ingest import locomo_turns
    from z0_memory.schemas import normalize_segment

    project = normalize_segment(f"locomo_{name}")
    turns, memories = [], []
    for t in locomo_turns(item):
        if not t.dia_id:
            continue
        turns.append(Turn(t.dia_id, t.session, "user", t.line))
        memories.append(ExpectedMemory(t.dia_id, (t.dia_id,), "context", content=t.line))
    known = {t.id for t in turns}
    questions = []
    for i, qa in enumerate(item.get("qa", [])):
        category = int(qa.get("category", 0) or 0)
        evidence = [e for raw in qa.get("evidence") or [] for e in re.findall(r"D\d+:\d+", str(raw)) if e in known]
        answerable = category != LOCOMO_ADVERSARIAL and bool(evidence)
        if category != LOCOMO_ADVERSARIAL and not evidence:
            continue  # a handful of LoCoMo questions cite no turn that exists: nothing to score
        questions.append(Question(
            f"q{i + 1}", str(qa.get("question", "")), turns=tuple(dict.fromkeys(evidence)) if answerable else (),
            first_search_suffices=None if answerable else False, answerable=answerable,
            answer=None if qa.get("answer") is None else str(qa.get("answer")),
            type=LOCOMO_CATEGORIES.get(category, str(category))))
    return Scenario(name, project, turns, memories, questions, "en", source="locomo")


def load_locomo(path: str | Path) -> list[Scenario]:
    """LoCoMo conversations from one ``.json`` file (one conversation or a list) or every ``*.json`` in a folder."""
    path = Path(path)
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    if not files:
        raise DatasetError(f"no *.json files in {path}")
    scenarios = []
    for file in files:
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise DatasetError(f"cannot read {file} as JSON: {exc}") from exc
        items = data if isinstance(data, list) else [data]
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise DatasetError(f"{file}: expected LoCoMo conversation objects")
            name = str(item.get("sample_id") or (file.stem if len(items) == 1 else f"{file.stem}-{i}"))
            scenarios.append(locomo_scenario(item, name))
    return scenarios
