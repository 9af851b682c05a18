"""People said in the shapes ``people`` does not read: the role word first ("designer is Olu", "负责模型的是周博士"),
the area first in the passive ("Jobs stuff is owned by Ravi", "the carrier team is led by Kwame Asante"), and the
work a role does ("jonas handles releases", "dana does the designs", "阿杰管发布", "Jonas is on call"), which names
that role rather than an owned area.
"""

from __future__ import annotations

import re

from z0_memory.offline.extraction.vocabulary import ROLES, find_phrases, find_values

# The work that makes a role: whoever does it holds the role (data: the role's entity and its labels from ``ROLES``)
_ROLE_WORK: tuple[tuple[str, str], ...] = (
    (r"releases?|release process|shipping releases|发布|发版|上线", "release_manager"),
    (r"(?:the\s+)?(?:ui\s+|ux\s+|visual\s+|product\s+)?designs?|(?:the\s+)?art|设计", "designer"),
)
_ROLE_LABELS = {entity: (en, zh) for _, entity, en, zh in ROLES}
_NAME = r"[A-Z][a-zà-ÿ]{1,20}(?:\s+[A-Z][a-zà-ÿ]{1,20})?"
# A capitalised word that opens a clause without being a name
_NOT_NAME = frozenset("Also And But So Oh Ok Okay Then Now Our The Btw Fyi Plus Yes Yeah Sure It This That "
                      "Everything Everyone Nothing Something".split())
_ZH_NAME = r"(?:[老小阿][\u4e00-\u9fff]|[\u4e00-\u9fff]{2,3}?|[A-Z][a-z]+(?:\s*[\u4e00-\u9fff])?)"
# A title after a Chinese name is no part of it ("Lily 老师", "周博士" keeps its title: it is how he is called)
_ZH_AFTER_NAME = r"(?=\s*(?:老师|同学)?\s*(?:[。，,！!；;（(]|$|了))"

_DOES_WORK = re.compile(
    rf"(?P<who>(?<![\w'])\b{_NAME})\s+(?:\([^)]{{1,40}}\)\s+)?(?:basically\s+|also\s+|now\s+)?"
    r"(?:does|handles|is doing|is handling|will do|will handle|is (?:gonna|going to) do|do(?:es)? all)\s+"
    r"(?:all\s+)?(?:the\s+|our\s+)?(?P<work>[\w' -]{2,30}?)\s*(?=[,.;!—-]|$|\b(?:btw|for|and|so|now)\b)"
    rf"|(?P<who_zh>{_ZH_NAME})\s*(?:来|也|现在)?(?:管|负责)(?P<work_zh>[\u4e00-\u9fff]{{2,4}}?)(?=[。，,！!；;]|$)",
)
_ON_CALL = re.compile(rf"(?P<who>\b{_NAME}),?\s+(?:(?:he|she)'?s\s+|hes\s+|shes\s+)?(?:is\s+|'s\s+)?(?:also\s+|now\s+)?"
                      r"(?:the\s+)?on[- ]call\b")
_ROLE_WORDS = (r"tech(?:nical)? lead|designer|product manager|release manager|on[- ]call(?: engineer)?|dba|architect|"
               r"project manager")
_ROLE_FIRST = re.compile(
    rf"^\s*(?i:(?:(?:btw|fyi|oh|and|also|our|the)\W+)*(?P<role>{_ROLE_WORDS})\s+(?:is|=|:))\s+(?P<who>{_NAME})\b")
# "deploy owner is now Chen Wei": an area's owner said first
_OWNER_FIRST = re.compile(
    r"^\s*(?i:(?:(?:btw|fyi|oh|and|also|so|our|the|new)\W+)*(?P<area>[a-z][\w/-]{1,20})\s+owner\s+(?:is|=|:)\s+"
    rf"(?:now\s+)?)(?P<who>{_NAME})\b")
# "we hired a PM, Keiko", "new PM joined, Sofia": the role, then who holds it after a comma
_ROLE_THEN_NAME = re.compile(rf"\b(?i:a|new|our)\s+(?i:new\s+)?(?P<role>(?i:{_ROLE_WORDS}|pm))(?:\s+joined)?\s*[,:—]\s*"
                             rf"(?P<who>{_NAME})\s*(?:[.!;]|$)")
# "Margit (hw lead, also our tech lead)": the role said in brackets after the name
_ROLE_IN_BRACKETS = re.compile(rf"(?P<who>\b{_NAME})\s*[(（](?:[^)）]*?[,，;]\s*)?(?i:(?:also\s+)?(?:our\s+|the\s+)?"
                               rf"(?P<role>{_ROLE_WORDS}))\s*[)）]")
# "I'm Priya, new-ish tech lead on lexsearch": the speaker's name, then their role
_SELF_ROLE = re.compile(rf"\b(?i:i'?m|i am|this is)\s+(?P<who>{_NAME})\s*[,，]\s*(?i:(?:the|our|a|an|new(?:-ish)?|current)\s+)*"
                        rf"(?i:(?P<role>{_ROLE_WORDS}))\b")
