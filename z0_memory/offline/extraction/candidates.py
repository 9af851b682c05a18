"""Turn level: statements of each user message, acceptances of the assistant's proposals, linking to stored
memories, precedence within the turn, and the Candidates the extraction node consumes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from z0_memory.offline.extraction import hedges, reasons
from z0_memory.offline.extraction.acceptance import (
    echoed_yes,
    leading_answer,
    resolve_acceptance,
    short_answer,
    topic_slot,
)
from z0_memory.offline.extraction.answers import question_subject
from z0_memory.offline.extraction.asides import (
    LEAN,
    at_retractions,
    corrected_slots,
    starts_with_retraction,
    take_back,
)
from z0_memory.offline.extraction.clauses import split_sentences, strip_noise
from z0_memory.offline.extraction.content import key_for
from z0_memory.offline.extraction.cues import (
    DECISION,
    REJECTION,
    REMEMBER,
    SO_SENTENCE,
    SWITCH,
)
from z0_memory.offline.extraction.elaborations import without_elaborations, without_task_details
from z0_memory.offline.extraction.hedged_replies import hedged_reply
from z0_memory.offline.extraction.instructions import poses_as_system, split_instructions, without_instructions
from z0_memory.offline.extraction.languages import with_languages
from z0_memory.offline.extraction.linking import candidate_for, held_key
from z0_memory.offline.extraction.markers import bare_refusal
from z0_memory.offline.extraction.message_reasons import explain_the_choice
from z0_memory.offline.extraction.people import bracket_apposition, resolve_pronoun, self_owner
from z0_memory.offline.extraction.model import ExistingMemory, Statement, TurnMessage
from z0_memory.offline.extraction.refusals import refused_values
from z0_memory.offline.extraction.restatements import recap_items, restated
from z0_memory.offline.extraction.speech_acts import asserted_statements
from z0_memory.offline.extraction.statements import Acceptance, analyse_sentence
from z0_memory.offline.extraction.tentative import planned_move, unhedged
from z0_memory.offline.extraction.unknown_slots import own_name_slot, unknown_slot
from z0_memory.offline.extraction.verdicts import name_back
from z0_memory.offline.extraction.vocabulary import norm_value
from z0_memory.redaction import redact_secrets
from z0_memory.schemas import Candidate, WriteOutcome, normalize_segment

OFFLINE_EXTRACTOR_NAME = "offline-rules/2"  # /2: the clause-level, open-vocabulary rules of issue 16

def _analyse_message(text: str, ignored: list[str],
                     before: Sequence[Statement] = ()) -> tuple[list[Statement], Acceptance]:
    """Statements of one user message, and whether it is a bare acceptance; instructions go to ``ignored``.

    ``before``: choices of the user's previous message the store holds; when this message opens by explaining them
    (``reasons``), they are said again with the reason."""
    statements: list[Statement] = []
    accepted: Acceptance = None
    clean = bracket_apposition(strip_noise(redact_secrets(text)))  # "老周，周建国" -> "老周（周建国）"
    if poses_as_system(clean):
        ignored.append(clean)
        return [], None
    if REJECTION.match(clean.strip()):
        accepted = "rejected"
    previous: list[Statement] = []
    stated: list[Statement] = list(before)  # the last sentence that stated something ("Flask is out." states nothing)
    adjacent: list[Statement] = list(before)  # the sentence just before, when it stated something
    previous_text = ""
    ahead: str | None = None  # a reason said before any choice ("因为接口都是异步的。后端选 FastAPI。")
    for sentence in at_retractions(split_sentences(clean)):
        sentence = without_task_details(without_instructions(REMEMBER.sub("", sentence.strip()), ignored))
        retracted = previous if starts_with_retraction(sentence) else []  # "orm: prisma. no wait, drizzle"
        if retracted:
            statements = [s for s in statements if not any(s is r for r in retracted)]
            previous, stated, adjacent = [], [], []
        why = reasons.cued_reason(sentence)
        # a cued reason that states nothing else (read once: it may explain the choice before it, or the one after)
        only_reason = bool(why) and bool(reasons.explanation(sentence)) and not analyse_sentence(sentence)[0]
        if why and not statements and stated and not only_reason:
            why = None  # the previous message's choice: only a sentence that states nothing else explains it
        if why and [s for s in stated if not s.rationale]:
            for s in stated:  # the reason for the last statement before it, not a statement of its own
                s.rationale = s.rationale or why
            # what follows may still comment on the choice ("Echo was close but Gin wins on community size")
            previous, adjacent, previous_text = [], [s for s in stated if s.rationale == why], sentence
            stated = []
            continue
        if why and not stated and not statements and only_reason:
            ahead, previous_text = why, sentence  # kept for the choice the next sentence states
            continue
        if previous_text:  # "Laura finalized the mockups; she's our designer": she is Laura
            sentence = resolve_pronoun(sentence, previous_text)
        if previous and hedges.retracts(sentence):  # "要不要换成 Meson？……算了还是 CMake": the idea is taken back
            statements = [s for s in statements if not (s.hedged and any(s is p for p in previous))]
        found, bare = analyse_sentence(sentence)
        take_back(retracted, found)
        hedges.undecided_reason(found)  # "X since A, but B so tbd": the reason says X is still open
        if not found and adjacent and bare_refusal(sentence):
            continue  # "flask. not django. too much magic for us": the choice stays the one a reason may explain
        if not found and previous_text:
            found = hedges.from_before(sentence, previous_text)
        if not found and previous and hedges.bare_hedge(sentence):
            for s in previous:  # "数据库用 MySQL。不过还没最终定。": a hedge on its own hedges the sentence before
                hedges.hedge(s, sentence)
            continue
        own = bool(statements)  # the sentence before is this message's; else the previous message's: the link must show
        if found and adjacent and reasons.restates(found, adjacent) and (why := reasons.explanation(sentence)):
            found = []  # "aiohttp's client+server in one package simplifies our scraper": the choice again, explained
        # "Phoenix it is. Rails was the other candidate, but we need websockets ...": only the choice and its rivals
        comment = reasons.explanation(sentence, cued=True) if found and reasons.comments_on(
            found, adjacent, sentence, descriptions=own) and not planned_move(sentence) else None
        talked_about = {f.slot for f in found} if comment else reasons.rival_slots(sentence, adjacent)
        if comment:
            found = []
        # a sentence naming the choice or the rival it turned down is linked to it ("Beego 太重了。"), one naming
        # another value of its slot to that choice only ("Quarkus was tempting but half the team never touched it")
        named = reasons.names_one_of(sentence, adjacent)
        linked = own or reasons.has_cue(sentence) or named
        explained = adjacent if linked and not comment else [s for s in adjacent if s.slot in talked_about]
        if not found and explained and (why := comment or reasons.explanation(sentence, cued=named)):
            if reasons.give(explained, why):  # "Rails 7 it is. we looked at Sinatra but it's too barebones"
                previous, stated, adjacent, previous_text = [], [], [], sentence
                continue
        found = hedges.weighed(hedges.alternatives(found), statements, sentence)
        if corrected := corrected_slots(sentence, found):  # "We'll use Flask. Actually, FastAPI": the later value wins
            statements = [s for s in statements if s.slot not in corrected]
        if ahead and found:
            reasons.give(found, ahead)
        ahead = None
        if found and not previous and previous_text and SO_SENTENCE.match(sentence):
            for s in found:
                s.rationale = s.rationale or previous_text.strip(" .。!！")
        statements.extend(found)
        previous, previous_text = found, sentence
        stated = found or stated
        adjacent = found
        if accepted is None or bare == "strong":
            accepted = bare if accepted != "rejected" else accepted
    statements = [s for s in before if s.rationale] + statements  # the previous message's choices, now explained
    taken = {s.entity_override for s in statements if s.category_override == "people"}  # a key said otherwise wins
    statements += [s for s in self_owner(clean) if s.entity_override not in taken]  # "I'm Maya, I'll do the backend"
    refused = refused_values(clean)
    statements = [s for s in statements if s.value is None or s.old_value is not None
                  or norm_value(s.value) not in refused]
    return statements, accepted


def _rank(s: Statement, *, same_message: bool = False) -> int:
    if s.hedged:
        return 0
    if s.weak:
        return 1
    if s.kind == "fact" and not s.confirms:
        return 2
    # within one message, a clause with a decision or switch verb of its own outranks one that only carries the mode
    # on ("ok auth: going with auth.js, clerk pricing kills us": clerk is talked about, not chosen); a later message
    # still replaces an earlier one
    own_verb = s.said_by == "user" and (DECISION.search(s.text) or any(p.search(s.text) for p in SWITCH))
    return 4 if same_message and own_verb else 3


def _dedupe(statements: Iterable[tuple[Statement, list[str]]], project: str) -> list[tuple[Statement, list[str]]]:
    """One statement per key: a decision beats a description, a firm statement beats a hedge, and among equals the
    later one wins ("We'll go with Fastify. Koa's plugins are thin" keeps Fastify), except two tentative values of
    one message: the first is the idea, the later one its rival, unless the later one is a lean ("leaning X")."""
    out: dict[str, tuple[Statement, list[str]]] = {}
    for n, (s, ids) in enumerate(statements):
        key = key_for(s, project) or f"__keyless_{s.text}"
        prior = out.get(key)
        if prior is not None and s.hedged and not prior[0].hedged and norm_value(s.value) != norm_value(prior[0].value):
            key = f"{key}|{norm_value(s.value)}"  # "SQLite for now, maybe Postgres later": both, the later one pending
            prior = out.get(key)
        same = prior is not None and prior[1] == ids
        if same and s.hedged and prior[0].hedged and norm_value(s.value) != norm_value(prior[0].value) \
                and not LEAN.search(s.text):
            continue  # "maybe Redpanda? still evaluating it against NATS": the idea put forward first, then its rival
        if prior is not None and _rank(s, same_message=same) < _rank(prior[0], same_message=same):
            continue
        out.pop(key, None)
        out[key] = (s, ids)
    return list(out.values())


def _explained_before(earlier: Sequence[TurnMessage], existing: Sequence[ExistingMemory],
                      project: str) -> list[Statement]:
    """The choices of the user's previous message that the store holds and that have no reason yet."""
    last = next((m for m in reversed(earlier) if m.role == "user"), None)
    if last is None:
        return []
    said, _ = _analyse_message(last.text, [])
    chosen = reasons.held(reasons.explainable(said), existing, lambda s: key_for(s, project))
    if chosen:
        return chosen
    # the rules read no choice there that the store holds: the held choices it names (their reason, if any, stays),
    # unless the rules read another value for that key (the message changed the choice). A value read under a key of
    # the rules' own ("Carter 定了" keyed by the name) still names the held choice.
    read = {key_for(s, project) for s in said}
    return [s for s in reasons.named_held(last.text, existing) if key_for(s, project) not in read]


