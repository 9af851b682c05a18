"""Choices put as questions: a proposal the user asks about is tentative (pending), not a question that states nothing.

Three shapes, English and Chinese:

- a statement followed by a request for the assistant's opinion ("后端用 FastAPI，你觉得呢？", "Redis for the cache,
  what do you think?", "we'll use Kafka, thoughts?"); the request may also be a sentence of its own, which then hedges
  the sentence before it (``opinion_only``);
- a declarative question: a statement said with a question mark and no question word or question word order
  ("Meilisearch for search?", "缓存用 Redis 吧？"); a wh-question ("what are the limits on D1?"), a yes/no question
  ("Is RSpec what the team uses?", "用 Redis 吗？"), an either-or that leans nowhere and a check of what is the case
  ("你部署是用 Docker Compose 对吧？", "我们用的是 MongoDB 吧？") stay questions;
- a labelled open point ("open question: Algolia for search?", "待定：搜索用 Algolia").

The caller reads the returned body as a statement and hedges what it states.
"""

from __future__ import annotations

import re

from z0_memory.text import contains_cjk
from z0_memory.offline.extraction.binding import open_values
from z0_memory.offline.extraction.deferrals import CONDITION, LATER_SWITCH
from z0_memory.offline.extraction.vocabulary import find_values
from z0_memory.offline.extraction.cues import ALTERNATIVE, DECISION, FACT, HEDGE, QUESTION_START, QUESTION_ZH, WH_QUESTION

# A request for the assistant's opinion on what was just said
_OPINION = (r"(?:what do you think|what would you say|wdyt|thoughts|any thoughts|your thoughts|opinions?|objections?|"
            r"any objections|sounds? (?:good|ok|okay|right|reasonable)|(?:does )?that (?:sound|make sense|work)|"
            r"makes? sense|ok with (?:you|that)|agree|reasonable|good idea|sane|"
            r"你觉得呢|你觉得怎么样|你觉得如何|你觉得行吗|你觉得可以吗|你看呢|你看行吗|你看怎么样|你怎么看|可以吗|行吗|"
            r"好吗|合适吗|靠谱吗|有问题吗|怎么样|如何|行不行|好不好|可不可以|合不合适|靠不靠谱)")
# A request that asks for an opinion even without its question mark ("包管理用 uv 你觉得呢", "Redis for the cache, wdyt")
_OPINION_UNMARKED = r"(?:what do you think|wdyt|your thoughts|你觉得呢|你觉得怎么样|你觉得如何|你看呢|你怎么看)"
_OPINION_TAG = re.compile(rf"[\s,，;；:：—–-]+(?:{_OPINION}\s*[?？]+|{_OPINION_UNMARKED}\s*[?？]*[.。]?)\s*$", re.I)
OPINION_ONLY = re.compile(rf"^\s*(?:(?:so|and|but|then|那|那么|所以)[\s,，]*)?(?:{_OPINION}\s*[?？]+|{_OPINION_UNMARKED}\s*[?？]*[.。]?)\s*$",
                          re.I)
# "open question: X?", "待定：X": the label says the point is not settled
_OPEN_LABEL = re.compile(r"^\s*(?:open (?:question|point|item)|undecided|tbd|to be decided|待定|未定|悬而未决|待讨论)\s*[:：]\s*",
                         re.I)
# "..., right?", "对吧？": a check of what the user believes is the case, not a proposal
_CHECK_TAG = re.compile(r"(?:[\s,，]*(?:right|correct|isn'?t it|aren'?t (?:we|they)|don'?t we|is that (?:right|correct)|"
                        r"am i right|对吧|对吗|是吧|是吗|没错吧|没错吗))\s*[?？]+\s*$", re.I)
# A yes/no question in Chinese ends in 吗 / 么 / 呢 (吧 proposes: "用 Redis 吧？")
_ZH_YES_NO = re.compile(r"(?:吗|么|呢)\s*[?？]*\s*$")


def tentative_body(sentence: str) -> str | None:
    """The statement a sentence proposes by asking, or None when it is no such proposal."""
    s = sentence.strip()
    label = _OPEN_LABEL.match(s)
    if label:
        body = s[label.end():].strip()
        return body.rstrip("?？ ") or None
    if _CHECK_TAG.search(s):
        return None
    tag = _OPINION_TAG.search(s)
    if tag and tag.start() > 0:
        body = s[: tag.start()].strip()
        if body and not _asks(body) and not _describes(body):
            return body
        return None
    if not s.endswith(("?", "？")) or _asks(s) or _describes(s):
        return None
    body = s.rstrip("?？ ")
    return body or None


def _describes(text: str) -> bool:
    """"数据库我们用的是 MongoDB 吧？", "we use Redis?": what is the case, asked to be checked, not a choice proposed."""
    return bool(FACT.search(text)) and not DECISION.search(text)


def _asks(text: str) -> bool:
    """A question by its words, not only its mark: a question word, question word order, a Chinese yes/no particle,
    or an either-or ("Postgres or MySQL?")."""
    t = text.strip().rstrip("?？ ")
    return bool(QUESTION_START.match(t) or WH_QUESTION.search(t) or _ZH_YES_NO.search(t)
                or QUESTION_ZH.search(t) or ALTERNATIVE.search(t))


# Hedge words that stand where a slot phrase's verb would ("数据库考虑一下 Oracle", "backend: maybe Pocketbase?",
# "时序数据可能存 TDengine"): read in their place, the clause binds its value as a firm one would (not before a time:
# "支付宝也许后面再说" names no value after 也许)
_HEDGE_VERB = re.compile(r"(?:考虑(?:一下)?|倾向于?|可能|也许|或许|打算|暂定)(?:用|上|存|选|走)?"
                         r"(?=\s*(?:[A-Za-z0-9]|(?!后面|以后|之后|再|回头|下周|下次|先|还|也)[\u4e00-\u9fff]))|"
                         r"\b(?:maybe|perhaps|possibly|probably)\b", re.I)


def unhedged(clause: str) -> str:
    """The clause with the hedge words that stand in for its verb read as "用" / dropped, for binding only."""
    return _HEDGE_VERB.sub(lambda m: "用" if contains_cjk(m.group(0)) else "", clause)


# A concession about a detail ("描述部分写中文也行", "the descriptions can be in German too, that's fine"): what it allows
# is its own clause's subject; it is no hedge on the choice the clause before states
_CONCESSION = re.compile(r"也行|也可以|也没关系|也无所谓|\b(?:is|are|that'?s) (?:fine|ok|okay) too\b", re.I)


def concession_only(clause: str) -> bool:
    """The clause's hedge is a concession and nothing else hedges in it."""
    return bool(_CONCESSION.search(clause)) and not HEDGE.search(_CONCESSION.sub(" ", clause))


def planned_move(text: str) -> bool:
    """A move planned for later or under a condition that names the value it would move to ("量上来了再换 Kafka", "if it
    gets slow we'll put Redis in front of it"): an idea of its own, never a comment on the choice made before it."""
    later = LATER_SWITCH.search(text)
    if later and (find_values(text[later.start():]) or open_values(text[later.start():])):
        return True
    return bool(CONDITION.search(text)) and bool(find_values(text) or open_values(text))


def conditional_only(clause: str) -> bool:
    """The clause's hedge is a plan under a condition and nothing else hedges in it ("and if QA can't keep up we'll go
    biweekly"): the plan is its own, it does not hedge the choice the clause before states ("weekly for now")."""
    return bool(CONDITION.search(clause)) and not HEDGE.search(CONDITION.sub(" ", clause))
