"""A statement's key and its stored content: the user's own clause, said where it applies; a summary only for what
the assistant proposed and the user accepted.
"""

from __future__ import annotations

from z0_memory.offline.extraction.model import Statement
from z0_memory.offline.extraction.vocabulary import norm_value
from z0_memory.schemas import normalize_segment
from z0_memory.text import contains_cjk


def key_for(s: Statement, project: str) -> str | None:
    try:
        if s.category_override and s.entity_override:
            return f"{project}:{normalize_segment(s.category_override)}:{normalize_segment(s.entity_override)}"
        if s.slot is None:
            return None
        if s.kind == "preference":
            entity = s.slot.entity if s.person in (None, "team") else f"{s.person}_{s.slot.entity}"
            return f"{project}:preference:{normalize_segment(entity)}"
        return f"{project}:{s.slot.category}:{s.slot.entity}"
    except ValueError:
        return None



def _label(s: Statement, zh: bool) -> str:
    if s.slot is not None:
        return s.slot.zh if zh else s.slot.en
    return (s.entity_override or "").replace("_", " ")


def _who(s: Statement, zh: bool) -> str:
    if s.person is None:
        return "用户" if zh else "The user"
    if s.person == "team":
        return "团队" if zh else "The team"
    return s.person


def content_for(s: Statement, project: str) -> str:
    zh = contains_cjk(s.text)
    if s.value is None:
        return _keyless_content(s, project, zh)
    if s.said_by == "user":
        return _user_content(s, project, zh)
    if s.category_override == "people":
        return _people_content(s, project, zh)
    if s.kind == "preference":
        return (f"{_who(s, zh)}偏好{_label(s, zh)}用 {s.value}。" if zh
                else f"{_who(s, zh)} prefers {s.value} as the {_label(s, zh)}.")
    return _decision_content(s, project, zh)


def _user_content(s: Statement, project: str, zh: bool) -> str:
    """The user's own clause, said where it applies ("shop, backend framework: We'll go with Fastify"), with its
    reason when the reason came from elsewhere in the message."""
    label = s.label_override or _label(s, zh)
    text = s.text.strip().rstrip("。.!！;；,，")
    why = s.rationale if s.rationale and norm_value(s.rationale) not in norm_value(text) else None
    if zh:
        tentative = "（未定）" if s.hedged else ""
        return f"{project} 项目，{label}：{text}{tentative}{'（原因：' + why + '）' if why else ''}。"
    tentative = " (tentative)" if s.hedged else ""
    return f"{project} project, {label}: {text}{tentative}{' (because ' + why + ')' if why else ''}."


def _decision_content(s: Statement, project: str, zh: bool) -> str:
    label = _label(s, zh)
    if zh:
        head = f"{project} 项目可能用 {s.value} 作为{label}（未定）" if s.hedged else f"{project} 项目的{label}是 {s.value}"
        tail = f"（替换 {s.old_value}）" if s.old_value else (f"（不用 {s.rejected}）" if s.rejected else "")
        why = f"，因为{s.rationale}" if s.rationale else ""
        return f"{head}{tail}{why}。"
    head = (f"The {project} project might use {s.value} as its {label} (tentative)" if s.hedged
            else f"The {project} project uses {s.value} as its {label}")
    tail = f", replacing {s.old_value}" if s.old_value else (f", not {s.rejected}" if s.rejected else "")
    why = f", because {s.rationale}" if s.rationale else ""
    return f"{head}{tail}{why}."


def _people_content(s: Statement, project: str, zh: bool) -> str:
    role = s.label_override or _label(s, zh).removesuffix(" owner")
    owner = (s.entity_override or "").endswith("_owner")
    if zh:
        return f"{project} 项目中{s.value}负责{role}。" if owner else f"{project} 项目中{s.value}是{role}。"
    if owner:
        return f"In the {project} project, {s.value} owns the {role}."
    return f"In the {project} project, {s.value} is the {role}."


def _keyless_content(s: Statement, project: str, zh: bool) -> str:
    """No slot to template: the statement itself, said where it applies (and by whom, for preferences)."""
    text = s.text.strip().rstrip("。.!！")
    if zh:
        speaker = "用户说" if s.kind == "preference" and s.person is None else ""
        return f"{project} 项目：{speaker}{text}。"
    if s.kind == "preference" and s.person is None:
        return f"In the {project} project, the user said: {text}."
    return f"In the {project} project: {text}."
