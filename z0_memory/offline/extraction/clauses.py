"""Text to clauses: strip injected memory and code, split into sentences and clauses; small text tests."""

from __future__ import annotations

import re

from z0_memory.offline.extraction.cues import (
    CLAUSE_REASON,
    GREETING,
    QUESTION_START,
    QUESTION_ZH,
    RATIONALE,
    SO_RATIONALE,
)
from z0_memory.offline.extraction.vocabulary import find_phrases, find_values
from z0_memory.text import STOPWORDS, contains_cjk

_MEMORY_BLOCK = re.compile(
    r"<(memory|memories|recalled[_-]?memor\w*|long[_-]?term[_-]?memory|retrieved[_-]?memor\w*)\b[^>]*>"
    r".*?(?:</\1\s*>|$)",
    re.I | re.S,
)
_MEMORY_LINE = re.compile(r"^\s*(?:[-*>]\s*)?\[(?:memory|memories|mem|recalled|pending|fact)\b", re.I)
_FENCE = re.compile(r"```.*?(?:```|$)|~~~.*?(?:~~~|$)", re.S)
# Code, not prose: a keyword followed by code syntax ("for (", "def f(", "import x"), a bracket or prompt first, or
# code punctuation at the end. A line of chat that merely starts with "for" or "if" is prose.
_CODE_LINE = re.compile(
    r"^\s*(?:(?:import\s+[\w.{*]|from\s+\S+\s+import\b|def\s+\w+\s*\(|class\s+\w+\s*[(:{]|(?:const|let|var)\s+\w+\s*[=:]|"
    r"(?:export|async|pub)\s+(?:default\s+)?(?:function|fn|const|class|def)\b|function\s+\w+\s*\(|fn\s+\w+\s*[(<]|"
    r"return\b.*;\s*$|(?:SELECT|INSERT|UPDATE|CREATE|DELETE)\s+\S|(?:if|for|while|elif)\s*\(|(?:if|for|while|elif)\b.*:\s*$|"
    r"await\s+\w+[.(]|>>>|#include|package\s+\w+\s*;?\s*$)|[{}\[\]<]|\$ \w"
    r"|.*(?:[;{]\s*$|=>|==|\)\s*\{))",
)
_ASSIGNMENT = re.compile(r"^\s*[\w.]+\s*(?:\[[^\]]*\])?\s*[+\-*/]?=\s*(?P<rhs>\S.*)$")
# "OrbitDesk = helpdesk SaaS. Rails 7 ...": an "=" whose right side is words (two or more, no code punctuation) is
# prose naming what something is, not an assignment ("rovertel = telemetry pipeline for our robots, ~300 AMRs. ...")
_PROSE_RHS = re.compile(r"^[^\W\d_][\w'-]*(?:,?\s+~?[\w'.-]+)+\s*(?:[.!?]\s.*|[.!?]?)$")


_PLAIN_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2032": "'"})


_IS_CONTRACTION = re.compile(r"\b([A-Za-z][\w-]*)'s\s+(going to be|gonna be|now|still|basically|definitely|just|"
                             r"always|officially|finally|set to|on|handled|done|run|hosted|deployed)\b", re.I)


def _is_assignment(line: str) -> bool:
    m = _ASSIGNMENT.match(line)
    return bool(m) and not _PROSE_RHS.match(m.group("rhs"))


def strip_noise(text: str) -> str:
    """Drop injected memory blocks, code and quoted memory lines; keep the prose (typographic quotes made plain,
    so "we’re" reads as "we're")."""
    text = text.translate(_PLAIN_QUOTES)
    text = _IS_CONTRACTION.sub(r"\1 is \2", text)  # "Frontend's going to be X" reads as "Frontend is going to be X"
    text = re.sub(r"\b([Ii]t|[Tt]hat|[Tt]his)'s\s+(?=[A-Z])", r"\1 is ", text)  # "now it's Drizzle"
    text = _MEMORY_BLOCK.sub("\n", text)
    text = _FENCE.sub("\n", text)
    kept = [
        line
        for line in text.splitlines()
        if not (_MEMORY_LINE.match(line) or _CODE_LINE.match(line) or _is_assignment(line))
    ]
    return "\n".join(kept).replace("`", "")


MAX_SENTENCE_CHARS = 500  # longer "sentences" are pasted text, not statements; skipping them bounds the cost
MAX_MESSAGE_CHARS = 20_000

# a title's dot ends no sentence ("Dr. Okafor is the tech lead")
_SENTENCE = re.compile(r".+?(?:[。！？；;]+|(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bMrs)(?<!\bProf)[.!?]+(?=\s|$)|$)")


def split_sentences(text: str) -> list[str]:
    """Sentences with their end punctuation kept (a question mark matters); "Fly.io" is not split."""
    out = []
    for line in text[:MAX_MESSAGE_CHARS].splitlines():
        out.extend(m.group(0).strip(" \t-*•") for m in _SENTENCE.finditer(line))
    return [s for s in out if s.strip(" \t-*•.。") and len(s) <= MAX_SENTENCE_CHARS]


