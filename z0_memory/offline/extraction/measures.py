"""A maximum line length given as a number, read from the setting's name or the number's unit ("max_width = 110",
"printWidth 100", "line length 我们设成 120", "行宽就 88", "100 col limit", "lines max 120 chars", "每行不超过 100 个字符"),
filed under ``convention:line_length``; the slot phrase alone ("line length is 100") is read by ``binding``.
"""

from __future__ import annotations

import re

from z0_memory.offline.extraction.vocabulary import SLOT_BY_KEY, Found

LINE_LENGTH = SLOT_BY_KEY[("convention", "line_length")]

# The setting by its name in the common formatters' configs, or said in words; the number follows within a few
# words that are no digits and no clause break ("max_width = 110", "line length 我们设成 120", "行宽就 88")
_SETTING_THEN_NUMBER = re.compile(
    r"(?:\b(?:max[_-]?width|print[_-]?width|max[_-]line[_-]length|line[_-]length|line[ -]length|line[ -]width|"
    r"col(?:umn)?[ -]limit)\b|行宽|行长度|每行)"
    r"(?P<between>[^\d,，.。;；!！?？()（）\n]{0,12}?)(?P<n>\d{2,3})(?![\d.%])",
    re.I,
)
# The number with a unit of width: columns said as a limit ("100 col limit", "80 columns max", "120 cols wide"), or
# characters said of lines ("lines max 120 chars", "每行不超过 100 个字符")
_NUMBER_THEN_UNIT = re.compile(
    r"(?<![\d.])(?P<n>\d{2,3})\s*-?\s*(?:cols?\s*(?:limit|max(?:imum)?|wide|width)|columns?\s*(?:limit|wide))\b"
    r"|\blines?\b[^\d,，.。;；\n]{0,16}?(?<![\d.])(?P<n2>\d{2,3})\s*(?:chars?|characters?|cols?|columns?)\b"
    r"|每行[^\d,，。;；\n]{0,8}?(?P<n3>\d{2,3})\s*(?:个)?(?:字符|字|列)",
    re.I,
)
# "行宽不是 120": the number turned down is not the setting
_DENIED = re.compile(r"\bnot\b|\bisn'?t\b|不是|不再|别|不要", re.I)


def line_lengths(text: str) -> list[Found]:
    """The line-length limits the text gives, once per number, in text order."""
    out: list[Found] = []
    for m in _SETTING_THEN_NUMBER.finditer(text):
        if not _DENIED.search(m.group("between")):
            out.append(Found(m.start("n"), m.end("n"), m.group("n"), LINE_LENGTH))
    for m in _NUMBER_THEN_UNIT.finditer(text):
        group = next(g for g in ("n", "n2", "n3") if m.group(g))
        if not any(f.start == m.start(group) for f in out):
            out.append(Found(m.start(group), m.end(group), m.group(group), LINE_LENGTH))
    return sorted(out, key=lambda f: f.start)
