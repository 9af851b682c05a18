"""Binding values to slots in a clause: "cache: Redis", "Redis for caching", "we deploy with Kamal"; values the
vocabulary does not know are still values when a decision verb or a slot phrase binds them (open vocabulary), and
a known value is extended over the name-like words that follow it ("cargo nextest", "NATS JetStream").
"""

from __future__ import annotations

import re

from z0_memory.offline.extraction.cadences import cadence_after
from z0_memory.offline.extraction.chinese_values import (
    CJK_COMMON,
    chinese_after,
    names_in_chinese,
    settled_name,
)
from z0_memory.offline.extraction.cues import REJECTED_BEFORE
from z0_memory.offline.extraction.measures import line_lengths
from z0_memory.offline.extraction.name_spans import (
    KIND_WORDS,
    modifier_only,
    NOT_NAME_WORD,
    extend_name,
    looks_like_a_name,
    reslot,
    with_command,
    with_version,
)
from z0_memory.offline.extraction.vocabulary import (
    CLOUD_VENDORS,
    Found,
    Slot,
    find_phrases,
    find_values,
)
from z0_memory.redaction import REDACTED
from z0_memory.text import ENGLISH_STOPWORDS

_CONNECTORS = (  # longer alternatives first: "is done with" must win over "is"
    r"(?:[:：=]|->|→|will be built in|will be|should be|is going to be|(?:is |will )?gonna be|is (?:deployed|hosted|running) (?:on|to|at)|"
    r"(?:are|is) (?:run|done|managed|handled|built|tracked) (?:with|in|by|on)|"  # not "written in": a language
    r"(?:deployed|hosted|built) (?:on|to|in|with)|uses?|using|runs?(?: on)?|goes? to|follows?|is|are|"
    r"用的是|用的|接的是|接入了?|交给|都放|放在|放|定了?|统一用|一律用|都用|就用|还是用|还是|(?:直接|先|主要|全部|目前|现在|暂时)?(?:使用|用)|采用|选用|定为|定成|改为|改用|"
    r"(?:我们)?选(?:了|择|的是)?|是|走|goes? through|部署在|跑在|托管在|(?:目前|现在|都)?(?:放在|在)|"
    r"goes? (?:into|in|to)|lives? (?:in|on)|(?:is |are )?(?:stored|kept) (?:in|on)|stays?(?: as| on| with)?|"
    r"remains?(?: as| on)?)"
)
# "deployment target is X", "CI provider: X": a kind word may sit between the slot phrase and its connector
_KIND_AFTER_SLOT = r"(?:\s+(?:here|target|choice|provider|engine|platform|tool|tooling|layer|service|solution|option|vendor|of choice))?"
_ADVERB = r"(?:(?:now|currently|still|already|also|mostly|all|both|just|finally|officially)\s+)?"
_CONNECT_AFTER_SLOT = re.compile(
    rf"^{_KIND_AFTER_SLOT}\s*(?:(?:{_CONNECTORS})\s+{_ADVERB}(?:on|with|via|through|at|in)?|{_CONNECTORS}|on|with|via|"
    r"through|at)\s*(?:(?:the|our|a|an)\s+)?"
    r"(?:(?!(?:not|no|never|replaced|dropped|instead)\b)[a-z][\w-]*\s+)?$",  # "backend will be a thin FastAPI service"
    re.I)
_GENERIC_AFTER_SLOT = re.compile(
    # a connector in words ends at a space: "the CI runner" has no connector "run"
    rf"^{_KIND_AFTER_SLOT}\s*{_CONNECTORS}(?:(?<=[A-Za-z])\s+|(?<![A-Za-z])\s*)(?:the\s+|our\s+)?"
    r"(?P<v>[A-Za-z0-9][\w.+#/-]*(?:[ \t]+(?:[A-Z0-9][\w.+#/-]*|characters|chars|columns|spaces))?)",
    re.I,
)
_CONNECT_BEFORE_SLOT = re.compile(
    r"^\s*(?:(?:stays?|remains?|is|will be)\s+)?(?:(?:for|as|in|on)\s+(?:the\s+|our\s+|all\s+|a\s+|an\s+)?"
    r"(?:[\w-]+\s+)?|做|作为|当|来做|来|管理|写|存)\s*$",
    re.I,
)


