"""A sceptical, deterministic judge of retrieved evidence (no LLM).

Algorithm
---------
1. **Analyse the question** (:func:`analyze_question`):

   * *focus terms*: :func:`z0_memory.text.content_terms` minus question fillers ("kind", "type", "thing", "use",
     "now", 哪些, 用, 现在 ...),
     compared after a light English stemmer (:func:`stem`), so "desserts" matches "dessert";
   * the period the question names (:mod:`z0_memory.timewindow`) is left out of both: it is matched on dates;
   * *entities*: capitalised words and runs of them ("Lord of the Rings" style runs are kept apart word by word),
     except a plain word that is capitalised only because it starts a sentence ("Set up the API server"),
     quoted phrases, ``project:category:entity`` keys, and CJK person/place/organisation names (jieba POS tags
     ``nr``/``ns``/``nt``/``nz``);
   * *needs*, from cue words in English and Chinese: ``date`` (when / what year / 何时 / 什么时候 ...),
     ``rationale`` (why / what motivated / 为什么 ...), ``number`` (how many / how much / how long / 多少 / 几),
     ``person`` (who / 谁), ``place`` (where / 哪里), ``value`` (what / which / 什么 / 哪个);
   * *shape*: ``list`` (a plural noun after what/which followed by an auxiliary, "all", "how many times", 哪些, 都
     ...) and
     ``compare`` (both, and between two entities, than, same, different, 比, 相比 ...).

2. **Score each of the top hits** (the first :data:`TOP_K`, after dropping hits below ``min_score``) by the share
   of the question's judged terms it contains. The judge weighs *anchors* (``QuestionAnalysis.anchors``: names,
   quoted phrases, keys; not a short acronym such as "API" nor a CJK noun only jieba's tagger calls a name: those
   count as terms) and *judged terms* (the focus terms plus those demoted entity words). A term is in a hit when its
   stem is, when one stem of at least :data:`PREFIX_MIN` letters begins the other ("validated" / "validation"), or
   through the project's slot vocabulary (``offline.extraction.vocabulary``, bilingual): a question word that names
   a slot ("缓存", "deploys", "style", an owner word, a storage word) is covered by a hit holding that slot (its key's
   entity segment, or a slot phrase in its text). Anchors count when they appear in the text, the key, the hit's
   ``metadata['speaker']``, another version of the same key, or (a known value of a slot: "Memcached") a fact stored
   under that slot's key. A hit is *relevant* when it names an anchor (if there are any) and at least half of the
   judged terms (one term for short questions).

3. **Decide.** A compound question ("Who writes X, and how are Y checked?", "谁负责X，Y存在哪？") is split into
   facets (:func:`question_facets`), each judged on its own; it is sufficient only when every facet is. For a
   question (or facet), evidence is sufficient only when all of these hold:

   * every anchor is covered by some top hit, and the top hits together cover >= 50% of the judged terms;
   * some relevant hit exists, and each *need* is met by a relevant hit: a date in its text (month names, years,
     weekdays, "yesterday", "last week", 2023-05-01, 5月 ...) or a ``metadata['session_date']``; a rationale
     (``hit.rationale``, or because / since / so that / reason / 因为 / 为了 ...); a number (digits or number
     words); a person (a capitalised name not in the question); a place (a capitalised word or "in/at the ...");
     a concrete value (two content terms the question does not contain, or one that is a number, a name or a
     Chinese word). "When does X need Y?" asks for a condition, not a date; "what was wrong with X" for a reason;
   * a why-question is answered by a hit that names every anchor and gives a reason, whatever its other words
     ("Why did we move away from Hono?": the change is described in words the reason need not repeat), provided the
     anchors single hits out (no anchor named by most top hits); without anchors, by the fact stored under a slot
     the question names, with its reason;
   * for ``compare`` questions with several entities, each entity has its own relevant hit;
   * for ``list`` questions, never on round 1 (one exploratory round is always made); then two distinct relevant
     hits, or a round that found no new relevant hit (the fusion records the rounds that found each hit);
   * a *chained* question, one that names its subject through another fact ("the service that runs on Fastify",
     "那个用 Go 写的后端"), is never sufficient on round 1 either: one more round follows the link. (A compound
     question without such a link is not held back: each of its facets must have its evidence, and that is all.)
     In a chained question the link and the answer are different hits, so a hit is relevant with one judged term
     and the 50% coverage is not asked.

   Otherwise ``missing`` names what is uncovered (``entities: ...; terms: ...; aspects: ...``) and ``reason`` says
   which test failed (for a facet, prefixed by the facet).

4. **Advise.** ``next_query`` focuses on the gap: the entities plus the missing terms, or the entities plus the
   focus terms plus an expansion of the missing aspect (date -> "date"; rationale -> "because reason";
   number -> "how many number"; Chinese: 日期 / 因为 原因 / 多少). It is ``None`` when that query was already tried
   (case and whitespace ignored) or when the gap is only "more items for a list" or "the link of a chained question"
   (the rewriter's pseudo-relevance feedback and second hop explore better). ``next_strategy`` switches: a key in
   the question -> ``kv_exact``; missing rare
   tokens (names, numbers, quoted phrases) after semantic/hybrid search -> ``keyword``; missing ordinary terms
   (likely a paraphrase) after keyword search -> ``semantic``; after keyword-only search with rare tokens still
   missing -> ``hybrid``.

``round`` is 1-based: the round whose evidence is judged. On the last round the verdict is just as strict (the
loop's guard, not the judge, ends the run) and the reason says so.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from z0_memory.offline.extraction.vocabulary import ROLES, SLOTS, find_phrases, find_values, term_pattern
from z0_memory.schemas import Hit, StrategyName, Verdict
from z0_memory.text import (
    STOPWORDS,
    contains_cjk,
    content_terms,
    stem,
    text_stems,
    tokens,
)
from z0_memory.timewindow import parse_time_window

TOP_K = 5
LIST_FAILURE = ("a list question needs at least one exploratory round, then two or more relevant hits or a round "
                "that found no new relevant one")
TERM_COVERAGE = 0.5
HIT_COVERAGE = 0.5
PREFIX_MIN = 5  # letters two stems must share, one beginning the other, to count as one word

_SEG = r"[^\W_][\w.\-]*"
KEY_RE = re.compile(rf"(?<![\w.\-:])({_SEG}:{_SEG}:{_SEG})(?![\w:])", re.UNICODE)

_FILLERS = frozenset(
    """kind kinds type types sort sorts thing things something anything way ways many much long often time
    recently ever currently usually exactly specifically name named tell know think describe mention mentioned
    happen happened say said go going make made use used uses using now today nowadays still actually 哪些 哪个 哪种 什么样 多少 多久 几 时候 何时 谁 哪里 哪儿
    时间 请问 知道 一下 用 使用 现在 目前 如今 做 当时 应该 几个 习惯""".split()
)
_QUESTION_WORDS = frozenset(
    """what when where which who whom whose why how did does do is are was were has have had can could would should
    will may might shall am be""".split()
)

_NEED_PATTERNS: dict[str, re.Pattern[str]] = {
    "date": re.compile(
        # "When does a refund need a second approver?" asks for a condition, "When did ...?" for a date
        r"\bwhen\b(?!\s+(?:does|do|is|are|should|must|can)\b)|\bwhat (?:date|time(?! zones?\b)|year|month|day|week)\b"
        r"|\bwhich (?:date|year|month|day|week)\b"
        r"|\bhow long ago\b|\bwhat period\b|何时|什么时候|哪天|哪一天|哪年|哪一年|几月|几号|几点|日期|哪个月",
        re.IGNORECASE,
    ),
    "rationale": re.compile(
        r"\bwhy\b|\bwhat (?:made|motivated|inspired|caused|led|prompted|drove)\b|\breasons?\b|\bhow come\b"
        r"|\bwhat(?:'s| is| was| went) (?:wrong|the (?:problem|issue)) with\b"
        r"|为什么|为何|为啥|原因|理由|怎么会|动机|(?:出了|有)什么问题",
        re.IGNORECASE,
    ),
    "number": re.compile(r"\bhow (?:many|much|often|long)\b|\bnumber of\b|多少|几个|几次|几年|几天|多久|多长", re.IGNORECASE),
    "person": re.compile(r"\bwho(?:m|se)?\b|谁", re.IGNORECASE),
    "place": re.compile(r"\bwhere\b|哪里|哪儿|在哪|什么地方", re.IGNORECASE),
    "value": re.compile(r"\bwhat\b|\bwhich\b|什么|哪个|哪些|哪种", re.IGNORECASE),
}
_LIST_CUES = re.compile(
    r"\b(?:all|every|each|list|various|several|some|ways|things|activities|hobbies|places|items|types|kinds)\b"
    r"|\bhow many times\b|\b(?:what|which)\s+(?!(?:does|is|was|has|this|his|its|yes)\b)\w+[^s\W]s\b"
    # a plural noun when an auxiliary follows ("What hobbies does ...", "Which days are ..."); a verb otherwise
    # ("What generates the docs site?", "What handles subscriptions?")
    r"(?=\s+(?:do|does|did|are|were|is|was|have|has|had|can|could|should|would|will|must)\b)"
    r"|哪些|都|所有|几次|分别|各",
    re.IGNORECASE,
)
_COMPARE_CUES = re.compile(
    r"\b(?:both|compare[ds]?|than|same|different|difference|similar|in common|share[ds]?|each other|together)\b"
    r"|比|相比|区别|不同|一样|共同|都",
    re.IGNORECASE,
)

_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
    "|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_DATE_RE = re.compile(
    rf"\b(?:{_MONTHS})\b\.?\s*\d{{0,4}}|\b(?:19|20)\d{{2}}\b|\b\d{{1,4}}[-/.]\d{{1,2}}(?:[-/.]\d{{1,4}})?\b"
    r"|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|yesterday|today|tomorrow|tonight)\b"
    r"|\b(?:last|next|this|past)\s+(?:week|month|year|summer|winter|spring|fall|autumn|weekend|night)\b"
    r"|\b\d+\s+(?:days?|weeks?|months?|years?)\s+ago\b|\bago\b|\brecently\b|\blately\b"
    r"|\d{1,4}\s*[年月日号]|[一二三四五六七八九十两]+\s*[月号]|昨天|今天|明天|前天|上周|下周|上个月|下个月|去年|今年|明年|周[一二三四五六日末]|星期",
    re.IGNORECASE,
)
_RATIONALE_RE = re.compile(
    r"\b(?:because|since|so that|so i|so we|reason|reasons|due to|in order to|as a result|that's why|thats why"
    r"|therefore|thanks to|motivat\w*|inspir\w*|caus\w*|led me|made me|wanted to|helps? me|for the sake)\b"
    r"|因为|由于|为了|所以|原因|因此|理由|出于|于是|导致",
    re.IGNORECASE,
)
_NUMBER_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|twenty|thirty"
    "|forty|fifty|hundred|thousand|once|twice|thrice|dozen|couple|first|second|third|fourth|fifth|several"
)
_NUMBER_RE = re.compile(rf"\d|\b(?:{_NUMBER_WORDS})\b|[一二三四五六七八九十两百千万几]", re.IGNORECASE)
_PLACE_RE = re.compile(r"\b(?:in|at|to|from|near|visited|visit)\s+(?:the\s+)?[A-Za-z]|在|去|到", re.IGNORECASE)
_CAPITALISED = re.compile(r"(?<![\w'’])[A-Z][\w’'\-]*")
_QUOTED = re.compile(r"[\"“”‘«「『]([^\"“”«»「」『』]{2,60})[\"“”’»」』]")

ASPECT_EXPANSIONS: dict[str, tuple[str, str]] = {
    "date": ("date", "日期 时间"),
    "rationale": ("because reason", "因为 原因"),
    "number": ("how many number", "多少 数量"),
    "person": ("who name", "谁 名字"),
    "place": ("where place", "地方 哪里"),
    "value": ("", ""),
}

def norm_query(query: str) -> str:
    """How queries are compared for repetition: NFKC, case-folded, whitespace collapsed, end punctuation dropped."""
    text = unicodedata.normalize("NFKC", query).casefold()
    return " ".join(text.split()).strip(" ?!.。？！,，;；")


def literal_keys(text: str) -> list[str]:
    return [m.group(1) for m in KEY_RE.finditer(text)]


@dataclass(frozen=True)
class QuestionAnalysis:
    """What a question asks for, as the judge, the rewriter and the fusion see it."""

    question: str
    terms: tuple[str, ...]
    stems: tuple[str, ...]
    entities: tuple[str, ...]
    needs: tuple[str, ...]
    is_list: bool
    is_compare: bool
    chinese: bool
    keys: tuple[str, ...] = field(default=())

    @functools.cached_property
    def entity_stems(self) -> frozenset[str]:
        return frozenset(stem(t) for e in self.entities for t in tokens(e))

    @functools.cached_property
    def focus(self) -> tuple[str, ...]:
        """Focus terms (stemmed) that are not entity words."""
        ent = self.entity_stems
        return tuple(s for s in self.stems if s not in ent)

    @functools.cached_property
    def anchors(self) -> tuple[str, ...]:
        """The entities the judge requires some hit to name: names, quoted phrases, keys. Not a short acronym the slot
        vocabulary uses as a common noun ("API", "CI"; "US" stays a name) nor a CJK word only jieba's tagger calls a
        name ("博客", "商城": ordinary nouns it tags ``nr``/``ns``): those are terms, covered or not like any other."""
        return tuple(e for e in self.entities if not (_ACRONYM.fullmatch(e) and e.lower() in _vocabulary_words())
                     and not (contains_cjk(e) and e not in _quoted(self.question)))

    @functools.cached_property
    def judged_focus(self) -> tuple[str, ...]:
        """The focus terms the judge weighs: the focus plus the words of entities that are not anchors."""
        anchor_stems = frozenset(stem(t) for e in self.anchors for t in tokens(e))
        return tuple(s for s in self.stems if s not in anchor_stems)

    @functools.cached_property
    def alternatives(self) -> tuple[tuple[str, str], ...]:
        """Stem pairs (both ways) of an either-or question ("Tabs or spaces in the CRM repo?", "用 Redis 还是
        Memcached？"): it asks which alternative holds, so a hit naming one covers the other."""
        pairs = []
        for m in _EITHER_OR.finditer(self.question):
            a, b = stem(m.group(1)), stem(m.group(2))
            pairs += [(a, b), (b, a)]
        return tuple(pairs)

    @functools.cached_property
    def chained(self) -> bool:
        """The question names its subject through another fact ("Who owns the service that runs on Fastify?",
        "谁负责那个用 Dagster 调度的平台？"): the link and the answer are different memories."""
        return bool(_INDIRECT.search(self.question))

    @functools.cached_property
    def slots(self) -> dict[str, frozenset[str]]:
        """Question stem -> the vocabulary slots (key entities: "cache", "deploy", "on_call") a phrase or known value
        around it names (``offline.extraction.vocabulary``: bilingual, so "缓存" names the slot of
        ``shop:database:cache``). An anchor that is a known value names its slot too ("Memcached" -> cache)."""
        return _question_slots(self.question)


def _entities(question: str) -> list[str]:
    found: list[str] = [m.group(1).strip() for m in _QUOTED.finditer(question)]
    found += literal_keys(question)
    for match in _CAPITALISED.finditer(question):
        word = re.sub(r"['’]s$", "", match.group(0)).strip("-'’")
        if not word or word.lower() in _QUESTION_WORDS or word.lower() in STOPWORDS:
            continue
        if (_SENTENCE_START.search(question[: match.start()]) and word == match.group(0)
                and _is_plain_word(word, question[match.end():])):
            continue  # "Set up the API server": a capital that only starts the sentence names nothing
        found.append(word)
    if contains_cjk(question):
        found += _cjk_names(question)
    return list(dict.fromkeys(e for e in found if e))


_SENTENCE_START = re.compile(r"(?:^|[.!?;:。！？；：]\s+)[\W_]*$")


def _is_plain_word(word: str, rest: str) -> bool:
    """A sentence-initial word that reads as an ordinary word: only its first letter is a capital, it has no digit,
    it does not come back capitalised later in the text and is not followed by "and Name" (as a name would be).
    A possessive ("Melanie's ...") is kept by the caller."""
    if re.match(r"\s*(?:,|and|or|&)\s+[A-Z]", rest):  # "Melanie and Caroline ...": a list of names
        return False
    return word[1:].islower() and not any(c.isdigit() for c in word) and not re.search(rf"\b{re.escape(word)}\b", rest)


_ACRONYM = re.compile(r"[A-Z]{2,3}")
_WORD = r"([^\W\d_]{2,}|[\u4e00-\u9fff]{2,})"
_EITHER_OR = re.compile(rf"{_WORD}\s*(?:\bor\b|还是)\s*{_WORD}", re.IGNORECASE)


@functools.lru_cache(maxsize=1)
def _vocabulary_words() -> frozenset[str]:
    """Every Latin word of the slot vocabulary's phrases and slot names ("api", "ci", "orm", "sso"): an acronym
    among them is a common technical noun, not a name ("US" is not one)."""
    words = (w for slot in SLOTS for phrase in (*slot.phrases, slot.en, slot.entity.replace("_", " "))
             for w in re.findall(r"[a-z]+", phrase.lower()))
    return frozenset(words)


def _quoted(question: str) -> list[str]:
    return [m.group(1).strip() for m in _QUOTED.finditer(question)]


# Who owns an area is stored as ``people:{area}_owner`` (offline.extraction.people): these words name that slot.
_OWNER_CUE = re.compile(r"\bown(?:s|ed|er|ers|ing)?\b|\b(?:leads?|handles?|maintains?|manages?|looks after)\b"
                        r"|\bresponsible for\b|\bin charge of\b|负责(?!人)|负责人", re.IGNORECASE)
OWNER_SLOT = "owner"


def _spans_slots(text: str) -> list[tuple[int, int, str]]:
    """(start, end, slot entity) of every vocabulary slot phrase, known value, role and owner word in ``text``."""
    found = [(f.start, f.end, f.slot.entity) for f in (*find_phrases(text), *find_values(text)) if f.slot]
    for pattern, entity, _en, _zh in ROLES:
        found += [(m.start(), m.end(), entity) for m in re.finditer(pattern, text, re.IGNORECASE)]
    found += [(m.start(), m.end(), OWNER_SLOT) for m in _OWNER_CUE.finditer(text)]
    return found


# Where something is kept names the slots that keep things ("Where does telemetry get stored?" and
# ``database:database = ClickHouse``).
_STORAGE_CUE = re.compile(r"\b(?:stor(?:e|ed|es|ing|age)|kept|keeps?|sav(?:e|ed|es)|persist(?:s|ed)?)\b|存在|存到|存储|放在",
                          re.IGNORECASE)
STORAGE_SLOTS = ("database", "object_storage", "cache", "warehouse")
STORAGE = "storage"  # a memory that says where something is kept ("Notes are stored as Markdown files")


@functools.lru_cache(maxsize=1)
def _word_slots() -> dict[str, frozenset[str]]:
    """Stem -> slots, for the vocabulary's one-word Latin phrases and its slot names ("styling" -> css, "naming"):
    the vocabulary's own patterns want the exact form, a question says "style" or "named"."""
    out: dict[str, set[str]] = {}
    for slot in SLOTS:
        for phrase in (*slot.phrases, slot.en, slot.entity):
            if re.fullmatch(r"[A-Za-z]+", phrase):
                out.setdefault(stem(phrase), set()).add(slot.entity)
    return {k: frozenset(v) for k, v in out.items()}


@functools.lru_cache(maxsize=512)
def _question_slots(question: str) -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for start, end, entity in _spans_slots(question):
        for term in content_terms(question[start:end]):
            out.setdefault(stem(term), set()).add(entity)
    for match in _STORAGE_CUE.finditer(question):
        for term in content_terms(match.group(0)) or [match.group(0)]:
            out.setdefault(stem(term), set()).update((*STORAGE_SLOTS, STORAGE))
    words = _word_slots()
    for term in content_terms(question):
        st = stem(term)
        forms = (st, st + "e", st + "s", st[:-1] if st.endswith("e") else st)  # "styl" is "style", "id" "ids"
        found = frozenset().union(*(words.get(f, frozenset()) for f in forms))
        if st not in out and found:
            out[st] = set(found)
    return {k: frozenset(v) for k, v in out.items()}


@functools.lru_cache(maxsize=256)
def _slot_pattern(entity: str) -> re.Pattern[str] | None:
    """One pattern for one slot of the vocabulary: its phrases (and their plurals), its known values, its role words.
    A memory is only ever tested against the few slots its question names, not the whole vocabulary."""
    parts: list[str] = []
    for slot in SLOTS:
        if slot.entity != entity:
            continue
        for phrase in {*slot.phrases, slot.en.lower(), slot.zh}:
            forms = (phrase,) if contains_cjk(phrase) else (phrase, phrase + "s", phrase + "es")
            parts += [f"(?i:{term_pattern(f)})" for f in forms]
        for spec in slot.values:  # a leading '=' marks a value that is also a common word ("Go"): exact case
            parts += [f"(?:{term_pattern(v[1:])})" if v.startswith("=") else f"(?i:{term_pattern(v)})"
                      for v in spec.split("|")]
    parts += [f"(?i:{pattern})" for pattern, role, _en, _zh in ROLES if role == entity]
    return re.compile("|".join(parts)) if parts else None


@functools.lru_cache(maxsize=8192)
def _text_holds(text: str, entity: str) -> bool:
    """Whether a memory's text names a slot (an owner only by its key: "our own servers" owns nothing)."""
    if entity == STORAGE:
        return bool(_STORAGE_CUE.search(text))
    pattern = None if entity == OWNER_SLOT else _slot_pattern(entity)
    return pattern is not None and bool(pattern.search(text))


def _key_slot(hit: Hit) -> frozenset[str]:
    if not hit.key or hit.key.count(":") != 2:
        return frozenset()
    entity = hit.key.split(":")[-1]
    return frozenset({entity, OWNER_SLOT}) if entity.endswith("_owner") else frozenset({entity})


def held_slots(hit: Hit, wanted: frozenset[str]) -> frozenset[str]:
    """Which of the ``wanted`` slots a hit holds: by its key's entity segment, or by naming it in its content."""
    by_key = _key_slot(hit) & wanted
    return by_key | frozenset(e for e in wanted - by_key if _text_holds(hit.content, e))


def _cjk_names(question: str) -> list[str]:
    import jieba.posseg as posseg  # jieba is initialised lazily by z0_memory.text; posseg shares its dictionary

    return [w.word for w in posseg.lcut(question) if w.flag in {"nr", "ns", "nt", "nz", "nrt"} and len(w.word) > 1]


@functools.lru_cache(maxsize=512)
def analyze_question(question: str) -> QuestionAnalysis:
    """Split a question into focus terms, entities, needs and shape (see the module docstring).

    Cached: the loop's nodes (fusion, judge, rewriter) analyse the same question every round, and the analysis is an
    immutable value of the text alone.
    """
    window = parse_time_window(question)
    # The period a question names is matched on the memories' dates (the router's time window), not on their
    # words: "October" and "2022" are neither entities nor terms a hit must contain.
    words = question.replace(window.phrase, " ") if window and window.phrase else question
    terms = [t for t in content_terms(words) if t not in _FILLERS and stem(t) not in _FILLERS]
    stems = list(dict.fromkeys(stem(t) for t in terms))
    entities = _entities(words)
    needs = [name for name, pattern in _NEED_PATTERNS.items() if pattern.search(question)]
    if len(needs) > 1 and "value" in needs:
        needs.remove("value")
    compare = bool(_COMPARE_CUES.search(question)) or (len(entities) >= 2 and bool(re.search(r"\band\b", question)))
    return QuestionAnalysis(
        question=question,
        terms=tuple(terms),
        stems=tuple(stems),
        entities=tuple(entities),
        needs=tuple(needs),
        is_list=bool(_LIST_CUES.search(question)),
        is_compare=compare and len(entities) >= 2,
        chinese=contains_cjk(question),
        keys=tuple(literal_keys(question)),
    )


def hit_text(hit: Hit) -> str:
    """The text a hit is judged on: its content, key, rationale and speaker."""
    parts = [hit.content, hit.key or "", hit.rationale or "", str(hit.metadata.get("speaker") or "")]
    return " ".join(p for p in parts if p)


def hit_stems(hit: Hit) -> frozenset[str]:
    return text_stems(hit_text(hit))


def entity_in(entity: str, hit: Hit, stems_: frozenset[str]) -> bool:
    text = hit_text(hit)
    if contains_cjk(entity) or ":" in entity:
        return entity.lower() in text.lower()
    words = _entity_words(entity)
    return bool(words) and all(w in stems_ for w in words)


@functools.lru_cache(maxsize=4096)
def _entity_words(entity: str) -> tuple[str, ...]:
    return tuple(stem(t) for t in tokens(entity))


@dataclass
class _HitView:
    hit: Hit
    stems: frozenset[str]
    entities: frozenset[str]
    focus_covered: frozenset[str]
    relevant: bool


def _views(hits: Sequence[Hit], qa: QuestionAnalysis) -> list[_HitView]:
    """One view per hit. The versions of one key-value fact (hits with the same key) are one subject: an anchor any
    of them names counts for all ("Why did we move away from Hono?": the current value carries the reason, the
    superseded one the name). A hit that holds a vocabulary slot the question names covers the question's words
    for it ("缓存" and ``shop:database:cache``); a fact stored under that slot's key covers an anchor that is a
    known value of the slot ("为什么不用 Memcached？" and ``shop:database:cache = Redis``)."""
    stems_ = [hit_stems(h) for h in hits]
    wanted = frozenset().union(*qa.slots.values()) if qa.slots else frozenset()
    slots = [held_slots(h, wanted) if wanted else frozenset() for h in hits]
    own = [frozenset(e for e in qa.anchors if entity_in(e, h, st) or _slot_named(e, qa, _key_slot(h)))
           for h, st in zip(hits, stems_, strict=True)]
    by_key: dict[str, set[str]] = {}
    for h, ents in zip(hits, own, strict=True):
        if h.key:
            by_key.setdefault(h.key, set()).update(ents)
    focus_terms = qa.judged_focus
    need_terms = (max(1, math.ceil(HIT_COVERAGE * len(focus_terms))) if len(focus_terms) > 2
                  else min(1, len(focus_terms)))
    if qa.chained:  # the answer and the link are different hits: each carries its own part of the words
        need_terms = min(1, len(focus_terms))
    views = []
    for h, st, sl, ents in zip(hits, stems_, slots, own, strict=True):
        entities = ents | frozenset(by_key.get(h.key or "", ()))
        focus = frozenset(t for t in focus_terms if term_in(t, st, h.content) or qa.slots.get(t, frozenset()) & sl)
        focus |= frozenset(b for a, b in qa.alternatives if a in focus)  # "Tabs or spaces?": one answers both
        relevant = (not qa.anchors or qa.chained or bool(entities)) and len(focus) >= need_terms
        views.append(_HitView(h, st, entities, focus, relevant))
    return views


def _slot_named(anchor: str, qa: QuestionAnalysis, hit_slots_: frozenset[str]) -> bool:
    return bool(hit_slots_) and any(qa.slots.get(stem(t), frozenset()) & hit_slots_ for t in tokens(anchor))


def term_in(term_stem: str, stems_: frozenset[str], content: str) -> bool:
    """A focus term is in a hit when its stem is, or (light stemmer's misses: "validated" / "validation",
    "rewriting" / "rewrite") one stem of at least :data:`PREFIX_MIN` letters begins the other; a Chinese term when
    it is a substring of the content (segmentation differs between a question and a memory)."""
    if term_stem in stems_ or (contains_cjk(term_stem) and term_stem in content) or term_stem + "e" in stems_:
        return True  # "merged" -> "merg" is "merge"
    if len(term_stem) < PREFIX_MIN or contains_cjk(term_stem):
        return False
    return any(s.startswith(term_stem) or (len(s) >= PREFIX_MIN and term_stem.startswith(s)) for s in stems_)


def _meets(need: str, view: _HitView, qa: QuestionAnalysis) -> bool:
    hit = view.hit
    text = hit.content
    if need == "date":
        return bool(hit.metadata.get("session_date")) or bool(_DATE_RE.search(text))
    if need == "rationale":
        return bool(hit.rationale) or bool(_RATIONALE_RE.search(text))
    if need == "number":
        return bool(_NUMBER_RE.search(text))
    if need == "person":
        names = {m.group(0).strip("'’") for m in _CAPITALISED.finditer(text)} - set(qa.entities)
        return any(n.lower() not in STOPWORDS and n.lower() not in _QUESTION_WORDS for n in names) or (
            contains_cjk(text) and bool(_cjk_names(text))
        )
    if need == "place":
        return bool(_PLACE_RE.search(text)) or any(
            m.group(0) not in qa.entities and m.start() > 0 for m in _CAPITALISED.finditer(text)
        )
    novel = {s for s in view.stems if s not in qa.stems and s not in STOPWORDS}
    # A value is two new content words, or one that is a number or a name ("30 Hz", "Adyen", "刘洋").
    return len({s for s in novel if len(s) > 2}) >= 2 or any(
        any(c.isdigit() for c in s) or (contains_cjk(s) and len(s) > 1) or s in _capitalised_stems(text)
        for s in novel)


def _capitalised_stems(text: str) -> frozenset[str]:
    return frozenset(stem(m.group(0)) for m in _CAPITALISED.finditer(text) if m.start() > 0)


def _rounded_hits(hits: Sequence[Hit], min_score: float | None) -> list[Hit]:
    kept = [h for h in hits if min_score is None or h.score >= min_score]
    return kept[:TOP_K]


def _strategy_advice(qa: QuestionAnalysis, hits: Sequence[Hit], missing_entities: list[str],
                     missing_terms: list[str]) -> StrategyName | None:
    if qa.keys:
        return "kv_exact"
    used = {h.strategy for h in hits if h.strategy}
    rare = any(re.search(r"\d", t) for t in missing_terms) or bool(missing_entities)
    only_keyword = used == {"keyword"}
    if rare and not only_keyword:
        return "keyword"
    if rare and only_keyword:
        return "hybrid"
    if missing_terms and only_keyword:
        return "semantic"
    if missing_terms and used == {"semantic"}:
        return "hybrid"
    return None


def focus_query(qa: QuestionAnalysis, missing_terms: Sequence[str], aspects: Sequence[str]) -> str:
    """Entities plus the missing terms (or all the focus terms) plus expansions of the missing aspects."""
    words: list[str] = list(qa.entities)
    words += list(missing_terms) if missing_terms else list(t for t in qa.terms if stem(t) in qa.focus)
    for aspect in aspects:
        english, chinese = ASPECT_EXPANSIONS.get(aspect, ("", ""))
        words.append(chinese if qa.chinese else english)
    return " ".join(dict.fromkeys(w for w in words if w)).strip()


def judge(
    question: str,
    hits: Sequence[Hit],
    *,
    round: int,
    max_rounds: int,
    queries_tried: Sequence[str],
    min_score: float | None = None,
) -> Verdict:
    """Judge whether the (accumulated, ranked) ``hits`` answer ``question``; see the module docstring."""
    qa = analyze_question(question)
    top = _rounded_hits(hits, min_score)
    if not top:
        return Verdict(
            sufficient=False,
            missing="any evidence",
            reason="No hit passed the score threshold." if hits else "The search returned nothing.",
            next_query=_new_or_none(focus_query(qa, (), ()) or None, queries_tried),
            next_strategy=_strategy_advice(qa, hits, list(qa.entities), list(qa.terms)) or "hybrid",
        )
    views = _views(top, qa)
    facets = question_facets(question)
    if len(facets) == 1:
        failures, missing_entities, missing_terms, aspects = _check(qa, views, round)
    else:
        failures, missing_entities, missing_terms, aspects = [], [], [], []
        for facet in facets:
            facet_qa = analyze_question(facet)
            f_failures, f_entities, f_terms, f_aspects = _check(facet_qa, _views(top, facet_qa), round)
            failures += [f"'{facet.strip(' ?？')}': {f}" for f in f_failures]
            missing_entities += [e for e in f_entities if e not in missing_entities]
            missing_terms += [t for t in f_terms if t not in missing_terms]
            aspects += [a for a in f_aspects if a not in aspects]
    if not failures and round < 2 and qa.chained:
        failures.append(CHAIN_FAILURE)
        aspects.append("the link between the facts")
    last = " This was the last round." if round >= max_rounds else ""
    if not failures:
        n_rel = sum(v.relevant for v in views)
        return Verdict(
            sufficient=True,
            reason=f"The top {len(top)} hits cover every entity and {_coverage(qa, views):.0%} of the question's "
            f"terms, and {n_rel} relevant hit(s) carry what it asks for ({', '.join(qa.needs) or 'a match'}).",
        )
    missing = "; ".join(
        part
        for part in (
            f"entities: {', '.join(missing_entities)}" if missing_entities else "",
            f"terms: {', '.join(missing_terms)}" if missing_terms else "",
            f"aspects: {', '.join(aspects)}" if aspects else "",
        )
        if part
    )
    only_more_items = failures in ([LIST_FAILURE], [CHAIN_FAILURE])
    proposal = None if only_more_items else focus_query(qa, missing_terms, [a for a in aspects if a in qa.needs])
    return Verdict(
        sufficient=False,
        missing=missing or "more evidence",
        reason=_sentence("; ".join(failures)) + last,
        next_query=_new_or_none(proposal, queries_tried),
        next_strategy=_strategy_advice(qa, top, missing_entities, missing_terms),
    )


_FACET_SPLIT = re.compile(
    r"\s*(?:,|;)\s*(?:and\s+)?(?=(?:what|who|whom|whose|where|when|how|which|why)\b)"
    r"|\s+and\s+(?=(?:what|who|whom|whose|where|when|how|which|why)\b)|\s*[，；;]\s*",
    re.IGNORECASE,
)
# A thing named through another fact: "the service that runs on Fastify", "那个用 Taro 写的小程序".
_INDIRECT = re.compile(r"\b(?:the|that)\s+(?:\w+\s+){1,4}(?:that|which|who|whose)\s+(?!is\b|are\b|was\b|were\b)\w+"
                       r"|那个|的那(?:个|些)", re.IGNORECASE)
CHAIN_FAILURE = ("a question that chains facts is not declared answered on its first search: one more round follows "
                 "the link")


def question_facets(question: str) -> list[str]:
    """The clauses of a compound question ("Who writes the API reference, and how are its code samples checked?",
    "谁负责发布那个小程序，图片存在哪？"), each judged on its own; a simple question is its only facet. A part without
    a content word of its own is no facet."""
    parts = [p for p in _FACET_SPLIT.split(question) if p and p.strip()]
    facets = [p for p in parts if analyze_question(p).judged_focus or analyze_question(p).anchors]
    return facets if len(facets) > 1 else [question]


def _coverage(qa: QuestionAnalysis, views: Sequence[_HitView]) -> float:
    if not qa.judged_focus:
        return 1.0
    covered = set().union(*(v.focus_covered for v in views))
    return len(covered) / len(qa.judged_focus)


def _check(qa: QuestionAnalysis, views: Sequence[_HitView], round: int) -> tuple[list[str], list[str], list[str], list[str]]:
    failures: list[str] = []
    seen_entities = set().union(*(v.entities for v in views))
    missing_entities = [e for e in qa.anchors if e not in seen_entities]
    if missing_entities:
        failures.append(f"no top hit mentions {', '.join(missing_entities)}")
    covered = set().union(*(v.focus_covered for v in views))
    missing_terms = [t for t in qa.terms if stem(t) in qa.judged_focus and stem(t) not in covered]
    reasoned = _reasoned_about_anchors(qa, views)
    if _coverage(qa, views) < TERM_COVERAGE and not reasoned and not qa.chained:
        failures.append(f"the top hits cover only {_coverage(qa, views):.0%} of the question's terms")
    relevant = [v for v in views if v.relevant or v in reasoned]
    aspects: list[str] = []
    if not relevant:
        failures.append("no single hit matches the question well enough")
    for need in qa.needs:
        if not any(_meets(need, v, qa) for v in relevant):
            aspects.append(need)
    if aspects:
        failures.append(f"no relevant hit gives {', '.join(_ASPECT_NAMES[a] for a in aspects)}")
    if qa.is_compare:
        alone = [e for e in qa.anchors if not any(e in v.entities and v.relevant for v in views)]
        if alone and not missing_entities:
            failures.append(f"no relevant hit covers the part about {', '.join(alone)}")
            aspects += [f"part about {e}" for e in alone]
    explored = round >= 2 and (len(relevant) >= 2 or not any(_new_in(v.hit, round) for v in relevant))
    if qa.is_list and not failures and not explored:
        failures.append(LIST_FAILURE)
        aspects.append("more items for a list question")
    return failures, missing_entities, missing_terms, aspects


def _reasoned_about_anchors(qa: QuestionAnalysis, views: Sequence[_HitView]) -> list[_HitView]:
    """For a why-question about named things ("Why did we move away from Hono?", "为什么放弃 Airflow？"): the hits
    that name every anchor that singles hits out and give a reason; without anchors, the facts stored under a slot
    the question names that give a reason. The rest of such a question describes the change ("move away", "放弃")
    in words the reason need not repeat, so these hits answer it whatever its other terms. An anchor most of the top
    hits name (a speaker in a conversation, the project all facts are about) says nothing about which hit answers;
    without an anchor that does, this shortcut is not taken."""
    if "rationale" not in qa.needs:
        return []
    if not qa.anchors:  # "Why was a self-hosted warehouse chosen?": the fact stored under the slot it names
        named = frozenset().union(*qa.slots.values()) if qa.slots else frozenset()
        return [v for v in views if _key_slot(v.hit) & named and _meets("rationale", v, qa)]
    singling = {e for e in qa.anchors if 2 * sum(e in v.entities for v in views) <= len(views)}
    if not singling:
        return []
    return [v for v in views if singling <= v.entities and _meets("rationale", v, qa)]


def _new_in(hit: Hit, round: int) -> bool:
    """Whether ``hit`` first turned up in ``round`` (the fusion records the rounds that found it; a hit without that
    record counts as new)."""
    rounds = hit.metadata.get("rounds")
    return not rounds or min(rounds) >= round


_ASPECT_NAMES = {
    "date": "a date",
    "rationale": "a rationale (because / reason)",
    "number": "a number",
    "person": "a person's name",
    "place": "a place",
    "value": "a concrete value",
}


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + "."


def _new_or_none(query: str | None, queries_tried: Sequence[str]) -> str | None:
    if not query:
        return None
    tried = {norm_query(q) for q in queries_tried}
    return None if norm_query(query) in tried else query