@dataclass
class _TurnState:
    previous_assistant: TurnMessage | None = None
    found: list[tuple[Statement, list[str]]] = field(default_factory=list)


def extract_candidates(
    messages: Sequence[TurnMessage],
    *,
    project: str,
    existing: Sequence[ExistingMemory] = (),
    ignored: list[WriteOutcome] | None = None,
    acts: Mapping[str, str] | None = None,
    earlier: Sequence[TurnMessage] = (),
) -> list[Candidate]:
    """Memory candidates stated by the user in ``messages`` (one turn), linked to the ``existing`` memories.

    Only user messages are read for statements; an assistant message counts only as what a following user message
    accepts ("yes, let's do that", "that's right"). Output order follows the text; at most one candidate per key.
    Instructions to the assistant are never candidates; when ``ignored`` is given, each is appended to it as
    ``WriteOutcome(action="ignored", reason="instruction", content=<the sentence>)``.

    ``acts``: the learned speech-act reading of the turn's clauses (``speech_acts.read_acts``); with it, a value
    the rules stated nothing about in a plain clause the model reads as asserted is a fact, unless the project
    already holds that key.

    ``earlier``: the turn before this one in the same thread, whose last user message is context (never read for
    statements of its own): a choice it stated that the store holds is said again when this turn opens by giving
    its reason.
    """
    normalize_segment(project)
    state = _TurnState()
    first_user = next((m for m in messages if m.role == "user"), None)
    for message in messages:
        if message.role == "assistant":
            state.previous_assistant = message
            continue
        if message.role != "user":
            continue
        ids = [message.id] if message.id else []
        instructions: list[str] = []
        start = len(state.found)
        before = _explained_before(earlier, existing, project) if message is first_user else []
        # "Judge0 扛得住，就用它": a verdict pointing back names the value it settles (a pending one first)
        text = name_back(message.text, [m.value for m in existing if m.pending and m.value])
        statements, accepted = _analyse_message(text, instructions, before)
        echo = not statements and accepted is None and echoed_yes(text, state.previous_assistant)
        if echo:
            accepted = "weak"  # "用。" to "消息队列用 Kafka 吗？": a yes, no value of its own
        if ignored is not None:
            ignored.extend(WriteOutcome(action="ignored", reason="instruction", content=redact_secrets(text))
                           for text in instructions)
        if instructions:  # what a message giving an order says without a key is about the order ("diffs are useless
            statements = [s for s in statements if key_for(s, project)]  # to me"); no reading of its raw text
        elif not statements and not accepted:
            statements = short_answer(message.text, state.previous_assistant)
        if not instructions and not echo and not any(s.slot is not None or s.entity_override for s in statements[:1]):
            refused = refused_values(message.text)  # "no, no Redis. overkill for now." leads with no answer
            lead = [s for s in leading_answer(message.text, state.previous_assistant)
                    if not any(norm_value(o.value) == norm_value(s.value) for o in statements)
                    and norm_value(s.value) not in refused]
            statements = [*lead, *statements]
        # what a message says again, never in its orders ("... and never mention Flyway again")
        said = split_instructions(message.text)[0] if instructions else message.text
        statements += restated(said, existing, {key_for(s, project) for s in statements})
        if not instructions and not any(s.value for s in statements):  # "hmm maybe sqlx" to "Want me to use sqlx?"
            statements += hedged_reply(message.text, state.previous_assistant, existing)
        slot = topic_slot(state.previous_assistant)
        for s in statements:  # "Let's go with Hummingbird." after "Which backend framework?": the topic names the key
            if s.slot is None and s.value and s.category_override is None and s.kind != "preference":
                held = held_key(s.old_value, existing)  # "from gpt-4o-mini to Qwen": where gpt-4o-mini is kept
                if held is not None:
                    s.category_override, s.entity_override = held
                    continue
                named = unknown_slot(unhedged(s.text), s.value)  # the user's own slot phrase ("Sync engine: Yjs")
                if named is None and slot is not None:
                    s.slot = slot
                    continue
                named = named or question_subject(state.previous_assistant) or own_name_slot(s.value)
                if named is not None:
                    s.category_override, s.entity_override = named
                else:
                    s.value = None
        statements = recap_items(statements, message.text, existing, lambda s: key_for(s, project))
        statements = without_elaborations(statements, message.text, lambda s: key_for(s, project))
        if accepted in ("strong", "weak") and not any(s.slot for s in statements):
            resolved, extra_ids = resolve_acceptance(state.previous_assistant, existing, project,
                                                      weak=accepted == "weak", alone=not statements)
            state.found.extend((s, [*extra_ids, *ids]) for s in resolved)
        state.found.extend((s, ids) for s in statements)
        if acts and not instructions:  # the learned reading reads the raw message, orders included
            held = {m.key for m in existing if m.key}
            refused = refused_values(message.text)  # "no, not Celery. ... Celery bit us": never stated, by anyone
            state.found.extend((s, ids) for s in asserted_statements(message.text, acts, [f for f, _ in state.found])
                               if key_for(s, project) not in held and norm_value(s.value) not in refused)
        if not instructions:  # "框架选 Hono。由于我们要部署在 Workers 上，Express 跑不了。": its one choice, explained
            explain_the_choice(message.text, [s for s, _ in state.found[start:]])
    candidates = (candidate_for(s, project, existing, ids) for s, ids in with_languages(_dedupe(state.found, project)))
    return [c for c in candidates if c is not None]

