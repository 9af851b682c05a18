"""Okapi BM25 over Postgres full text: the planner (which lexemes select candidates, from the scope's statistics and
a page sample) and the scoring statements. :class:`~z0_memory.stores.search.SearchEngine` runs them.

Postgres' ``ts_rank_cd`` has no inverse document frequency, so a name found in half the memories weighs as much as
the one rare word that matters. Here BM25 scores (k1 = :data:`BM25_K1`, b = :data:`BM25_B`, lengths in distinct
lexemes) come from the scope's size and total length (``z0_memory_stats``, kept by triggers: no scan), each query
lexeme's document frequency (:func:`document_frequency`) and the term frequencies of the candidates (their tsvector
positions; a position in the memory's search context counts :data:`CONTEXT_TERM_WEIGHT`). Candidates are every OR
match in a small scope (exact BM25; a memory matched only by lexemes nearly every memory has is scored only when it
could reach the top k: :data:`BM25_SELECTIVE_SHARE`), and at most ``pool`` rows chosen rarest lexeme first in a large
one (:func:`rarest_first_branches`), so a search in a large scope visits hundreds of rows instead of tens of
thousands.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

import psycopg

from z0_memory.stores.database import statement
from z0_memory.stores.memory_rows import COLUMNS, PERIOD_SQL, ROW_FILTER, SCOPE_SQL, filtered
from z0_memory.stores.schema import CONTEXT_TERM_WEIGHT, SEMANTIC_TABLE, STATS_TABLE
from z0_memory.stores.scope import Scope
from z0_memory.text import or_tsquery, query_terms, tsquery_lexeme

BM25_K1 = 1.2
BM25_B = 0.3
BM25_POOL = 250  # candidates scored in a large scope: 5x a hybrid round's depth (twice that scored no better)
BM25_EXACT_DOCS = 2000  # scopes up to this size score every OR match that can rank, with exact frequencies
BM25_SAMPLE_ROWS = 1000  # scope rows in the page sample that estimates common lexemes' frequencies
BM25_SAMPLE_SCAN = 20_000  # at most this many table rows read by the sample (other scopes share the pages)
BM25_SAMPLE_MIN = 200  # fewer sampled scope rows than this: no estimate, common lexemes get the cap
BM25_SAMPLE_SEED = 0  # REPEATABLE seed: the same table gives the same sample, so rankings are reproducible
BM25_COMMON_TERMS = 4  # common lexemes combined into candidate branches (2^4 - 1 combinations at most)
# In exact BM25, a lexeme found in more than this share of the scope (IDF < 0.11: a speaker's name, which every
# imported turn's context carries) does not select candidates: a memory that matches nothing else scores next to
# nothing and is scored only when it could still rank among the best k (``Bm25Plan.rest_bound``). Scoring every
# such memory was most of a search: a whole imported conversation, for any question that names a speaker.
BM25_SELECTIVE_SHARE = 0.9

CAND_COLUMNS = ", ".join(f"m.{column}" for column in COLUMNS.split(", "))
BM25_PLAN_SQL = statement(f"""
WITH s AS (
    SELECT CASE WHEN %(all)s THEN docs ELSE current_docs END AS n,
           CASE WHEN %(all)s THEN doc_len ELSE current_len END AS len
    FROM {STATS_TABLE} WHERE project = %(project)s AND user_id = %(user_id)s
), lex AS (
    SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', %(text)s))
), sample AS MATERIALIZED (
    SELECT content_tsv FROM {SEMANTIC_TABLE} TABLESAMPLE SYSTEM ((
        SELECT CASE WHEN s.n > %(exact_docs)s THEN least(100, 100.0 * %(sample_rows)s / s.n,
                    100.0 * %(sample_scan)s / greatest(c.reltuples, s.n)) ELSE 0 END
        FROM s, pg_class c WHERE c.oid = '{SEMANTIC_TABLE}'::regclass
    )) REPEATABLE (%(seed)s) WHERE {SCOPE_SQL}
), est AS MATERIALIZED (  -- inlined, each use of hits / sample_n below re-ran its count over the sample
    SELECT l.lexeme, (SELECT count(*) FROM sample) AS sample_n,
           (SELECT count(*) FROM sample WHERE content_tsv @@ quote_literal(l.lexeme)::tsquery) AS hits
    FROM lex l
)
SELECT e.lexeme, s.n, s.len, e.sample_n, e.hits,
       CASE WHEN s.n <= %(exact_docs)s OR e.sample_n < %(sample_min)s OR e.hits * s.n <= %(pool)s * e.sample_n THEN (
           SELECT count(*) FROM {SEMANTIC_TABLE}  -- no LIMIT: a LIMIT makes the planner gamble on a seq scan
           WHERE {SCOPE_SQL} AND content_tsv @@ quote_literal(e.lexeme)::tsquery
       ) END AS df
