"""Memory keys and their segments (z0_memory.schemas): parsing, validation, normalisation, fuzzed."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from z0_memory.errors import InvalidKeyError, Z0Error
from z0_memory.schemas import (
    SEGMENT_MAX,
    MemoryKey,
    normalize_segment,
    validate_segment,
)



@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("proj:backend:framework", ("proj", "backend", "framework")),
        ("z0-memory:infra.db:缓存", ("z0-memory", "infra.db", "缓存")),
        ("a:b:c", ("a", "b", "c")),
        ("P1:Cat_2:v1.2-rc", ("P1", "Cat_2", "v1.2-rc")),
        ("projet:décision:base_de_données", ("projet", "décision", "base_de_données")),
        ("x" * SEGMENT_MAX + ":c:e", ("x" * SEGMENT_MAX, "c", "e")),
    ],
)
def test_parse_valid_keys(text: str, parts: tuple[str, str, str]) -> None:
    key = MemoryKey.parse(text)
    assert (key.project, key.category, key.entity) == parts
    assert str(key) == text
    assert MemoryKey.parse(str(key)) == key


@pytest.mark.parametrize("text", ["", "abc", "a:b", "a:b:c:d", "a:b:c:"])
def test_parse_wrong_part_count(text: str) -> None:
    with pytest.raises(InvalidKeyError, match="exactly three"):
        MemoryKey.parse(text)


@pytest.mark.parametrize(("text", "which"), [(":b:c", "project"), ("a::c", "category"), ("a:b:", "entity")])
def test_parse_empty_part_names_it(text: str, which: str) -> None:
    with pytest.raises(InvalidKeyError, match=f"{which} must not be empty"):
        MemoryKey.parse(text)


@pytest.mark.parametrize(
    "text",
    [
        "a/b:c:d",  # path separator
        "a:b\\c:d",
        "a:b:c,d",
        "a:b:c;d",
        "a:b:it's",  # quotes
        'a:b:"quoted"',
        "a:b:`x`",
        "my project:c:e",  # spaces
        "p:c: e",
        "p:c:e ",
        "p:c:a'; DROP TABLE x;--",  # SQL
        "p:c:x' OR '1'='1",
        "p\x00:c:e",  # control characters
        "p:c\n:e",
        "p:c:e\n",  # a trailing newline must not slip past the pattern's end anchor
        "p:c:e\r",
        "p:\tc:e",
        "p:c:e\x1b[31m",
        "_p:c:e",  # must start with a letter or digit
        "p:-c:e",
        "p:c:.e",
        "p:c:e%",
        "p:c:{e}",
        "p:c:e\u200b",  # zero-width space
    ],
)
def test_parse_rejects_unsafe_characters(text: str) -> None:
    with pytest.raises(InvalidKeyError, match="not allowed"):
        MemoryKey.parse(text)


def test_parse_rejects_overlong_segment() -> None:
    with pytest.raises(InvalidKeyError, match=rf"entity is {SEGMENT_MAX + 1} characters long; the limit is {SEGMENT_MAX}"):
        MemoryKey.parse("p:c:" + "x" * (SEGMENT_MAX + 1))


@pytest.mark.parametrize("value", [None, 123, b"a:b:c", ["a", "b", "c"]])
def test_parse_rejects_non_strings(value: object) -> None:
    with pytest.raises(InvalidKeyError, match="must be a string"):
        MemoryKey.parse(value)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [None, 1, 1.5, b"abc", ("a",)])
def test_validate_segment_rejects_non_strings(value: object) -> None:
    with pytest.raises(InvalidKeyError, match="project must be a string"):
        validate_segment(value, "project")


def test_validate_segment_returns_valid_input_and_errors_are_value_errors() -> None:
    assert validate_segment("缓存") == "缓存"
    assert validate_segment("a" * SEGMENT_MAX) == "a" * SEGMENT_MAX
    assert issubclass(InvalidKeyError, ValueError) and issubclass(InvalidKeyError, Z0Error)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Backend Framework", "backend_framework"),
        ("  Hello, World!  ", "hello_world"),
        ("缓存 策略", "缓存_策略"),
        ("Ｆｕｌｌ Ｗｉｄｔｈ", "full_width"),  # NFKC
        ("a:b:c", "a_b_c"),
        ("'; DROP TABLE x;--", "drop_table_x"),
        ("__private__", "private"),
        ("v1.2-rc", "v1.2-rc"),
    ],
)
def test_normalize_segment(text: str, expected: str) -> None:
    assert normalize_segment(text) == expected
    assert validate_segment(normalize_segment(text)) == expected


def test_normalize_segment_truncates_to_limit() -> None:
    out = normalize_segment("a" * (SEGMENT_MAX - 1) + " " + "b" * 50)
    assert out == "a" * (SEGMENT_MAX - 1)  # cut at the limit, then the dangling '_' is dropped
    assert len(normalize_segment("x" * 500)) == SEGMENT_MAX


@pytest.mark.parametrize("text", ["", "   ", "!!!", "___", "\x00\n", "-.-"])
def test_normalize_segment_without_letters_or_digits(text: str) -> None:
    with pytest.raises(InvalidKeyError, match="no letters or digits"):
        normalize_segment(text)


_key_chars = st.one_of(
    st.sampled_from(list(":ab1_-.缓 '\";\n\x00\t/")),
    st.characters(),
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(), st.text(alphabet=_key_chars, max_size=40)))
def test_fuzz_parse_roundtrips_or_raises_invalid_key(text: str) -> None:
    try:
        key = MemoryKey.parse(text)
    except InvalidKeyError:
        return
    assert str(key) == text
    for segment in (key.project, key.category, key.entity):
        assert validate_segment(segment) == segment
        assert not any(c.isspace() or not c.isprintable() or c in "'\":;/\\" for c in segment)


_seg_first = st.characters(categories=("L", "Nd"))
_seg_rest = st.text(alphabet=st.one_of(st.characters(categories=("L", "Nd")), st.sampled_from("_-.")), max_size=30)
_segments = st.builds(lambda a, b: a + b, _seg_first, _seg_rest)


@settings(max_examples=200, deadline=None)
@given(_segments, _segments, _segments)
def test_fuzz_well_formed_keys_always_parse(p: str, c: str, e: str) -> None:
    key = MemoryKey.parse(f"{p}:{c}:{e}")
    assert (key.project, key.category, key.entity) == (p, c, e)


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=300))
def test_fuzz_normalize_segment_output_always_validates(text: str) -> None:
    try:
        out = normalize_segment(text)
    except InvalidKeyError:
        return
    assert validate_segment(out) == out
    assert 1 <= len(out) <= SEGMENT_MAX
