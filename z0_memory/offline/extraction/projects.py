"""What the project is, in the user's words: "starting a new thing — appointment booking for small dental clinics",
"we're building the ingest side of a drone telemetry service", "quill is our headless blogging platform",
"我们要做一个仓库内部用的看板，显示拣货进度和库位占用", "工厂巡检 App，主要跑在安卓平板上". One keyless ``context`` memory per
message holding the description's clauses (the stack clauses of the same sentence have keys of their own and are left
out). Questions, requests for work, hedges and negations describe nothing.
"""

from __future__ import annotations

import re

from z0_memory.offline.extraction.clauses import is_question, split_clauses, split_sentences, strip_noise
from z0_memory.offline.extraction.cues import DECISION, HEDGE, TASK_REQUEST
from z0_memory.offline.extraction.model import CONF_KEYLESS, Statement
from z0_memory.offline.extraction.vocabulary import find_phrases, find_values

# Words for the thing a project builds (a description names one; "we're building the migration" does not)
_PRODUCT_EN = (r"(?:app|application|tool|platform|service|system|saas|pipeline|dashboard|site|website|bot|game|"
               r"scheduler|calculator|log|backend|api|firmware|cms|marketplace|archive|engine|sdk|cli|extension|"
               r"plugin|portal|shop|store|tracker|monitor|monolith|thing|scripts|booking|classroom|"
               r"page|board|assistant|library)s?")
_PRODUCT_ZH = (r"(?:系统|平台|后台|看板|工具|小程序|[Aa][Pp][Pp]|app|应用|网站|服务|管道|商城|课堂|CMS|SaaS|机器人|插件|"
               r"游戏|客户端|中台|引擎|SDK|项目|大屏|网关)")
# A greeting or an announcement of context before the description ("hey, quick context first:")
_LEAD = re.compile(r"^(?:(?:hi|hello|hey|ok(?:ay)?|so|alright|right|yo|嗨|你好|大家好)\b[\s,!.:—–-]*)*"
                   r"(?:(?:quick|some|a bit of|bit of|little)\s+)?(?:context|background)(?:\s+first)?\s*[:—–-]\s*",
                   re.I)
_GREETING = re.compile(r"^(?:(?:hi|hello|hey|ok(?:ay)?|so|alright|right|yo)\b[\s,!.:—–-]*)+", re.I)
# "starting a new thing — X", "new project: X", "side project: X"
_OPENER = re.compile(r"\b(?:starting|kicking off|spinning up)\s+(?:a\s+new\s+(?:thing|one|project|app)|something new)"
                     r"\s*[:—–,-]\s*(?=\S)|^(?:new|side|pet|hobby|weekend)\s+(?:project|thing|one)\s*[:—–-]\s*(?=\S)",
                     re.I)
_OPENER_ZH = re.compile(r"^(?:新项目|新的项目|一个新项目|开个新项目|副业项目)\s*[，,:：—]\s*(?=\S)")
# "we're building X", "Dana and I are starting Ledgerly, ...", "Building a small workout logging app"
_BUILDING = re.compile(r"(?:^|\b(?:we'?re|we are|i'?m|i am|are|am)\s+(?:now\s+|currently\s+|just\s+)?)"
                       r"(?:building|making|developing|creating|starting|working on|putting together|replacing)\s+"
                       r"(?=\S)", re.I)
# "quill is our headless blogging platform", "beacon = status page SaaS", "sprocket — online shop for bike parts"
_NAMED_EN = re.compile(r"^(?P<name>[\w.-]+)\s*(?:\bis\b|=|—|–|:|\bserves\b)\s*", re.I)
_IT_IS = re.compile(r"^(?:it|this)(?:'s|\s+is)\s+(?:a|an|our|basically\s+an?|just\s+an?)\b", re.I)
# "firmware for a smart energy meter", "telemetry pipeline for our warehouse robots": a product noun and its purpose
_FRAGMENT_EN = re.compile(rf"^(?:an?\s+)?(?:[\w+'/-]+\s+){{0,4}}?{_PRODUCT_EN}\s+(?:for|to|that)\b", re.I)
# "我们要做一个…", "做一个一对一家教预约平台", "我们在做 harbor，一个…"
_BUILDING_ZH = re.compile(r"^(?:我们|我|公司|团队)?(?:正?在|要|想|准备|打算|计划|开始)?(?:做|搞|开发|搭)\s*(?:一个|个|一套|一款|[A-Za-z])")
# "lantern 是我们内部的数据看板项目", "ferry 是个记账 app", "rovertel = telemetry pipeline"
_NAMED_ZH = re.compile(r"^(?P<name>[A-Za-z][\w.-]*)\s*(?:是|=|＝|——)\s*")
# what a named thing is said to be, the product word heading it: "quill is our headless blogging platform", "lanmei 是我们
# 电商的运营后台" ("reason is the router groups + built-in binding fit our API" is no product)
_A_THING = re.compile(rf"(?:(?:our|an?|the)\s+(?:[\w'+/.-]+\s+){{0,3}}?{_PRODUCT_EN}\b|(?:一个|个|我们|公司))", re.I)
# "We're building the API in Django REST Framework", "the API is built on FastAPI": the stack, said of a part
_ON_STACK = re.compile(r"\b(?:in|on|with|using|atop)\s+(?=\S)", re.I)
# "工厂巡检 App", "公司食堂的点餐系统": a message opening with a product phrase, no verb of choosing in it
_FRAGMENT_ZH = re.compile(rf"[^，,。用选换是在]*{_PRODUCT_ZH}")
_REQUEST = re.compile(r"\b(?:can|could|would|will) you\b|\bplease\b|\bhelp me\b|帮我|给我|请你|帮忙|麻烦", re.I)
_NEGATED = re.compile(r"\b(?:not|never|no longer|stop(?:ped)?)\s+(?:\w+\s+)?(?:building|making|developing)\b"
                      r"|不(?:做|搞|开发)", re.I)