_CLAUSE_SPLIT = re.compile(
    r"\s*[,，、]\s*(?:(?:and|but|while|whereas|so|then|also)\b\s*|(?:但是?|而且|而(?!非)|不过|所以|然后|同时|并且))?"
    r"|\s+[—–]+\s*|\s*[—–]+\s+|\s+-{1,2}\s+|\s+so\s+(?=(?:we|i|it|let'?s|now|the team)\b)"  # a dash between clauses ("we use Postgres 16 — I think I told you")
    r"|\s+(?:but|whereas|while)\s+|\s+and\s+(?=(?:we|I|he|she|[A-Z][a-z]+|the|our|all|use|format|lint|test|deploy|host)\b)"
    r"|\s+and\s+(?=[\w.-]+(?:\s+[\w.-]+)?\s+(?:is|are|will|runs?|goes|uses?|lives?|stays?)\b)"
)


_TOPIC_DASH = re.compile(r"^(?P<topic>[A-Za-z][\w /-]{1,30}?|[\u4e00-\u9fff][\w\u4e00-\u9fff ]{0,10}?)\s*(?:[—–]+|\s-{1,2})\s*(?=\S)")


# "What's there today: a Django monolith, ...", "目前用了哪些：...": a wh-phrase and a colon head the answer after them
_WH_HEADING = re.compile(r"^(?:(?i:what|which|here'?s what)\b[^:：?？\n]{0,40}|[^:：?？\n]{0,10}(?:什么|哪些))\s*[:：]\s*(?=\S)")


def topic_colon(sentence: str) -> str:
    """"Auth — leaning towards Sanctum", "队列 —— 先用 Kafka": a slot named, then a dash, reads as "Auth: ..." (a colon
    binds the slot to what follows; a dash would split the clause off). A wh-heading before a colon asks nothing: the
    sentence is what follows it."""
    heading = _WH_HEADING.match(sentence)
    if heading is not None and not sentence.rstrip().endswith(("?", "？")):
        sentence = sentence[heading.end():]
    m = _TOPIC_DASH.match(sentence)
    if m is None:
        return sentence
    phrases = find_phrases(m.group("topic"))
    if len(phrases) != 1 or m.group("topic").strip().lower().removeprefix("the ") != phrases[0].value.lower():
        return sentence
    topic = m.group("topic").strip()
    return f"{topic}：{sentence[m.end():]}" if contains_cjk(topic) else f"{topic}: {sentence[m.end():]}"


# "NestJS（弃用 Express），理由：...", "Fastify (not Express), mainly for ...": an aside that turns something down is a
# clause of its own
_REFUSING_ASIDE = re.compile(r"\s*[（(]\s*((?:弃用|不用|不是|而非|放弃|(?i:not|no|instead of|rather than|over)\s)[^()（）]*)[)）]\s*[,，]?")


# "torn between SvelteKit and Next.js": the two options are one clause (read as "A or B", weighed, neither chosen)
_BETWEEN = re.compile(r"\b(between\s+[^,，.;；]+?)\s+and\s+", re.I)


def split_clauses(sentence: str) -> list[str]:
    sentence = _BETWEEN.sub(lambda m: f"{m.group(1)} or ", sentence)
    sentence = _REFUSING_ASIDE.sub(lambda m: f"，{m.group(1)}，" if contains_cjk(m.group(0)) else f", {m.group(1)}, ",
                                   sentence)
    return [c.strip() for c in _CLAUSE_SPLIT.split(sentence) if c and c.strip()]




def split_rationale(text: str) -> tuple[str, str | None]:
    """Split a because-clause off ``text``: (the rest, the reason). A leading one ("Because X, we use Y", "为了 X，
    我们用 Y") ends at the first comma."""
    m = RATIONALE.search(text)
    if m and not text[: m.start()].strip():
        group = "why" if m.group("why") is not None else "why_zh"
        lead = re.match(r"(?P<why>[^,，;；]+)[,，;；]\s*(?P<rest>.+)$", text[m.start(group):], re.S)
        if lead:
            return lead.group("rest"), lead.group("why").strip(" ,，.。!！") or None
    clause = CLAUSE_REASON.search(text)
    if clause and (not m or clause.start() < m.start()) and text[: clause.start()].strip(" ,，;；:：—–"):
        why = clause.group("why").strip(" ,，.。!！")  # "..., 主要是团队 Ruby 经验多": no "because", still the reason
        return text[: clause.start()].rstrip(" ,，;；:：—–"), why or None
    if m:
        why = (m.group("why") or m.group("why_zh") or "").strip(" ,，.。!！")
        return text[: m.start()].rstrip(" ,，"), why or None
    return text, None


def so_rationale(text: str) -> str | None:
    """"Prisma 太慢了，换成 Drizzle" / "cold starts hurt, so we moved to X": the reason before the switch."""
    m = SO_RATIONALE.match(text)
    return m.group("why").strip(" ,，") or None if m else None


_WORD = re.compile(r"[\u3400-\u9fff]+|[^\W_][\w'+#.-]*", re.UNICODE)


def content_terms(text: str) -> set[str]:
    """Content terms for overlap tests: English words without stop words, CJK character bigrams (no jieba)."""
    out: set[str] = set()
    for tok in _WORD.findall(text.lower()):
        if contains_cjk(tok):
            chars = [c for c in tok if c not in STOPWORDS]
            out.update(a + b for a, b in zip(chars, chars[1:]))
            if len(chars) == 1:
                out.add(chars[0])
        elif tok not in STOPWORDS and len(tok) > 1:
            out.add(tok.strip(".-"))
    return out


def is_question(sentence: str) -> bool:
    s = sentence.strip()
    return s.endswith(("?", "？")) or bool(QUESTION_START.match(s)) or bool(QUESTION_ZH.search(s))


def is_chitchat(sentence: str) -> bool:
    return bool(GREETING.match(sentence.strip())) and not find_values(sentence)

