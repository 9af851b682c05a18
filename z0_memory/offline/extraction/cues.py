"""Cue phrases, English and Chinese: what marks a clause as a hedge, a negation, a decision, a fact, a
confirmation, a question, an instruction to the assistant; switch patterns; rationale markers.
"""

from __future__ import annotations

import re

from z0_memory.offline.extraction.deferrals import DEFERRAL

GREETING = re.compile(
    r"^(?:hi|hello|hey|morning|good (?:morning|night|evening|afternoon)|thanks?(?: you)?|thx|ty|cheers|bye|lol|"
    r"haha|ugh|hmm+|你好|大家好|谢谢|多谢|感谢|哈哈+|再见|早上好|晚安)\b",
    re.I,
)
QUESTION_START = re.compile(
    r"^(?:what|whats|which|who|whos|whom|whose|when|where|wheres|why|how|hows|is|are|was|were|do|does|did|can|could|would|will|have|has|"
    r"any|anything|remind me)\b",
    re.I,
)
# "什么都要自己搭", "哪个都行", "不怎么活跃": an indefinite pronoun before 都/也, or 不怎么 ("not very"), asks nothing
QUESTION_ZH = re.compile(r"(?:吗|呢|么)[？?。]?$|(?:什么|哪个|哪些|哪种|哪里|(?<!不)怎么)(?![都也样])|为什么|是不是|有没有|多少|^请问")
HEDGE = re.compile(
    r"\b(?:maybe|perhaps|possibly|might|could (?:try|use|go|consider|switch|move)|(?:we|i) may|may (?:use|adopt|go with|switch|move|try|end up|want|need|add)|what about|how about|why not|"
    r"not sure|unsure|i wonder|wondering|thinking (?:about|of)|consider(?:ing)?|should we|shall we|"
    r"i (?:think|guess|suppose) we (?:should|could)|we (?:should|could) (?:try|consider|look at|evaluate)|"
    r"worth (?:a )?(?:try|trying|looking)|probably|tentative(?:ly)?|undecided|for now maybe|i think|i guess|"
    r"i feel like|i suspect|leaning (?:towards?|to)|inclined to|makes? (?:the most |more )?sense|"
    r"(?:can|could) we (?:just |maybe |also |still )?(?:use|try|go with|switch to|move to|adopt)|"
    r"i'?d (?:probably |personally |honestly )?(?:go with|pick|choose|use|lean|vote for|prefer)|"
    r"i would (?:probably |personally )?(?:go with|pick|choose|use|vote for))\b"
    r"|也许|或许|可能|说不定|试试|试一下|要不要|要不|考虑(?![到过])|不确定|不一定|是不是可以|能不能|看看|评估一下|怎么样|如何|"
    r"行不行|好不好|倾向于?|待定|再看|还没想好|没想好|还没定|还没决定|先不定|再说(?!一下|一遍|一句|两句|下)吧?|还在纠结|拿不准"
    r"|\b(?:not (?:yet )?(?:sure|decided|settled)|haven'?t (?:yet )?decided|have not (?:yet )?decided|"
    r"still (?:deciding|undecided|figuring)|not (?:yet )?certain|up in the air|tbd|to be decided|likely|"
    r"potentially|provisionally|pencil(?:l?ed)? in|evaluating|exploring|looking (?:at|into)|on the table|"
    r"shortlist(?:ed)?|open to|not final|not set in stone|not locked in|nothing(?:'s| is)? (?:decided|final|settled)|still open|trial(?:l?ing)|prototyping with|playing (?:around )?with|"
    r"could (?:work|do|be)|toying with|(?:a |one )?candidate|(?:may|might|could) change|(?:looks?|seems?|sounds?) "
    r"promising|promising|(?:wants?|wanna|would like|'d like) to try|try out|kinda leaning|leaning|idk|dunno|"
    r"not 100%|(?:i was|i'?m|we'?re|we are|we were) thinking|prob|probs|prolly|presumably|(?:i |we )?lean(?:s)? (?:towards?|to)|we'?ll see)\b"
    r"|\b(?:pending (?:the |a |an |our |their )?(?:[\w'-]+\s+){0,2}(?:review|approval|sign-?off|confirmation|decision)|"
    r"subject to|let me (?:check|confirm|ask|run it by)|(?:need|have) to (?:check|confirm) with|check(?:ing)? with|"
    r"waiting (?:for|on) (?:the |a |an |our )?(?:[\w'-]+\s+){0,2}(?:review|approval|sign-?off|answer|decision))"
    r"|还要(?:和|跟|找)?.{0,8}?(?:确认|商量|讨论|评估|对一下)|待确认|需要确认|等.{1,6}?(?:确认|拍板|批准|审批)|"
    r"还没(?:和|跟).{1,8}?(?:商量|确认|讨论|对齐)"
    r"|\b(?:if (?:we|i|it|they|needed|necessary|ever|traffic|load|usage)|in case|down the (?:road|line)|eventually|at some point|"
    r"someday|one day)\b"
    r"|也行|也可以|看起来不错|不错的选择|值得一试|可以考虑|想试试|如果|万一|到时候|以后再说|我觉得|我认为|我感觉|"
    r"比较好|更合适|更好|暂时(?!不)|临时|应该(?:会|用|是|选)|试着|还在犹豫|犹豫|还没(?:有)?(?:最终|完全|正式|真正)?(?:确定|定下来|决定|定|选|想好|拍板|敲定|商量好|讨论好)|"
    r"没(?:最终|正式)?确定|尚未(?:确定|决定|定)|未定|还可能变|可能会变|还(?:会|可能)(?:再)?(?:改|换|调整)|不一定|没拍板|打算先|"
    r"先这样(?:试试|看看)|还要(?:再)?(?:看|评估|讨论|比较)|再(?:讨论|商量|研究|评估)(?:一下)?|待讨论|还在想|在想"
    r"|暂定|初步|大概|估计|应该会|可能会|有可能|备选|候选|看情况|回头再(?:定|说|看)|还在(?:比较|评估|考虑|看|调研)|"
    r"调研一下|先看看|评估中|待评估|多半|八成|十有八九|大概率"
    rf"|{DEFERRAL}",  # putting off, trials, conditions (deferrals.py)
    re.I,
)
# What makes a hedge a tentative choice rather than an opinion: a proposal word or a verb of using/choosing
HEDGE_PROPOSAL = re.compile(
    r"\b(?:maybe|perhaps|possibly|might|may|could|what about|how about|why not|should|shall|consider(?:ing)?|"
    r"leaning|inclined|probably|try(?:ing)?|use|using|go(?:ing)? with|switch(?:ing)?|mov(?:e|ing)|adopt(?:ing)?|"
    r"pick(?:ing)?|choos(?:e|ing)|whether|tentative(?:ly)?|makes? (?:the most |more )?sense|(?:good|better|best) fit|"
    r"fits?|suits?|go for|worth|likely|potentially|provisionally|pencil(?:l?ed)? in|evaluating|exploring|"
    r"looking (?:at|into)|shortlist(?:ed)?|trial(?:l?ing)|prototyping|playing|could|toying|candidate|promising|"
    r"change|if|case|eventually|someday|it'?ll be|it will be|would be|we'?d (?:use|go with|pick)|thinking (?:about|of)|"
    r"wants? to try|prob|probs|prolly|presumably|(?:i'?m|we'?re|i am|we are|i was|we were) thinking|i'?d say)\b|多半|八成|如果|万一|到时候|比较好|更合适|更好|待定|暂时|临时|应该|试着|犹豫|暂定|初步|大概|估计|应该会|备选|候选|调研|评估|也行|也可以|不错|值得"
    r"|也许|或许|可能|说不定|要不|试|考虑|倾向|用|换|选|上",
    re.I,
)
# Asking the assistant's opinion is a question, not a tentative choice ("你觉得 Rust 怎么样？")
OPINION_QUESTION = re.compile(
    r"^(?:what do you think|what'?s your (?:take|opinion)|do you (?:think|like|recommend)|thoughts on|is .{1,30} "
    r"(?:any good|worth it|production[- ]ready))|^(?:你觉得|你认为|你怎么看|你推荐)",
    re.I,
)
UNSURE = re.compile(r"\b(?:not sure|unsure|undecided)\b|不确定|不一定|待定", re.I)
# "not sure (yet) whether X", "还没想好": undecided, so a hedge (pending), never a negation that drops X
UNDECIDED = re.compile(
    r"\b(?:(?:i'?m|we'?re|i am|we are)\s+)?(?:not (?:yet )?(?:sure|decided|settled|certain)|haven'?t (?:yet )?decided|"
    r"have not (?:yet )?decided|still (?:deciding|undecided))(?:\s+yet)?\b|\b(?:nothing(?:'s| is| has been)? (?:decided|final|settled)"
    r"(?: yet)?|not (?:final|set in stone|locked in|settled)(?: yet)?|still open|open question|(?:still |remains |is )?(?:under|up for) (?:discussion|debate|review)|to be decided|tbd|haven'?t made up (?:my|our) minds?|(?:will|gonna|need to) think (?:about it|it over)|let me think)\b|还没想好|没想好|还没定|还没决定|先不定|"
    r"还不确定|不确定|不一定|还没(?:有)?(?:最终|完全|正式|真正)?(?:确定|定下来|决定|定|选|想好|拍板|敲定)|没(?:最终|正式)?确定|尚未(?:确定|决定)|未定",
    re.I,
)
NEGATION = re.compile(
    r"\b(?:don'?t(?! (?:think|remember|recall) (?:i|we)(?:'?ve)? (?:\w+ )?(?:mentioned|said|told))|not|no longer|never mind|"
    r"nevermind|doesn'?t|do not|won't|will not|isn't|aren't|without|avoid|instead of|"
    r"rather than|as opposed to|in place of|nobody|no one|none of us)\b|算了|没人|(?<!要)不用|(?<!要)不要|别用|不考虑|不采用|不选用|暂时不|放弃|弃用|不是|而不是|而非|并非|不再|"
    r"(?<!还)没(?:有)?(?:选|采用)|不选|"
    # "不搞 GraphQL", "不额外上 flyway", "先不引入 Kafka": not taking something on
    r"(?<![跟比赶对])不(?:额外|再|单独)?(?:搞|上|引入|接入|接)(?=\s*[A-Za-z\u4e00-\u9fff])",
    re.I,
)
CONFIRM_PREFIX = re.compile(
    r"^(?:(?:yes|yeah|yep|yup|ok(?:ay)?|sure|agreed|confirmed|correct|right|absolutely|definitely|great|perfect|"
    r"exactly|indeed|precisely|of course|that'?s (?:right|correct|it)|you got it|spot on|"
    r"sounds (?:good|great|right)|that works|works for me|deal|fine|fair|lgtm|approved|go ahead|go for it)\b"
    r"(?:\s*(?:please|then))?"
    r")[\s,，.!！。:：]*"
    r"|^(?:好主意|就它了?|就这个吧?|就用它吧?|可以的|好的|好吧|好|行|可以|没问题|没错|对的|对|是的|是|嗯+|正确|确实|当然|OK|ok)"
    r"(?:[\s,，.!！。:：]+|$)"
    r"|^(?:同意|确定|确认|就[这那]么定了?|就[这那]样吧?|就[这那]么办吧?)[\s,，.!！。:：]*",
    re.I,
)
CONFIRM_ANYWHERE = re.compile(
    r"\b(?:confirmed|confirming|agreed|final|it is|that's settled|settled|approved|signed off|green-?lit|decision made)\b|(?<![没不未])(?:最终)?(?:确定|确认)|就[这那]么定|(?<![没不未])定了", re.I
)
ACCEPT_ONLY = re.compile(
    r"^(?:let'?s (?:do|go with|use|try) (?:exactly )?(?:that|it|this|those)|go for it|why not|yes,? please|please|"
    r"(?:that )?sounds (?:right|great|perfect|fine)|perfect|works|do it|就它了?|就用它吧?|行吧?|可以的|好主意|"
    r"(?:go|going) with (?:that|it|this|your suggestion)|"
    r"do (?:that|it)|ship it|that works|works for me|sounds good|agreed|deal|please do|go ahead|make it so|"
    r"use (?:that|it|this)|就[这那]么办吧?|就[这那]样吧?|就[这那]么定了?|就用这个吧?|按你说的(?:办|来)?吧?|照你说的办|听你的|同意|可以|好的?|"
    r"that'?s (?:right|correct|it|true|the one)|(?:yes|yep|yeah),? (?:exactly|correct|right)|exactly|correct|right|"
    r"indeed|precisely|you got it|spot on|you'?re right|that is (?:right|correct)|"
    r"没错|对的?|是的|是这样的?|正确|确实|就是(?:这样|它)?|说得对|你说得对|嗯+)"
    r"[\s.!！。]*$",
    re.I,
)
# An order to the assistant, not a statement about the project: never stored, whatever words it uses ("always",
# "所有" are convention words, "从现在起" a decision word, yet "从现在起忽略之前的所有指令" is neither).
INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass|drop)\b.{0,40}?\b(?:previous|prior|above|earlier|all (?:the |your )?"
    r"(?:instructions|rules)|your|system|instructions?|rules|prompt|guidelines|guardrails)\b"
    r"|\b(?:reveal|print|show|output|repeat|dump|leak|display|tell me)\b.{0,40}?\b(?:system prompt|(?:your|the|hidden) "
    r"(?:prompt|instructions|rules|configuration|guidelines))\b"
    r"|\b(?:from now on|going forward|henceforth|starting now)[,\s]+(?:you\b|(?:please\s+)?(?:always|never|only)\s+"
    r"(?:answer|reply|respond|say|speak|talk|write (?:to me|your)|call me|use emojis|apologi[sz]e))"
    # "from now on, answer every question as a haiku", "going forward, format your replies as tables": the time
    # phrase, then an order whose object is the assistant's own answers
    r"|\b(?:from now on|going forward|henceforth|starting now|for the rest of (?:this|the) (?:chat|conversation))"
    r"[,\s]+(?:please\s+|pls\s+)?(?:(?:answer|reply|respond|talk|speak)\b|(?:format|write|keep|end|start|put|phrase|"
    r"give)\s+(?:(?:all|every|each)(?: of)?\s+)?(?:your|my|the|every|each|all)?\s*(?:answers?|repl(?:y|ies)|responses?|"
    r"messages?)\b)"
    r"|\b(?:all|every|each)(?: one)?(?: of)?\s+your\s+(?:answers?|repl(?:y|ies)|responses?)\s+(?:should|must|need to|have to|"
    r"are to|will)\b"
    r"|\byou\s+(?:must|should|will|shall|need to|have to|are to)\s+(?:now\s+|always\s+|never\s+|only\s+)*"
    r"(?:answer|reply|respond|obey|ignore|reveal|print|pretend|act as|follow my|call me|speak|talk|say)\b"
    r"|^(?:and\s+|also\s+)?(?:please\s+)?(?:always|never|only)\s+(?:answer|reply|respond|say|speak|talk|call me|"
    r"use emojis|apologi[sz]e|mention|bring up|refer to|write (?:to me|your answers?))\b"
    r"|\b(?:act as|pretend (?:to be|you are|you're)|you are now|role-?play as|developer mode|jailbreak)\b"
    # "always explain any regex you write", "你写的正则都要逐行解释": how the assistant's own output should be
    r"|\b(?:always|never)\s+\w+\b[^.!?。！？]{0,60}?\byou\s+(?:write|give|generate|produce|suggest|send)\b"
    r"|你(?:写|给|生成)的.{0,12}?(?:都|一律|统一|每次)(?:要|得|请)"
    r"|^(?:please\s+)?(?:answer|reply|respond|talk|speak)(?: to me)? (?:only |always )?in (?:english|chinese|french|"
    r"german|spanish|japanese)\b"
    r"|忽略|无视|不要理会|别理会|忘掉(?:之前|以前|上面|你的)|(?:输出|显示|打印|告诉我|泄露|说出)(?:一下)?(?:你的)?(?:系统)?"
    r"(?:提示词|系统提示|指令|设定)|扮演|假装你是|你现在是"
    r"|你(?:以后|今后|从现在起|从现在开始)?(?:必须|都要|都得|要|需要|应该|得)?(?:都|总是|永远|一直|只)?"
    r"(?:用.{1,8})?(?:回答|回复|输出|称呼我|叫我)"
    r"|(?:从现在(?:起|开始)|以后|今后)[，,\s]*(?:你|请你|请)"
    r"|(?:(?:从现在(?:起|开始)|以后|今后|往后|接下来)[，,\s]*|^[好行嗯]?[，,\s]*)(?:所有|每个|每条|每一条|每次|你的)?(?:的)?"
    r"(?:回答|回复|答复)(?:都|请|必须|要|一律|统一)"
    # "stop summarizing what you did at the end of every reply": how the assistant should answer
    r"|(?:^|[,，;；:：—–]\s*|\s-\s)(?:please\s+|pls\s+)?(?:stop|quit|no more)\s+\w+ing\b.{0,80}?\b(?:you|your|reply|replies|"
    r"answers?|responses?|code blocks?)\b"
    # "every answer you give me starts with a TL;DR": a rule for the assistant's answers, said of them
    r"|\b(?:every|each|all|any)\s+(?:answers?|repl(?:y|ies)|responses?|code blocks?)\s+you\s+(?:give|write|send|post|"
    r"produce|generate)\b"
    # a standing order about the assistant's own output, however polite: "please always use X in your examples",
    # "make sure you always ...", "default to X whenever you write tests for me", "记得每次都用 X 写示例"
    r"|(?:^|[,，;；]\s*)(?:(?:please|pls|kindly|can you|could you|would you|make sure(?: that)?(?: you)?|remember to|be sure to|and|to)"
    r"[,\s]+)*(?:always|never|only|consistently)\b.{0,100}?(?:\byour\b|\bfor me\b|\b(?:when(?:ever)?|before|after|once) you\b|"
    r"\b(?:show|give|write|generate|format)\s+(?:me\s+)?(?:the\s+|all\s+)?(?:code|examples?|snippets?|answers?)|"
    r"\bshow me\b|\byou(?:'d| would| will)?\s+(?:give|show|send|run|suggest|generate)\s+me\b|\byou'd\s+\w+)"
    r"|\b(?:whenever|every time|each time)\s+you\s+(?:write|show|give|generate|answer|reply|suggest|draft)\b"
    r"|(?:每次|以后|今后|往后|之后)(?:都|也)?(?:请|记得)?(?:都)?.{0,20}?(?:回答|回复|示例|例子|给我|你写|你给)",
    re.I,
)
# A request for work ("Set up the HTTP server skeleton", "now add a health endpoint", "帮我写个登录页"): it asks the
# assistant to do something and states nothing about the project, so a name in it ("HTTP") is no value of a slot
TASK_REQUEST = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|now|then|next|also|and|please|pls)[,\s]+)*(?:(?:can|could|would|will) you\s+(?:please\s+)?)?"
    r"(?:set ?up|add|create|write|implement|fix|build|scaffold|generate|refactor|rename|wire up|hook up|debug|"
    r"document|draft|sketch|stub out|bootstrap)\b(?!\s+(?:to|with|on)\b)"
    r"|^\s*(?:现在|然后|接下来)?\s*(?:请你?|麻烦你?|你)?(?:帮我|给我)(?:写|加|添加|建|创建|实现|修|修复|搭|搭建|生成|重构|看看|看一下|查查|查一下)",
    re.I,
)
# "Remember that X" / "记住：X": the request is to the assistant, X is judged on its own
REMEMBER = re.compile(
    r"^(?:please\s+)?(?:remember|note|keep in mind|make a note|for the record|fyi)(?:\s+that)?[\s:,]+"
    r"|^(?:请)?(?:记住|记一下|记着|记好)[：:，,\s]*",
    re.I,
)
# A token that looks like a credential the redaction patterns did not name (long, letters and digits mixed)
SECRET_LIKE = re.compile(r"(?<![\w/.-])(?=[\w-]*\d)(?=[\w-]*[a-z])(?=[\w-]*[A-Z])[\w-]{24,}(?![\w/.-])")
# A value judged badly in its clause is not being chosen ("Meilisearch 功能不够", "Koa's plugins are too thin")
NEGATIVE_EVAL = re.compile(
    r"\b(?:too (?:slow|heavy|expensive|complex|complicated|thin|limited|immature|painful|buggy|flaky)|"
    r"(?:felt|feels|seemed|seems|looked|looks|got|gets|is|was|are|were|way|far|much|a bit|kinda) too "
    r"(?!(?:for|with|on|in|at|and|but|so|as|by|to|early|late|soon)\b)[a-z]{3,}|"
    r"(?:is|was|were|are|got|gets|getting) (?:really |way |super |pretty |kinda |too |so )?(?:slow|painful|flaky|buggy|"
    r"silly|insane|ridiculous|crazy|out of hand|too high|unusable|noisy|annoying|"
    r"expensive|unreliable|a pain|a nightmare|overkill|clunky|dead)|doesn'?t (?:scale|work|support|fit)|"
    r"didn'?t (?:scale|work)|(?:is|was|were|are|got|turned out|seemed|looked)(?: (?:much|way|even|a lot|far))? (?:worse|slower|pricier|costlier|"
    r"more expensive|heavier|clunkier)|sucks?|not good enough|not enough|lacks?|missing|killing us|hate|ditch(?:ing|ed)?|"
    r"drop(?:ping|ped)|remov(?:e|ing|ed)|get(?:ting)? rid of|phas(?:e|ing) out|retir(?:e|ing|ed)|mov(?:e|ing|ed) "
    r"(?:off|away from))\b"
    r"|\b(?:(?:is|was|that'?s) (?:for |from )?(?:a |an )?(?:different|another|other) (?:project|team|repo|app|service))\b"
    r"|(?:是)?(?:另一个|别的|其他|隔壁)(?:项目组?|团队|组|仓库|服务)|不够|不行|用不惯|用不来|不顺手|太(?!好|棒|赞|爽|强|香|多了?[，,。])[\u4e00-\u9fff]|太慢|太重|太贵|太复杂|更贵|更慢|更差|更重|不好用|不稳定|有问题|不支持|不靠谱|坑太多|扛不住|去掉|干掉|淘汰|下掉|弃用|不用了",
    re.I,
)
# A choice given up before it was made ("本来想试试 Quarkus，但团队没人用过", "we were going to use Mongo but ..."), or
# proposed by someone else: the name in its clause is turned down, not proposed
ABANDONED = re.compile(
    r"(?:本来|原本|原来|起初|一开始)(?:是)?(?:想|打算|计划|准备|考虑)|"
    # what someone else proposed or asked, reported ("之前有人提议用 Node", "someone suggested litestar", "Sam asked if we'd
    # move to vitest", "有人问要不要换 django"): a rival or their question, not the user's choice or idea
    r"(?:有人|别人|其他人|隔壁组)(?:提议|建议|提过|推荐|说要|问)|\b(?:someone|somebody|others|people) (?:suggested|proposed|pushed for|"
    r"asked (?:for|about))\b|\b(?:asked|wondered|asking)\b(?:\s+[\w-]+){0,3}?\s+(?:if|whether)\b|问(?:我们|过)?(?:要不要|能不能|可不可以|会不会|是否)|"
    r"\b(?:was|were) (?:going|planning|gonna|about) to\b|\b(?:originally|initially|at first) (?:wanted|planned|thought|"
    r"considered|went with)\b",
    re.I,
)
# "之前说数据库是 MySQL 8，其实线上是 PolarDB", "I said Jenkins earlier, actually it's GitLab CI": what was said before a
# correction is the old value, not a statement (CORRECTION must follow it in the sentence)
SAID_BEFORE = re.compile(
    r"(?:之前|以前|刚才|上次|前面|原来)(?:我)?(?:说|讲|写)(?:的|过)?|我说错了|说错了|"
    r"\b(?:i|we) (?:said|told you|mentioned|wrote)\b.*\b(?:earlier|before|previously)\b|\b(?:earlier|previously) (?:i|we) (?:said|wrote)\b",
    re.I,
)
CORRECTION = re.compile(r"其实|实际上|事实上|应该是|\b(?:actually|in fact|turns out|it'?s really|correction)\b", re.I)
# "兼容 MySQL 的那个", "a drop-in for Redis": a name that describes another, not a choice of its own
LIKENESS = re.compile(r"兼容|\b(?:compatible with|drop-in (?:replacement )?for|a (?:fork|clone) of|api-compatible)\b", re.I)
# A reply that refuses what the assistant said or proposed: it confirms nothing.
REJECTION = re.compile(
    r"^(?:no\b|nope|nah|not (?:that|really|quite|exactly)|actually,? no|wrong|incorrect|that'?s (?:wrong|not right)|"
    r"不对|不是|不行|不要|不用|别|算了|错了|不太对)",
    re.I,
)
# "..., right?", "对吧？": the tag that turns an assistant's statement into a yes/no question
QUESTION_TAG = re.compile(
    r"[\s,，]*(?:right|correct|yes|no|isn'?t it|aren'?t (?:you|they|we)|don'?t (?:you|we|they)|is that (?:right|correct)|"
    r"am i right|对吧|对吗|是吗|是吧|没错吧|吧|吗|么|呢)?\s*[?？]+\s*$",
    re.I,
)
YES_NO_START = re.compile(r"^(?:so,?\s+)?(?:do|does|did|is|are|was|were|will|would|have|has)\s+", re.I)
WH_QUESTION = re.compile(r"\b(?:what|which|who|whom|whose|when|where|why|how)\b|(?:什么|哪个|哪些|哪种|哪里|(?<!不)怎么)(?![都也])|为什么|多少",
                         re.I)
