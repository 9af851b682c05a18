"""Rewrite the query for the next round of the retrieval loop, deterministically.

Candidates are tried in order; the first one that is new wins (queries are compared after
:func:`z0_memory.offline.judge.norm_query`: NFKC, case-folded, whitespace collapsed, end punctuation dropped):

0. **chaining** (:data:`CHAIN_HOPS`; ``"off"`` by default), the **second hop**: one name that the best hits so far
   give and the question does not (a capitalised name, a quoted title, a date; see :func:`bridge_terms`) with the
   question's focus terms, one bridge per round, best hit first. ``"relational"`` chains only a question that names
   something through another thing (:func:`needs_chain`: a relation of a named entity, "what does Melanie's sister
   do?", or a thing described by a clause, "where did she move after the job she took in May?"); ``"any"`` chains
   every question the judge left unanswered. Other questions, or hits that name nothing new, go on to step 1;
1. the judge's ``next_query``;
2. for list and multi-part questions, **pseudo-relevance feedback** first (the second hop is what they lack):
   the question's entities and focus terms plus the most salient new terms of the top hits that mention a
   question entity or focus term (terms frequent in those hits, rare in the rest, not yet used by any tried
   query); then a second-hop query of the entities and those terms alone;
3. the **missing terms** named by the verdict, with the entities;
4. the entities and focus terms plus **aspect expansions** for what the question needs (why -> "because reason",
   when -> "date", how many -> "how many number"; Chinese: 因为 原因 / 日期 时间 / 多少 数量);
5. for other questions, the pseudo-relevance-feedback queries of step 2;
6. the focus terms without the entities (entity names occur everywhere in a person's memories);
7. **entity-only** queries: all entities, then each one alone, then pairs in reverse order;
8. **last resort** (always new): the question's content terms (or the question, or "memory") rotated one word
   at a time; if every rotation was tried, ``"<terms> variant N"`` with the smallest N >= 2 that is new. Because
   ``queries_tried`` is finite, some N is always new, so the function never repeats a query.

Strategies: the verdict's ``next_strategy`` when given (``kv_exact`` keeps ``hybrid`` as a backstop); otherwise
the last round's search strategies without the KV ones (a KV lookup does not change with the query), or
``hybrid`` when none is left.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence

from z0_memory.offline.judge import (
    ASPECT_EXPANSIONS,
    QuestionAnalysis,
    analyze_question,
    entity_in,
    hit_stems,
    norm_query,
)
from z0_memory.schemas import STRATEGIES, Hit, StrategyName, Verdict
from z0_memory.text import STOPWORDS, contains_cjk, content_terms, stem, tokens

# Step 0 (chaining): "off", "relational" or "any". Off: neither mode is evidence of a gain under the folds protocol
# (bench/README.md, "Chaining", issue 21).
CHAIN_HOPS = "off"
PRF_HITS = 5
PRF_TERMS = 3
PRF_MIN_TF = 2
_SEARCH_STRATEGIES = ("semantic", "keyword", "hybrid")
# Conversational filler: frequent in chat turns, useless as feedback terms.
_CHATTER = frozenset(
    """thanks thank great awesome amazing wow cool nice glad love lovely sounds sound totally definitely really
    appreciate appreciated hope hey hi hello yeah yes super pretty lot lots much good well bye take care
    see seems seem look looks looking feel feels felt think thought know knew want wanted make made going
    sure happy fun things thing stuff way ways time times day days able huh also still even let lets maybe
    kind keep kept find found got get gets getting""".split()
)
_MISSING_TERMS = re.compile(r"terms:\s*([^;]+)")


_CHATTER_STEMS = frozenset(stem(w) for w in _CHATTER)


def _missing_terms(verdict: Verdict) -> list[str]:
    match = _MISSING_TERMS.search(verdict.missing or "")
    return [t.strip() for t in match.group(1).split(",") if t.strip()] if match else []


def _join(words: Sequence[str]) -> str:
    return " ".join(dict.fromkeys(w.strip() for w in words if w and w.strip()))


def _focus_words(qa: QuestionAnalysis) -> list[str]:
    return [t for t in qa.terms if stem(t) in qa.focus]


def _tried_stems(queries_tried: Sequence[str]) -> set[str]:
    return {stem(t) for q in queries_tried for t in tokens(q)}


def salient_terms(qa: QuestionAnalysis, hits: Sequence[Hit], queries_tried: Sequence[str], n: int = PRF_TERMS) -> list[str]:
    """Terms of the top hits that co-occur with the question's entities or focus terms, best first.

    A term scores ``tf_in_anchored_hits * log(1 + N / df_in_all_hits)``, where anchored hits are the first
    :data:`PRF_HITS` hits mentioning an entity or a focus term; terms of the question or of any tried query,
    stop words, and one-letter tokens are skipped, and so is a term found in fewer than :data:`PRF_MIN_TF` anchored
    hits: a word one chatty turn happens to use ("absolutely", "forward") is noise, a word the relevant hits share
    is the topic.
    Ties break alphabetically.
    """
    speakers = {stem(t) for h in hits for t in tokens(str(h.metadata.get("speaker") or ""))}
    used = set(qa.stems) | qa.entity_stems | _tried_stems(queries_tried) | speakers | _CHATTER_STEMS
    anchored = [h for h in hits if _anchored(qa, h)][:PRF_HITS]
    if not anchored:
        return []
    pool = list(hits)
    df = Counter(s for h in pool for s in {stem(t) for t in content_terms(h.content)})
    tf: Counter[str] = Counter()
    surface: dict[str, str] = {}
    for hit in anchored:
        for term in content_terms(hit.content):
            s = stem(term)
            if s in used or _nickname(s, speakers) or term in STOPWORDS or (len(term) < 4 and not contains_cjk(term)) or term.isdigit():
                continue
            tf[s] += 1
            surface.setdefault(s, term)
    recurring = [s for s in tf if tf[s] >= PRF_MIN_TF]
    scored = sorted(recurring, key=lambda s: (-tf[s] * math.log(1 + len(pool) / df.get(s, 1)), s))
    return [surface[s] for s in scored[:n]]


def _nickname(term: str, speakers: set[str]) -> bool:
    """A shortened speaker name ("Mel" for Melanie) is no better a feedback term than the name itself."""
    return any(name.startswith(term) for name in speakers if len(term) >= 2)


def _anchored(qa: QuestionAnalysis, hit: Hit) -> bool:
    stems_ = hit_stems(hit)
    return any(entity_in(e, hit, stems_) for e in qa.entities) or any(s in stems_ for s in qa.focus)


def _prf_queries(qa: QuestionAnalysis, hits: Sequence[Hit], queries_tried: Sequence[str]) -> Iterator[tuple[str, str]]:
    extra = salient_terms(qa, hits, queries_tried)
    if extra:
        yield _join([*qa.entities, *_focus_words(qa), *extra]), f"pseudo-relevance feedback added {', '.join(extra)}"
        yield _join([*qa.entities, *extra]), f"second hop: the entities with {', '.join(extra)} from the top hits"


def _aspect_query(qa: QuestionAnalysis) -> str:
    expansions = [ASPECT_EXPANSIONS[n][1 if qa.chinese else 0] for n in qa.needs if n in ASPECT_EXPANSIONS]
    return _join([*qa.entities, *_focus_words(qa), *expansions]) if any(expansions) else ""


def _entity_queries(qa: QuestionAnalysis) -> Iterator[tuple[str, str]]:
    entities = list(qa.entities)
    if entities:
        yield _join(entities), "the question's entities alone"
    if len(entities) > 1:
        for entity in entities:
            yield entity, f"the entity {entity} alone"
        for i in range(len(entities)):
            for j in range(len(entities) - 1, i, -1):
                yield _join([entities[j], entities[i]]), "a pair of the question's entities"


# A question that reaches its answer through an unnamed thing: "Melanie's sister", "the job she took in May",
# "the book Caroline recommended". (A possessive of a pronoun, "her sister", names no one the hits could give.)
_RELATION = re.compile(r"(?<![\w'’])[A-Z][\w\-]*['’]s?\s+(?:[a-z]+\s+){0,2}?[a-z]{3,}")
_DESCRIBED = re.compile(
    r"\bthe\s+[a-z]{3,}\s+(?:that|which|who|whom|where|when|(?:she|he|they|i|we|you)\s+[a-z]+|[A-Z][a-z]+\s+[a-z]+)",
    re.IGNORECASE)
_TITLE = re.compile(r"[\"“]([^\"“”]{2,60})[\"”]")
_NAME_RUN = re.compile(r"(?<![\w'’])[A-Z][\w'’\-]*(?:\s+[A-Z][\w'’\-]*)*")
_DATE = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?\b"
    r"|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?(?:,?\s+\d{4})?\b"
    r"|\b(?:19|20)\d{2}-\d{2}-\d{2}\b|\b(?:19|20)\d{2}\b",
    re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?;:…]\s*$|^\s*$")


def needs_chain(question: str) -> bool:
    """Whether ``question`` reaches its answer through a thing it does not name (see step 0 of the module docstring)."""
    return bool(_RELATION.search(question) or _DESCRIBED.search(question))


def _own_text(hit: Hit) -> str:
    """The hit's words without the ``"Speaker: "`` prefix a conversation turn carries."""
    speaker = str(hit.metadata.get("speaker") or "")
    text = hit.content
    if speaker and text.startswith(f"{speaker}:"):
        text = text[len(speaker) + 1:]
    return text.strip()