# Slots whose known values can stand in for each other ("Redis for the job queue"): a slot phrase bound to a
# known value re-files it only within its group; elsewhere the value's own slot wins ("用 Kotlin 写后端").
_INTERCHANGEABLE = (
    frozenset({"cache", "queue", "database", "search", "vector_store", "warehouse", "object_storage"}),
    frozenset({"backend_framework", "frontend_framework", "runtime"}),
    frozenset({"testing", "e2e_testing"}),
    frozenset({"linter", "formatter", "type_checker"}),
    frozenset({"monitoring", "bi"}),
)


def rebind(value: Found, phrase_slot: Slot | None) -> Slot | None:
    if value.slot is None or phrase_slot is None or value.slot == phrase_slot:
        return phrase_slot or value.slot
    same_group = any({value.slot.entity, phrase_slot.entity} <= group for group in _INTERCHANGEABLE)
    # "hosted on Supabase": whatever else it is, what a project is deployed on is its deployment platform
    deploys = phrase_slot.entity == "deploy" and value.slot.entity != "infra_as_code"  # "All infra is Terraform"
    return phrase_slot if same_group or deploys else value.slot


def bound_pairs(text: str, values: list[Found], phrases: list[Found]) -> list[Found]:
    """(value, slot) pairs where a slot phrase is attached to a value: "cache: Redis", "Redis for caching"."""
    pairs: list[Found] = []
    native = {v.slot for v in values if v.slot is not None}
    for phrase in phrases:
        for value in values:
            after = value.start >= phrase.end and _CONNECT_AFTER_SLOT.match(text[phrase.end : value.start])
            before = value.end <= phrase.start and _CONNECT_BEFORE_SLOT.match(text[value.end : phrase.start])
            if after or before:
                # "backend 用 Node 20 + Fastify": Fastify is the backend framework, so Node stays the runtime
                slot = value.slot if value.slot is not None and phrase.slot in native and value.slot != phrase.slot \
                    else rebind(value, phrase.slot)
                pairs.append(Found(value.start, value.end, value.value, slot))
        if not any(p.slot == phrase.slot for p in pairs):
            generic = _generic_after(text, phrase)
            if generic is not None:
                pairs.append(generic)
    return pairs


# Slots whose values are phrases, not names ("every second Tuesday", "100 characters", "每两周一次")
_PHRASE_VALUED = frozenset({"release", "line_length"})
_PHRASE_AFTER_SLOT = re.compile(
    r"^\s*(?:go out|ship|happen|are cut|are released|is|are|will be|should be|[:：=]|是|定为|定在|为)?\s*"
    r"(?P<v>(?:every|each|once|twice|weekly|biweekly|monthly|daily|nightly|quarterly|on|at most|max(?:imum)?|"
    r"\d)[\w\s-]{0,40}?|每[\u4e00-\u9fff\w]{1,10}?|\d+\s*(?:个字符|字符|列)?)\s*(?=[,，.。;；!！]|$|\s+(?:and|but|so|not|rather than|instead of)\b|\s*(?:而)?不是)",
    re.I,
)


_NAME_WITH_AFTER_SLOT = re.compile(r"^\s+(?:with|via|through|using|by|in)\s+(?:(?i:the|our)\s+)?"
                                   r"(?P<v>[A-Z][\w.+#/-]*(?:[ \t]+[A-Z0-9][\w.+#/-]*){0,2})")


# "CI is our internal thing called tarmac": the name the apposition gives, in any case, not the words before it
_CALLED_AFTER_SLOT = re.compile(rf"^{_KIND_AFTER_SLOT}\s*{_CONNECTORS}\s+(?:[\w'-]+\s+){{0,4}}?(?:called|named|dubbed)\s+"
                                r"(?P<v>[A-Za-z][\w.+#/-]*[A-Za-z0-9])", re.I)
_TOKEN_COLON = re.compile(r"[:=][A-Za-z0-9]")  # "db:prepare", "cache=true": a colon inside a token is no connector