ALTERNATIVE = re.compile(r"\bor\b|还是|或者|或是", re.I)
# "Koa vs Midway", "Express 对比 Fastify": the choice being weighed, not a statement of either side
# (never the editor "VS Code")
VERSUS = re.compile(r"\b(?:vs\.?|versus)(?=\s)(?!\s*code\b)|\b(?:torn|deciding|choosing|picking|undecided|split|weighing|hesitating) between\b|之间(?:选|做选择|纠结|犹豫|摇摆|权衡)|(?<=\w)\s*(?:对比|\bVS\b(?!\s*code\b))\s*(?=\w)", re.I)
DECISION = re.compile(
    r"\b(?:we(?:'ll| will| shall| are going to| 're going to)|let'?s|let us|going with|go with|we(?:'ve| have)? "
    r"decided|decided|decision|we chose|chose|we picked|picked|(?:we(?:'ve)? )?settled on|standardi[sz]e on|"
    r"from now on|going forward|it is|stick(?:ing)? with|switch(?:ing)? to|mov(?:e|ing) to|migrat(?:e|ing) to|"
    r"adopt(?:ing)?|upgraded|bumped|approved|signed off|green-?lit|wins|won|is a go|(?:is|as) the (?:standard|default)|i meant|correction|i misspoke|(?:it|that) should be|ended up (?:with|going with|picking|using|choosing|on)|opt(?:ed|ing)? for|picking|choosing|went with|"
    r"will be (?:built|written|done|using)|is going to be|gonna (?:do|go with|use)|going to do|let'?s do|we'?ll do|"
    r"(?:was|were|has been|have been|got) (?:chosen|picked|selected))\b|^(?:use|pick|choose)\b|(?:\b(?:is|are)|(?<=\w)['’]s) in(?=\s*(?:[.!,;]|$))"
    r"|决定|定为|定成|定了|(?:就|都|已经|那就)?(?<![不没未])定(?=\s*[A-Za-z])|升到|升级到|升级为|更正|纠正|说错了|应该是|其实是|就用|直接用|选用|采用|选定|(?:我们|就)(?:最终|最后|还是|也)?选(?:了|择)?|(?<![不没未别])(?:最终|最后)(?:还是|就)?(?:选|用|定|决定|采用)|(?<![不没未别要])选(?:了|择了)|拍板|敲定|改用|换成|统一用|以后(?:都)?用|今后|从现在起|记一下|先用|先定|准备用|打算用|计划用|就这么定|用.{1,30}吧[。！!]?$",
    re.I,
)
STRONG_DECISION = re.compile(r"\b(?:decided|decision)\b|决定", re.I)
FACT = re.compile(
    r"\b(?:we(?:'re| are)\s+(?:now\s+|still\s+|currently\s+)?on|"
    r"we(?:'re| are)?\s+(?:always\s+|never\s+|currently\s+|now\s+|already\s+)?(?:use|using|run|deploy|host|write|lint|"
    r"format|store|keep|build|follow|are on|'re on)|our|all|every|always|never|must|is written in|are written in|"
    r"we(?:'re| are) an? [\w.+#-]+ (?:shop|house|team)|(?:we(?:'ve| have)?|i(?:'ve| have)?) got|set up|configured|installed|"
    r"(?:happens?|go(?:es)? out|go(?:es)?|lands?) (?:through|via|to|in|on)|stick(?:ing)? to|went|"
    r"(?:is|are) built (?:with|on|in)|(?:is|are) (?:deployed|hosted|running|stored)|runs? on|lives? (?:in|on)|uses?|follows?|"
    r"owns?|handles?|leads?|maintains?|in charge of|responsible for|(?:tech )?stack (?:is|will be)|stays?|remains?|"
    r"we(?:'re| are|'ll| will)\s+(?:also\s+)?(?:adding|keeping|introducing|bringing in|sticking with|staying on|"
    r"going all in on|moving to)|"
    r"goes? into|lives? in|stored in)\b"
    r"|我们(?:一直|都|现在|目前)?(?:用|使用|采用|在用)(?![不没])|我们的|存在|存到|存进|放在|放到|(?<=的)(?:数据|配置)?放|都放|(?<=[\u4e00-\u9fff])[放存](?=\s*[A-Za-z])|按照?\s*[^，,。;；\s][^，,。;；]{0,24}?(?:来|走|执行)(?=[，,。;；！!]|$)|交给|接入|接的是|用的(?=\s*[A-Za-z])|用\s*\S+\s*(?:写|开发|搭建?|实现)的?|所有|一律|统一|都用|一直用|部署在|跑在|托管在|用的是|是用|负责",
    re.I,
)
PROPOSAL_MARK = re.compile(
    r"\b(?:recommend|suggest|propose|could use|could go with|how about|what about|i'd go with|i would go with|"
    r"i'?d (?:pick|choose|use)|i would (?:pick|choose|use)|"
    r"let's|we could|you could|should (?:we|i)|shall (?:we|i)|want me to|go with)\b|建议|推荐|要不要|要用|可以用|不如|"
    r"用.{1,20}吧",
    re.I,
)
CONVENTION = re.compile(r"\b(?:always|never|must|every|everything|all)\b|一律|必须|统一|所有|总是|从不", re.I)
REJECTED_BEFORE = re.compile(
    r"(?:\b(?:not|instead of|rather than|as opposed to|in place of|over|than|no|without|from|replace|replacing|drop|dropping|dropped|ditch|"
    r"skip|skipped|skipping|(?:deliberately|intentionally) (?:skipped|avoided)|avoided|"
    r"ditching|ditched|dump|dumping|removing|remove|retire|retiring|off of|off|against|away from|get rid of|"
    r"getting rid of|phasing out|phase out|kill|killing)\s+"
    r"(?:the\s+|using\s+)?|(?:(?<!要)不用|不是|而不是|而非|并非|(?<!要)不要|别用|比|弃用|从|把|替换掉?|去掉|干掉|淘汰|下掉|"
    r"(?<!还)没(?:有)?(?:选|采用)|不选|放弃|(?<![跟比赶对])不(?:额外|再|单独)?(?:搞|上|引入|接入|接))\s*|"
    # a label that turns the value after it down ("- rejected: Fiber", "alternative considered = Symfony", "否决：X")
    r"\b(?:rejected|ruled out|not chosen|runner-up|alternatives?(?: considered)?|considered)\s*[:=：]\s*|"
    r"(?:否决|落选|备选|弃选|不选)(?:方案)?\s*[:=：]\s*)$",
    re.I,
)
PREFERENCE = re.compile(
    r"(?P<who>\b[Ii]\b|\b[Ww]e\b|\b(?:[Ee]veryone|[Ee]verybody|[Tt]he team)\b|\b[A-Z][a-z]{1,20}\b)\s*"
    r"(?:really\s+|strongly\s+|also\s+|still\s+|personally\s+|all\s+)?"
    r"(?P<verb>prefers?|likes?|loves?|'d prefer|would prefer|'d rather|would rather|hates?|dislikes?|"
    r"(?:doesn't|don't|does not|do not) like|can't stand|am a fan of|is a fan of|favou?rs?)\b"
    r"|(?P<who_zh>我们|我|他|她|大家|团队|[A-Za-z]{2,20}|[\u4e00-\u9fff]{2,3}?)\s*(?:也|还是|都)?\s*(?:比较|更|很|最|一直|特别)?\s*"
    r"(?P<verb_zh>不喜欢|讨厌|喜欢|偏好|偏爱|习惯|爱用|倾向于?)(?:用|使用)?",
)
MY_PREFERENCE = re.compile(r"\bmy (?:own |personal |general )?(?:favou?rite|preference|preferred)\b|我(?:的)?(?:首选|偏好是)", re.I)
NEGATIVE_PREFERENCE = re.compile(r"hate|dislike|n't like|not like|can't stand|rather avoid|不喜欢|讨厌", re.I)
NOT_A_NAME = frozenset(
    "the this that it our we you they he she there here what which who how why when where also then so and but "
    "yes no ok okay maybe perhaps hmm please let lets all every our fair great sure thanks hi hello hey".split()
)
RATIONALE = re.compile(
    r"(?:\b(?:because|since|due to|owing to|thanks to|given that|so that|as it|as they|as we)\b|\bfor (?=(?:its|their)\b)|\bfor (?=(?:[\w-]+,? (?:and |or )?){1,3}reasons?\b)|(?<=[,\s])(?:'cause|cuz|coz|"
    r"b/c)\b)\s*(?P<why>.+)$"
    r"|(?:因为|由于|原因是|毕竟|为了|考虑到|既然|出于|鉴于|看中(?:的是|了)?(?:它的)?)\s*(?P<why_zh>.+)$",
    re.I | re.S,
)
# A sentence that is the reason for the one before it ("We'll use Hono. Because the edge runtime matters.")
REASON_SENTENCE = re.compile(
    r"^(?:(?:that'?s|it'?s|this is|mainly|mostly|partly|largely|simply) (?:because|for|due to)|because|since|"
    r"(?:mainly|mostly|partly|largely) (?:for|since|due to)|due to|given that|"
    r"(?:the |our |my )?(?:main |only |real |big(?:gest)? |key )?(?:reason|rationale|why)s?(?: (?:is|are|was|being|here))?"
    r"(?: (?:simple|easy))?\s*[:：=]|the (?:main |only |real |big(?:gest)? |key )?reasons? (?:is|was|being)|"
    r"(?:the )?main (?:thing|point|driver|win|draw|selling point)s? (?:is|was|being|here is)?|"
    r"what sold (?:us|me|the team)(?: on it)? (?:was|is)|the deciding factor (?:was|is)|"
    r"the (?:big(?:gest)? |main |real )?(?:win|draw|plus|advantage|upside) (?:is|was)|看中(?:的是|了)?(?:它的)?|"
    r"主要是因为|主要因为|主要是考虑到?|主要是|主要考虑|最主要的是|因为|由于|原因是|(?:原因|理由)(?:很简单)?[:：]|理由是|为了|考虑到|毕竟)"
    r"[\s,，:：]*",
    re.I,
)
# A clause that explains the clause before it without a "because" ("..., 主要是团队 Ruby 经验多", "..., mainly for the
# plugin system"): split off as the reason, never read as a statement of its own
CLAUSE_REASON = re.compile(
    r"(?:(?<=[,，;；:：])|(?<=[—–]))\s*(?:(?:mainly|mostly|largely|partly) (?:because|for|since|due to)|"
    r"(?:the )?main (?:thing|point|reason|driver|win) (?:is|was|being)|(?:the )?(?:reason|rationale|why)\s*[:：=]|主要是因为|主要是考虑到?|主要是|主要因为|"
    r"最主要的是|理由是|原因是|主要考虑到?|(?:原因|理由)(?:很简单)?[:：]|考虑到)\s*(?P<why>.+)$",
    re.I | re.S,
)
# A sentence that follows from the one before it ("Cold starts hurt. So we moved to Fastify.")
SO_SENTENCE = re.compile(r"^(?:so|therefore|hence|that'?s why|which is why|所以|因此|于是)\b[\s,，]*", re.I)
SO_RATIONALE = re.compile(r"^(?P<why>.+?)(?:[，,]\s*(?:so|所以|因此|于是)|[，,]\s*(?=换成|改用|换用))", re.I)
# "so" / "所以" ending the text before a clause: what came before is that clause's reason ("X is too slow, so Y")
SO_BEFORE = re.compile(r"(?:\bso|\btherefore|\bhence|which is why|that'?s why|所以|因此|于是)[\s,，]*$", re.I)


