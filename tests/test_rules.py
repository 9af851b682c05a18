"""Rules (layer 1): stores/rules.py ``load_rules`` — order, sources, limits, encodings, confinement, no write API."""

from __future__ import annotations

import inspect
import os
import string
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from z0_memory.config import DEFAULT_RULES_FILES
from z0_memory.errors import RulesError
from z0_memory.stores import rules as rules_module
from z0_memory.stores.rules import RULE_SUFFIXES, RulePart, Rules, load_rules


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


# --- order and sources ----------------------------------------------------------------------------------------


def test_default_entries_are_the_documented_ones() -> None:
    assert DEFAULT_RULES_FILES == ("AGENTS.md", "CLAUDE.md", ".cursorrules", "Z0.md", ".z0/rules")
    assert set(RULE_SUFFIXES) == {".md", ".mdc", ".txt"}


def test_default_order_then_rules_folder_sorted(project: Path) -> None:
    # Written in a scrambled order so creation order cannot explain the result.
    write(project, ".z0/rules/sub/c.mdc", "rule c")
    write(project, "Z0.md", "rule z0")
    write(project, ".z0/rules/b.md", "rule b")
    write(project, ".cursorrules", "rule cursor")
    write(project, "CLAUDE.md", "rule claude")
    write(project, ".z0/rules/a.txt", "rule a")
    write(project, "AGENTS.md", "rule agents")

    rules = load_rules(project)

    assert rules.sources == [
        "AGENTS.md",
        "CLAUDE.md",
        ".cursorrules",
        "Z0.md",
        ".z0/rules/a.txt",
        ".z0/rules/b.md",
        ".z0/rules/sub/c.mdc",
    ]
    assert [p.text for p in rules.parts] == [
        "rule agents",
        "rule claude",
        "rule cursor",
        "rule z0",
        "rule a",
        "rule b",
        "rule c",
    ]
    assert rules.root == str(project.resolve())
    assert all(isinstance(p, RulePart) for p in rules.parts)


def test_custom_order_is_followed(project: Path) -> None:
    write(project, "AGENTS.md", "agents")
    write(project, "CLAUDE.md", "claude")
    write(project, "docs/style.md", "style")
    write(project, "Z0.md", "z0 (not listed)")

    rules = load_rules(project, ["docs/style.md", "CLAUDE.md", "AGENTS.md"])

    assert rules.sources == ["docs/style.md", "CLAUDE.md", "AGENTS.md"]
    assert [p.text for p in rules.parts] == ["style", "claude", "agents"]


def test_folder_entries_pick_only_rule_suffixes(project: Path) -> None:
    write(project, ".z0/rules/keep.md", "md")
    write(project, ".z0/rules/keep.mdc", "mdc")
    write(project, ".z0/rules/keep.txt", "txt")
    write(project, ".z0/rules/UPPER.MD", "upper case suffix")
    write(project, ".z0/rules/skip.json", '{"no": 1}')
    write(project, ".z0/rules/skip.py", "print('no')")
    write(project, ".z0/rules/skip.md.bak", "no")
    write(project, ".z0/rules/README", "no suffix")
    (project / ".z0/rules/dir.md").mkdir()  # a folder named like a rule file is not a file

    rules = load_rules(project)

    assert sorted(rules.sources) == sorted(
        [".z0/rules/keep.md", ".z0/rules/keep.mdc", ".z0/rules/keep.txt", ".z0/rules/UPPER.MD"]
    )


def test_file_listed_twice_loads_once(project: Path) -> None:
    write(project, "docs/a.md", "a")
    rules = load_rules(project, ["docs/a.md", "docs", "./docs/a.md"])
    assert rules.sources == ["docs/a.md"]


def test_missing_files_are_skipped(project: Path) -> None:
    write(project, "CLAUDE.md", "only claude")
    rules = load_rules(project)
    assert rules.sources == ["CLAUDE.md"]
    assert load_rules(project, ["nope.md", "no/such/folder"]).parts == ()


def test_empty_project_gives_empty_rules(project: Path) -> None:
    rules = load_rules(project)
    assert rules.parts == () and rules.sources == [] and rules.text == "" and rules.size == 0


def test_empty_and_blank_files_are_skipped(project: Path) -> None:
    write(project, "AGENTS.md", "")
    write(project, "CLAUDE.md", "  \n\t\n")
    write(project, "Z0.md", "real rule")
    assert load_rules(project).sources == ["Z0.md"]


def test_text_keeps_each_source_header(project: Path) -> None:
    write(project, "AGENTS.md", "Use tabs.\n")
    write(project, ".z0/rules/db.md", "\nNever drop tables.\n\n")

    rules = load_rules(project)

    assert rules.text == "## Rules from AGENTS.md\nUse tabs.\n\n## Rules from .z0/rules/db.md\nNever drop tables."
    assert rules.size == len("Use tabs.\n".encode()) + len("\nNever drop tables.\n\n".encode())


