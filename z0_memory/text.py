"""Bilingual (English + Chinese) text handling shared by keyword search and the offline algorithms.

Postgres full-text search splits on non-word characters, so a Chinese sentence would stay one unsplit token.
``search_text`` therefore appends a jieba segmentation of every CJK run to the original text; the tsvector is
built from that, and queries are segmented the same way (``query_terms``), so Chinese is searchable.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence
from functools import lru_cache

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_]+(?:['’][a-z]+)?", re.UNICODE)
_jieba_lock = threading.Lock()
_jieba = None

ENGLISH_STOPWORDS = frozenset(
    """a about above after again against all am an and any are aren't as at be because been before being below
    between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each few
    for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself him
    himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't my
    myself no nor not of off on once only or other ought our ours ourselves out over own same shan't she she'd
    she'll she's should shouldn't so some such than that that's the their theirs them themselves then there
    there's these they they'd they'll they're they've this those through to too under until up very was wasn't we
    we'd we'll we're we've were weren't what what's when when's where where's which while who who's whom why why's
    with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves also just will s t
    does did get got really like yeah yes oh ok okay hey hi""".split()
)
CHINESE_STOPWORDS = frozenset(
    "的 了 和 是 在 我 你 他 她 它 我们 你们 他们 这 那 就 也 都 而 及 与 或 一个 什么 吗 呢 吧 啊 把 被 让 给 对 从 "
    "到 为 以 之 于 上 下 中 个 么 怎么 怎样 为什么 哪 哪个 哪些 是否 有没有 有 没有 一下 一些 这个 那个 还 要 会 能".split()
)
STOPWORDS = ENGLISH_STOPWORDS | CHINESE_STOPWORDS


def _jieba_module():
    global _jieba
    if _jieba is None:
        with _jieba_lock:
            if _jieba is None:
                import jieba

                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                _jieba = jieba
    return _jieba


def contains_cjk(text: str) -> bool:
    return bool(_CJK_RUN.search(text))


@lru_cache(maxsize=4096)
def _segment_cjk(run: str) -> tuple[str, ...]:
    if len(run) == 1:
        return (run,)
    return tuple(w for w in _jieba_module().lcut(run, HMM=True) if w.strip())


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens; CJK runs are segmented into words."""
    out: list[str] = []
    for match in _TOKEN.finditer(text.lower()):
        tok = match.group(0)
        if _CJK_RUN.fullmatch(tok):
            out.extend(_segment_cjk(tok))
        else:
            out.append(tok.replace("’", "'"))
    return out


def content_terms(text: str) -> list[str]:
    """Tokens without stop words, in order, deduplicated."""
    return list(_content_terms(text))


@lru_cache(maxsize=16384)
def _content_terms(text: str) -> tuple[str, ...]:
    # Cached: the retrieval loop reads the same hits' terms in every round (judge, rewriter, fusion).
    seen: dict[str, None] = {}
    for tok in tokens(text):
        if tok not in STOPWORDS and (len(tok) > 1 or contains_cjk(tok)):
            seen.setdefault(tok, None)
    return tuple(seen)


def search_text(text: str) -> str:
    """The text the full-text index is built from: the original plus segmented CJK words."""
    runs = _CJK_RUN.findall(text)
    if not runs:
        return text
    words = [w for run in runs for w in _segment_cjk(run)]
    return f"{text} {' '.join(words)}"


_TSQUERY_SAFE = re.compile(r"[^\w]+", re.UNICODE)


def query_terms(text: str, *, limit: int = 32) -> list[str]:
    """Content terms made safe to place inside a tsquery (only word characters survive)."""
    out: list[str] = []
    for term in content_terms(text):
        term = _TSQUERY_SAFE.sub("", term)
        if term and term not in out:
            out.append(term)
        if len(out) >= limit:
            break
    return out


def tsquery_lexeme(lexeme: str) -> str:
    """One quoted tsquery operand: ``'it''s'`` (quotes and backslashes escaped: any text is valid query syntax)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def or_tsquery(terms: Sequence[str]) -> str:
    """``'a' | 'b'`` for ``to_tsquery``: an OR query, since plainto_tsquery's AND kills recall on questions."""
    return " | ".join(tsquery_lexeme(t) for t in terms)


_SUFFIXES = ("ational", "iveness", "fulness", "ousness", "ization", "ingly", "ation", "ement", "ments", "ness",
             "ment", "ings", "ing", "edly", "ies", "ied", "ers", "ed", "es", "er", "ly", "s")


@lru_cache(maxsize=65536)
def stem(token: str) -> str:
    """A light, deterministic English stemmer (CJK and short tokens are returned unchanged)."""
    tok = token.lower().replace("’", "'")
    if tok.endswith("'s"):
        tok = tok[:-2]
    if contains_cjk(tok) or len(tok) <= 3 or not tok.isalpha():
        return tok
    for suffix in _SUFFIXES:
        if tok.endswith(suffix) and len(tok) - len(suffix) >= 3:
            base = tok[: -len(suffix)]
            if suffix in ("ies", "ied"):
                return base + "y"
            if suffix == "s" and tok.endswith(("ss", "us", "is")):
                return tok
            if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]
            return base
    return tok


@lru_cache(maxsize=8192)
def text_stems(text: str) -> frozenset[str]:
    """The stems of every token of ``text`` (cached: the loop re-reads the same hits every round)."""
    return frozenset(stem(t) for t in tokens(text))


def term_overlap(a: str, b: str) -> float:
    """Jaccard overlap of the stemmed content terms of two texts (bilingual), 0..1."""
    ta = {stem(t) for t in content_terms(a)}
    tb = {stem(t) for t in content_terms(b)}
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / len(ta | tb)
