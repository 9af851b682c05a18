"""The gateway: pick retrieval strategies for a query, deterministically.

Rules, first match wins:

1. **Literal key.** A ``project:category:entity`` string in the query (a valid :class:`MemoryKey`) -> ``kv_exact``
   on that key, with ``hybrid`` as a backstop in case the key holds nothing.
2. **Named key.** The query names every word of a known key's entity ("which *backend framework* ...?" for
   ``acme:stack:backend_framework``) -> ``kv_exact`` on the best such key (most entity + category words matched,
   then the longest entity), plus ``hybrid``. Only keys of the given ``project`` are considered, so one project's
   keys never route another project's query.
3. **Named category.** The query names a known category (or the category of a known key) but no entity ->
   ``kv_prefix`` on ``project:category``, plus ``hybrid``.
4. **Open question.** ``hybrid``; or ``keyword`` alone when the query is a bare identifier (one token such as
   ``JWT_SECRET``, ``getUserById``, ``v2.3.1``), where lexical matching is exact and embeddings add noise.

Independently, a **history question** ("why did we switch from X to Y", "what did we use before", "以前用的是什么",
"为什么换") sets ``include_history=True`` so superseded versions are searched too; it always keeps ``hybrid``.

Also independently, a **named period** ("on 3 June, 2023", "in March 2024", "last week", "2023年5月"; see
:mod:`z0_memory.timewindow`) is kept in ``time_window``: retrieval then ranks memories from that period higher and
searches it on its own as well; the strategies do not change.

Words are compared after :func:`z0_memory.text.tokens` and a light English stemmer, so "frameworks" names
``framework``; a CJK segment matches when it occurs in the query as a substring.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from z0_memory.errors import InvalidKeyError
from z0_memory.offline.judge import literal_keys
from z0_memory.schemas import MemoryKey, RouteDecision, StrategyName
from z0_memory.text import contains_cjk, stem, tokens
from z0_memory.timewindow import parse_time_window

_IDENTIFIER_RE = re.compile(r"^[A-Za-z0-9_][\w.\-/:@#$]*$")

_HISTORY_EN = re.compile(
    r"\b(?:switch(?:ed|ing)?|chang(?:e|ed|ing)|mov(?:e|ed|ing)|migrat(?:e|ed|ing)|replac(?:e|ed|ing)|"
    r"swap(?:ped)?|drop(?:ped)?)\s+(?:\w+\s+){0,3}?(?:from|away|to|off|out)\b"
    r"|\bwhy\s+(?:did|do|have|has)\s+(?:we|you|they|i|he|she|the\s+team)\s+"
    r"(?:switch|change|move|migrate|replace|swap|drop|stop|abandon)"
    r"|\b(?:used|use|using|chose|choose|had|have)\b[^.?!]{0,40}\bbefore\b"
    r"|\bused to\b|\bpreviously\b|\bprevious\b|\boriginally\b|\bat first\b|\bin the past\b|\bformerly\b"
    r"|\bhistory\b|\bno longer\b|\bold (?:value|choice|decision|version|setup)\b|\binstead of\b"
    r"|\bsuperseded\b|\bearlier (?:choice|decision|version|value)\b",
    re.IGNORECASE,
)
_HISTORY_ZH = re.compile(r"以前|之前|原来|原先|从前|过去|曾经|当初|起初|最初|历史|换成|换掉|改成|改用|替换|取代|不再|为什么换|为何换|怎么换")


def _words(text: str) -> set[str]:
    return {stem(t) for t in tokens(text)}


def _segment_words(segment: str) -> list[str]:
    return [stem(t) for t in tokens(segment.replace("_", " ").replace("-", " ").replace(".", " "))]


def _names(query: str, qwords: set[str], segment: str) -> tuple[bool, int]:
    """Whether the query names ``segment`` (all of its words), and how many words that took."""
    if contains_cjk(segment):
        hit = segment in query or all(w in qwords or w in query for w in _segment_words(segment))
        return hit, len(_segment_words(segment)) if hit else 0
    words = _segment_words(segment)
    if not words:
        return False, 0
    hit = all(w in qwords for w in words)
    return hit, len(words) if hit else 0


def literal_key(query: str) -> str | None:
    """The first valid ``project:category:entity`` key written in the query, if any."""
    for candidate in literal_keys(query):
        try:
            return str(MemoryKey.parse(candidate))
        except InvalidKeyError:
            continue
    return None


def is_history_question(query: str) -> bool:
    return bool(_HISTORY_EN.search(query) or _HISTORY_ZH.search(query))


def is_bare_identifier(query: str) -> bool:
    text = query.strip().strip("`'\"")
    return bool(text) and " " not in text and not contains_cjk(text) and bool(_IDENTIFIER_RE.match(text))


def _parsed_keys(project: str, known_keys: Sequence[str]) -> list[MemoryKey]:
    out: list[MemoryKey] = []
    for key in known_keys:
        try:
            parsed = MemoryKey.parse(key)
        except InvalidKeyError:
            continue
        if parsed.project == project:
            out.append(parsed)
    return out


def named_key(query: str, project: str, known_keys: Sequence[str]) -> str | None:
    """The known key of ``project`` whose entity the query names, best match first."""
    qwords = _words(query)
    best: tuple[int, int, str] | None = None
    for key in _parsed_keys(project, known_keys):
        named, entity_words = _names(query, qwords, key.entity)
        if not named:
            continue
        _, category_words = _names(query, qwords, key.category)
        rank = (entity_words + category_words, len(key.entity), str(key))
        if best is None or rank[:2] > best[:2]:
            best = rank
    return best[2] if best else None


def named_category(query: str, project: str, known_categories: Sequence[str], known_keys: Sequence[str]) -> str | None:
    """The known category the query names (the one with most words when several do)."""
    categories = list(dict.fromkeys([*known_categories, *(k.category for k in _parsed_keys(project, known_keys))]))
    qwords = _words(query)
    best: tuple[int, str] | None = None
    for category in categories:
        named, n = _names(query, qwords, category)
        if named and (best is None or n > best[0]):
            best = (n, category)
    return best[1] if best else None


def route(
    query: str, *, project: str, known_categories: Sequence[str] = (), known_keys: Sequence[str] = (),
    now: datetime | None = None,
) -> RouteDecision:
    """Choose the strategies for ``query`` and read the period it names (see the module docstring for the rules).

    ``now`` anchors relative periods ("last week"); default: the current time.
    """
    decision = _strategies(query, project=project, known_categories=known_categories, known_keys=known_keys)
    window = parse_time_window(query, now=now)
    if window is None:
        return decision
    return decision.model_copy(update={
        "time_window": window.to_dict(),
        "reason": f"{decision.reason} It names the period {window.describe()}: memories from then rank higher, and "
        "that period is also searched on its own.",
    })


def _strategies(
    query: str, *, project: str, known_categories: Sequence[str], known_keys: Sequence[str]
) -> RouteDecision:
    history = is_history_question(query)
    suffix = " It is a history question, so superseded versions are searched too." if history else ""
    key = literal_key(query)
    if key:
        return RouteDecision(
            strategies=["kv_exact", "hybrid"],
            key=key,
            include_history=history,
            reason=f"The query spells out the key {key}, so it is looked up exactly, with hybrid search as a "
            f"backstop.{suffix}",
        )
    key = named_key(query, project, known_keys)
    if key:
        return RouteDecision(
            strategies=["kv_exact", "hybrid"],
            key=key,
            include_history=history,
            reason=f"The query names the entity of the known key {key}, so it is looked up exactly, with hybrid "
            f"search as a backstop.{suffix}",
        )
    category = named_category(query, project, known_categories, known_keys)
    if category:
        return RouteDecision(
            strategies=["kv_prefix", "hybrid"],
            prefix=f"{project}:{category}",
            include_history=history,
            reason=f"The query names the category '{category}' but no entity in it, so the category's facts are "
            f"listed, with hybrid search as a backstop.{suffix}",
        )
    if history:
        return RouteDecision(
            strategies=["hybrid"],
            include_history=True,
            reason="The query asks about past choices or a change, so hybrid search runs over current and "
            "superseded memories.",
        )
    if is_bare_identifier(query):
        strategies: list[StrategyName] = ["keyword"]
        return RouteDecision(
            strategies=strategies,
            reason=f"The query is a bare identifier ({query.strip()[:40]}), which exact keyword search matches best.",
        )
    return RouteDecision(
        strategies=["hybrid"],
        reason="An open question with no key, entity or category named: hybrid (semantic + keyword) search.",
    )
