"""Cue patterns for people: who owns an area ("Jonas owns the backend", "后端交给老陈", "测试这块归赵敏管") and who holds
a role ("Nadia's the PM", "our DBA is Marek", "现在 DBA 换成小林"), with the shapes of names in English and Chinese."""

from __future__ import annotations

import re

# A capitalised word that opens a sentence without being a name ("Also Jonas owns ...")
_NOT_FILLER = (r"(?!(?:Also|And|But|So|Oh|Ok|Okay|Then|Now|Our|The|Btw|Plus|Yes|Yeah|Sure|Everything|Everyone|It|This|"
               r"That|All|Nothing|Something|Prod|Production|Staging)\b)")
# A person named in Chinese text: a Latin given name with a Chinese surname ("Kevin 张"), a capitalised name, or a
# familiar name (老周, 小美, 阿强: 老/小/阿 and one character)
ZH_PERSON = r"[A-Z][a-z]+\s*[\u4e00-\u9fff](?![\u4e00-\u9fff])|[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?|[老小阿][\u4e00-\u9fff](?=[^\u4e00-\u9fff]|$|[了来说负也都管])"
# A title before a name is kept with it ("Dr. Okafor")
_TITLE = r"(?:(?:Dr|Prof|Mrs|Mr|Ms)\.\s?)?"
# A surname after a given name, also a hyphenated one ("Fatima Al-Sayed")
_SURNAME = r"[A-Z][a-zà-ÿ]{1,20}(?:-[A-Z][a-zà-ÿ]{1,20})?"
_AFFILIATION = r"(?:\([^)]{1,40}\)\s+|from\s+(?:the\s+)?[a-z][\w-]*(?:\s+team)?\s+)?"  # "Ravi from platform", "Dana (dana.k on slack)"
OWNER = re.compile(
    rf"(?P<who>(?<![\w-]){_TITLE}{_NOT_FILLER}[A-Z][a-zà-ÿ]{{1,20}}(?:\s+{_SURNAME})?\b)\s+{_AFFILIATION}(?:now\s+|also\s+|[a-z]{{4,}}ly\s+)?(?:owns|will own|(?:is|'s) going to own|handles|will handle|leads|will lead|"
    r"maintains|is responsible for|is in charge of|takes care of|runs|is (?:leading|handling|running|managing|"
    r"taking care of|looking after)|looks after|manages|will manage|will run|will take care of|"
    r"took over|takes over|has taken over|is taking over|will take over)\s+"
    r"(?:the\s+|our\s+|all (?:the |of the |our )?)?(?P<area>[\w\s./-]{2,40}(?:\s*[+&]\s*[\w\s./-]{2,30})?)"
    r"|(?P<who_zh>[\u4e00-\u9fff]{2,3}?|[A-Za-z]{2,20})\s*(?:[（(][^）)]{1,8}[）)])?\s*(?:现在|也|来)?负责(?!人)\s*(?P<area_zh>[\w\u4e00-\u9fff ]{1,12})"
    r"|(?P<area_zh2>(?:(?![由是归])[\w\u4e00-\u9fff]){1,8})\s*(?:那边|这边|这块|的话|方面|部分)?\s*(?:由|是|归)?\s*"
    r"(?P<who_zh2>[\u4e00-\u9fff]{2,3}?|[A-Z][a-z]+)\s*(?:来)?负责(?=[。，,！!；;]|$)"
    # "后端交给老陈", "前端归小美": an area handed to someone
    r"|(?P<area_zh3>[\w\u4e00-\u9fff]{1,8}?)\s*(?:现在|目前|以后)?(?:那边|这边|这块|的活)?(?:先|暂时|也|都|就)?(?:交给|归)了?\s*"
    # "测试这块归赵敏管": a whole Chinese name when 管 or 负责 follows it
    rf"(?P<who_zh3>{ZH_PERSON}|[\u4e00-\u9fff]{{2,3}}?(?=\s*(?:来)?(?:管|负责)))(?=\s*(?:[。，,！!；;（(]|$|来|负责|了|管))",
)
ROLE_STATEMENT = re.compile(
    rf"(?P<who>(?<![\w-]){_TITLE}{_NOT_FILLER}[A-Z][a-zà-ÿ]{{1,20}}(?:\s+{_SURNAME})?\b)(?:'s(?=\s+(?:the|our)\s)|\s+{_AFFILIATION}"
    r"(?:is|(?:has )?joined (?:us )?as|joins (?:us )?as|is joining (?:us )?as|came on(?:board)? as))\s+"
    r"(?:(?:also|still)\s+)?(?:now\s+)?(?:[a-z]{4,}ly\s+)?(?:(?:our|the|now the|now our|now|a|an)\s+)?(?:new\s+)?"
    r"(?P<role>(?:[\w-]+\s+){0,2}(?:lead|manager|designer|owner|on[- ]call|dba|architect|engineer|pm|maintainer)\b"
    r"|(?<=our |the |now )(?!one\b)[\w\s-]{2,40})"  # "Ciarán is the one who knows PostGIS": no role
    r"|\b(?i:our|the)\s+(?:new\s+)?(?P<role2>[\w -]{2,30}?)\s+(?:is|will be)\s+(?:now\s+)?"
    r"(?P<who2>[A-Z][a-z]{1,20}(?:\s+[A-Z][a-z]{1,20})?)\b"
    r"|(?P<who_zh>[\u4e00-\u9fff]{2,3}?|[A-Za-z]{2,20})\s*(?:还|也|仍然|依然)?是\s*(?:我们的?|团队的?|项目的?)?(?P<role_zh>[\u4e00-\u9fff\w ]{2,16})"
    r"|(?:我们的?|团队的?|项目的?)?\s*(?<![A-Za-z0-9])(?P<role_zh2>[\u4e00-\u9fff\w -]{2,16}?)\s*(?:现在|目前)?(?:是|由)\s*"
    rf"(?P<who_zh2>{ZH_PERSON}|[\u4e00-\u9fff]{{2,3}}|[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)(?:来当|担任)?"
    r"(?=\s*(?:老师|了)?\s*(?:[。，,！!；;（(]|this week|$))"
    # "找 DBA 老马", "设计师 Chloe 说": a role word right before a name
    # "现在 DBA 换成小林", "值班换成老陈了": the role handed to someone else
    rf"|(?P<role_zh3>(?<![A-Za-z])(?i:dba|pm)(?![A-Za-z])|设计师|产品经理|技术负责人|项目经理|值班)\s*(?:现在|目前)?(?:换成|改成|改由|换)?了?\s*"
    rf"(?P<who_zh3>[老小阿][\u4e00-\u9fff]|{ZH_PERSON})",
)
