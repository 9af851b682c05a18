"""Clause analysis: what each clause of a sentence states (decision, fact, preference, hedge, switch, person)."""

from __future__ import annotations

import re
from typing import Literal

from z0_memory.offline.extraction.binding import COLON_VALUE, names_in_chinese, open_values, pairs_in
from z0_memory.offline.extraction.switch_names import leading_name, leading_new_name, unfiled_switch
from z0_memory.offline.extraction.clauses import (
    content_terms,
    is_chitchat,
    is_question,
    so_rationale,
    split_clauses,
    split_rationale,
    topic_colon,
)
from z0_memory.offline.extraction.cues import (
    ABANDONED,
    ACCEPT_ONLY,
    ALTERNATIVE,
    CONFIRM_ANYWHERE,
    CONFIRM_PREFIX,
    CONVENTION,
    CORRECTION,
    DECISION,
    FACT,
    HEDGE,
    HEDGE_PROPOSAL,
    LIKENESS,
    MY_PREFERENCE,
    NEGATION,
    NEGATIVE_EVAL,
    NEGATIVE_PREFERENCE,
    OPINION_QUESTION,
    PREFERENCE,
    PROPOSAL_MARK,
    SAID_BEFORE,
    SECRET_LIKE,
    SO_BEFORE,
    SWITCH,
    UNDECIDED,
    UNSURE,
    VERSUS,
)
from z0_memory.offline.extraction.model import (
    CONF_CONFIRM,
    CONF_DECISION,
    CONF_FACT,
    CONF_HEDGE,
    CONF_SWITCH,
    CONF_UNSURE,
    ClauseContext,
    Mode,
    Statement,
)
from z0_memory.offline.extraction.asides import aside, main_over_aspects, without_judged
from z0_memory.offline.extraction.deferrals import LATER_SWITCH
from z0_memory.offline.extraction.descriptions import describes_build
from z0_memory.offline.extraction.keyless import keyless, preference_statements, sentence_convention, substantive
from z0_memory.offline.extraction.markers import bare_refusal, has_bound_pair, negated, nominal, pairs_before_negation
from z0_memory.offline.extraction.people import (
    names_person,
    owners_listed,
    people_statement,
    resolve_pronoun,
    side_task,
)
from z0_memory.offline.extraction.reasons import comments_on, describes_only, explanation
from z0_memory.offline.extraction.subjects import on_own_tool, preference_holder, speakers_own
from z0_memory.offline.extraction.tentative import (
    concession_only,
    conditional_only,
    planned_move,
    tentative_body,
    unhedged,
)
from z0_memory.offline.extraction.comparisons import as_choice
from z0_memory.offline.extraction.vocabulary import (
    find_phrases,
    find_values,
    norm_value,
    term_pattern,
)
from z0_memory.redaction import REDACTED
from z0_memory.text import contains_cjk

Acceptance = Literal["strong", "weak", "rejected"] | None


def analyse_sentence(sentence: str, *, proposal: bool = False) -> tuple[list[Statement], Acceptance]:
    """Statements in one sentence, and whether the sentence is a bare acceptance: "strong" ("yes, let's do that",
    "that's right", "没错"), "weak" (a lone "ok" / "yes" / "对": enough to answer a yes/no question, not to adopt a
    pending idea), else None."""
    sentence = as_choice(topic_colon(sentence.strip()))  # "Fastify > Koa for us" chooses Fastify, turns Koa down
    if not sentence or (is_chitchat(sentence) and not CONFIRM_PREFIX.match(sentence)):
        return [], None
    confirms = False
    prefix = CONFIRM_PREFIX.match(sentence)
    if prefix and not proposal:
        rest = sentence[prefix.end() :].strip()
        if not rest or ACCEPT_ONLY.match(rest):
            return [], "strong" if _is_strong_acceptance(sentence, rest) else "weak"
        found = _statements(rest, confirms=True, proposal=proposal)
        if not found and not (NEGATION.search(rest) or is_question(rest) or HEDGE.search(rest) or UNDECIDED.search(rest)):
            return [], "weak"  # "Correct, that's what we're running.", "是的，就按这个来" accept; "嗯 再看看吧" does not
        return found, None
    return _statements(sentence, confirms=confirms, proposal=proposal), None


