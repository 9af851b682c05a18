"""Deterministic, bilingual (English + Chinese) rule-based extractor: one turn in, memory candidates out.

No model, no database, no network: regular expressions over a small vocabulary of technical "slots". It is the
extractor used when no LLM is configured, and the baseline the LLM extractor is measured against.

Keys are ``{project}:{category}:{entity}``. Categories and entities come from ``SLOTS`` below:

==========  ===============================================================================================
stack       backend_framework, frontend_framework, language, runtime, css, auth, queue, payments
database    database, cache, orm, migrations, search, warehouse, vector_store, object_storage
tooling     testing, e2e_testing, package_manager, linter, formatter, type_checker, ci, bundler, monitoring,
            orchestration, bi, docs, monorepo, editor, issue_tracker
process     deploy, branching, merge_strategy, release
convention  timestamps, naming, indentation, quotes, commit_messages, api_style, ids, line_length,
            versioning, style
people      ``{area}_owner`` ("Alice owns the backend" -> backend_owner) and roles: tech_lead,
            product_manager, designer, on_call, release_manager, dba
preference  the slot's entity for the user ("I prefer tabs" -> preference:indentation) or
            ``{person}_{entity}`` for someone named ("Alice likes snake_case" -> preference:alice_naming)
==========  ===============================================================================================

Values use the vocabulary's canonical spelling ("postgresql" -> "Postgres", "两个空格" -> "2 spaces"); a value
the vocabulary does not know is kept as written when a slot phrase binds it ("testing: testify").

What it catches
  - decisions: "we'll use X for the Y", "let's go with X", "Y: X, not Z", "we decided to use X", "X it is",
    "我们决定用 X", "Y 定为 X", "用 X 做 Y 吧"  -> kind decision, confidence 0.9
  - switches: "we switched from X to Y because R", "replace X with Y", "drop X for Y", "不用 X 了，改用 Y，因为 R",
    "把 X 换成 Y", "从 X 迁移到 Y", "X 太慢了，换成 Y" -> decision, rationale R, supersedes the old value's memories
  - any firm statement of a new value for a key that already holds another value -> supersedes the old one
  - preferences: "I prefer X", "Alice likes X", "I'd rather avoid X", "我喜欢用 X", "小李更喜欢 X" -> preference
  - facts and conventions: "our API is deployed on X", "all timestamps are UTC", "we always write tests with X",
    "column names use snake_case", "Alice owns the backend", "张伟负责后端", "所有时间戳都用 UTC" -> fact, 0.85
  - hedges: "maybe we could try X", "what about X?", "should we use X?", "not sure, perhaps X", "也许可以试试 X",
    "考虑一下 X", "要不要用 X？" -> hedged, confidence 0.35, key kept so a later confirmation matches
  - confirmations: "yes, go with X", "ok, X for the Y", "agreed on X", "确定用 X", "X 就这么定了" -> confirms;
    a bare "yes, let's do that" / "agreed" / "可以，就这么办" resolves to the assistant's proposal just before
    it in the same turn, else to the newest pending memory in ``existing``
  - repeats of a stored value -> ``same_as`` that memory; restating a pending value firmly -> ``confirms``
  - secrets (API keys, tokens, passwords, private keys, credentials in URLs) -> "[REDACTED]"; a statement whose
    value would be a secret is dropped

What it misses (by design or by limitation)
  - anything outside the vocabulary with no slot phrase to bind it: "Releases go out every second Tuesday",
    "the dbt models live in transform/" are facts, but have no key and no convention marker
  - reasoning across turns ("the thing we discussed yesterday"), pronouns ("use it for the cache"), sarcasm,
    self-corrections mid-sentence ("moving to X... no wait, keep Y"), and statements spread over several messages
  - negative decisions without a replacement ("we're not using GraphQL") are not stored; nor are hedges that
    name no value ("maybe later"), and a sentence that contained a secret yields nothing at all
  - sentences over ``MAX_SENTENCE_CHARS`` (pasted text) are skipped; multi-word values the vocabulary only partly
    knows are cut to the known part ("cargo nextest" -> "Cargo")
  - assistant text never produces a memory on its own: only a proposal the user accepts in the same turn counts
  - text inside injected memory blocks (``<memory>...</memory>``, lines starting with ``[memory``), fenced or
    obvious code, questions, greetings, thanks and chit-chat are skipped
"""

from __future__ import annotations


from z0_memory.offline.extraction.candidates import OFFLINE_EXTRACTOR_NAME, extract_candidates
from z0_memory.offline.extraction.model import ExistingMemory, TurnMessage
from z0_memory.offline.extraction.vocabulary import SLOTS, Slot, canonical_value
from z0_memory.redaction import redact_secrets

__all__ = [
    "OFFLINE_EXTRACTOR_NAME",
    "SLOTS",
    "ExistingMemory",
    "Slot",
    "TurnMessage",
    "canonical_value",
    "extract_candidates",
    "redact_secrets",
]