def test_unicode_rules_load_and_size_counts_bytes(project: Path) -> None:
    write(project, "AGENTS.md", "缓存用 Redis")
    rules = load_rules(project)
    assert rules.parts[0].text == "缓存用 Redis"
    assert rules.size == len("缓存用 Redis".encode())


def test_root_may_be_a_string(project: Path) -> None:
    write(project, "AGENTS.md", "x")
    assert load_rules(str(project)).sources == ["AGENTS.md"]


# --- errors ---------------------------------------------------------------------------------------------------


def test_missing_root_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-project"
    with pytest.raises(RulesError, match="rules root .*no-such-project.* is not a folder") as exc:
        load_rules(missing)
    assert "Z0_RULES_ROOT" in str(exc.value)


def test_root_that_is_a_file_is_an_error(tmp_path: Path) -> None:
    f = write(tmp_path, "file.md", "x")
    with pytest.raises(RulesError, match="not a folder"):
        load_rules(f)


def test_single_file_over_limit_names_the_file(project: Path) -> None:
    write(project, "AGENTS.md", "ok")
    write(project, "CLAUDE.md", "x" * 101)
    with pytest.raises(RulesError, match=r"CLAUDE\.md is 101 bytes; the limit is 100"):
        load_rules(project, max_bytes=100)


def test_file_exactly_at_limit_loads(project: Path) -> None:
    write(project, "AGENTS.md", "x" * 100)
    assert load_rules(project, max_bytes=100).size == 100


def test_total_over_limit_names_the_file_that_crossed_it(project: Path) -> None:
    write(project, "AGENTS.md", "a" * 60)
    write(project, "CLAUDE.md", "b" * 40)  # total 100: still fine
    write(project, ".z0/rules/extra.md", "c")  # total 101: too much
    with pytest.raises(RulesError, match=r"rules exceed 100 bytes in total at \.z0/rules/extra\.md"):
        load_rules(project, max_bytes=100)
    # Without the last file the same limit is fine.
    assert load_rules(project, ["AGENTS.md", "CLAUDE.md"], max_bytes=100).size == 100


def test_binary_file_is_rejected(project: Path) -> None:
    write(project, "AGENTS.md", b"rules\x00\x01\x02")
    with pytest.raises(RulesError, match=r"AGENTS\.md is binary"):
        load_rules(project)


def test_non_utf8_file_is_rejected(project: Path) -> None:
    write(project, ".z0/rules/latin1.md", "café".encode("latin-1"))
    with pytest.raises(RulesError, match=r"\.z0/rules/latin1\.md is not UTF-8"):
        load_rules(project)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode, so chmod 000 cannot stop it")
def test_unreadable_file_is_rejected(project: Path) -> None:
    f = write(project, "AGENTS.md", "secret")
    f.chmod(0)
    try:
        with pytest.raises(RulesError, match=r"AGENTS\.md cannot be read.*permissions"):
            load_rules(project)
    finally:
        f.chmod(0o644)


def test_fifo_is_rejected_not_read(project: Path) -> None:
    # Reading a FIFO with no writer would block the session start forever.
    os.mkfifo(project / "AGENTS.md")
    with pytest.raises(RulesError, match="not a regular file"):
        load_rules(project)


def test_fifo_inside_rules_folder_is_ignored(project: Path) -> None:
    write(project, ".z0/rules/a.md", "a")
    os.mkfifo(project / ".z0/rules/pipe.md")
    assert load_rules(project).sources == [".z0/rules/a.md"]


def test_name_too_long_is_a_rules_error(project: Path) -> None:
    with pytest.raises(RulesError, match="cannot be read"):
        load_rules(project, ["a" * 300 + ".md"])


@pytest.mark.parametrize("entry", ["/etc/passwd", "/nonexistent/rules.md"])
def test_absolute_entry_is_rejected(project: Path, entry: str) -> None:
    with pytest.raises(RulesError, match="must be a relative path"):
        load_rules(project, [entry])


@pytest.mark.parametrize("entry", ["", "   "])
def test_blank_entry_is_rejected(project: Path, entry: str) -> None:
    with pytest.raises(RulesError, match="must be a relative path"):
        load_rules(project, [entry])


@pytest.mark.parametrize("entry", ["../outside.md", "sub/../../outside.md", "..", "../outside-rules"])
def test_entry_escaping_root_via_dotdot_is_rejected(project: Path, entry: str) -> None:
    write(project.parent, "outside.md", "stolen")
    write(project.parent, "outside-rules/x.md", "stolen")
    (project / "sub").mkdir()
    with pytest.raises(RulesError, match="outside the rules root"):
        load_rules(project, [entry])