# --- switches ---------------------------------------------------------------------------------------------

SWITCH = (
    re.compile(
        r"\b(?:switch(?:ed|ing)?|mov(?:ed|ing|e)|migrat(?:ed|ing|e)|went|go(?:ing)?|chang(?:ed|ing|e)|port(?:ed|ing)?|"
        r"transition(?:ed|ing)?)\s+(?:(?!from\b)[\w'-]+\s+){0,5}?(?:over\s+)?(?:from|off(?: of)?|away from)\s+(?P<old>.+?)\s+"
        r"(?:over\s+)?(?:to|onto)\s+(?P<new>.+)",
        re.I,
    ),
    re.compile(r"\breplac(?:e|ed|ing)\s+(?P<old>.+?)\s+(?:with|by)\s+(?P<new>.+)", re.I),
    re.compile(
        r"\b(?:drop(?:ped|ping)?|ditch(?:ed|ing)?|dump(?:ed|ing)?)\s+(?P<old>.+?)\s+(?:for|in favou?r of)\s+"
        r"(?P<new>.+)",
        re.I,
    ),
    re.compile(r"\b(?P<new>\S.*?)\s+(?:replaces|instead of)\s+(?P<old>.+)", re.I),
    re.compile(r"(?:不再?用|弃用|放弃)\s*(?P<old>.+?)\s*了?\s*[，,、]\s*(?:改用|换成|换用|改成|用)\s*(?P<new>.+)"),
    re.compile(r"把\s*(?P<old>.+?)\s*(?:换成|改成|替换成|替换为|换为|改为)\s*(?P<new>.+)"),
    re.compile(r"从\s*(?P<old>.+?)\s*(?:换到|迁移到|迁到|切换到|切到|改到|转到|换成|改成|改为)\s*(?P<new>.+)"),
    re.compile(r"^(?P<old>[^，,]+)[，,]\s*(?:所以|因此)?\s*(?:改用|换成|换用|切换到|迁移到)\s*(?P<new>.+)"),
    re.compile(r"(?:改用|换成|换用|改成|切换到|迁移到|迁到)了?\s*(?P<new>.+)"),
    re.compile(
        r"\b(?:switch(?:ed|ing)?|mov(?:ed|ing|e)|migrat(?:ed|ing|e))\s+(?:(?!from\b)[\w'-]+\s+){0,3}?(?:over\s+)?to\s+"
        r"(?P<new>.+)",
        re.I,
    ),
)

