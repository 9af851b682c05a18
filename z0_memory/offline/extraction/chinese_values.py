"""Values in Chinese clauses, where a clause (not capitalisation) marks where a value ends: a word in Latin letters
is a name whatever its case ("协议用 protobuf"); what a slot phrase's verb binds runs to the clause's end ("支付走微信支付",
"主键用雪花 ID"); a name opening a clause that says it is settled is chosen ("七牛云定了").
"""

from __future__ import annotations

import re

from z0_memory.offline.extraction.vocabulary import Found, find_phrases
from z0_memory.redaction import REDACTED
from z0_memory.text import contains_cjk

# Chinese words a 用 may be followed by that are not a product's name
CJK_COMMON = frozenset("中文 英文 这个 那个 这种 那种 什么 哪个 它 他们 我们 自己 本地 现成的 默认的 默认 原来的 之前的 同一个 一样的 两个空格 四个空格 "
                        "单引号 双引号 制表符 随便 都行 无所谓 不知道 看你 你定 你决定 都可以 再说 待定 没想好".split())


def names_in_chinese(text: str) -> bool:
    """In a clause written in Chinese, a word in Latin letters is a name or a term whatever its case ("协议用
    protobuf", "sqlc 做 ORM"): a Chinese writer switches script for names, not for ordinary words."""
    return contains_cjk(text)


# "支付走微信支付", "主键用雪花 ID", "部署用内部的 farmctl 工具", "提交信息按 Angular 规范来": in Chinese, what a slot phrase's verb binds runs to
# the clause's end (the clause is the unit; a cap keeps a whole sentence from being a value)
_ZH_VALUE_MAX = 15
_ZH_AFTER_SLOT = re.compile(
    r"^\s*(?:的话)?\s*(?:就|还是|也|都|统一|先|直接|主要|目前|现在|暂时|一律)*\s*"
    r"(?P<verb>用的是|选的是|用|使用|采用|选用|走|接入?|定为|定成|是|按照|按|遵循|参照)\s*"
    r"(?:(?:我们)?(?:自己写的|自研的|内部的|公司的|现成的|自己的|自己部署的|一个叫|叫)\s*)?"
    rf"(?P<v>[^，,。;；！!？?、\s][^，,。;；！!？?、]{{0,{_ZH_VALUE_MAX}}}?)\s*"
    r"(?:工具|集群|服务|方案|插件|平台|那套|这套)?\s*(?:来|走|执行)?(?:吧|了|的)?\s*(?=[，,。;；！!？?]|$)")
_VERB_IN_VALUE = re.compile(r"\s*(?:做|作为|当|来|跑在|部署在|同步|写)")
_ZH_NOT_A_VALUE = re.compile(r"[不没别吗呢它这那哪啥么]|可能|或者|还是|还没|待定|再说|以后|之后|一下|什么")


def chinese_after(text: str, phrase: Found) -> Found | None:
    """The value a Chinese slot phrase's verb binds, up to the clause's end, or None."""
    m = _ZH_AFTER_SLOT.match(text[phrase.end :])
    if m is None:
        return None
    value = _VERB_IN_VALUE.split(m.group("v"), maxsplit=1)[0].rstrip(" .")  # "Keycloak 做 SSO": up to the verb
    if m.group("verb") in ("是", "按", "按照", "遵循", "参照") and not re.search(r"[A-Za-z0-9]", value):
        return None  # "BI 是公司内部的数据平台", "部署按老流程来": Chinese words describe; a product's name is spelt in Latin
    if not value or _ZH_NOT_A_VALUE.search(value) or value in CJK_COMMON or REDACTED in value \
            or any(p.start == 0 for p in find_phrases(value)):
        return None
    start = phrase.end + m.start("v")
    return Found(start, start + len(value), value, phrase.slot)


# "七牛云定了", "TDengine 定了，就用它": a name opening the clause, then "settled" (the Chinese "X it is")
_SETTLED_NAME_ZH = re.compile(r"^(?:(?:那|那就|好|行|嗯|对)[，,\s]*)?(?P<v>[\u4e00-\u9fffA-Za-z][\w\u4e00-\u9fff.+#-]{1,11}?)\s*"
                              r"(?:就)?(?:定了|确定了|就定它了|敲定了)")


def settled_name(text: str, known: list[Found]) -> list[Found]:
    """The name a clause opens with when it says that name is settled ("七牛云定了")."""
    m = _SETTLED_NAME_ZH.match(text)
    if m is None:
        return []
    value = m.group("v")
    if value in CJK_COMMON or value[0] in "它他她我你哪什都就还先" or re.search("[这那]", value) or find_phrases(value) \
            or any(k.start < m.end("v") and m.start("v") < k.end for k in known):
        return []  # "BI 定了": a slot's name; "这个定了", "视频那块定了": a pronoun or a part; a known value pairs_in reads itself
    return [Found(m.start("v"), m.end("v"), value, None)]