def _statements(sentence: str, *, confirms: bool, proposal: bool) -> list[Statement]:
    listed = owners_listed(sentence) if not proposal else []
    if listed:
        return listed
    hedged = bool(HEDGE.search(sentence))
    if OPINION_QUESTION.search(sentence) and not proposal:
        return []
    body = None if proposal else tentative_body(sentence)
    if body is not None:  # "后端用 FastAPI，你觉得呢？", "Meilisearch for search?": a choice put as a question
        return [_tentative(s) for s in _statements(body, confirms=False, proposal=False) if s.kind != "preference"]
    if is_question(sentence) and not proposal and (not hedged or (ALTERNATIVE.search(sentence)
                                                                   and len(find_values(sentence)) > 1)):
        return []  # a question, or an either-or one ("选 Go 还是 Kotlin 比较好？") that leans nowhere
    if is_chitchat(sentence):
        return []
    confirms = (confirms or bool(CONFIRM_ANYWHERE.search(sentence))) and not hedged
    # "we use Jenkins for now, and if it gets painful we'll move to Drone": a move planned, Jenkins still the choice
    switched = None if planned_move(sentence) else _switch_statement(sentence, hedged=hedged, confirms=confirms)
    if switched is not None:
        statement, rest = switched
        more = _clause_statements(rest, hedged=hedged, confirms=confirms, proposal=proposal) if rest else []
        return [statement, *more]
    return _clause_statements(sentence, hedged=hedged, confirms=confirms, proposal=proposal)


def _tentative(s: Statement) -> Statement:
    s.hedged, s.confirms, s.confidence = True, False, min(s.confidence, CONF_HEDGE)
    return s


def _is_strong_acceptance(sentence: str, rest: str) -> bool:
    """"ok" alone is too weak to accept a proposal; "agreed", "sounds good", "yes, let's do that" are not."""
    weak = re.fullmatch(
        r"(?:ok(?:ay)?|sure|yes|yeah|yep|right|fine|fair|great|perfect|嗯|好|对|行)[\s.!！。,，]*", sentence, re.I
    )
    return not weak or bool(rest)


_AFTER_SWITCH = re.compile(r"^[^,，;；]*?(?:[,，;；]\s*|\s+(?:and|but|while|plus)\s+|而且|并且|同时)(?P<rest>.+)$", re.I)


def _switch_statement(sentence: str, *, hedged: bool, confirms: bool) -> tuple[Statement, str] | None:
    """A switch ("moved X from A to B"), and what the sentence says after it ("..., and the DB is on Neon")."""
    if REDACTED in sentence or SECRET_LIKE.search(sentence):
        return None
    body, why = split_rationale(sentence)
    for pattern in SWITCH:
        m = pattern.search(body)
        if not m or ABANDONED.search(body[max(body.rfind(c, 0, m.start()) for c in ",，;；") + 1: m.end()]) \
                or aside(body[max(body.rfind(c, 0, m.start()) for c in ",，;；") + 1 : m.start("new")]):
            continue  # "Sam asked if we'd move to vitest", "dont suggest gorm again": another's idea, no switch
        new_pairs = pairs_in(m.group("new")) or leading_name(m.group("new"), body)
        old_first = m.groupdict().get("old") is not None and m.start("old") < m.start("new")
        # with no "from X", a value named before the verb is the old one ("之前说 Gin，...换成 Hertz 了")
        lead = leading_new_name(m.group("new"), body[: m.start("new")], m.groupdict().get("old") or "",
                                earlier=m.groupdict().get("old") is None) \
            if old_first or m.groupdict().get("old") is None else None
        if lead is not None and (not new_pairs or new_pairs[0].start > lead.start):
            new_pairs = [lead]  # "换成 VictoriaMetrics，现在 Prometheus ...": the name right after the verb is the new one
        old_text = m.groupdict().get("old") or body[: m.start("new")]
        if not new_pairs:
            # "switched from gpt-4o-mini to Qwen": two names no slot files; the key is the one holding the old name
            unfiled = unfiled_switch(old_text if m.groupdict().get("old") else "", m.group("new"))
            if unfiled is None:
                continue
            new_pairs = [unfiled[1]]
            old_values = [unfiled[0]]
        else:
            old_values = [v for v in find_values(old_text) if v.value != new_pairs[0].value]
        new = new_pairs[0]
        # the switch's own clause decides its hedge: "Hertz 性能更好，换成 Hertz 了" is settled, "maybe move to X" not
        hedged = hedged and bool(HEDGE.search(body[max(body.rfind(c, 0, m.start()) for c in ",，;；") + 1:]))
        after = _AFTER_SWITCH.match(m.group("new")[new.end:])
        same_slot = [v for v in old_values if v.slot == new.slot]
        old = (same_slot or old_values or [None])[0]
        if why is None and old is not None:
            why = so_rationale(body)
            why = why if why and norm_value(why) != norm_value(old.value) and len(content_terms(why)) > 1 else None
        statement = Statement(
            kind="decision",
            slot=new.slot,
            value=new.value,
            confidence=CONF_HEDGE if hedged else CONF_SWITCH,
            text=sentence,
            hedged=hedged,
            confirms=confirms,
            old_value=old.value if old else None,
            rationale=why,
        )
        return statement, after.group("rest") if after else ""
    return None


