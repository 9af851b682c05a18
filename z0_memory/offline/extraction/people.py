"""People: who owns which area ("Alice owns the backend", "前端那边小周负责") and who holds which role ("Our lead
designer is Mei Tanaka", "产品经理是韩梅梅"), as ``people:{area}_owner`` or ``people:{role}`` facts.
"""

from __future__ import annotations

import re

from z0_memory.offline.extraction.cues import NOT_A_NAME, OWNER, ROLE_STATEMENT
from z0_memory.offline.extraction.model import CONF_FACT, Statement
from z0_memory.offline.extraction.vocabulary import ROLES, find_phrases
from z0_memory.offline.extraction.key_words import key_entity
from z0_memory.text import contains_cjk


def people_statement(clause: str) -> Statement | None:
    owner = OWNER.search(clause)
    if owner:
        who = (owner.group("who") or owner.group("who_zh") or owner.group("who_zh2") or "").strip()
        area = (owner.group("area") or owner.group("area_zh") or owner.group("area_zh2") or "").strip(" .。")
        if who and who.lower() not in NOT_A_NAME and area and not who.startswith(_PRONOUNS_ZH):  # "后端我来负责"
            entity = f"{_owner_area(area)}_owner"
            return Statement(kind="fact", slot=None, value=who, confidence=CONF_FACT, text=clause,
                              category_override="people", entity_override=entity, label_override=area)
    role = ROLE_STATEMENT.search(clause)
    if role:
        who = next((g for g in (role.group(k) for k in ("who", "who2", "who_zh", "who_zh2")) if g), "").strip()
        text = next((g for g in (role.group(k) for k in ("role", "role2", "role_zh", "role_zh2")) if g), "")
        if not who or who.lower() in NOT_A_NAME or who.startswith(_PRONOUNS_ZH):
            return None
        for pattern, entity, en, zh in ROLES:
            if re.search(pattern, text, re.I):
                return Statement(kind="fact", slot=None, value=who, confidence=CONF_FACT, text=clause,
                                  category_override="people", entity_override=entity,
                                  label_override=zh if contains_cjk(clause) else en)
        area = re.match(r"^\s*(?P<area>.+?)\s*(?:负责人|owner|lead|主管)$", text.strip(" .。"), re.I)
        if area:  # "李雷是我们的后端负责人", "Sam is our backend lead": the owner of that area
            return Statement(kind="fact", slot=None, value=who, confidence=CONF_FACT, text=clause,
                             category_override="people", entity_override=f"{_owner_area(area.group('area'))}_owner",
                             label_override=area.group("area"))
    return None


_AREA_NOUNS = re.compile(
    r"\s+(?:side|stuff|work|code|codebase|part|parts|piece|things?|now|too|as well|btw|by the way|fyi|this|next|from|"
    r"starting|going forward|for now|as of|until|since)\b.*$|"
    r"\s*(?:这块|部分|相关|这边|方面|工作)$",
    re.I,
)


_PRONOUNS_ZH = ("我", "你", "他", "她", "它")
_OPENERS = re.compile(r"^(?:另外|还有|然后|对了|其次|同时|以及|而且)\s*")


def _owner_area(area: str) -> str:
    area = _OPENERS.sub("", area.strip()) or area  # "另外数据负责人是周婷": the area is 数据
    area = _AREA_NOUNS.sub("", area.strip()) or area  # "the frontend stuff" -> frontend
    phrases = find_phrases(area)
    if phrases and phrases[0].start == 0 and phrases[0].slot and phrases[0].slot.owner_area:
        rest = area[phrases[0].end :].strip()
        if not rest or contains_cjk(area):
            return phrases[0].slot.owner_area
    words = re.findall(r"[\w\u4e00-\u9fff-]+", area.replace("的", " "))[:3]
    return (key_entity(" ".join(words)) or "area") if words else "area"
