"""Cues that leave a choice open without the usual hedge words, English and Chinese.

- ``DEFERRAL`` (joined into ``cues.HEDGE``): a remark that puts the choice off ("but let me sleep on it", "before we
  commit", "pending Dana's ok", "Priya hasn't weighed in yet", "..., but not yet", "I'll check the rota", "I genuinely
  don't know", "不过要先跟运维确认资源", "产品那边还没点头"), a trial ("let's try X for a sprint and see if ..."), a
  plan under a condition ("if the endpoint gets slow we'll put Redis in front of it", "we'll go biweekly if QA can't
  keep up"), a guess put as one ("I'd say Turborepo").
- ``LATER_SWITCH``: a move planned for later or under a condition ("量上来了再换 Kafka", "以后要 HA 了再迁 Postgres",
  "move to Kafka later"). It hedges only the value named after it in its own clause: without one ("axum 先用着，有问题
  再换") it says the choice before it is revisable, which keeps it a choice ("for now" is a decision).
"""

from __future__ import annotations

import re

# Approval still outstanding, in English: "pending Dana's ok", "hasn't weighed in yet", "yet to sign off"
_AWAITED = (r"\bpending (?:[\w'’-]+\s+){0,3}?(?:ok|okay|go-?ahead|green light|blessing|input|feedback|nod|say-?so)\b|"
            r"\b(?:hasn'?t|has not|haven'?t|have not) (?:yet )?(?:weighed in|signed off|approved|agreed|okayed|said yes|"
            r"given (?:the |their |her |his |us )?(?:ok|okay|go-?ahead|green light))\b|"
            r"\byet to (?:weigh in|sign off|approve|agree|decide|confirm)\b")
# Putting the choice off: "let me sleep on it", "before we commit", "..., but not yet", "I'll check the rota"
_PUT_OFF = (r"\bsleep on it\b|\b(?:let me|i'?ll|i will|i need to|need to|gotta) (?:think it over|mull (?:it )?over|"
            r"chew on it)\b|\bbefore (?:we |i )?(?:commit(?:ting)?|decid(?:e|ing)|lock(?:ing)? (?:it )?in)\b|"
            r"\bbut not (?:yet|now|right now|just yet)\b(?=\W*$)|"
            r"\b(?:but|though) (?:i'?ll|i will|let me|gotta|i have to|i need to) (?:double[- ]?)?check\b|"
            r"\b(?:i'?ll|i will) (?:double[- ]?)?check with\b|"
            r"\b(?:genuinely |really |honestly |just )?(?:don'?t|do not) know(?: yet)?(?=\W*$)|\bi'?d say\b")
# A trial or a comparison still to make: "let's try Playwright for a sprint", "... and see if the flakiness is
# manageable", "we'll evaluate NATS vs Kafka next week"
_TRIAL = (r"\blet'?s (?:try|trial|pilot|test[- ]drive)\b|\b(?:and|then) see (?:if|whether|how)\b|"
          r"\b(?:we'?ll|we will|i'?ll|gonna|going to|need to|let'?s|let me|want to) (?:\w+ ){0,2}?"
          r"(?:evaluate|compare|benchmark|weigh|trial|pilot|test-drive)\b")
# A plan under a condition: "if the endpoint gets slow we'll ...", "we'll go biweekly if QA can't keep up"
_CONDITION = (r"\bif\b[^,;.?!]{2,60}?\b(?:we'?ll|we will|we'?d|i'?ll|then)\b|"
              r"\b(?:we'?ll|we will|we'?d)\b[^,;.?!]{2,60}?\bif\b(?! (?:you|that'?s)\b)")
# Chinese: a check or an approval still to come ("不过要先跟运维确认资源", "产品那边还没点头")
_AWAITED_ZH = (r"(?:要先|得先|先要|需要先|还得|还需要)(?:和|跟|找|问问?|让)?.{0,10}?(?:确认|商量|评估|对一下|同意|批准|拍板|点头)|"
               r"先(?:和|跟|找|问问?).{1,10}?(?:确认|商量|对一下)|"
               r"还没(?:有)?(?:点头|同意|批准|答应|表态|签字|回复|松口)|没点头")

DEFERRAL = "|".join((_AWAITED, _PUT_OFF, _TRIAL, _CONDITION, _AWAITED_ZH))
CONDITION = re.compile(_CONDITION, re.I)

LATER_SWITCH = re.compile(
    r"(?:以后|之后|后面|将来|回头|到时候?|了|起来|不够用?|不行|扛不住|有问题|需要)\s*再(?:换|迁|上|用|加|切|改用|引入|接)(?:成|到)?|"
    r"\b(?:switch|move|migrate|add|go|upgrade)\b(?= (?:\S+ ){0,5}?(?:later|down the (?:road|line))\b)",
    re.I,
)
