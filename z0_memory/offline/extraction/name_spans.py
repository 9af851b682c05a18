"""Where a value's name starts and ends around a known value: name words that continue it ("NATS JetStream", "Solid
Queue"), a vendor before it ("Upstash Redis"), a "+" partner ("Taro + React"), a version said apart ("Node 已经升到
22"), a tool's sub-command that names another slot ("ruff format" is a formatter); and whether a word looks like a
name at all.
"""

from __future__ import annotations

import re

from z0_memory.offline.extraction.cues import NOT_A_NAME
from z0_memory.offline.extraction.vocabulary import SLOTS, Found, Slot, find_phrases, find_values
from z0_memory.text import ENGLISH_STOPWORDS

# "pg obviously", "he basically owns": an adverb in -ly, written lower-case, is no name (capitalised "Plotly" may be)
ADVERB_LY = re.compile(r"[a-z]{4,}ly")
NOT_NAME_WORD = re.compile(
    r"(?i:^(?:\w+(?:ed|ing)|run|built|written|done|set|made|up|out|also|still|now|currently|just|always|never|very|"
    r"really|pretty|quite|too|so|being|going|fine|good|great|bad|slow|fast|ok|okay|important|ready|broken|weak|strong|"
    r"noisy|silly|cheap|expensive|solid|nice|easy|hard|simple|heavy|light|stale|outdated|old|wrong|missing|empty|"
    r"flaky|down|wrong|messy|fragile|annoying|probably|maybe|perhaps|likely|definitely|tbh|imo|honestly|anyway|"
    r"though|then|store|put|convert|display|send|internal|homegrown|in-house|custom)$|^\d+(?:st|nd|rd|th)$)"  # "the 14th": a date
    rf"|^{ADVERB_LY.pattern}$",
)


def looks_like_a_name(value: str) -> bool:
    """An out-of-vocabulary value must look like a thing's name, not a verb or filler ("written in", "so slow")."""
    word = value.split()[0].rstrip(".,;:!?")  # "is weak.": the sentence's full stop is no part of the word
    first = word.lower()
    # NOT_NAME_WORD gets the word as written: an adverb in -ly is lower-case ("obviously"), a name may not be ("Zapfly")
    return not (first in NOT_A_NAME or first in ENGLISH_STOPWORDS or NOT_NAME_WORD.match(word))

# Words that end a value's name ("Redis cluster", "Hono app"): the thing's kind, not its name.
KIND_WORDS = frozenset(
    "framework library lib tool tools service services platform server servers instance instances cluster version "
    "setup stack plugin plugins app apps api apis sdk cli db database cache queue for as in on to with and or but "
    "because since instead rather over from at by now then too also here there".split()
)
_NAME_AFTER = re.compile(r"[ \t]*(?<=[ \t])([A-Z][\w.+#/-]*|v?\d+(?:\.\d+)*(?!\w|\.\w))")

_NAME_PLUS_BEFORE = re.compile(r"(?<![\w.+#/&-])([A-Z][\w.#/&-]*)\s*\+\s*$")
_PLUS_NAME = re.compile(r"\s*\+\s*([A-Z][\w.+#/&-]*(?:[ \t]+(?:[A-Z][\w.+#/&-]*|\d+(?:\.\d+)*))*)")


def extend_name(text: str, value: Found, taken: list[Found]) -> Found:
    """A known value followed by capitalised name words is a longer name ("NATS JetStream", "React Native"); joined
    by "+" to a name of its own slot or to one the vocabulary does not know, one combined value ("Taro + React",
    "Prometheus + Thanos"); "Node 20 + Fastify" stays two values of two slots."""
    value = _extend_words(text, value, taken)
    value = _extend_vendor(text, value, taken)
    lead = _NAME_PLUS_BEFORE.search(text, 0, value.start)
    if lead and not any(t.start == lead.start(1) and t.slot != value.slot for t in taken):
        value = Found(lead.start(1), value.end, text[lead.start(1):value.end], value.slot, value.canonical)
    plus = _PLUS_NAME.match(text, value.end)
    named = {p.slot for p in find_phrases(text)}
    if plus and (not named or value.slot in named):  # "backend 用 Kotlin + Ktor": the backend is not the language
        other = next((t for t in taken if t.start == plus.start(1)), None)
        if other is None or other.slot == value.slot:
            end = plus.end(1) if other is None else max(plus.end(1), other.end)
            return Found(value.start, end, text[value.start:end], value.slot, value.canonical)
    return value