def _generic_after(text: str, phrase: Found) -> Found | None:
    """An out-of-vocabulary value right after a slot phrase and its connector ("testing: testify", "we cache with
    Zorbcache": after a bare preposition only a capitalised name)."""
    if _TOKEN_COLON.match(text, phrase.end):
        return None
    w = _NAME_WITH_AFTER_SLOT.match(text[phrase.end :])
    if w and looks_like_a_name(w.group("v")):
        start = phrase.end + w.start("v")
        return Found(start, start + len(w.group("v").rstrip(".,")), w.group("v").rstrip(".,"), phrase.slot)
    if phrase.slot is not None and phrase.slot.entity in _PHRASE_VALUED:
        c = cadence_after(text, phrase.end) if phrase.slot.entity == "release" else None
        if c is not None:  # "releases: tag every 2 weeks", "release: every 2 weeks we tag ...": the cadence alone
            return Found(c[0], c[1], text[c[0]:c[1]], phrase.slot)
        p = _PHRASE_AFTER_SLOT.match(text[phrase.end :])
        if p and p.group("v").strip():
            start = phrase.end + p.start("v")
            value = p.group("v").strip()
            return Found(start, start + len(value), value, phrase.slot)
    m = _CALLED_AFTER_SLOT.match(text[phrase.end :]) or _GENERIC_AFTER_SLOT.match(text[phrase.end :])
    if (m is None or not looks_like_a_name(m.group("v"))) and names_in_chinese(text):
        return chinese_after(text, phrase)
    if m is None or not looks_like_a_name(m.group("v")):
        return None
    start = phrase.end + m.start("v")
    words = list(re.finditer(r"\S+", m.group("v").rstrip(".,")))
    while len(words) > 1 and (words[-1].group(0).lower() in KIND_WORDS or NOT_NAME_WORD.match(words[-1].group(0))
                              or words[-1].group(0).lower() in ENGLISH_STOPWORDS):
        words.pop()  # "the job queue is Zorblax now": the value ends at the name
    end = start + words[-1].end()
    return Found(start, end, text[start:end], phrase.slot)


_LIST_ITEM_BEFORE = re.compile(
    r"(?:[A-Z][\w.#/&-]*(?:\s+[A-Z0-9][\w.#/&-]*)?|[a-z][\w.#/&-]*)\s*(?:\+|&|,|、|和|及|\band|\bor|或)\s*$")


def is_rejected(text: str, found: Found) -> bool:
    """Rejected where it is named ("rather than Koa", "不用 Jest"), also as the later item of a rejected list
    ("we ditched ESLint + Prettier")."""
    before = text[: found.start]
    if REJECTED_BEFORE.search(before):
        return True
    for _ in range(4):  # walk back over the list's earlier items
        item = _LIST_ITEM_BEFORE.search(before)
        if not item:
            return False
        before = before[: item.start()]
        if REJECTED_BEFORE.search(before):
            return True
    return False