def _names(text: str) -> Iterator[str]:
    """Quoted titles, dates and runs of capitalised words of ``text``, in order; a capitalised word that starts a
    sentence is skipped (it is capitalised for the sentence, not as a name), unless it is quoted."""
    spans: list[tuple[int, str]] = [(m.start(), m.group(1).strip()) for m in _TITLE.finditer(text)]
    spans += [(m.start(), m.group(0).strip()) for m in _DATE.finditer(text)]
    covered = [(start, start + len(name)) for start, name in spans]
    for m in _NAME_RUN.finditer(text):
        words = [(w.start() + m.start(), w.group(0)) for w in re.finditer(r"\S+", m.group(0))]
        if _SENTENCE_END.search(text[: m.start()]):
            words = words[1:]
        words = [(at, w) for at, w in words if not any(a <= at < b for a, b in covered)]
        if words:
            spans.append((words[0][0], " ".join(w for _, w in words)))
    for _, name in sorted(spans, key=lambda s: s[0]):
        yield name


def bridge_terms(qa: QuestionAnalysis, hits: Sequence[Hit], queries_tried: Sequence[str]) -> list[str]:
    """Names the best hits give that the question does not: the candidate bridges of a two-hop question, best first.

    Read from the first :data:`PRF_HITS` hits that mention a question entity or focus term (as pseudo-relevance
    feedback reads them), in rank order, each hit's names in text order (:func:`_names`). Stop words
    aside, a name is dropped when it has no word left or when any of its words is conversational filler, a speaker
    (or a speaker's shortened name), a word of the question, or a word of a query already tried (so each round's
    chain takes the next bridge).
    """
    speakers = {stem(t) for h in hits for t in tokens(str(h.metadata.get("speaker") or ""))}
    known = set(qa.stems) | qa.entity_stems | _tried_stems(queries_tried) | speakers | _CHATTER_STEMS
    anchored = [h for h in hits if _anchored(qa, h)][:PRF_HITS]
    found: list[str] = []
    for hit in anchored:
        for name in _names(_own_text(hit)):
            words = [t for t in tokens(name) if t not in STOPWORDS]
            new = [t for t in words if stem(t) not in known and not _nickname(stem(t), speakers)]
            if new and len(new) == len(words):
                found.append(name)
    return list(dict.fromkeys(found))