# "Upstash Redis", "Firebase Firestore": a capitalised word the vocabulary does not know right before a known value
# is the vendor's part of one name; a capitalised verb or filler opening the sentence is not ("Use Redis")
_VENDOR_BEFORE = re.compile(r"(?<![\w.+#/&-])([A-Z][\w.-]*[\w])[ \t]+$")
_VERBS_BEFORE_A_NAME = frozenset(
    "use try add keep drop pick choose go move stick prefer need want like love hate ditch replace remove consider "
    "skip avoid install run get switch migrate adopt adding using keeping dropping".split())


def _extend_vendor(text: str, value: Found, taken: list[Found]) -> Found:
    lead = _VENDOR_BEFORE.search(text, 0, value.start)
    if lead is None or value.canonical is None:
        return value
    word = lead.group(1)
    if word.lower() in _VERBS_BEFORE_A_NAME or word.lower() in KIND_WORDS or not looks_like_a_name(word) \
            or find_phrases(word) or any(t.start <= lead.start(1) < t.end for t in taken):
        return value  # a verb, a slot's name ("Cache Redis") or another known value ("Django Postgres")
    return Found(lead.start(1), value.end, text[lead.start(1):value.end], value.slot, value.canonical)


# "ruff format", "prisma migrate": a known tool's lower-case sub-command that names another slot ("format" ->
# formatting, "migrate" -> migrations) is that slot's value, the tool and its command together
_COMMAND_AFTER = re.compile(r"[ \t]+([a-z]{4,})(?=\s*(?:[,，.。;；!！]|$|\s+(?:for|and|with|in|on)\b))")


_DERIVED = re.compile(r"(?:e|s|r|er|ers|ter|ing|ting|ion|ions|ation|ations)?")


def command_slot(word: str) -> Slot | None:
    """The slot one of whose one-word English phrases is derived from ``word`` ("migrate" -> migrations, "format"
    -> formatter); None when no slot or more than one is."""
    if find_phrases(word):
        return None  # "S3 backend", "Redis cache": a slot's own name says what the tool is for, it is no command
    stem = word[:-1] if word.endswith("e") else word
    slots = {s for s in SLOTS for p in s.phrases
             if p.isascii() and " " not in p and p.startswith(stem) and _DERIVED.fullmatch(p[len(stem):])}
    return slots.pop() if len(slots) == 1 else None


def with_command(text: str, value: Found) -> Found:
    m = _COMMAND_AFTER.match(text, value.end)
    if m is None or value.slot is None or m.group(1) in KIND_WORDS:
        return value
    slot = command_slot(m.group(1))
    if slot is None or slot == value.slot:
        return value
    return Found(value.start, m.end(1), text[value.start:m.end(1)], slot)


def reslot(value: Found, known: Found, named: set) -> Found:
    """A longer name built on a known value ("Laravel Sanctum", "Spring Security") is another product: when the
    clause names one slot, and not the known value's, the longer name is that slot's value ("Laravel Sanctum for
    auth"); "Upstash Redis as a cache" stays where Redis is."""
    added = value.value.replace(known.value, " ")
    if not re.search(r"[A-Za-z]", added) or len(named) != 1 or known.slot in named:
        return value  # "Postgres 16": a version, not another product
    return Found(value.start, value.end, value.value, next(iter(named)))


# Kind words that, capitalised after a name, are part of a product's title ("Solid Queue", "Azure Service Bus");
# lower-case ("the Redis cluster") they only say what kind of thing it is
_TITLEKIND_WORDS = KIND_WORDS - frozenset(
    "for as in on to with and or but because since instead rather over from at by now then too also here there".split())


