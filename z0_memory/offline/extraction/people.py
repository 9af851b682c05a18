"""People: who owns which area ("Alice owns the backend", "前端那边小周负责") and who holds which role ("Our lead
designer is Mei Tanaka", "产品经理是韩梅梅"), as ``people:{area}_owner`` or ``people:{role}`` facts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from z0_memory.offline.extraction.cues import NOT_A_NAME
from z0_memory.offline.extraction.person_cues import OWNER, ROLE_STATEMENT, ZH_PERSON
from z0_memory.offline.extraction.model import CONF_FACT, Statement
from z0_memory.offline.extraction.name_spans import ADVERB_LY
from z0_memory.offline.extraction.roles import is_tool, message_roles, role_of_work, roles_said
from z0_memory.offline.extraction.vocabulary import ROLES, find_phrases, find_values
from z0_memory.offline.extraction.key_words import key_entity
from z0_memory.text import ENGLISH_STOPWORDS, contains_cjk


def people_statement(clause: str) -> Statement | None:
    """An owner or role the clause names; in a clause written all in lower case ("marco owns the backend", "kenji is
    tech lead") the words that could be names are read as capitalised, with the stricter owner verbs only."""
    found = _people(clause)
    if found is not None or re.search(r"\b[A-Z][a-zà-ÿ]", clause):  # an acronym ("the PM") is no capitalised name
        return found
    casual = _capitalised(clause)
    found = _people(casual) if casual != clause else None
    said = ROLE_STATEMENT.search(casual)
    if found is not None and said is not None and said.group("role_zh3"):
        return None  # "the DBA gave us a schema": a lower-case word after a role word is no name
    if found is None or (found.entity_override or "").endswith("_owner") and not _STRICT_OWNER.search(clause):
        return None  # "nginx handles tls": a lower-case "handles" is not said of a person
    start = casual.find(found.value or "")
    found.value, found.text = clause[start:start + len(found.value or "")], clause
    return found


# Words of a lower-case clause never read as names: function words, role and area words, known values
_ROLE_WORDS = re.compile(r"^(?:lead|manager|designer|owner|on-call|dba|architect|engineer|pm|maintainer|tech|product|"
                         r"release|backend|frontend|infra|ops|devops|mobile|qa|data|design|"
                         # the owner and role verbs themselves
                         r"owns?|leads|handles|runs|manages|maintains|took|takes|taken|taking|over|joined|joins|"
                         r"joining|came|responsible|charge|looks|after|care|now|also)$")
_STRICT_OWNER = re.compile(r"\b(?:owns|will own|leads|does all the|will lead|is responsible for|is in charge of|took over|"
                           r"takes over|has taken over|is taking over|will take over|looks after)\b")


def _capitalised(clause: str) -> str:
    def cap(m: re.Match[str]) -> str:
        word = m.group(0)
        if (word in ENGLISH_STOPWORDS or word in NOT_A_NAME or _ROLE_WORDS.match(word) or find_values(word)
                or find_phrases(word) or len(word) < 3 or ADVERB_LY.fullmatch(word)):
            return word
        return word[0].upper() + word[1:]
    return re.sub(r"(?<![\w'-])[a-z][a-z]+(?![\w'-])", cap, clause)


def _role_named(area: str) -> str | None:
    """"DBA 的活归王磊负责": an area that is only a role's name is that role."""
    words = _AREA_NOUNS.sub("", area).strip()
    return next((entity for pattern, entity, *_ in ROLES if re.fullmatch(rf"(?:{pattern})", words, re.I)), None)


def _is_role(text: str) -> bool:
    return any(re.search(pattern, text, re.I) for pattern, *_ in ROLES)


def _full_name(clause: str, end: int, who: str) -> str:
    """"DBA 是老周（周建国）", "Anya (Anya Petrov)": a name in brackets right after the one said is the full name."""
    m = re.match(r"\s*[（(]\s*([\u4e00-\u9fff]{2,4}|[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+)\s*[）)]", clause[end:])
    return m.group(1) if m else who


# "DBA 是老周，周建国": a familiar name, a comma, then the full name of the same surname: the apposition of brackets
_COMMA_APPOSITION = re.compile(r"([老小阿])([\u4e00-\u9fff])[，,]\s*(\2[\u4e00-\u9fff]{1,2})(?=[，,。.;；!！\s]|$)")


def bracket_apposition(text: str) -> str:
    """The text with a familiar name's full name said after a comma put in brackets, where ``_full_name`` reads it."""
    return _COMMA_APPOSITION.sub(r"\1\2（\3）", text)


def _people(clause: str) -> Statement | None:
    owner = OWNER.search(clause)
    if owner:
        key = next((k for k in ("who", "who_zh", "who_zh2", "who_zh3") if owner.group(k)), "who")
        who = _full_name(clause, owner.end(key), (owner.group(key) or "").strip())
        area = (owner.group("area") or owner.group("area_zh") or owner.group("area_zh2") or owner.group("area_zh3")
                or "").strip(" .。")
        if who and who.lower() not in NOT_A_NAME and area and not who.startswith(_PRONOUNS_ZH) \
                and not _NOT_A_PERSON.search(who) and not _NOT_AN_AREA.match(area):  # "后端我来负责"
            role = role_of_work(_AREA_NOUNS.sub("", area))  # "handles releases": the release manager
            if role and is_tool(clause, owner.start(key), owner.end(key)):
                return None  # "GitHub Actions handles releases"
            entity = role or _role_named(area) or f"{_owner_area(area)}_owner"
            return Statement(kind="fact", slot=None, value=who, confidence=CONF_FACT, text=clause,
                              category_override="people", entity_override=entity, label_override=area)
    role = ROLE_STATEMENT.search(clause)
    if role:
        key = next((k for k in ("who", "who2", "who_zh", "who_zh2", "who_zh3") if role.group(k)), "who")
        who = _full_name(clause, role.end(key), (role.group(key) or "").strip())
        text = next((g for g in (role.group(k) for k in ("role", "role2", "role_zh", "role_zh2", "role_zh3")) if g), "")
        # the person after a role said first: a familiar name ("老周") or a whole short Chinese name ("周涛")
        named = re.match(ZH_PERSON, role.group("role_zh") or "") or _WHOLE_ZH_NAME.fullmatch(role.group("role_zh") or "")
        if key == "who_zh" and named and _is_role(who) and not _is_role(text):
            # "DBA 是老周（周建国）": the role is said first, the person after 是
            text, who = who, _full_name(clause, role.start("role_zh") + named.end(), named.group(0))
        if not who or who.lower() in NOT_A_NAME or who.startswith(_PRONOUNS_ZH):
            return None
        said = clause[: role.end(_role_group(role))]
        for pattern, entity, en, zh in ROLES:
            # the role as said, also when a word before it was read as a filler ("项目经理是 Kevin": 项目 + 经理)
            if re.search(pattern, text, re.I) or re.search(rf"(?:{pattern})\s*$", said, re.I):
                return Statement(kind="fact", slot=None, value=who, confidence=CONF_FACT, text=clause,
                                  category_override="people", entity_override=entity,
                                  label_override=zh if contains_cjk(clause) else en)
        area = re.match(r"^\s*(?P<area>.+?)\s*(?:负责人|对接人|owner|lead|主管)$", text.strip(" .。"), re.I)
        if area:  # "李雷是我们的后端负责人", "Sam is our backend lead": the owner of that area
            return Statement(kind="fact", slot=None, value=who, confidence=CONF_FACT, text=clause,
                             category_override="people", entity_override=f"{_owner_area(area.group('area'))}_owner",
                             label_override=area.group("area"))
    return _other_shapes(clause)


def _known_area(area: str) -> bool:
    phrases = find_phrases(_AREA_NOUNS.sub("", area.strip()))
    return bool(phrases and phrases[0].slot is not None and phrases[0].slot.owner_area)


def side_task(s: Statement, before: Sequence[Statement]) -> bool:
    """``s`` gives someone the clause before already placed an area that is none of the areas the vocabulary knows
    ("Ray is the deploy owner, he runs the Azure subscription"): a task of theirs, said in passing, not an ownership."""
    if s.category_override != "people" or not (s.entity_override or "").endswith("_owner"):
        return False
    if re.search(r"归|负责", s.text):  # "后端归老李管，运维也是他负责": said as ownership, not in passing
        return False
    if not any(o.category_override == "people" and o.value == s.value for o in before):
        return False
    return not _known_area(s.label_override or "")


def names_person(clause: str) -> bool:
    """The clause names someone's area or role, in any shape this module reads."""
    if OWNER.search(clause) or ROLE_STATEMENT.search(clause):
        return True
    return bool(roles_said(clause if re.search(r"[A-Z]", clause) else _capitalised(clause)))


def _other_shapes(clause: str) -> Statement | None:
    """The first person ``roles`` reads in the clause's other shapes ("designer is Olu", "jonas handles releases")."""
    for who, entity, label in roles_said(clause):
        if who.lower() in NOT_A_NAME:
            continue
        if entity == "owner":
            entity = f"{_owner_area(label)}_owner"
        at = clause.find(who)
        who = _full_name(clause, at + len(who), who) if at >= 0 else who  # "负责硬件的是老周（周建国）"
        return Statement(kind="fact", slot=None, value=who, confidence=CONF_FACT, text=clause,
                         category_override="people", entity_override=entity, label_override=label)
    return None


_WHOLE_ZH_NAME = re.compile(r"[\u4e00-\u9fff]{2,3}")
# "数据库也是他负责", "后端我自己负责": a pronoun is no one's name (who it stands for is another message's business)
_NOT_A_PERSON = re.compile(r"[他她它我你]|自己|本人|大家")
# "Prettier handles it on save": what a tool handles is a task, not an area someone owns
_NOT_AN_AREA = re.compile(r"(?:it|them|this|that|everything|all of it)\b", re.I)


def _role_group(role: re.Match[str]) -> str:
    return next((k for k in ("role", "role2", "role_zh", "role_zh2", "role_zh3") if role.group(k)), "role")


_AREA_NOUNS = re.compile(
    r"\s+(?:side|stuff|work|code|codebase|part|parts|piece|things?|now|too|as well|btw|by the way|fyi|this|next|from|"
    r"starting|going forward|for now|as of|until|since)\b.*$|"
    r"\s*(?:,|\band\b|\bbut\b)\s*(?:is|was|will|has|he|she|they|also|so)\b.*$|"  # "owns CI and is also ...": a second predicate
    r"\s*(?:这块|部分|相关|这边|方面|工作)$",
    re.I,
)


_PRONOUNS_ZH = ("我", "你", "他", "她", "它")
_OPENERS = re.compile(r"^(?:另外|还有|然后|对了|其次|同时|以及|而且)\s*")


def _owner_area(area: str) -> str:
    area = _OPENERS.sub("", area.strip()) or area  # "另外数据负责人是周婷": the area is 数据
    area = re.sub(r"(?:那边|这边|这块|方面)?(?:是|由|归)$", "", area) or area  # "运维那边是小林负责": 运维
    area = re.sub(r"(?:那边|这边|这块|方面)的?$", "", area) or area  # "运营那边的对接人": 运营
    area = _AREA_NOUNS.sub("", area.strip()) or area  # "the frontend stuff" -> frontend
    parts = re.split(r"\s*(?:\+|&|\band\b)\s*", area)
    if len(parts) > 1:  # "listings + the search backend": the part the vocabulary knows as an area
        known = [f.slot.owner_area for p in parts for f in find_phrases(p) if f.slot is not None and f.slot.owner_area]
        return known[0] if known else _owner_area(parts[0])
    phrases = find_phrases(area)
    if phrases and phrases[0].start == 0 and phrases[0].slot and phrases[0].slot.owner_area:
        return phrases[0].slot.owner_area  # "the backend ranking service", "mobile driver app": the area it is part of
    words = re.findall(r"[\w\u4e00-\u9fff-]+", area.replace("的", " "))[:3]
    return (key_entity(" ".join(words)) or "area") if words else "area"


# "负责人：后端是阿强，前端是小美", "Owners: backend is Marco, frontend is Li": a list of areas and their people
_OWNERS_TOPIC = re.compile(r"^\s*(?:负责人|分工|owners?|ownership|who owns what)\s*[:：]\s*(?P<rest>.+)$", re.I)
_AREA_PERSON = re.compile(rf"^\s*(?:the\s+)?(?P<area>[\w\u4e00-\u9fff][\w\u4e00-\u9fff /-]{{0,20}}?)\s*"
                          rf"(?:是|由|归|:|：|=|->|→|\bis\b|—|-)\s*(?P<who>{ZH_PERSON}|[\u4e00-\u9fff]{{2,3}})\s*[.。]?$")


def owners_listed(sentence: str) -> list[Statement]:
    """The owners a listing sentence names, one per clause; empty when the sentence is no such listing."""
    m = _OWNERS_TOPIC.match(sentence)
    if not m:
        return []
    out = []
    for part in re.split(r"[,，;；、]", m.group("rest")):
        pair = _AREA_PERSON.match(part)
        if pair and pair.group("who").lower() not in NOT_A_NAME:
            area = pair.group("area").strip()
            out.append(Statement(kind="fact", slot=None, value=pair.group("who"), confidence=CONF_FACT, text=part.strip(),
                                 category_override="people", entity_override=f"{_owner_area(area)}_owner",
                                 label_override=area))
    return out


# "I'm Maya, I'll be doing most of the backend", "后端我来负责，我叫王磊", "我是前端的负责人，我叫周宁": the speaker names
# themself and an area
_SELF_NAME = re.compile(r"\b(?i:i'?m|i am|my name is|this is)\s+(?P<en>[A-Z][a-z]{1,20})\b(?!\s+(?:and|from|on|with|here)\b)"
                        r"|我叫\s*(?P<zh>[\u4e00-\u9fff]{2,3}|[A-Z][a-z]+)(?![\u4e00-\u9fff])")
_SELF_AREA = re.compile(
    r"\b(?:i'?ll|i will|i'?m going to|i)\s+(?:be\s+)?(?:own(?:ing)?|handl(?:e|ing)|lead(?:ing)?|do(?:ing)?|tak(?:e|ing) care of|"
    r"run(?:ning)?|look(?:ing)? after)\s+(?:most of\s+|all of\s+)?(?:the\s+|our\s+)?(?P<area>[a-z][\w/-]*(?:\s+[a-z][\w/-]*)?)"
    r"|(?P<area_zh>[\u4e00-\u9fffA-Za-z]{1,6}?)(?:那边|这块)?(?:由)?我(?:来)?负责|我(?:来)?负责\s*(?P<area_zh2>[\u4e00-\u9fffA-Za-z]{1,6})"
    r"|我是\s*(?P<area_zh3>[\u4e00-\u9fffA-Za-z]{1,6}?)(?:那边|这边|这块)?的?(?:负责人|owner)",
    re.I)


def self_owner(text: str) -> list[Statement]:
    """The area a message's speaker takes on, when the same message gives their name, and the roles it gives across a
    comma (``roles.message_roles``); else nothing."""
    out = [Statement(kind="fact", slot=None, value=who, confidence=CONF_FACT, text=text, category_override="people",
                     entity_override=role, label_override=label) for who, role, label in message_roles(text)]
    name, area = _SELF_NAME.search(text), _SELF_AREA.search(text)
    if not name or not area:
        return out
    who = name.group("en") or name.group("zh")
    where = (area.group("area") or area.group("area_zh") or area.group("area_zh2") or area.group("area_zh3") or "").strip()
    where = re.sub(r"^(?:另外|还有|然后|，|,)+", "", where)
    phrases = find_phrases(where)
    if not where or not phrases or phrases[0].slot is None or not phrases[0].slot.owner_area:
        return out  # only an area the vocabulary knows ("the backend", "前端"): not "I'll do the dishes"
    return out + [Statement(kind="fact", slot=None, value=who, confidence=CONF_FACT, text=area.group(0),
                            category_override="people", entity_override=f"{phrases[0].slot.owner_area}_owner",
                            label_override=where)]


# "数据库也是他负责", "release 也是她管", "DBA 的活也是他兼着", "数据库相关也是他": another area of the person before
_ALSO_THEIRS = re.compile(r"^\s*(?P<area>[\w\u4e00-\u9fff -]{1,12}?)\s*(?:的活|相关|这块|那边)?\s*(?:也|都)(?:是|归|由)?\s*"
                          r"[他她]\s*(?:来)?(?:负责|管|兼着|在管|的)?\s*[。.！!]?$")
_PRONOUN = re.compile(r"^(?:and\s+|also\s+)?(?P<p>she|he)(?P<be>'s|s|\s+is)?\b", re.I)
_NAME = re.compile(r"\b[A-Z][a-zà-ÿ]{2,20}(?:\s+[A-Z][a-zà-ÿ]{2,20})?\b")


def resolve_pronoun(clause: str, before: str) -> str:
    """"Priya is doing the design, she's our designer": "she" is the person named just before."""
    also = _ALSO_THEIRS.match(clause)
    if also:  # "后端归老李管，数据库也是他负责": the area is the same person's
        person = people_statement(before)
        if person is None or not person.value:
            return clause
        # said again in the handover shape OWNER reads ("数据库归老李负责"; a "Kevin 陈" needs no verb after it)
        verb = "负责" if re.fullmatch(r"[\u4e00-\u9fff]+", person.value) else ""
        return f"{also.group('area')}归{person.value}{verb}"
    if clause.startswith(("他", "她")):
        owner = OWNER.search(before) or ROLE_STATEMENT.search(before)
        who = owner and next((g for g in (owner.groupdict().get(k) for k in ("who_zh", "who_zh2", "who")) if g), None)
        return f"{who}{clause[1:]}" if who else clause
    m = _PRONOUN.match(clause)
    if not m:
        return clause
    names = [n for n in _NAME.findall(before) if n.lower() not in NOT_A_NAME and not find_values(n)]
    if not names:
        return clause
    return f"{names[-1]}{' is' if m.group('be') else ''}{clause[m.end():]}"
