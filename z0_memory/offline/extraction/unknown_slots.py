"""Keys for slots the vocabulary does not know, named from the user's own slot phrase nearest the value: "Sync
engine: Yjs" -> ``stack:sync_engine``, "Gradle for builds" -> ``stack:builds``, "feature store 用的是 Glowworm" ->
``stack:feature_store``. The category is guessed from the phrase's words (stack when nothing says otherwise).
"""

from __future__ import annotations

import re
from functools import lru_cache

from z0_memory.errors import InvalidKeyError
from z0_memory.offline.extraction.key_words import key_entity
from z0_memory.schemas import normalize_segment
from z0_memory.text import ENGLISH_STOPWORDS

_CATEGORY_WORDS = (
    ("database", re.compile(r"\b(?:store|storage|db|database|cache|index|warehouse|persistence)\b|存储|数据库|缓存|(?<![A-Za-z ]|件)库", re.I)),
    ("tooling", re.compile(r"\b(?:tool|tooling|test|tests|testing|lint|linting|ci|build|builds|tracking|monitoring|"
                           r"logging|logs|tracker|docs|editor)\b|工具|测试|构建|监控|日志|追踪|管理", re.I)),
    ("process", re.compile(r"\b(?:deploy|deploys|deployment|hosting|release|releases|process|workflow|review)\b|"
                           r"部署|发布|流程|托管", re.I)),
    ("convention", re.compile(r"\b(?:convention|format|style|naming|rule|rules)\b|规范|格式|风格|命名", re.I)),
)
_FILLER = re.compile(r"^(?:(?:so|and|also|oh|ok|okay|the|our|for|as|then|plus|btw|all|every|另外|还有|然后|我们的?|那)\s*)+", re.I)
# adverbs between a slot phrase and its verb, hedges among them ("沙箱考虑用 Judge0", "实验平台也许用 GrowthBook"): they
# qualify the choice and are no part of the slot's name
_TRAILING = re.compile(r"\s*(?:先|就|也|还|都|在|目前|现在|暂时|统一|主要|直接|一律|我们|一直|也许|可能|考虑|打算|准备|倾向于?|"
                       r"应该|大概|或许|计划)+$")
_NAME = r"[A-Za-z0-9][\w.+#/&-]*(?:[ \t]+[A-Z0-9][\w.+#/&-]*){0,2}"


@lru_cache(maxsize=1024)
def _phrase_patterns(value: str) -> list[re.Pattern[str]]:
    v = re.escape(value)
    return [
        # "Sync engine: Yjs", "Error tracking — we're on Honeybadger", "e2e → Playwright"
        re.compile(rf"(?P<s>[A-Za-z][\w /-]{{1,30}}?|[\u4e00-\u9fff][\w\u4e00-\u9fff ]{{1,10}}?)\s*(?:[:：=]|\s[—–-]+\s|->|→)"
                   rf"\s*(?:(?:we(?:'re| are) (?:on|using)|we use|it'?s|just|use|用)\s+)?{v}"),
        # "Gradle for builds", "Zorbly as the job runner", "Glowworm 做特征存储"
        re.compile(rf"{v}\s+(?:(?:for|as)\s+(?:(?:the|our|all|a|an)\s+)?(?P<s>[a-z][\w-]*(?:\s+[a-z][\w-]*){{0,2}})"
                   rf"|(?:做|作为|当)\s*(?P<sz>[\u4e00-\u9fffA-Za-z][\w\u4e00-\u9fff]{{1,8}}))"),
        # "feature store 用的是我们自研的 Glowworm", "the sync engine is Yjs"
        re.compile(rf"(?:^|[\s,，。])(?:(?:the|our)\s+)?(?P<s>[A-Za-z][\w -]{{1,25}}?|[\u4e00-\u9fff]{{2,8}}?)\s*"
                   rf"(?:用的是|选的是|用|选了?|采用|走|上|is|will be|runs on|uses|goes through|go(?:es)? out (?:via|through)|"
                   rf"happens? (?:via|through)|(?:is|are) (?:handled|done|managed) (?:by|with|in)|lives? (?:in|on)|"
                   rf"(?:is|are) (?:stored|kept) (?:in|on))\s*"
                   rf"(?:(?:我们)?自研的|自己的|the\s+|our\s+)?\s*{v}"),
    ]


def category_of(phrase: str, entity: str = "") -> str:
    """The key category a slot phrase's words suggest (its English entity's too), stack when none does."""
    text = f"{phrase} {entity.replace('_', ' ')}"
    return next((c for c, p in _CATEGORY_WORDS if p.search(text)), "stack")


def own_name_slot(value: str) -> tuple[str, str] | None:
    """The last resort for a value no phrase files: a key of its own name ("Dialogue Manager it is" ->
    ``stack:dialogue_manager``), so a later turn naming it again confirms or repeats it."""
    try:
        return "stack", normalize_segment(value)
    except InvalidKeyError:
        return None


def unknown_slot(text: str, value: str) -> tuple[str, str] | None:
    """(category, entity) named by the phrase attached to ``value`` in ``text``, or None."""
    for pattern in _phrase_patterns(value):
        m = pattern.search(text)
        if not m:
            continue
        phrase = (m.groupdict().get("s") or m.groupdict().get("sz") or "").strip()
        phrase = _TRAILING.sub("", _FILLER.sub("", phrase)).strip(" -")
        words = phrase.split()
        if not phrase or len(words) > 3 or (words and words[-1].lower() in ENGLISH_STOPWORDS) \
                or phrase.lower() in _NOT_SLOTS or _NOT_A_THING_ZH.search(phrase):
            continue
        entity = key_entity(phrase)
        if entity is None:
            continue
        return category_of(phrase, entity), entity
    return None


# Chinese words that make a phrase a remark about someone rather than the name of a thing ("刘洋说他更喜欢",
# "别再"): pronouns, saying and liking, negation
_NOT_A_THING_ZH = re.compile(r"[我你他她它说别不没想]|喜欢|觉得|希望|要求|建议|公司|团队|大家|项目")
_NOT_SLOTS = frozenset(
    "we i it this that they you he she everything all today now decision made decision update note reminder "
    "correction actually so ok yes no".split()
) | {"我们", "我", "他", "她", "现在", "目前", "其实", "决定", "就", "还是", "先", "那就", "那"}