def _clause_statements(sentence: str, *, hedged: bool, confirms: bool, proposal: bool) -> list[Statement]:
    body, why = split_rationale(sentence)
    ctx = ClauseContext()
    out: list[Statement] = []
    unread: list[str] = []  # the clauses after the last one that stated something, and stated nothing
    leading: list[str] = []  # the clauses before a decision that opens with "so", when they decide nothing
    read: list[str] = []  # the clauses read so far that stated something
    for clause in split_clauses(body):
        if REDACTED in clause or SECRET_LIKE.search(clause):
            continue  # the secret's clause says nothing storable; the rest of the sentence still counts
        said, clause = clause, resolve_pronoun(clause, body[: body.find(clause)])
        ctx_mode_before = ctx.mode
        if SAID_BEFORE.search(clause) and CORRECTION.search(body[body.find(clause) + len(clause):]):
            continue  # "之前说数据库是 MySQL 8，其实线上是 PolarDB": the old value, corrected after it
        mode, person, negative = _clause_mode(clause, ctx, hedged=hedged, confirms=confirms, proposal=proposal)
        if mode is None:
            unread.append(clause)
            continue
        ctx = ClauseContext(mode, person, negative)
        if mode == "skip":
            _attach_rejection(out, clause)
            if not bare_refusal(clause):  # "not Express" turns a rival down; it is no reason for the choice
                unread.append(clause)
            continue
        if mode == "hedge" and not out and unread and _TO_IT.search(clause) and not pairs_in(clause):
            # "Drizzle 最近挺火的，我们要不要换过去？": a tentative move to the name the clause before talked about
            out += [_tentative(s) for s in _statements_for(unread[-1], "decision", None, False, hedged=True,
                                                           confirms=False, sentence=sentence)]
            continue
        if mode == "hedge" and out and (_SAYING.search(clause) or concession_only(clause) or conditional_only(clause)) and not pairs_in(clause):
            continue  # "..., I think I told you already", "描述写中文也行": about the talk or a detail, no hedge on it
        if mode == "hedge" and out and not pairs_in(clause) and not find_phrases(clause):
            _hedge_previous(out, clause)  # "We'll use Redis, probably": a bare hedge clause hedges the one before
            continue
        inherited = mode == ctx_mode_before and not PREFERENCE.search(clause) and not MY_PREFERENCE.search(clause)
        found = _statements_for(clause, mode, person, negative, hedged=hedged, confirms=confirms, sentence=sentence,
                                inherited=inherited)
        if said != clause:  # "Lena owns testing, she runs the HIL rig": what she runs besides is no area she owns
            found = [s for s in found if not side_task(s, out)]
        if not _own_marker(clause, proposal=proposal):
            for s in found:
                s.weak = True
        if comments_on(found, out, clause) and not planned_move(clause):
            unread.append(clause)  # "后端定 Echo，Echo 的错误处理写起来更干净": the choice explained, not made again
            continue
        if found and SO_BEFORE.search(body[: body.find(clause)]) and not leading and describes_only(out, found):
            leading = [*read, *unread]  # "Memcached keeps evicting our sessions, so we'll use Redis": the reason
        if any(s.value for s in out) and not substantive(CONVENTION.sub(" ", clause)):
            # "CI 用 Jenkins，公司统一的", "I like black's default, always have": the convention word qualifies the
            # choice before it; a convention of its own says what it is about ("..., and all migrations are by hand")
            found = [s for s in found if not sentence_convention(s, sentence)]
        found = main_over_aspects(out, found, clause)  # "监控用夜莺，底层还是 Prometheus": the slot's own value
        read.append(clause)
        out.extend(found)
        unread = [] if found else [*unread, clause]
    if why is None and out and leading and not out[-1].hedged and out[-1].slot is not None:
        why = explanation("，".join(leading) if contains_cjk(body) else ", ".join(leading), cued=True)  # "X 太慢了，所以用 Y"
    if why is None and out and unread and not out[-1].hedged and out[-1].slot is not None and out[-1].kind != "preference":
        said = "，".join(unread) if contains_cjk(body) else ", ".join(unread)
        rival = next((s.rejected for s in out if s.rejected), None)  # "X，不用 Beego，Beego 太重了": linked by its name
        why = explanation(said, cued=bool(rival) and bool(re.search(term_pattern(rival), said, re.I)))  # "X，beego 太重了"
    if why and out:
        # the reason explains the sentence's choice: "X, not Y, because Z" is X because Z
        chosen = [s for s in out if not s.negative]
        (chosen or out)[-1].rationale = why
    named = people_statement(why) if why else None  # "Liquibase maybe, because our DBA Marek knows it": a fact too
    if named is not None and not side_task(named, [named]):
        out.append(named)
    return out