FROM est e CROSS JOIN s
""")


def bm25_scored(rows: str) -> str:
    """BM25 scores of ``rows`` (a CTE of id, created_at, content_tsv): id, created_at, score; a row no query lexeme
    matches has none. tf: the query lexemes' content positions (weight A) count 1, their context positions (D)
    count less; ts_filter/setweight keep the query lexemes of each part (unnesting every lexeme is what made this
    slow). The unnest is in the select list and the sum a grouping: a lateral subquery per row (a function scan
    and an aggregate each) costs more."""
    return f"""SELECT id, created_at, sum((%(weights)s::float8[])[array_position(%(lexemes)s::text[], lexeme)] * tf
        * (%(k1)s::float8 + 1) / (tf + %(k1)s::float8 * (1 - %(b)s::float8 + %(b)s::float8 * len / %(avgdl)s::float8)))
        AS score
    FROM (
        SELECT id, created_at, len, (t).lexeme, cardinality((t).weights) - (1 - %(context_weight)s::float8)
               * cardinality(array_positions((t).weights, 'D')) AS tf
        FROM (
            SELECT id, created_at, length(content_tsv) AS len,
                   unnest(setweight(ts_filter(setweight(ts_filter(content_tsv, '{{a}}'), 'B', %(lexemes)s::text[]), '{{b}}'), 'A')
                          || setweight(ts_filter(setweight(ts_filter(content_tsv, '{{d}}'), 'B', %(lexemes)s::text[]), '{{b}}'), 'D')) AS t
            FROM {rows}
        ) u
    ) v GROUP BY id, created_at"""


# Both the best k and the final list, by their output columns. Equal scores: the newer memory first, then the id.
BM25_ORDER = "score DESC, created_at DESC, id"
# The candidates (``cand``: id, created_at and content_tsv only; the k kept rows are read at the end), the best k of
# them (``best``), the memories only universal lexemes match (``rest``), and every scored memory (``ranked``).
BM25_CTES = f"""
cand AS MATERIALIZED (  -- the candidates' rows are read once, here
    SELECT DISTINCT ON (c.id) c.* FROM (
        SELECT m.* FROM unnest(%(branches)s::tsquery[]) AS b(q)
        CROSS JOIN LATERAL (
            SELECT id, created_at, content_tsv FROM {SEMANTIC_TABLE}
            WHERE {SCOPE_SQL} AND {PERIOD_SQL}{ROW_FILTER} AND content_tsv @@ b.q OFFSET 0
        ) m  -- OFFSET 0 keeps it a per-branch (GIN) scan: branches fill the pool in order; a LIMIT here would let
             -- the planner pick a seq scan betting on finding the rows early, ruinous for a rare branch
        LIMIT %(pool)s
    ) c
), best AS MATERIALIZED (
    SELECT * FROM ({bm25_scored("cand")}) s ORDER BY {BM25_ORDER} LIMIT %(k)s
), rest AS MATERIALIZED (  -- the memories only universal lexemes match, read only when one of them could still
    SELECT id, created_at, content_tsv FROM {SEMANTIC_TABLE} r  -- rank among the best k (a one-time filter)
    WHERE (SELECT count(*) < %(k)s OR min(score) <= %(rest_bound)s FROM best)
      AND {SCOPE_SQL} AND {PERIOD_SQL}{ROW_FILTER} AND content_tsv @@ %(rest)s::tsquery
      AND NOT EXISTS (SELECT 1 FROM cand c WHERE c.id = r.id)
), ranked AS (
    SELECT * FROM best UNION ALL {bm25_scored("rest")}
)"""
BM25_TEMPLATE = f"""
WITH {BM25_CTES}
SELECT {CAND_COLUMNS}, r.score FROM (SELECT * FROM ranked ORDER BY {BM25_ORDER} LIMIT %(k)s) r
JOIN {SEMANTIC_TABLE} m ON m.id = r.id
ORDER BY {BM25_ORDER}
"""
# The id-ranking statements' (BM25's and the dense half's) one column: the id as text, the form the fusion uses. Named
# apart from ``id`` so that ``id`` in their ORDER BY is still the uuid column.
RANKED_ID = "memory_id"
BM25_IDS_TEMPLATE = f"WITH {BM25_CTES} SELECT id::text AS {RANKED_ID} FROM ranked ORDER BY {BM25_ORDER} LIMIT %(k)s"
BM25_SQL = filtered(BM25_TEMPLATE, None)
BM25_IDS_SQL = filtered(BM25_IDS_TEMPLATE, None)


@dataclass(frozen=True)
class Bm25Plan:
    """What the scoring statement needs: the scope's mean length, each query lexeme's IDF, the candidate branches
    (tsqueries, in the order their matches fill the pool), the pool size (``None``: every match is scored), and in
    exact BM25 the lexemes that select no candidates (:data:`BM25_SELECTIVE_SHARE`) as one tsquery: their other
    matches are scored only when one could reach the top k, that is when the k-th best score is at most
    ``rest_bound``, the most such a memory can score (each lexeme's weight times ``k1 + 1``, BM25's limit)."""

    avgdl: float
    weights: dict[str, float]
    branches: list[str]
    pool: int | None
    rest: str | None = None
    rest_bound: float = 0.0


def bm25_idf(n: float, df: float) -> float:
    """Okapi BM25's inverse document frequency (the "+1" variant: never negative, even for a word in every memory)."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def document_frequency(row: dict, pool: int) -> float:
    """A lexeme's document frequency from the plan statement's row: exact when it was counted, else estimated.

    In a scope larger than :data:`BM25_EXACT_DOCS`, counting a common lexeme through GIN costs time in proportion to
    its posting list (and a heap visit per match), so the plan
    statement first reads a ``TABLESAMPLE SYSTEM ... REPEATABLE`` page sample of about :data:`BM25_SAMPLE_ROWS`
    scope rows (cheap: a few pages) and counts only the lexemes it says are rare (at most ``pool`` matches
    expected). A common lexeme gets the sample's estimate, never less than the pool: its IDF is low and the error
    small (a 25% error on a df of 1,500 in 100k moves the IDF by 0.2 of 4.2), and it only rescores candidates.
    """
    if row["df"] is not None:
        return float(row["df"])
    return float(min(row["n"], max(pool + 1, row["hits"] * row["n"] / row["sample_n"])))