_OPEN_VALUE = re.compile(
    r"(?i:\b(?:use|uses|using|used|try|trying|go(?:ing)? with|went with|went|(?:we(?:'ve| have)?|i(?:'ve| have)?) got|"
    r"set up|setting up|configured|installed|wired up|integrated|stick(?:ing)? to|self-host(?:ing|ed)?|"
    r"lives? (?:in|on)|(?:is|are) (?:stored|kept) (?:in|on)|"
    r"(?:happens?|go(?:es)? out|goes|go) (?:through|via)|switch(?:ed|ing)?(?: over)? to|mov(?:e|ed|ing)(?: over)? to|"
    r"migrat(?:e|ed|ing) to|pick(?:ed)?|chose|choose|settle(?:d)? on|adopt(?:ed|ing)?|stick(?:ing)? with|"
    r"standardi[sz]e(?:d)? on|end(?:ed)? up with|went for|go(?:ing)? for|deploy(?:s|ed|ing)? (?:with|on|to|via)|host(?:s|ed|ing)? (?:on|with|at)|"
    r"run(?:s|ning)? on|rel(?:y|ies) on|built (?:with|on|in)|opt(?:ed|ing)? for|keep(?:ing)?|add(?:ing|ed)?|"
    r"introduc(?:e|ing|ed)|bring(?:ing)? in|stay(?:s|ing)? (?:on|with)|will be|going all in on|all in on|"
    r"(?:is|are) (?:run|built|done|managed|handled|tracked|hosted|deployed) (?:with|on|in|by|via)))"
    r"\s+(?:(?i:the|our|a|an)\s+)?(?P<v>[A-Z0-9][\w.+#/-]*(?:[ \t]+[A-Z0-9][\w.+#/-]*){0,3})"
    r"|(?P<vw>[A-Z][\w.+#/-]*(?:[ \t]+[A-Z0-9][\w.+#/-]*){0,2})\s+(?:(?i:is|was)\s+what\s+(?i:we|i)(?:'ve|'re)?\s+"
    r"(?i:picked|chose|use|used|went with|decided on|settled on|are using|'re using)"  # "X is what we picked"
    r"|(?i:it is|it'?ll be|is in(?=\s*(?:[.!,;]|$))|is the (?:one|winner|pick|choice|standard|plan)|(?:is|got) (?:approved|signed off|green-?lit)|"
    r"wins|won)\b)"  # "Dialogue Manager it is", "R2 is approved"
    r"|^(?:(?i:the|our)\s+)?(?!(?i:problem|issue|bottleneck|culprit|bug|catch|risk|concern|worry|downside|question|blocker|trouble|pain)\b)[A-Za-z][a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}\s+(?i:is|are|will be|is going to be)\s+"
    r"(?:(?i:now|still|just)\s+)?(?P<vi>[A-Z][\w.+#/&-]*(?:[ \t]+[A-Z0-9][\w.+#/&-]*){0,2})(?=(?:\s+(?i:now|too))?\s*[.!]?$)"
    r"|^(?:[A-Za-z][\w /-]{1,30}?|[\u4e00-\u9fff][\w\u4e00-\u9fff ]{0,10}?)\s*[:：]\s*"
    r"(?P<vc>[A-Z][\w.+#/&-]*(?:[ \t]+[A-Z0-9][\w.+#/&-]*){0,2})(?=\s*(?:[,，.。;；!！]|$|\s+(?:for|with|and|but)\b))"  # "Sync engine: Yjs"
    r"|(?i:\b(?:use|using|go(?:ing)? with|switch(?:ed|ing)? to|mov(?:e|ed|ing) to|pick(?:ed)?|chose|settled? on)"
    r"\s+(?P<vl>[a-z][\w.+#/-]*[a-z0-9])(?=\s+(?:for|as|to)\s))"  # "we use tox for testing": lowercase, then a slot
    r"|(?:用的是|选的是|(?<![少不别没利费作信好管常通专够实])用|使用|采用|选用|选|改用|换成|换用|定为|定成|部署在|托管在|跑在|迁移到|切换到|切到|走|(?<!加)上|就|定)了?\s*"
    r"(?:(?:我们)?自研的|自己的|一个叫|叫)?\s*"
    r"(?P<vz>[A-Za-z][\w.+#/-]*(?:[ \t]+[A-Za-z][\w.+#/-]*){0,2})"
    # a Chinese product name after 用 / 用的是, up to the clause's end ("缺陷管理用禅道，", "聚合用的是 快递100")
    r"|(?:用的是|选的是|(?<![不别没利费作信好管常通专够实])用(?!户)|采用|选用|改用|换成了?)\s*(?P<vzh>[\u4e00-\u9fff][\u4e00-\u9fffA-Za-z0-9]{1,5})"
    r"(?=\s*(?:[，,。.;；！!]|$))"
)


# "Sync engine: Yjs", "错误追踪：Honeybadger": a slot phrase, a colon, a name
COLON_VALUE = re.compile(r"^(?:[A-Za-z][\w /-]{1,30}?|[\u4e00-\u9fff][\w\u4e00-\u9fff ]{0,10}?)\s*[:：]\s*"
                         r"[A-Z][\w.+#/&-]*(?:[ \t]+[A-Z0-9][\w.+#/&-]*){0,2}\s*[,，.。;；!！]?$"
                         # "Mobile app is Flutter", "The mobile app will be Flutter now": a slot phrase, a copula, a name
                         r"|^(?:(?i:the|our)\s+)?(?!(?i:problem|issue|bottleneck|culprit|bug|catch|risk|concern|worry|downside|question|blocker|trouble|pain)\b)[A-Za-z][a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}\s+(?i:is|are|will be|is going to be)"
                         r"\s+(?:(?i:now|still|just)\s+)?[A-Z][\w.+#/&-]*(?:[ \t]+[A-Z0-9][\w.+#/&-]*){0,2}"
                         r"(?:\s+(?i:now|too|as well))?\s*[.!]?$")


_COMMON_WORDS = frozenset(
    "it this that them these those one ones something anything everything nothing same approach thing things stuff way "
    "ways version setup tool tools library libraries service services framework option options default defaults "
    "whatever whichever either neither both all some any none another other others more less most least "
    "time support help plan plans budget room need needs ideas idea requirements coverage "
    "benchmark benchmarks prototype poc spike migration change fix patch update release build".split()
)