_ZH_USE = re.compile(r"^[\u4e00-\u9fff\w ]{0,12}?(?:用的是|采用|选用|用)")
_TO_IT = re.compile(r"(?:换|迁|切|转)过去|(?:换成|改用|用|上|试试)它|\b(?:switch|move|migrate|go)\s+(?:over\s+)?to\s+(?:it|that)\b|"
                    r"\b(?:use|try|adopt)\s+it\b", re.I)
_SAYING = re.compile(r"\b(?:told|said|mentioned|wrote|asked|assumed|suggested|meant|misread|misunderstood)\b|说过|提过|讲过|告诉过", re.I)
def _hedge_previous(out: list[Statement], clause: str) -> None:
    last = out[-1]
    if last.slot is not None and last.kind != "preference":
        last.hedged, last.confirms = True, False
        last.confidence = CONF_UNSURE if UNSURE.search(clause) else CONF_HEDGE


def _attach_rejection(out: list[Statement], clause: str) -> None:
    rejected = [v.value for v in find_values(clause)]
    if out and rejected and out[-1].rejected is None and rejected[0] != out[-1].value:
        out[-1].rejected = rejected[0]


def _own_marker(clause: str, *, proposal: bool) -> bool:
    return bool(PREFERENCE.search(clause) or MY_PREFERENCE.search(clause) or HEDGE.search(clause)
                or DECISION.search(clause) or FACT.search(clause) or names_person(clause)
                or has_bound_pair(clause) or (proposal and PROPOSAL_MARK.search(clause)) or nominal(clause))


