"""A comparison that picks a side is a choice: "Fastify > Koa for us", "Hono over Express for this one",
"FastAPI 比 Django 更合适" choose the first name and turn the second down.

The sentence is rewritten to the shape the statement rules already read ("Fastify, not Koa, for us",
"FastAPI，不用 Django"), so the choice, its rejected rival and its reason are found as for any other choice. Only a
comparison between two names the vocabulary or the open binding knows is read; "speed > features" is left alone.
"""

from __future__ import annotations

import re

from z0_memory.offline.extraction.binding import open_values
from z0_memory.offline.extraction.vocabulary import find_values
from z0_memory.text import contains_cjk

_NAME = r"[A-Za-z0-9][\w.+#/-]*(?:\s+[A-Za-z0-9][\w.+#/-]*){0,2}?"
# "A > B", "A >> B", "A beats B", "A over B" (the last only when A opens the clause: "I prefer A over B" is a liking)
_BETTER_EN = re.compile(
    rf"(?:^|(?<=[:：,，]\s)|(?<=[:：,，]))(?P<a>{_NAME})\s*(?:>{{1,2}}|\bbeats\b|\bover\b)\s*(?P<b>{_NAME})"
    rf"(?=\s*(?:$|[,，.。;；!！)]|\s(?:for|here|in|on|at|because|since|as|imo|tbh|this|anyway)\b))", re.I)
# "A 比 B 好 / 更好 / 强 / 更合适 / 更适合", "A 优于 B", "A 胜过 B"
_BETTER_ZH = re.compile(
    rf"(?P<a>{_NAME}|[\u4e00-\u9fff]{{2,6}})\s*(?:比\s*(?P<b>{_NAME}|[\u4e00-\u9fff]{{2,6}}?)\s*(?:更|还)?"
    rf"(?:好用|好|强|合适|适合|靠谱|稳)|(?:优于|胜过|好过)\s*(?P<b2>{_NAME}|[\u4e00-\u9fff]{{2,6}}))")


def as_choice(sentence: str) -> str:
    """The sentence with a comparison between two names said as a choice of the first."""
    for pattern in (_BETTER_EN, _BETTER_ZH):
        m = pattern.search(sentence)
        if m is None:
            continue
        a, b = m.group("a").strip(), (m.groupdict().get("b") or m.groupdict().get("b2") or "").strip()
        if not (_is_name(a) and _is_name(b)) or a.lower() == b.lower():
            continue
        said = f"{a}，不用 {b}，" if contains_cjk(sentence) else f"{a}, not {b},"
        return (sentence[: m.start()] + said + sentence[m.end():]).rstrip(" ,，")
    return sentence


def _is_name(text: str) -> bool:
    found = find_values(text) or open_values(text)
    return bool(found) and any(f.value.lower() == text.lower() or text.lower().startswith(f.value.lower())
                               for f in found)
