"""Who a statement is about: the speaker, the team or a named person. A preference's holder ("Sam prefers ...",
"我自己写代码喜欢 ...", "ORM 倾向 TypeORM" is a topic, not a person), and slots that belong to one person: the speaker's
own editor is their liking, not the project's tool ("I'm on VS Code", "我写代码一直用 Cursor")."""

from __future__ import annotations

import re

from z0_memory.offline.extraction.binding import pairs_in
from z0_memory.offline.extraction.cues import NOT_A_NAME
from z0_memory.offline.extraction.model import CONF_PREFERENCE, Statement
from z0_memory.offline.extraction.vocabulary import find_phrases


# the speaker as the subject earlier in the same clause ("我自己写代码 ..."), not "我们"
_SPEAKER_BEFORE = re.compile(r"我(?!们)(?:自己|个人)?[^，,。；;！!？?]{0,8}$")
_TOPIC_END = re.compile(r"(?:这|那)?(?:块|边|里|方面|部分)$")


def preference_holder(match: re.Match[str]) -> str | None:
    """Whose liking a preference cue's match states: None for the speaker, "team" for all of us, a person's name,
    or "__invalid__" when its subject is a topic or a word that names nobody."""
    who = (match.group("who") or match.group("who_zh") or "").strip()
    if who in ("I", "i", "我", "个人") or (who.startswith("我") and not who.startswith("我们")):  # 个人倾向: personally
        return None
    if match.group("who_zh") and _SPEAKER_BEFORE.search(match.string[: match.start("who_zh")]):
        return None  # "我自己写代码喜欢用 tabs", "我自己写 Python 习惯用 tabs": the speaker, and what they do
    if who.endswith("我"):
        return None  # "部署我倾向于 ...": the topic, then the speaker
    if who.lower() in ("we", "我们", "everyone", "everybody", "the team", "大家", "团队") or who.endswith("我们"):
        return "team"
    if who and (find_phrases(who) or _TOPIC_END.search(who)):
        return "__invalid__"  # "ORM 倾向 TypeORM", "日志库倾向于 zap", "这块倾向 Consul": a topic, not a person
    if who in ("他", "她"):
        return "__invalid__"  # a pronoun the clause alone cannot resolve
    if who.lower() in NOT_A_NAME or re.search(r"[的了是在就都也还用说]", who):
        return "__invalid__"
    return who


def on_own_tool(clause: str) -> bool:
    """"I'm on Zed these days": the speaker's own tool (a personal slot's value), said as where they are."""
    return bool(_SPEAKER_ON.search(clause)) and any(p.slot.entity in _PERSONAL_SLOTS for p in pairs_in(clause))


_SPEAKER_ON = re.compile(r"\bI'?m\s+(?:now\s+|still\s+|currently\s+|mostly\s+)?on\b", re.I)
# Slots that belong to one person, not to the project: said of the speaker, they are the speaker's preference
_PERSONAL_SLOTS = frozenset({"editor"})
_SPEAKER_SUBJECT = re.compile(r"\b(?:I|I'm|Im|I've|I use|my own|my)\b|(?<![A-Za-z])i(?:'m)?\s|我(?!们)")
_TEAM_SUBJECT = re.compile(r"\b(?:we|we're|our|us|the team|everyone|everybody)\b|我们|大家|团队|组里", re.I)


def speakers_own(found: list[Statement], clause: str) -> None:
    """A personal slot's value the speaker says they use is the speaker's preference."""
    if _SPEAKER_SUBJECT.search(clause) and not _TEAM_SUBJECT.search(clause):
        for st in found:  # "I'm on VS Code", "我写代码一直用 Cursor": the speaker's own editor is their liking
            if st.slot is not None and st.slot.entity in _PERSONAL_SLOTS:
                st.kind, st.confidence, st.confirms = "preference", CONF_PREFERENCE, False
