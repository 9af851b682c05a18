"""What a project is built from, said as a description of the project rather than as a choice: "sprocket is a Phoenix
app on Elixir 1.17", "It's written in OCaml and builds with dune", "ferry 是个记账 app，Flutter 3.22 写的". Such a
clause states its known values as facts even with no decision or fact cue.
"""

from __future__ import annotations

import re

from z0_memory.offline.extraction.vocabulary import find_values

# Words for the thing a project is: "a Django monolith", "a Turborepo monorepo", "a React Native app"
_KIND = r"(?:app|apps|application|service|monolith|monorepo|project|codebase|site|website|backend|frontend|api|cli|server|bot|game|library|sdk|tool)"
# "is a Phoenix app", "'s an Expo app", "is our internal Rails app": a copula, an article, at most three words, a kind
_IS_A = re.compile(rf"(?:\bis|'s|\bare)\s+(?:an?|our|the|one|just an?)\s+(?:[\w.+#/-]+\s+){{0,3}}?{_KIND}\b", re.I)
# "It's written in OCaml", "and builds with dune", "an app built with Expo": how it is written and built, said of a
# subject before it ("Builds on Netlify kept timing out" opens with the noun "builds")
_BUILT = re.compile(r"(?<=\S\s)(?:(?:written|implemented|coded)\s+in|builds?\s+with|built\s+(?:with|on|in))\b"
                    r"|^\s*(?:written|implemented|coded)\s+in\b", re.I)
# "ingest service in rust", "Web API in Python": a part of the project and the language it is in
_PART_IN = re.compile(rf"\b{_KIND}s?\s+(?:(?:is|are)\s+)?(?:(?:written|implemented|coded)\s+)?in\s+(?=\S)", re.I)
# "fernlog api is rails 7.1 on ruby 3.3", "existing app is Laravel 10": a part of the project is a known value
_PART_IS = re.compile(rf"\b{_KIND}s?\s+(?:is|are)\s+(?:still\s+|currently\s+)?(?=\S)", re.I)
# "Flutter 3.22 写的", "用 Go 写的": a name and 写的 (what it is written in)
_WRITTEN_ZH = re.compile(r"(?:写|开发|搭)的")


def describes_build(clause: str) -> bool:
    """The clause describes what the project is built from, and names a known value after the description's words
    (the value must follow, so "Postgres is a database we rejected" is no description of the project)."""
    values = find_values(clause)
    if not values:
        return False
    for m in (_IS_A.search(clause), _BUILT.search(clause)):
        if m is not None and any(v.start >= m.start() for v in values):
            return True
    part = _PART_IN.search(clause)  # the language right after "in" ("the service in production" names no language)
    if part is not None and any(v.start == part.end() and v.slot is not None and v.slot.entity == "language"
                                for v in values):
        return True
    part = _PART_IS.search(clause)  # the value right after the copula ("the app is slow on Postgres" is no description)
    if part is not None and any(v.start == part.end() and not clause[v.end:v.end + 1] == "-" for v in values):
        return True
    zh = _WRITTEN_ZH.search(clause)
    return zh is not None and any(v.end <= zh.start() for v in values)