_NAME_BEFORE_SLOT = re.compile(
    r"(?P<v>[A-Z][\w.+#/-]*(?:[ \t]+[A-Z0-9][\w.+#/-]*){0,2})\s*(?:(?i:for|as)\s+(?:(?i:the|our|a|an)\s+)?|做|作为|当)$"
)


# "pest for tests", "sqlc 做 ORM": a lower-case name that opens the clause right before a slot phrase's "for"/"as"
_LOWER_NAME_BEFORE_SLOT = re.compile(
    r"^(?:(?:yeah|yes|ok|okay|so|and|also|then|plus|oh|sure|right|and then)[,\s]+)*"
    r"(?P<v>[a-z][\w.+#/-]*[a-z0-9])\s+(?:for|as)\s+(?:(?:the|our|a|an|all)\s+)?$")
_LOWER_NAME_BEFORE_SLOT_ZH = re.compile(r"(?P<v>[a-z][\w.+#/-]*[a-z0-9])\s*(?:做|作为|当)\s*$")


def _name_before_slot(text: str, phrase: Found) -> re.Match[str] | None:
    before = text[: phrase.start]
    m = _NAME_BEFORE_SLOT.search(before)
    if m is None and names_in_chinese(text):
        m = _LOWER_NAME_BEFORE_SLOT_ZH.search(before)
    if m is None:
        m = _LOWER_NAME_BEFORE_SLOT.match(before)
        if m is not None and (m.group("v") in _COMMON_WORDS or find_phrases(m.group("v"))):
            return None  # "tests for the backend": a slot's own name, not a value
    return m


# "mdbook it is", "tempo confirmed", "Pagefind's in": a name opening the clause, then a verdict that settles it;
# the construction marks the name, so it may be written in lower case
_SETTLED_NAME = re.compile(
    r"^(?:(?:yeah|yes|ok|okay|so|alright|right|fine|then|and|great|cool|nice)[,!\s]+)*"
    r"(?P<v>[A-Za-z][\w.+#/-]*[A-Za-z0-9])(?:'s|\s+is)?\s+"
    r"(?:it is|it'?ll be|confirmed|in(?=\s*(?:[,.;!]|$))|is the (?:one|winner|pick))\b", re.I)


def _settled_name_en(text: str, known: list[Found]) -> list[Found]:
    m = _SETTLED_NAME.match(text)
    if m is None:
        return []
    value = m.group("v")
    if value.lower() in _COMMON_WORDS or not looks_like_a_name(value) or find_phrases(value) \
            or any(k.start < m.end("v") and m.start("v") < k.end for k in known):
        return []  # "so it is", "search it is", a known value (pairs_in reads it)
    return [Found(m.start("v"), m.end("v"), value, None)]


def open_values(text: str, known: list[Found] | None = None) -> list[Found]:
    """Values the vocabulary does not know, bound by a decision verb ("we deploy with Kamal", "改用 Biome")."""
    known = find_values(text) if known is None else known
    out = settled_name(text, known) + _settled_name_en(text, known)
    for phrase in find_phrases(text):  # "Zorblax for the backend framework", "Zorblax 做 ORM"
        m = _name_before_slot(text, phrase)
        if not m:
            continue
        start = m.start("v")
        while (w := re.match(r"[A-Za-z']+\s+", text[start : m.end("v")])) and not looks_like_a_name(w.group(0)):
            start += w.end()  # "Maybe Zorblax for ...": the name starts after the filler
        value = text[start : m.end("v")]
        if value and looks_like_a_name(value) and REDACTED not in value and \
                not any(k.start < m.end("v") and start < k.end for k in known):
            out.append(Found(start, m.end("v"), value, None))
    for m in _OPEN_VALUE.finditer(text):
        group = next(g for g in ("v", "vw", "vl", "vz", "vc", "vzh", "vi") if m.group(g))
        # "乱用的各种网盘": a value never opens with a particle; the 用 was part of another word
        if group == "vzh" and (m.group(group) in CJK_COMMON or m.group(group)[0] in "它这那他她我你哪什的了着过" or
                               m.group(group)[-1] in "的了吧呢啊写"):  # "用英文写": what it is written in, a manner
            continue
        if group == "vl" and (m.group(group).lower() in _COMMON_WORDS or not find_phrases(text[m.end(group):])):
            continue
        start, end = m.start(group), m.start(group)
        for word in re.finditer(r"\S+", m.group(group)):
            if word.group(0).lower().rstrip(".,") in KIND_WORDS:
                break
            end = start + word.start() + len(word.group(0).rstrip(".,"))
        value = text[start:end]
        if not value or REDACTED in value or not looks_like_a_name(value):
            continue
        if any(k.start < end and start < k.end for k in known):
            continue
        out.append(Found(start, end, text[start:end], None))
    return out