def _extend_words(text: str, value: Found, taken: list[Found]) -> Found:
    end = value.end
    for _ in range(3):
        m = _NAME_AFTER.match(text, end) or _same_slot_after(text, end, value, taken)
        word = m.group(1).rstrip(".") if m else ""
        if not m or (word.lower() in KIND_WORDS and not (word[:1].isupper() and word.lower() in _TITLEKIND_WORDS)):
            break
        known = next((t for t in taken if t.start == m.start(1)), None)
        if known is not None and known.slot != value.slot:
            break  # a known value of the same slot continues the name ("AWS ECS"); another slot's does not
        end = known.end if known is not None else m.start(1) + len(m.group(1).rstrip(".,"))
    if end == value.end:
        return value
    return Found(value.start, end, text[value.start:end], value.slot)

# "Neon postgres", "Upstash redis": a known value of the same slot, in any case, right after a known value names one
# product (the vendor's and the engine's name); the capitalised words _NAME_AFTER reads need no such check
_NEXT_WORD = re.compile(r"[ \t]+([\w+#/-]+(?:\.[\w+#/-]+)*)")


def _same_slot_after(text: str, end: int, value: Found, taken: list[Found]) -> re.Match[str] | None:
    m = _NEXT_WORD.match(text, end)
    if m is None or value.slot is None:
        return None
    known = next((t for t in taken if t.start == m.start(1)), None)
    return m if known is not None and known.slot == value.slot and known.end == m.end(1) else None


# "Node 已经升到 22", "Python 版本统一 3.11", "upgraded Postgres to 17": a version said apart from its name
_VERSION_AFTER = re.compile(
    r"\s*(?:的)?(?:版本|version)?\s*(?:已经|now|also)?\s*(?:统一(?:用|为)?|还是|升到了?|升级到了?|升级为|(?:is|was)? ?(?:upgraded|bumped|"
    r"pinned) to|is now on|to|at|on)\s*v?(?P<n>\d+(?:\.\d+)*)(?![\w.])", re.I)


def with_version(text: str, value: Found) -> Found:
    if re.search(r"\d", value.value):
        return value
    m = _VERSION_AFTER.match(text, value.end)
    if not m:
        return value
    return Found(value.start, m.end("n"), f"{value.value} {m.group('n')}", value.slot, value.canonical)


# "the Lua scripts", "Python 代码统一 ruff format", "Java 背景", "the Rails default": a known value that only qualifies
# the noun after it is mentioned, not stated; a language before its code, its people or its layer ("Python 策略层这边"),
# or as where a rule applies ("TS 里不许用 any"),
# "the X default"
_LANGUAGE_MODIFIED = re.compile(r"\s*(?:(?i:code|scripts?|files?|agent|team|devs|developers|engineers|folks|background|"
                                r"bindings|layer)\b|代码|脚本|文件|背景|团队|工程师|开发者|同学|[\u4e00-\u9fff]{0,3}层|里|的\s*[A-Z])")
_DEFAULT_OF = re.compile(r"\s*(?i:defaults?\b)")
# "The Terraform state lives in S3", "the Vite config": a tool's own state or configuration, not the tool chosen
_OWN_PARTS = re.compile(r"\s*(?i:state|config|configuration|modules?|providers?)\b")
_THE_BEFORE = re.compile(r"(?i:\bthe|\bits)\s+$")


def modifier_only(text: str, value: Found) -> bool:
    rest = text[value.end:]
    if _DEFAULT_OF.match(rest) and _THE_BEFORE.search(text[:value.start]) or _OWN_PARTS.match(rest):
        return True  # "minitest, the rails default": the default of Rails ("rustfmt defaults" is rustfmt as it comes)
    language = [v for v in find_values(value.value) if v.slot is not None and v.slot.entity == "language"]
    if not language:
        return False
    # the language's own name, wherever a slot phrase filed it ("后端用 Go 的 Gin"); "Python code" read as one value too
    return bool(_LANGUAGE_MODIFIED.match(rest) or _LANGUAGE_MODIFIED.match(value.value, language[0].end))