def rarest_first_branches(lexemes: Sequence[str], df: dict[str, float], weights: dict[str, float],
                          pool: int) -> list[str]:
    """Candidate tsqueries for a large scope, best first: a WAND-like cut of the OR query.

    The rarest lexemes, as long as all their matches fit in the pool together, form the first branch: every memory
    they match is scored, so their (high) weights are never missed. The next :data:`BM25_COMMON_TERMS` lexemes are
    too common for that; memories matching them fill the rest of the pool by combination, heaviest sum of weights
    first (all of them, then every combination without the lightest, ...), each a GIN AND query that costs little
    even when each lexeme alone matches thousands of rows (AND NOT, to make the combinations disjoint, would read
    the excluded lexemes' postings for every branch). A memory is taken by the best combination it matches; later
    ones repeat it and the duplicates are dropped. So the pool holds the top of the ranking while visiting ``pool``
    rows rather than every OR match. Commoner lexemes still add their weight to the candidates' scores.
    """
    rare: list[str] = []
    total = 0.0
    for lex in lexemes:
        if total + df[lex] > pool:
            break
        rare.append(lex)
        total += df[lex]
    common = [lex for lex in lexemes if lex not in rare][:BM25_COMMON_TERMS]
    combos = [c for size in range(len(common), 0, -1) for c in itertools.combinations(common, size)]
    combos.sort(key=lambda combo: -sum(weights[lex] for lex in combo))  # stable: bigger combinations win ties
    branches = [or_tsquery(rare)] if rare else []
    branches += [" & ".join(tsquery_lexeme(lex) for lex in combo) for combo in combos]
    return branches


