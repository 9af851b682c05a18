"""Round 11 (issue 16): the language a stack names in passing ("后端用 Go 的 Gin", "ingest service in rust", "Kotlin
with Spring Boot was chosen"), and what names a language without choosing it."""

from __future__ import annotations

from extraction_support import P, by_key, run

LANGUAGE = f"{P}:stack:language"


# --- the language a stack names in passing ----------------------------------------------------------------------


def test_a_language_before_its_framework_is_stated_with_it():
    keys = by_key(run("后端用 Go 的 Gin。"))
    assert keys[LANGUAGE].value == "Go" and keys[f"{P}:stack:backend_framework"].value == "Gin"


def test_a_part_of_the_project_in_a_language_states_the_language():
    assert by_key(run("we fan out into kafka. ingest service in rust"))[LANGUAGE].value == "rust"
    assert by_key(run("Matchmaking, inventory, leaderboards. Written in Go."))[LANGUAGE].value == "Go"
    assert LANGUAGE not in by_key(run("the service in production runs on Fly."))


def test_a_language_everywhere_or_as_the_new_stack_is_stated():
    assert by_key(run("TypeScript end to end"))[LANGUAGE].value == "TypeScript"
    assert by_key(run("new stack: Go services, Kafka between them."))[LANGUAGE].value == "Go"


def test_a_passive_choice_is_a_decision():
    keys = by_key(run("Kotlin with Spring Boot was chosen, this is already fixed by the architecture board."))
    assert keys[LANGUAGE].value == "Kotlin" and not keys[LANGUAGE].hedged
    assert keys[f"{P}:stack:backend_framework"].value == "Spring Boot"


def test_a_language_nobody_writes_or_only_judged_is_not_stored():
    assert LANGUAGE not in by_key(run("Going with React Native rather than Flutter — nobody on the team writes Dart."))
    assert LANGUAGE not in by_key(run("Rust seems cool but hard lol"))
    assert run("之前考虑过 Go 的 Gin，但没人会写，放弃了。") == []
    assert by_key(run("we looked at Rust but went with Go."))[LANGUAGE].value == "Go"


def test_a_part_of_the_project_that_is_a_known_value_states_it():
    keys = by_key(run("fernlog api is rails 7.1 on ruby 3.3."))
    assert keys[LANGUAGE].value == "ruby 3.3" and keys[f"{P}:stack:backend_framework"].value == "rails 7.1"
    assert run("the app is slow on Postgres") == []


def test_ts_is_typescript():
    assert by_key(run("managed for now. TS obviously, strict mode"))[LANGUAGE].value == "TS"
    assert run("the TS types are generated from the schema") == []