def test_dotdot_that_stays_inside_is_allowed(project: Path) -> None:
    write(project, "AGENTS.md", "inside")
    (project / "sub").mkdir()
    assert load_rules(project, ["sub/../AGENTS.md"]).sources == ["AGENTS.md"]


def test_symlinked_file_pointing_outside_is_rejected(project: Path) -> None:
    target = write(project.parent, "secret.md", "stolen")
    (project / "AGENTS.md").symlink_to(target)
    with pytest.raises(RulesError, match="outside the rules root"):
        load_rules(project)


def test_symlink_inside_rules_folder_pointing_outside_is_rejected(project: Path) -> None:
    target = write(project.parent, "secret.md", "stolen")
    write(project, ".z0/rules/ok.md", "ok")
    (project / ".z0/rules/evil.md").symlink_to(target)
    with pytest.raises(RulesError, match="outside the rules root"):
        load_rules(project)


def test_symlinked_folder_pointing_outside_is_rejected(project: Path) -> None:
    write(project.parent, "elsewhere/x.md", "stolen")
    (project / ".z0").mkdir()
    (project / ".z0/rules").symlink_to(project.parent / "elsewhere")
    with pytest.raises(RulesError, match="outside the rules root"):
        load_rules(project)


def test_symlink_inside_root_is_allowed_and_keeps_target_source(project: Path) -> None:
    write(project, "docs/real.md", "real")
    (project / "AGENTS.md").symlink_to(project / "docs/real.md")
    assert load_rules(project, ["AGENTS.md"]).sources == ["docs/real.md"]


def test_rules_error_is_a_value_error() -> None:
    # Callers catching ValueError (e.g. a CLI) see rules problems too.
    assert issubclass(RulesError, ValueError)


# --- no write API ---------------------------------------------------------------------------------------------

WRITE_PREFIXES = ("write", "save", "put", "add", "update", "delete", "set", "remove", "append")


def test_module_exposes_no_write_api() -> None:
    names = [n for n, obj in vars(rules_module).items() if callable(obj) and not inspect.isclass(obj)]
    assert "load_rules" in names  # the listing really sees the module's functions
    assert not [n for n in names if n.lstrip("_").lower().startswith(WRITE_PREFIXES)]
    for cls in (Rules, RulePart):
        members = [n for n in dir(cls) if not n.startswith("__")]
        assert not [n for n in members if n.lstrip("_").lower().startswith(WRITE_PREFIXES)], cls


def test_rules_are_immutable(project: Path) -> None:
    write(project, "AGENTS.md", "x")
    rules = load_rules(project)
    with pytest.raises(AttributeError):
        rules.parts = ()  # type: ignore[misc]
    with pytest.raises(AttributeError):
        rules.parts[0].text = "changed"  # type: ignore[misc]
    assert isinstance(rules.parts, tuple)


# --- fuzz -----------------------------------------------------------------------------------------------------

_NAME_CHARS = string.ascii_letters + string.digits + "._- 缓存"
_names = st.text(alphabet=_NAME_CHARS, min_size=1, max_size=20).filter(lambda n: n not in {".", ".."})
_rel_paths = st.lists(_names, min_size=1, max_size=3).map("/".join)
_contents = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")),
)
_entries = st.one_of(
    _rel_paths,
    st.sampled_from(list(DEFAULT_RULES_FILES) + ["..", "../x.md", "/etc/hostname", "", ".", "a/../../b"]),
    st.text(max_size=300),
    st.text(alphabet="ab", min_size=256, max_size=300),  # past the file system's NAME_MAX
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    files=st.dictionaries(_rel_paths, _contents, max_size=6),
    entries=st.one_of(st.none(), st.lists(_entries, max_size=5)),
    max_bytes=st.integers(min_value=0, max_value=800),
)
def test_fuzz_load_rules_returns_rules_or_raises_rules_error(
    files: dict[str, bytes], entries: list[str] | None, max_bytes: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        for rel, data in files.items():
            try:
                write(root, rel, data)
                write(root, ".z0/rules/" + rel + ".md", data)
            except OSError:  # a name clashes with a folder made for another name: not what is tested here
                continue
        try:
            if entries is None:
                result = load_rules(root, max_bytes=max_bytes)
            else:
                result = load_rules(root, entries, max_bytes=max_bytes)
        except RulesError as exc:
            assert str(exc)
            return
        assert isinstance(result, Rules)
        assert result.size <= max_bytes
        for part in result.parts:
            assert part.text.strip()
            assert not Path(part.source).is_absolute() and ".." not in Path(part.source).parts
            assert (root / part.source).resolve().is_relative_to(root.resolve())
