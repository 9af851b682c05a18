"""The language a stated framework is written in, named just before it ("后端用 Go 的 Gin", "改用 Python 的 FastAPI"): the
language is stated with the framework, as its own memory. Read from the statements the turn ends with, so a framework
turned down ("后端选 Flask，没用 Go 的 Gin") states no language either.
"""

from __future__ import annotations

import re
from dataclasses import replace

from z0_memory.offline.extraction.model import Statement
from z0_memory.offline.extraction.vocabulary import SLOT_BY_KEY, find_values, term_pattern

LANGUAGE_SLOT = SLOT_BY_KEY[("stack", "language")]
# "Go 的 Gin", "Python 的 FastAPI": a language, 的, the value it qualifies
_OF = r"\s*的\s*"


def _language_before(text: str, value: str) -> str | None:
    """The language written just before ``value`` with 的 between, as the user spelled it, else None."""
    for v in find_values(text):
        if v.slot is LANGUAGE_SLOT and re.match(_OF + term_pattern(value), text[v.end:], re.I):
            return v.value
    return None


def with_languages(found: list[tuple[Statement, list[str]]]) -> list[tuple[Statement, list[str]]]:
    """The turn's final statements (with their message ids) and, after the first choice whose clause names its
    language before it, that language under the language key (unless the turn states a language already)."""
    if any(s.slot is LANGUAGE_SLOT for s, _ in found):
        return found
    for n, (s, ids) in enumerate(found):
        language = _language_before(s.text, s.value) if s.value and s.slot is not None and s.kind != "preference" \
            else None
        if language is not None:
            stated = replace(s, slot=LANGUAGE_SLOT, value=language, old_value=None, rejected=None, rationale=None,
                             category_override=None, entity_override=None, label_override=None)
            return [*found[: n + 1], (stated, ids), *found[n + 1:]]
    return found