def _names_project(name: str, project: str) -> bool:
    flat = lambda s: re.sub(r"[\s_-]+", "", s.lower())  # noqa: E731 - "clinic-booking" is "Clinic Booking"
    return flat(name) == flat(project)


def _product(text: str) -> bool:
    return bool(re.search(rf"\b{_PRODUCT_EN}\b", text, re.I) or re.search(_PRODUCT_ZH, text))


def _subject_is_thing(name: str, project: str) -> bool:
    """A description's subject: the project's name, or a name that is no known value and no slot phrase ("Redis is
    our cache" describes a choice, "the backend is a Go service" a slot)."""
    if _names_project(name, project):
        return True
    return (not find_values(name) and not find_phrases(name) and not DECISION.search(name)
            and name.lower() not in {"it", "this", "that", "there", "here", "which", "what", "who", "the", "he", "she"})


def _described(sentence: str, project: str, first: bool) -> str | None:
    """The description the sentence opens (from its description words on), else None. ``first``: the message's
    first sentence, where a bare product phrase ("firmware for a smart energy meter") describes the project."""
    s = _LEAD.sub("", _GREETING.sub("", sentence.strip())).strip()
    if m := _OPENER.search(s):
        return s[m.end():] if s[m.end():].strip(" .。") else None
    if m := _OPENER_ZH.match(s):  # "新项目，物流调度系统，给区域仓配用的" ("新项目，前端我来负责" describes nothing)
        return s[m.end():] if _product((split_clauses(s[m.end():]) or [""])[0]) else None
    if m := _BUILDING.search(s):
        what = s[m.end():]
        # "we're replacing a pile of cron scripts" describes; "replacing Redis with Valkey" is a switch
        replacing = "replacing" in m.group(0).lower()
        if _product(what) and not (replacing and (find_values(what) or re.search(r"\bwith\b", what, re.I))):
            return s
    if m := _BUILDING_ZH.match(s):
        return s if _product(s) else None
    for pattern in (_NAMED_EN, _NAMED_ZH):
        m = pattern.match(s)
        if m and _subject_is_thing(m.group("name"), project) and _product((split_clauses(s[m.end():]) or [""])[0]) \
                and (_names_project(m.group("name"), project) or _A_THING.match(s[m.end():])):
            return s
    head = (split_clauses(s) or [s])[0]
    if _IT_IS.match(s) and _product(head) and not find_values(head):
        return s
    if first and _FRAGMENT_EN.match(head) and not find_phrases(head.split(" for ")[0]):
        return s
    if first and _FRAGMENT_ZH.fullmatch(head) and not find_values(head) and not find_phrases(head):
        return s
    return None


# a clause about the stack, not the product: "框架用 aiogram 3", "we're going with Phoenix"
_STACK_CLAUSE = re.compile(r"(?:用|选|上)\s*[A-Za-z]|\b(?:use|using|uses|going with|built with|written in|runs? on)\b",
                           re.I)


def _description_clauses(text: str) -> str:
    """The description up to the stack talk after it ("kite-ml 是我们的 ML 平台，分布式训练用 Ray" keeps the first clause;
    "tundra 是一个冷链设备监控平台，几千台冷柜每分钟上报一次温度" keeps both)."""
    clauses = split_clauses(text)
    stack = next((n for n, c in enumerate(clauses) if n and (find_values(c) or _STACK_CLAUSE.search(c))), len(clauses))
    kept = clauses[:stack]
    joint = "，" if re.search(r"[\u4e00-\u9fff]", text) else ", "
    return joint.join(kept).strip(" .。,，")


def project_description(text: str, project: str) -> Statement | None:
    """The message's description of what the project is, as a keyless ``context`` statement, else None."""
    sentences = [s for s in split_sentences(strip_noise(text)) if _GREETING.sub("", s).strip(" .!,")]
    for n, sentence in enumerate(sentences):
        what = _described(sentence, project, first=n == 0)
        if what is None:
            continue
        head = (split_clauses(what) or [what])[0]
        if any(v.start >= m.end() for m in _ON_STACK.finditer(head) for v in find_values(head)):
            return None  # "We're building the service on Axum": what it is built on, not what it is
        if is_question(sentence) or _REQUEST.search(sentence) or TASK_REQUEST.search(sentence) \
                or _NEGATED.search(sentence) or HEDGE.search(split_clauses(what)[0] if split_clauses(what) else what):
            return None
        return Statement(kind="context", slot=None, value=None, confidence=CONF_KEYLESS,
                         text=_description_clauses(what))
    return None


def without_product_names(statements: list[Statement], described: Statement) -> list[Statement]:
    """``statements`` minus the names no slot knows that a decision verb found inside the project's description ("我们要
    做一个仓库内部用的看板" names the product being built, not a tool the project uses)."""
    head = (split_clauses(described.text) or [""])[0]
    return [s for s in statements if not (s.value and s.value in head and not find_values(s.value)
                                          and s.category_override != "people")]
