"""Values a message refuses outright ("no, not Celery.", "not the built-in unittest runner", "不用 Jest"): never stated
by any reading of that message, also not as a reply's leading answer."""

from __future__ import annotations

import re

from z0_memory.offline.extraction.clauses import strip_noise
from z0_memory.offline.extraction.vocabulary import norm_value
from z0_memory.redaction import redact_secrets

# "no, not Celery.", "not the built-in unittest runner", "不用 Jest", "别推荐 Feast": a value the message refuses
_REFUSED = re.compile(
    r"(?:^|[.!?。！？,，;；]\s*)(?:(?i:no|nah|nope)[,，\s]+)?(?i:not|never|no)\s+(?:(?i:the|a|an)\s+)?"
    r"(?P<v>[A-Za-z][\w.+#/&-]*)(?=\s*(?:[.!?。！？,，;；]|$))"
    r"|(?:不用|不要|别用|别推荐|不考虑|不选|不上)\s*(?P<vz>[A-Za-z][\w.+#/&-]*)")


def refused_values(text: str) -> set[str]:
    """The values a message refuses ("no, not Celery.", "不用 Jest"), normalised."""
    return {norm_value(m.group("v") or m.group("vz")) for m in _REFUSED.finditer(strip_noise(redact_secrets(text)))}