def _chain_queries(qa: QuestionAnalysis, hits: Sequence[Hit], queries_tried: Sequence[str]) -> Iterator[tuple[str, str]]:
    for bridge in bridge_terms(qa, hits, queries_tried):
        yield _join([bridge, *_focus_words(qa)]), f"chaining: the second hop through {bridge}, named by the top hits"


def _candidates(
    question: str, qa: QuestionAnalysis, verdict: Verdict, queries_tried: Sequence[str], hits: Sequence[Hit]
) -> Iterator[tuple[str, str]]:
    if CHAIN_HOPS == "any" or (CHAIN_HOPS == "relational" and needs_chain(question)):
        yield from _chain_queries(qa, hits, queries_tried)
    if verdict.next_query:
        yield verdict.next_query, "the judge's proposal"
    multi = qa.is_list or qa.is_compare
    if multi:
        yield from _prf_queries(qa, hits, queries_tried)
    missing = _missing_terms(verdict)
    if missing:
        yield _join([*qa.entities, *missing]), f"the missing terms {', '.join(missing)}"
    aspect = _aspect_query(qa)
    if aspect:
        yield aspect, f"expanded for the needed aspect ({', '.join(qa.needs)})"
    if not multi:
        yield from _prf_queries(qa, hits, queries_tried)
    focus = _focus_words(qa)
    if focus and qa.entities:
        yield _join(focus), "the focus terms without the entity names"
    yield from _entity_queries(qa)


def last_resort(question: str, queries_tried: Sequence[str]) -> str:
    """A deterministic query not in ``queries_tried``: rotations of the content terms, then numbered variants."""
    tried = {norm_query(q) for q in queries_tried}
    words = content_terms(question) or question.split() or ["memory"]
    for shift in range(len(words)):
        candidate = " ".join(words[shift:] + words[:shift])
        if norm_query(candidate) and norm_query(candidate) not in tried:
            return candidate
    base = " ".join(words)
    n = 2
    while norm_query(f"{base} variant {n}") in tried:
        n += 1
    return f"{base} variant {n}"


def _strategies(verdict: Verdict, last_strategies: Sequence[str]) -> tuple[list[StrategyName], str]:
    if verdict.next_strategy:
        chosen: list[StrategyName] = [verdict.next_strategy]
        if verdict.next_strategy == "kv_exact":
            chosen.append("hybrid")
        return chosen, f"switching to {verdict.next_strategy} on the judge's advice"
    kept = [s for s in last_strategies if s in _SEARCH_STRATEGIES and s in STRATEGIES]
    kept = list(dict.fromkeys(kept)) or ["hybrid"]
    return kept, f"keeping {', '.join(kept)}"  # type: ignore[return-value]


def rewrite(
    question: str,
    verdict: Verdict,
    *,
    queries_tried: Sequence[str],
    last_strategies: Sequence[str],
    hits: Sequence[Hit],
) -> tuple[str, list[StrategyName], str]:
    """The next (query, strategies, explanation); the query is never one of ``queries_tried``."""
    qa = analyze_question(question)
    tried = {norm_query(q) for q in queries_tried}
    strategies, why_strategies = _strategies(verdict, last_strategies)
    for query, why in _candidates(question, qa, verdict, queries_tried, hits):
        key = norm_query(query)
        if key and key not in tried:
            return query, strategies, f"New query from {why}; {why_strategies}."
    query = last_resort(question, queries_tried)
    return query, strategies, f"Every focused rewrite was already tried, so a deterministic variant; {why_strategies}."