_PASSIVE_OWNER = re.compile(
    r"(?P<area>(?:(?:the|our)\s+)?[\w/ -]{2,40}?)\s+(?:is|are)\s+(?:now\s+)?(?:owned|led|run|maintained|managed|handled)"
    rf"\s+by\s+(?P<who>{_NAME})\b",
)
# "负责模型的是周博士", "负责线上服务的人是阿宁": the area someone is responsible for, said before who
_ZH_RESPONSIBLE_FIRST = re.compile(rf"负责(?P<area>[\w\u4e00-\u9fff ]{{1,10}}?)的(?:人)?(?:现在)?是\s*(?P<who>{_ZH_NAME}){_ZH_AFTER_NAME}")
_AREA_WORDS = re.compile(r"\s+(?:stuff|side|work|team|code|things?|modules?|parts?)$|^(?:the|our)\s+", re.I)


def _area_known(work: str) -> bool:
    """The work is an area the vocabulary knows ("frontend", "the backend"), not a task ("the dishes")."""
    phrases = find_phrases(_AREA_WORDS.sub("", work.strip()))
    return bool(phrases and phrases[0].start == 0 and phrases[0].slot is not None and phrases[0].slot.owner_area)


def role_of_work(work: str) -> str | None:
    """The role whose work ``work`` names ("releases" -> release_manager), or None."""
    return next((entity for pattern, entity in _ROLE_WORK if re.fullmatch(pattern, work.strip(), re.I)), None)


def is_tool(clause: str, start: int, end: int) -> bool:
    """The span is (part of) a product the vocabulary knows ("GitHub Actions handles releases"), not a person."""
    return any(v.start < end and start < v.end for v in find_values(clause))


def _is_person(clause: str, m: re.Match[str], group: str = "who") -> bool:
    who = m.group(group) or ""
    return bool(who) and who.split()[0] not in _NOT_NAME and not is_tool(clause, m.start(group), m.end(group))


def roles_said(clause: str) -> list[tuple[str, str, str]]:
    """``(who, entity, label)`` for each person the clause names in one of these shapes; the entity is a role
    (``designer``) or an area's owner (``jobs_owner``, the area's words still to be keyed by the caller)."""
    out: list[tuple[str, str, str]] = []
    zh = bool(re.search(r"[\u4e00-\u9fff]", clause))
    for m in _DOES_WORK.finditer(clause):
        who = (m.group("who") or m.group("who_zh") or "").strip()
        role = role_of_work(m.group("work") or m.group("work_zh") or "")
        if role is None and m.group("who") and _is_person(clause, m) and _area_known(m.group("work") or ""):
            out.append((who, "owner", m.group("work").strip()))  # "aiyana does all the frontend": that area's owner
            continue
        if role and (_is_person(clause, m) if m.group("who") else not re.search(r"[他她我你它]", who)):
            out.append((who, role, _ROLE_LABELS[role][zh]))
    for m in _ON_CALL.finditer(clause):
        if _is_person(clause, m):
            out.append((m.group("who"), "on_call", _ROLE_LABELS["on_call"][zh]))
    for m in [_ROLE_FIRST.match(clause)]:
        if not m or not _is_person(clause, m):
            continue
        role = next(entity for pattern, entity, _, _ in ROLES if re.search(pattern, m.group("role"), re.I))
        out.append((m.group("who"), role, _ROLE_LABELS[role][zh]))
    for m in [_OWNER_FIRST.match(clause)]:
        if m and _is_person(clause, m):
            out.append((m.group("who"), "owner", m.group("area")))
    for m in _PASSIVE_OWNER.finditer(clause):
        area = _AREA_WORDS.sub("", _AREA_WORDS.sub("", m.group("area").strip()))
        if _is_person(clause, m) and area and not re.search(r"\b(?:it|this|that|which|who)$", area, re.I):
            out.append((m.group("who"), "owner", area))
    for m in _ZH_RESPONSIBLE_FIRST.finditer(clause):
        if not re.search(r"[他她我你它]", m.group("who")):
            out.append((m.group("who"), "owner", m.group("area").strip()))
    return out


def message_roles(text: str) -> list[tuple[str, str, str]]:
    """``(who, role, label)`` for the roles a message gives across a comma, which the clause split cuts: the speaker's
    name then their role ("I'm Kofi, the designer"), a role in brackets after a name ("Margit (hw lead, also our tech
    lead)"); read on the whole message."""
    out = []
    for m in [_SELF_ROLE.search(text), *_ROLE_IN_BRACKETS.finditer(text), *_ROLE_THEN_NAME.finditer(text)]:
        if m is not None and _is_person(text, m):
            role = next(entity for pattern, entity, _, _ in ROLES if re.search(pattern, m.group("role"), re.I))
            out.append((m.group("who"), role, _ROLE_LABELS[role][bool(re.search(r"[\u4e00-\u9fff]", text))]))
    return out