def bm25_plan(rows: Sequence[dict], pool: int) -> Bm25Plan | None:
    """Turn the plan statement's rows (one per query lexeme) into weights and candidate branches.

    Exact BM25 (every OR match scored when it can reach the top k; exact document frequencies) when the scope has
    at most :data:`BM25_EXACT_DOCS` memories or all matches fit in the pool; :func:`rarest_first_branches`
    otherwise.
    """
    if not rows or not rows[0]["n"]:
        return None
    n = rows[0]["n"]
    df = {row["lexeme"]: document_frequency(row, pool) for row in rows}
    matched = sorted((lex for lex in df if df[lex] > 0), key=lambda lex: (df[lex], lex))
    if not matched:
        return None
    weights = {lex: bm25_idf(n, df[lex]) for lex in matched}
    avgdl = max(rows[0]["len"] / n, 1.0)
    if n <= BM25_EXACT_DOCS or sum(df[lex] for lex in matched) <= pool:
        selective = [lex for lex in matched if df[lex] <= BM25_SELECTIVE_SHARE * n] or matched
        universal = [lex for lex in matched if lex not in selective]
        return Bm25Plan(avgdl, weights, [or_tsquery(selective)], None, or_tsquery(universal) if universal else None,
                        (BM25_K1 + 1) * sum(weights[lex] for lex in universal))
    return Bm25Plan(avgdl, weights, rarest_first_branches(matched, df, weights, pool), pool)


def bm25_params(scope: Scope, query: str, include_history: bool, pool: int,
                category: str | None = None) -> dict | None:
    """The plan statement's parameters for ``query`` in ``scope``; None when the query has no searchable term."""
    terms = query_terms(query)
    if not terms:
        return None
    return {**scope.params, "text": " ".join(terms), "all": include_history, "pool": pool, "category": category,
            "exact_docs": BM25_EXACT_DOCS, "sample_rows": BM25_SAMPLE_ROWS, "sample_scan": BM25_SAMPLE_SCAN,
            "sample_min": BM25_SAMPLE_MIN, "seed": BM25_SAMPLE_SEED}


# How a search runs one statement: ``(sql, params) -> rows`` (a scoped ``Database.fetch``, or a held connection).
Fetch = Callable[[str, dict], Awaitable[list[dict]]]


def on_connection(conn: psycopg.AsyncConnection) -> Fetch:
    """Run statements on ``conn`` (inside the caller's transaction)."""
    async def fetch(sql: str, params: dict) -> list[dict]:
        return await (await conn.execute(sql, params)).fetchall()
    return fetch


async def plan_with(fetch: Fetch, params: dict) -> Bm25Plan | None:
    return bm25_plan(await fetch(BM25_PLAN_SQL, params), params["pool"])


async def bm25_rows(fetch: Fetch, scope: Scope, sql: str, query: str, k: int, include_history: bool, *,
                    pool: int = BM25_POOL, since: datetime | None = None, until: datetime | None = None,
                    category: str | None = None) -> list[dict]:
    """Plan, then run one of the scoring statements (:data:`BM25_SQL`: full rows, :data:`BM25_IDS_SQL`: ids)
    through ``fetch``. ``since`` / ``until`` keep candidates created in that period only (the statistics stay the
    scope's)."""
    params = bm25_params(scope, query, include_history, pool, category)
    if params is None:
        return []
    scoring = await bm25_scoring(fetch, params, k, since, until)
    return [] if scoring is None else await fetch(sql, scoring)


async def bm25_scoring(fetch: Fetch, params: dict, k: int, since: datetime | None = None,
                       until: datetime | None = None) -> dict | None:
    """The plan for the scope's ``params`` (:func:`bm25_params`), read through ``fetch``, as the scoring statement's
    parameters; ``None`` when no memory can match."""
    plan = await plan_with(fetch, params)
    return None if plan is None else bm25_statement_params(params, plan, k, since, until)


def bm25_statement_params(params: dict, plan: Bm25Plan, k: int, since: datetime | None = None,
                          until: datetime | None = None) -> dict:
    """The scoring statement's parameters: the scope's (``_bm25_params``) and the plan's."""
    return {**params, "lexemes": list(plan.weights), "weights": list(plan.weights.values()),
            "branches": plan.branches, "pool": plan.pool, "avgdl": plan.avgdl, "k": k, "k1": BM25_K1, "b": BM25_B,
            "context_weight": CONTEXT_TERM_WEIGHT, "since": since, "until": until, "rest": plan.rest,
            "rest_bound": plan.rest_bound}