def pairs_in(text: str) -> list[Found]:
    """The (value, slot) pairs a clause states, bound pairs first, rejected alternatives removed."""
    known = [with_version(text, v) for v in find_values(text) if REDACTED not in v.value]
    named = {p.slot for p in find_phrases(text) if p.slot is not None}
    extended = [with_command(text, reslot(extend_name(text, v, known), v, named)) for v in known]
    known = [v for v in extended if not any(o.start < v.start < o.end for o in extended)]
    values = sorted(known + open_values(text, known), key=lambda v: v.start)
    phrases = find_phrases(text)
    bound = bound_pairs(text, values, phrases)
    slots = {p.slot for p in phrases if p.slot is not None}
    if len(slots) == 1:  # "For the queue we picked Faktory": the one slot the clause names files its unbound value
        slot = next(iter(slots))
        bound += [Found(v.start, v.end, v.value, slot) for v in values if v.slot is None
                  and not any(b.start == v.start for b in bound) and slot not in {b.slot for b in bound}]
    out: list[Found] = []
    seen_slots: set[tuple[str, str]] = set()
    for pair in [*bound, *values, *line_lengths(text)]:  # "100 col limit": a number its unit files
        if pair.slot is None or is_rejected(text, pair) or REDACTED in pair.value or modifier_only(text, pair) \
                or _vendor_in_passing(text, pair, phrases):
            continue
        slot_id = (pair.slot.category, pair.slot.entity)
        if slot_id in seen_slots or any(o.start <= pair.start and pair.end <= o.end for o in out):  # within a value
            continue
        seen_slots.add(slot_id)
        out.append(pair)
    for pair in list(out):
        for slot in _joined_slots(text, pair, phrases):
            if (slot.category, slot.entity) not in seen_slots:
                seen_slots.add((slot.category, slot.entity))
                out.append(Found(pair.start, pair.end, pair.value, slot))
    return sorted(out, key=lambda p: p.start)


# "we're on AWS", "deploy to GCP", "hosted in Azure": a cloud the project is on
_ON_A_CLOUD = re.compile(r"\b(?:on|to|in|into|onto)\s+(?:the\s+)?$", re.I)
_MANAGED = re.compile(r"版|服务|的版本")  # "托管版", "托管服务": a managed edition, not where the project is hosted


def _vendor_in_passing(text: str, pair: Found, phrases: list[Found]) -> bool:
    """A whole cloud named where the clause says nothing about where the project runs ("RocketMQ 定了，阿里云有托管版",
    "腾讯云 TRTC", "阿里云短信"): the vendor of something else, not the deployment platform."""
    head = find_values(pair.value)  # "腾讯云 TRTC": the vendor's name heads a longer one
    if not (head and head[0].start == 0 and head[0].canonical in CLOUD_VENDORS):
        return False
    said = [p for p in phrases if p.slot == pair.slot and not _MANAGED.match(text, p.end)]
    return not said and not _ON_A_CLOUD.search(text[: pair.start])


_JOINER = re.compile(r"^\s*(?:and|&|/|和|及|与|、)\s*(?:(?:the|our)\s+)?$", re.I)


def _joined_slots(text: str, pair: Found, phrases: list[Found]) -> list[Slot]:
    """"ruff for lint and formatting": a slot phrase joined by "and" to the one a value is bound to is filled too."""
    bound = [p for p in phrases if p.slot == pair.slot and (
        (p.start >= pair.end and _CONNECT_BEFORE_SLOT.match(text[pair.end:p.start]))
        or (p.end <= pair.start and _CONNECT_AFTER_SLOT.match(text[p.end:pair.start])))]
    out = []
    for p in bound:
        for other in phrases:
            if other.slot is None or other.slot == pair.slot:
                continue
            # "value for A and B" (both phrases after the value), "A and B use value" (both before it)
            after = p.start >= pair.end and other.start >= p.end and _JOINER.match(text[p.end:other.start])
            before = p.end <= pair.start and other.end <= p.start and _JOINER.match(text[other.end:p.start])
            if after or before:
                out.append(other.slot)
    return out