def _clause_mode(
    clause: str, ctx: ClauseContext, *, hedged: bool, confirms: bool, proposal: bool
) -> tuple[Mode | None, str | None, bool]:
    """Decide what a clause is; a clause with no marker of its own continues the previous clause's mode."""
    pref = PREFERENCE.search(clause)
    if pref and (pref.group("verb_zh") or "").startswith("倾向") and preference_holder(pref) in (None, "team", "__invalid__"):
        return "hedge", None, False  # "我倾向于 Fly.io": our own leaning is a tentative choice, not a liking
    if pref and preference_holder(pref) != "__invalid__":
        return "preference", preference_holder(pref), bool(NEGATIVE_PREFERENCE.search(clause))
    if MY_PREFERENCE.search(clause):
        return "preference", None, False
    like = LIKENESS.search(clause)
    if like and not pairs_in(clause[: like.start()]):
        return None, None, False  # "兼容 MySQL 的那个": a likeness, not a choice of MySQL
    if VERSUS.search(clause) and not DECISION.search(clause):
        return None, None, False  # "Koa vs Midway": what is being weighed, neither side chosen
    if (negated(clause) and not pairs_before_negation(clause)) or ABANDONED.search(clause) or aside(clause):
        return "skip", None, False  # "not X", "we tried X first", "someone asked about X": not chosen
    bad = NEGATIVE_EVAL.search(clause)
    if bad and not (PREFERENCE.search(clause) or any(p.start >= bad.end() for p in pairs_in(clause))):
        return "skip", None, False  # "Meilisearch 功能不够": judged, not chosen ("ditching Jest for Vitest" chooses)
    if LATER_SWITCH.search(clause) and planned_move(clause):
        return "hedge", None, False  # "量上来了再换 Kafka": the move planned for later is an idea, not a choice
    if HEDGE.search(clause) or (ctx.mode == "hedge" and not (DECISION.search(clause) or FACT.search(clause))):
        return "hedge", None, False
    if proposal:
        return ("decision", None, False) if PROPOSAL_MARK.search(clause) else (None, None, False)
    if DECISION.search(clause) or confirms:
        return "decision", None, False
    if FACT.search(clause) or names_person(clause) or has_bound_pair(clause) or on_own_tool(clause) \
            or describes_build(clause):  # "sprocket is a Phoenix app on Elixir 1.17"
        return "fact", None, False
    if COLON_VALUE.match(clause):
        return "decision", None, False  # "Sync engine: Yjs": a slot phrase, a colon and a name
    if _ZH_USE.match(clause) and (pairs_in(clause) or any(v.value[:1].isupper() or contains_cjk(v.value[:1])
                                                          or names_in_chinese(clause) for v in open_values(clause))):
        return "decision", None, False  # "缺陷管理用禅道", "用数据万象", "后端也用 NestJS": a Chinese "X 用 Y" names its choice
    if ctx.mode in ("decision", "fact", "preference", "hedge"):
        return ctx.mode, ctx.person, ctx.negative
    if nominal(clause):
        return "fact", None, False
    return None, None, False


def _statements_for(
    clause: str,
    mode: Mode,
    person: str | None,
    negative: bool,
    *,
    hedged: bool,
    confirms: bool,
    sentence: str,
    inherited: bool = False,
) -> list[Statement]:
    people = people_statement(clause) if mode in ("fact", "decision") else None  # "ok so Tomasz owns the frontend"
    if people is not None:
        return [people]
    pairs = pairs_in(clause) or (pairs_in(unhedged(clause)) if mode == "hedge" else [])  # "数据库考虑一下 Oracle"
    if mode == "preference":
        return preference_statements(clause, pairs, person, negative, keyless_ok=not inherited)
    pairs = without_judged(clause, pairs)  # "prisma's client was too heavy for our lambda bundle": prisma is judged
    if not pairs:
        return keyless(clause, mode, sentence)
    if ALTERNATIVE.search(clause) and len({p.value for p in pairs}) < len({norm_value(v.value) for v in find_values(clause)}):
        return []  # "缓存用 Redis 或者 Memcached": two values of one slot, neither chosen ("X 还是 X" restates one)
    if mode == "hedge" and not (HEDGE_PROPOSAL.search(clause) or has_bound_pair(clause) or open_values(clause)
                                or planned_move(clause)):
        return []  # "I think Tailwind is overrated": an opinion, not a tentative choice
    if mode in ("hedge", "preference"):
        pairs = pairs[:1]
    conf = {"hedge": CONF_UNSURE if UNSURE.search(sentence) else CONF_HEDGE, "decision": CONF_DECISION}.get(
        mode, CONF_FACT
    )
    if confirms and mode != "hedge":
        conf = CONF_CONFIRM
    kind = "fact" if mode == "fact" else "decision"
    out = [
        Statement(kind=kind, slot=p.slot, value=p.value, confidence=conf, text=clause, hedged=mode == "hedge",
                   confirms=confirms and mode != "hedge")
        for p in pairs
    ]
    if mode != "hedge":
        speakers_own(out, clause)
    return out
