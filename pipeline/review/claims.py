"""What one turn claims, read by rules: the words of its subject, the values it states, and what kind of
statement it is (a question, a plan, an aside about the past, a change). Pure: text in, a `Claim` out.

Update detection (pipeline/review/updates.py) compares two claims. It needs no attribute table: a newer
statement of the same subject whose value differs is an update whatever the attribute is, so the work here
is telling the subject of a sentence from its value in English, Chinese and text that mixes the two:

- values are what can change while the subject stays: numbers and amounts ("50k", "5万", "$1,200"), times
  and days ("3pm", "周五"), proper names and identifiers ("Slack", "Postgres", "v2.3"), and the polarity of
  the sentence ("no longer", "不再");
- the subject is the content words left (English words stemmed, CJK as character bigrams);
- the holder is whose the statement is: "my sister lives in Paris" is not about the speaker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from pipeline.review.zh_numbers import ZH_NUMBER, zh_number

CJK = r"\u3400-\u4dbf\u4e00-\u9fff"
_CJK_CHAR = re.compile(f"[{CJK}]")
# Latin words (with inner dots, commas, apostrophes, hyphens: "2.3", "50,000", "don't", "e-mail") or one CJK run.
TOKEN = re.compile(rf"[{CJK}]+|[^\W_]+(?:[.,'’\-][^\W_]+)*", re.UNICODE)
TEXT_CHARS = 600  # what is read of a long turn: a statement of a value sits in its first sentences

# -- kinds of statement ----------------------------------------------------------------------------------

_QUESTION_START = re.compile(
    r"^(?:is|are|was|were|do|does|did|can|could|will|would|should|shall|have|has|what|which|who|whom|"
    r"whose|when|where|why|how|any\s+chance|right)\b",
    re.I,
)
# Asking the assistant for something states nothing about the present: "could you output the whole file",
# "I need a runbook for the Redis migration", "show me", "帮我".
_REQUEST = re.compile(
    r"^(?:please\b|pls\b|help\s+me\b|(?:show|give|tell|write|explain|make|generate|fix|output|create|draft|"
    r"summari[sz]e|translate|list|check|review|add|remove|rewrite|refactor)\s+(?:me|us|a|an|the|my|our|this|"
    r"that|it)\b)|\bi\s+(?:need|want|would\s+like)\s+(?:a|an|some|help|you|to\s+know)\b|^(?:帮我|请|麻烦|给我)",
    re.I,
)
# "Thanks, Gina!", "Wow, Dave", "Glad it helped, Melanie!": a name the speaker addresses is not a value.
_VOCATIVE = re.compile(
    r"\b(?i:hi|hey|hello|thanks|thank\s+you|thx|ty|wow|sure(?:\s+thing)?|go|ok|okay|yes|yeah|yep|sorry|bye|"
    r"congrats|congratulations|dear|morning|night|haha|lol|oh|aw+|hiya|yo|cheers|love\s+you|miss\s+you)"
    r"[\s,!.]+[A-Z][\w'-]*|,\s*[A-Z][\w'-]*\s*(?=[!.?]|$)",
)
# Where a turn moves on: sentence ends (not a decimal point: "80.5 kg"), brackets, asides ("oh and", "btw", "ok so"); not a dash, which
# often joins the new value to the old ("Not in Toronto anymore — Lyon since the spring").
_CLAUSE = re.compile(
    r"(?:(?<=[!?。！？;；])|(?<=\.)(?!\d))\s*|\s+[—–-]{1,2}\s+(?=(?:oh|btw|anyway|also|unrelated|ok\s+so)\b)|[()（）\n]|"
    r"\b(?:oh\s+and|btw|anyway|ok\s+so|unrelated(?:ly)?)\b",
    re.I,
)
# "[shares a photo: a photo of a waterfall]": what the chat export says of an attachment, not what was said;
# two such captions share "shares" and "photo" whatever they show.
_ANNOTATION = re.compile(r"\[[^\]]{0,400}\]")
# "Mei: the blue one": a chat export names its speaker at the start of the turn.
SPEAKER_PREFIX = re.compile(r"^\s*([A-Z][\w.'-]*(?:\s[A-Z][\w.'-]*)?)\s?:\s+")
# A state said with a copula ("the budget is 80k", "通知发到钉钉", "manager: Priya") can hold one value at a
# time; an event ("made a burrito and it was mid") or a list cannot be replaced by its like.
_COPULA = re.compile(r"\b(?:is|are|'s|=|will\s+be|set\s+to|now)\b|[:：=]|是|为|叫|在|到|改|换|定", re.I)
_QUESTION_ZH = re.compile(
    r"(?:吗|么|呢|是不是|对吧|对不对|有没有|要不要|能不能|多少|几[个点号]|什么|哪)[\s。.!！~～]*$"
)
# Plans, wishes and suppositions state no current value: "if we had 100k", "I might move to Berlin".
_HYPOTHETICAL = re.compile(
    r"\b(?:if|unless|suppose|supposing|imagine|might|may\s+be\s+(?:going|able)|maybe\s+(?:one\s+day|someday)|"
    r"someday|some\s+day|one\s+day|would\s+(?:love|like|be)|wish|hope\s+to|hoping\s+to|thinking\s+(?:of|about)|"
    r"considering|plan(?:ning)?\s+to|could\s+(?:be|go|try|use)|in\s+case|what\s+if|dream)\b|"
    r"如果|假如|要是|万一|也许|可能会|或许|打算|考虑|想要|希望|哪天|有一天|的话",
    re.I,
)
# An intention or a change that starts later ("I want to sleep 8 hours", "I'm going to run 10 km a week
# starting next month", "我准备下个月开始每天跑5公里") states what the speaker means to do, not what holds:
# a plan beside a fact is no update of it (issue 46). Wanting to have something recorded or fixed ("I want to
# update the limit to 5,000", "我想把预算改成…") is a request that takes the value as given, and "going to"
# a place is a habit, so neither is a plan.
_PLAN = re.compile(
    r"\b(?:i|we)(?:'m|\s+am|'re|\s+are|'d|\s+would)?\s+(?:really\s+|still\s+|also\s+)?"
    r"(?:want(?:s|ed)?\s+to|wanna|going\s+to|gonna|aim(?:ing)?\s+to|intend(?:ing)?\s+to|"
    r"(?<='d\s)like\s+to|(?<=would\s)like\s+to|trying\s+to|try\s+to|mean\s+to)\s+"
    r"(?!(?:make\s+sure|update|change|set|edit|fix|correct|add|record|note|log|track|save\s+(?:this|that|it)|"
    r"know|ask|check|see|understand|learn|figure|confirm|tell|mention|the|a|an|my|our|work|school|church|bed|"
    r"class|gym)\b)|"
    r"\b(?:starting|beginning|from|as\s+of)\s+(?:next|tomorrow)\b|"
    r"(?:我|我们)(?:也|还)?(?:准备|计划|想要|要开始|将要|将会)|(?:下个?(?:月|周|星期|礼拜)|明年|明天)开始",
    re.I,
)
# An assistant proposing a value ("you could raise it to 60k", "建议改成…") has not been told it.
_SUGGESTION = re.compile(
    r"\b(?:you\s+(?:could|might|may|should|can)|how\s+about|what\s+about|why\s+not|consider|i\s+(?:would|'d)\s+"
    r"(?:suggest|recommend|go)|i\s+suggest|i\s+recommend|maybe|perhaps|one\s+option|an\s+option|alternatively"
    r")\b|建议|可以考虑|不妨|要不|或者|试试",
    re.I,
)
# A value told as history is the value then, whenever it is said ("I used to have 3 cats", "when I first
# joined, standup was at 10", "我刚来的时候…"). Not a recent period ("in the past few weeks") nor a reference
# back ("as I previously mentioned"). recall's value_order reads these alone; `_PAST` adds the times below.
_HISTORY_EN = (
    r"used\s+to|back\s+(?:then|when)|formerly|originally|at\s+first|"
    r"(?<!mentioned\s)(?<!said\s)(?<!told\syou\s)previously(?!\s+(?:mentioned|said|told|noted|discussed|shared))|"
    r"in\s+the\s+past(?!\s+(?:\w+\s+){0,2}(?:days?|weeks?|months?|years?|hours?|decades?)\b)|"
    r"when\s+(?:i|we)\s+(?:was|were|started|joined|first|launched)"
)
_HISTORY_ZH = r"以前|过去|小时候|当年|曾经|那时|那会儿|当初|原来|刚.{0,8}的时候|一开始"
HISTORY = re.compile(rf"\b(?:{_HISTORY_EN})\b|{_HISTORY_ZH}", re.I)
# History that leaves the present alone ("I used to live in Rome"), unless it also says what holds now: the
# markers above, and a time that is past ("years ago", "last summer", 去年; "once", but not "once a week").
_PAST = re.compile(
    rf"\b(?:{_HISTORY_EN}|back\s+in|years?\s+ago|as\s+a\s+kid|"
    r"once(?!\s+(?:a|an|per|every|more|again|or|daily|weekly|monthly|in\s+a\s+while)\b))\b|"
    r"last\s+(?:year|summer|winter|spring|autumn|fall|week(?:end)?|night|time|monday|tuesday|wednesday|thursday|"
    rf"friday|saturday|sunday)|{_HISTORY_ZH}|之前|去年",
    re.I,
)
# Says the value changed, or is the one holding now.
_CHANGE = re.compile(
    r"\b(?:now|anymore|any\s+more|no\s+longer|switch(?:ed|ing)?|chang(?:ed|ing)|"
    r"mov(?:ed|ing)|updat(?:ed|ing)|bump(?:ed)?|rais(?:ed|ing)|lower(?:ed)?|increas(?:ed|ing)|"
    r"decreas(?:ed|ing)|cut|went\s+(?:up|down)|go(?:ing)?\s+(?:up|down)|from\s+now\s+on|going\s+forward|"
    r"instead|replac(?:ed|ing)|revised|became|become|turned|upgrad(?:ed|ing)|"
    r"downgrad(?:ed|ing)|extend(?:ed)?|postpon(?:ed|ing)|push(?:ed)?\s+(?:back|out)|moved?\s+up|"
    r"reschedul(?:ed|ing)|dropp(?:ed|ing)|stopp(?:ed|ing)|gave\s+up|not\s+\S+\s+anymore|"
    r"from\s+\S+\s+to|is\s+(?:now|going\s+to\s+be)|will\s+be|starting|effective)\b|"
    r"现在|如今|改成|改为|改到|改了|换成|换到|换了|变成|变为|变了|调整|调到|调成|以后|今后|往后|从今天|从现在|"
    r"不再|不用|不要再|已经不|提高|提到|降低|降到|涨到|涨了|降了|升级|搬到|搬去|搬家|推迟|延期|提前|更新|"
    r"改用|换用|取消|停了|戒了",
    re.I,
)
_CHANGE_ZH = re.compile(
    r"现在|如今|目前|改成|改为|改到|改了|换成|换到|换了|变成|变为|变了|调整|调到|调成|以后|今后|往后|从今天|从现在|"
    r"不再|不用|不要再|已经不|不是|提高|提到|降低|降到|涨到|涨了|降了|更新一下|更新|终于|已经|一共|只剩|总共"
)
# The sentence turns a habit, a liking or a yes into its opposite.
_NEGATED_CHANGE = re.compile(
    r"\b(?:no\s+longer|not\s+(?:\S+\s+){0,3}(?:anymore|any\s+more)|(?:don't|doesn't|do\s+not|won't|can't|"
    r"didn't|isn't|aren't|never)\s+(?:\S+\s+){0,4}(?:anymore|any\s+more|again)|stopp(?:ed|ing)|"
    r"(?<!won't\s)(?<!not\s)(?<!never\s)(?<!n't\s)quit|"
    r"gave\s+up|dropp(?:ed|ing)(?!\s+(?:off|by|in|me|us|her|him|them)\b)|cancel(?:l)?ed|off\s+\w+\s+now|done\s+with|over\s+it|not\s+using)\b|"
    r"不再|以后不|再也不|不用再|不要再|已经不|别再|停了|戒了|取消了|不.{0,6}了|没.{0,4}了",
    re.I,
)
# Both hold: "I also like coffee", "她也住巴黎".
_ADDITIVE = re.compile(
    r"\b(?:also|too|as\s+well|both|another|in\s+addition|besides|plus)\b|也|还有|另外|都", re.I
)
# Verbs of relations that hold many values at once: liking tea does not stop liking coffee.
_MULTI = re.compile(
    r"\b(?:like[sd]?|love[sd]?|enjoy(?:s|ed)?|adore[sd]?|ha(?:ve|s|d)|own(?:s|ed)?|speak(?:s)?|play(?:s|ed)?|"
    r"know(?:s)?|visit(?:ed|s)?|read(?:s)?|watch(?:es|ed)?|collect(?:s)?|follow(?:s)?|use[sd]?|"
    r"fan\s+of|into)\b|喜欢|爱吃|爱喝|爱看|会说|养了|收藏|关注",
    re.I,
)


def _words(text: str) -> list[str]:
    return text.split()


# Whose statement it is, when not the speaker's own: a relation, a third person, nobody in particular.
_PERSON_NOUNS = _words(
    "sister brother sibling mom mum mother dad father parent parents wife husband spouse partner boyfriend "
    "girlfriend fiance fiancee son daughter kid kids child children baby toddler grandson granddaughter "
    "nephew niece boss manager friend friends colleague coworker teammate classmate roommate flatmate "
    "neighbor neighbour cousin aunt uncle grandma grandpa grandmother grandfather team client customer "
    "doctor dentist nurse therapist physio pharmacist surgeon teacher coach trainer landlord lawyer"
)
_HOLDER_WORDS = _PERSON_NOUNS + _words(
    "he she him his her hers they them their theirs nobody everybody everyone someone somebody anyone anybody"
)
_HOLDER_SET = frozenset(_HOLDER_WORDS)
# "my sister's", "the kid's", "my boss's": the tokenizer keeps "sister's" one word, whether it is a possessive
# or "sister is" ("My sister's not allergic anymore"); either way the sister holds what follows.
_POSSESSIVE = re.compile(r"^(?P<noun>\w+?)(?:'s|’s|s'|s’|')$")
# Words said by someone else, or not said as a fact at all (issue 44). Read on the raw turn: a chat export's
# "Name: " prefix would strip "Quote: ...".
_VOICE_FRAMES = (
    # Reported speech by anyone but the speaker: `He said: "..."`, "the doctor says I should ...",
    # "you told me ...". The speaker's own "I said" stays theirs.
    (
        "~reported",
        re.compile(
            r"\b(?!i\b|we\b)[a-z]+(?:'s)?\s+(?:(?:just|always|once|also|then|had|has|keeps?|kept)\s+)?"
            r"(?:said|says|say|saying|told|tells|wrote|writes|asked|asks|replied|replies|claims?|claimed|"
            r"insists?|insisted|thinks|reckons|believes|mentioned|tweeted|posted|texted|announced)\b|"
            r"\baccording\s+to\b|(?:他|她|别人|有人|医生|老师)(?:说|告诉|提到|认为|觉得)",
            re.I,
        ),
    ),
    # A quotation: "Quote from the book: ...", a colon opening quotation marks, a turn that is one quote.
    (
        "~quote",
        re.compile(
            r"\b(?:quote[sd]?|quoting|quotation|excerpt|citation|transcript|verbatim|lyrics?)\b|"
            r"[:：]\s*[\"“”«「『]|^\s*[\"“«「『]|引用|摘自|原话",
            re.I,
        ),
    ),
    # An example or a template: "Dosage example: I take 40mg ...", "e.g. I live in Paris".
    (
        "~example",
        re.compile(
            r"\b(?:examples?|e\.g\.?|for\s+instance|sample|template|placeholder|hypothetically|"
            r"pretend|role-?play)\b|例如|比如|举例|举个例子|示例|模板",
            re.I,
        ),
    ),
)
# The speaker says it of themself: health and allergy facts change only with this (issue 44).
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|im|i've|i'd|me|my|mine|myself)\b|我(?!们)", re.I)
# Health, allergies, medication: a wrong "no longer" here is dangerous, so it needs the speaker's own word.
_HEALTH = re.compile(
    r"\b(?:allerg\w*|intoleran\w*|anaphyla\w*|epipen|medication|medicine|meds|dose|dosage|\d+\s?mg|"
    r"mg\b|pills?|tablets?|prescri\w*|diagnos\w*|asthma|diabet\w*|insulin|blood\s+pressure|"
    r"penicillin|inhaler|seizures?|epilep\w*|pregnan\w*|celiac|coeliac|lactose|gluten)|"
    r"过敏|药|剂量|毫克|处方|诊断|哮喘|糖尿病|血压|怀孕",
    re.I,
)
_HOLDER_ZH = re.compile(
    r"(?:姐姐|妹妹|哥哥|弟弟|妈妈|母亲|爸爸|父亲|父母|老婆|老公|妻子|丈夫|男朋友|女朋友|对象|儿子|女儿|孩子|老板|经理|领导|"
    r"朋友|同事|室友|邻居|表哥|表姐|表妹|表弟|堂哥|堂姐|阿姨|叔叔|舅舅|奶奶|爷爷|外婆|外公|客户|他们|她们|他|她)"
)

_STOP = frozenset(
    _words(
        "a an the and or but so of to in on at for with from by about as into onto over under up down "
        "out off is are was were be been being am do does did done have has had having will would shall "
        "should can could may might must i me my mine we us our ours you your yours it its this that "
        "these those there here what which who whom whose when where why how not no yes yeah yep ok okay "
        "oh ah hey hi hello thanks thank please just really very also too still now then than more most "
        "some any all every each other again ever never always already yet only even well lol haha hmm "
        "btw fyi tbh im ive dont got get gets getting go going gone went say said tell told think "
        "thought know let lets make made want wanted need needed like one thing things stuff way lot bit "
        "much many anymore actually currently instead new latest switched switch changed change moved "
        "move updated update noted sure right great cool nice sounds good got it will be is longer "
        "bucks buck dollars dollar euros euro yuan rmb usd eur gbp pounds cents percent minutes mins "
        "minute hours hour hrs"
    )
) | frozenset(_HOLDER_WORDS)
_STOP_ZH = frozenset("的了是我你我们在和也就都还吧呢吗啊呀哦嗯好个这那有把给被让到从对说哈嘿嘻呵啦哇")
# Chat filler that two unrelated turns share ("take care, talk soon", "今天"): never a subject on its own.
_FILLER_SUBJECT = frozenset(
    _words(
        "gonna wanna gotta i'm it's that's can't don't won't didn't isn't wait thanks take care talk soon see "
        "later keep wow awesome look looks great glad help hard good bad fun cool love hope feel feeling today "
        "tonight tomorrow yesterday week day time lol omg haha hahaha yay ugh sure true real pretty kind sort "
        "today's tho though amazing amaz last i've happen happened exciting excit super hooked lately news "
        "crazy doing different stuff thing things pretty totally literally"
    )
) | frozenset({"今天", "明天", "昨天", "哈哈", "晚安", "早安", "没事", "好的"})

# Month names and their abbreviations, the twelve full names first (fact_values cuts a place before them too).
MONTHS = _words(
    "january february march april may june july august september october november december jan feb "
    "mar apr jun jul aug sep sept oct nov dec"
)
_DAYS = "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun"
_DAY_SET = frozenset(_DAYS.split())
_MONTH_SET = frozenset(MONTHS) - {"may"}  # "may" is far more often the verb
_DAY_ZH = re.compile(r"(?:周|星期|礼拜)[一二三四五六日天末]")
_MULTIPLIER = {"k": 1e3, "m": 1e6, "mm": 1e6, "b": 1e9, "万": 1e4, "千": 1e3, "百": 1e2, "亿": 1e8}
# A number with an optional multiplier and unit: "50k", "$1,200", "5万", "80,000元", "3.5", "15%".
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9.])[$€£¥]?\s?(\d+(?:[,，]\d{3})*(?:\.\d+)?)\s?(k|mm|m|b|万|千|百|亿)?(?![A-Za-z0-9]|[号日](?!元))",
    re.I,
)
_CLOCK = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s?(am|pm)\b|\b(\d{1,2}):(\d{2})\b|(\d{1,2})点(?:半)?", re.I)
_CAPITAL = re.compile(r"(?<![.!?。！？]\s)(?<!^)\b([A-Z][\w\-]*[A-Za-z0-9])")
_IDENT = re.compile(r"\b[A-Za-z][A-Za-z\-]*\d[\w.\-]*\b")  # "v2", "Q3", "gpt-4", "py3.12" (not "50k")
_MONTH_NUMBER = (
    {m: i for i, m in enumerate(MONTHS[:12], start=1)}
    | {
        m: i
        for i, m in enumerate(
            ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1
        )
    }
    | {"sept": 9}
)
# "May 23", "23 May", "April 30th", "7月15号", "6月30日": one date, not a month and a number.
_DATE = re.compile(
    r"\b(?P<m1>"
    + "|".join(sorted(_MONTH_NUMBER, key=len, reverse=True))
    + r")\.?\s+(?P<d1>\d{1,2})(?:st|nd|rd|th)?\b|"
    r"\b(?P<d2>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m2>"
    + "|".join(sorted(_MONTH_NUMBER, key=len, reverse=True))
    + r")\b|"
    r"(?P<m3>\d{1,2})\s?月\s?(?P<d3>\d{1,2})\s?[日号]",
    re.I,
)
_ORDINAL = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b|(\d{1,2})[号日](?!元)", re.I)  # "the 14th", "14号"
_VERSION = re.compile(r"v(\d+(?:\.\d+)*)")
_QUOTED = re.compile(r"[\"“「『]([^\"”」』]{1,40})[\"”」』]")
# Channels and the like, which people write in lower case: a value, never the subject.
_COMMON_VALUES = frozenset(
    _words(
        "email e-mail slack teams discord telegram whatsapp wechat sms phone zoom jira "
        "trello notion asana github gitlab postgres postgresql mysql sqlite mongodb redis python java go "
        "rust typescript javascript kotlin swift aws gcp azure monday tuesday wednesday thursday friday "
        "saturday sunday weekly daily monthly biweekly remote hybrid "
        "office tea coffee vegan vegetarian"
    )
)
_COMMON_VALUES_ZH = re.compile(
    r"飞书|钉钉|企业微信|微信|邮件|邮箱|短信|电话|QQ|每天|每周|每月|远程|线上|线下|咖啡|茶"
)


@dataclass(frozen=True, slots=True)
class Claim:
    """What one turn says, as update detection reads it."""

    subject: frozenset[str]  # content words (stemmed) and CJK bigrams, values and markers left out
    values: frozenset[str]  # typed values: "n:50000", "t:15:00", "d:friday", "p:slack", "q:..."
    holders: frozenset[str]  # whose it is when not the speaker's: relations, third persons
    question: bool
    hypothetical: bool
    suggestion: bool
    plan: bool  # every clause that carries a value says what the speaker means to do, not what holds
    past: bool  # tells of the past without saying what holds now
    change: bool  # says something changed, or what holds now
    negated_change: bool  # turns a habit, a liking or a yes off
    additive: bool  # "also", "too", "也": adds a value beside the ones before
    multi: bool  # a relation that holds many values at once (like, have, speak)
    cjk: bool
    copula: bool  # said as a state that holds one value ("is", ":", "是"), not an event
    first_person: bool = True  # the speaker says it of themself ("I", "my", "我")
    health: bool = False  # health, allergy or medication: changes only with the speaker's own word
    # (subject, values) per clause: a value counts only beside the subject it is said of ("page 500 is slow
    # — oh and I spent 20 minutes chasing the rabbit" does not change 500 to 20).
    clauses: tuple[tuple[frozenset[str], frozenset[str], bool], ...] = ()  # (subject, values, negated)

    @property
    def asserts(self) -> bool:
        """Whether it states something about the present at all."""
        return not (self.question or self.hypothetical or self.plan or self.past)


@lru_cache(maxsize=8192)
def claim(text: str) -> Claim:
    """Read one turn. Cached: recall reads the same candidates query after query."""
    stripped = _ANNOTATION.sub(" ", SPEAKER_PREFIX.sub("", text[:TEXT_CHARS], count=1)).strip()
    lowered = stripped.casefold()
    change = bool(_CHANGE.search(stripped))
    plain = _VOCATIVE.sub(" ", stripped)
    values = _values(plain)
    clauses = tuple(
        (_subject(c, v), frozenset(v), bool(_NEGATED_CHANGE.search(c)))
        for c in _CLAUSE.split(plain)
        if c.strip()
        for v in [_values(c)]
    )
    return Claim(
        subject=_subject(plain, values),
        values=frozenset(values),
        holders=_holders(lowered, stripped) | _voice(text[:TEXT_CHARS]),
        question=_is_question(stripped) or bool(_REQUEST.search(stripped)),
        hypothetical=bool(_HYPOTHETICAL.search(stripped)),
        suggestion=bool(_SUGGESTION.search(stripped)),
        plan=_plans(plain),
        past=bool(_PAST.search(stripped)) and not change,
        change=change,
        negated_change=bool(_NEGATED_CHANGE.search(stripped)),
        additive=bool(_ADDITIVE.search(stripped)),
        multi=bool(_MULTI.search(stripped)),
        cjk=bool(_CJK_CHAR.search(stripped)),
        copula=bool(_COPULA.search(stripped)),
        first_person=bool(_FIRST_PERSON.search(stripped)),
        health=bool(_HEALTH.search(stripped)),
        clauses=clauses,
    )


def _plans(text: str) -> bool:
    """Each sentence of `text` that carries a value is a plan's, and one at least does ("I sleep 6 hours. I
    want to sleep 8." states the 6 as a fact). Read per sentence, so that a plan said in a clause of its own
    ("…, starting next month") covers its sentence; a sentence that holds a fact and a plan ("I sleep 6
    hours, but I want to sleep 8") is a plan here, which only keeps review from linking it (recall's
    `value_order` reads each clause apart and still finds the 6)."""
    if not _PLAN.search(text):
        return False  # most turns: no sentence to read for values a second time
    sentences = [s for s in re.split(r"(?<=[.!?。！？;；])\s*", text) if s.strip()]
    valued = [s for s in sentences if _values(s)]
    return bool(valued) and all(_PLAN.search(s) for s in valued)


@lru_cache(maxsize=4096)
def all_values(text: str) -> frozenset[str]:
    """Every typed value of a turn, read to its end (`claim` reads its first `TEXT_CHARS`): a long request
    states values in passing anywhere (issue 46)."""
    return frozenset(_values(_ANNOTATION.sub(" ", text)))


def _is_question(text: str) -> bool:
    last = text.rstrip(" \t\n.!~～)")
    if last.endswith(("?", "？")):
        return True
    first_sentence = re.split(r"(?<=[.!?。！？])\s*|\n", text, maxsplit=1)[0].strip()
    if first_sentence.endswith(("?", "？")):
        return True
    if _QUESTION_ZH.search(first_sentence) and len(text) < 60:
        return True
    return bool(_QUESTION_START.match(first_sentence)) and len(first_sentence) < 160


def _values(text: str) -> set[str]:
    dates = {
        f"d:{_month(m)}-{int(m.group('d1') or m.group('d2') or m.group('d3'))}" for m in _DATE.finditer(text)
    }
    rest = _DATE.sub(" ", text)
    return dates | _clock_values(rest) | _number_values(rest) | _word_values(rest)


def _month(m: re.Match[str]) -> int:
    named = m.group("m1") or m.group("m2")
    return _MONTH_NUMBER[named.casefold().rstrip(".")] if named else int(m.group("m3"))


def _clock_values(text: str) -> set[str]:
    out: set[str] = set()
    for m in _CLOCK.finditer(text):
        if m.group(3):
            hour = int(m.group(1)) % 12 + (12 if m.group(3).lower() == "pm" else 0)
            out.add(f"t:{hour}:{m.group(2) or '00'}")
        elif m.group(4):
            out.add(f"t:{int(m.group(4))}:{m.group(5)}")
        else:
            out.add(f"t:{int(m.group(6))}:zh")
    return out


def _number_values(text: str) -> set[str]:
    out: set[str] = set()
    clock_spans = [m.span() for m in _CLOCK.finditer(text)]
    for m in _NUMBER.finditer(text):
        if any(a <= m.start() < b for a, b in clock_spans):
            continue  # "3:30" is a time, not the numbers 3 and 30
        digits = m.group(1).replace(",", "").replace("，", "")
        out.add(f"n:{float(digits) * _MULTIPLIER.get((m.group(2) or '').lower(), 1.0):g}")
    for m in ZH_NUMBER.finditer(text):
        run = m.group("run") or m.group("bare")
        number = zh_number(run)
        unit = m.group("unit")
        if number is None:
            # Two numbers run together ("三千二一个月": 3,200 a month): the longest start that is one, whose
            # unit is then not the counter after the run.
            run = next((run[:i] for i in range(len(run) - 1, 1, -1) if zh_number(run[:i]) is not None), "")
            number, unit = (zh_number(run), None) if run else (None, None)
        if number is None or run == "一":  # "一个月", "一周": an article more often than a count
            continue
        if unit == "点":  # "三点": a time
            out.add(f"t:{number:g}:zh")
        else:
            out.add(f"n:{number:g}")
    return out


def _word_values(text: str) -> set[str]:
    out: set[str] = set()
    for m in _CAPITAL.finditer(text):
        word = m.group(1).casefold()
        if word not in _STOP and word not in _MONTH_SET and word not in _DAY_SET and word != "i":
            out.add(f"p:{word}")
    for m in _IDENT.finditer(text):
        ident = m.group(0).casefold()
        version = _VERSION.fullmatch(ident)
        out.add(f"n:{version.group(1)}" if version else f"p:{ident}")  # "v5.3" is the number 5.3
    out.update(f"q:{m.group(1).casefold().strip()}" for m in _QUOTED.finditer(text))
    for word in TOKEN.findall(text.casefold()):
        if word in _DAY_SET or word in _MONTH_SET:
            out.add(f"d:{word[:3]}")
        elif word in _COMMON_VALUES:
            out.add(f"p:{word}")
    out.update(f"d:{m.group(0)[-1]}" for m in _DAY_ZH.finditer(text))
    out.update(f"d:{int(m.group(1) or m.group(2))}" for m in _ORDINAL.finditer(text))
    out.update(f"p:{m.group(0).casefold()}" for m in _COMMON_VALUES_ZH.finditer(text))
    return out


def _holders(lowered: str, text: str) -> frozenset[str]:
    words = set(TOKEN.findall(lowered))
    found = {w for w in _HOLDER_WORDS if w in words}
    for word in words:
        possessive = _POSSESSIVE.match(word)
        if possessive and possessive.group("noun") in _HOLDER_SET:
            found.add(possessive.group("noun"))
    found.update(m.group(0) for m in _HOLDER_ZH.finditer(text))
    # Pronouns name the same person in two ways; what matters is whether someone else is named at all.
    return frozenset(found)


def _voice(raw: str) -> frozenset[str]:
    """Markers of words that are not the speaker's own statement of fact: reported speech, a quotation, an
    example. They join the holders, so such a turn never supersedes (nor is superseded by) the speaker's."""
    return frozenset(marker for marker, frame in _VOICE_FRAMES if frame.search(raw))


def _stem(word: str) -> str:
    """A crude English stem, the same for "mornings", "morning" and "morned": plural, then -ing / -ed."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-2] if word.endswith("ies") else word[:-1]
    for suffix in ("ing", "ed"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _subject(text: str, values: set[str]) -> frozenset[str]:
    value_words = {v[2:] for v in values if v.startswith("p:")}
    # A value's characters are not the subject ("周二", "5万"), nor are the words that say it changed.
    for pattern in (_DATE, _CLOCK, _ORDINAL, _NUMBER, ZH_NUMBER, _DAY_ZH, _COMMON_VALUES_ZH, _CHANGE_ZH):
        text = pattern.sub(" ", text)
    out: set[str] = set()
    for token in TOKEN.findall(text.casefold()):
        if _CJK_CHAR.match(token):
            for run in re.split(f"[{''.join(_STOP_ZH)}]+", token):
                out.update(b for i in range(len(run) - 1) if (b := run[i : i + 2]) not in _FILLER_SUBJECT)
            continue
        if token in _STOP or token in _FILLER_SUBJECT or token in value_words or token in _DAY_SET:
            continue
        if token in _MONTH_SET:
            continue
        if any(ch.isdigit() for ch in token) or len(token) < 3:
            continue
        out.add(_stem(token))
    # A bigram that is a value's characters ("飞书") is the value, not the subject.
    zh_values = [v[2:] for v in values if v.startswith("p:") and _CJK_CHAR.search(v)]
    return frozenset(w for w in out if not any(w in v or v in w for v in zh_values))


def keys(text: str) -> frozenset[str]:
    """A cheap superset of the words `claim(text).subject` can hold (stemmed words, CJK bigrams): two turns
    sharing none cannot share a subject, so update detection parses only the turns that share one."""
    out: set[str] = set()
    for token in TOKEN.findall(text[:TEXT_CHARS].casefold()):
        if _CJK_CHAR.match(token):
            out.update(token[i : i + 2] for i in range(len(token) - 1))
        elif len(token) >= 3 and token not in _STOP and token not in _FILLER_SUBJECT:
            out.add(_stem(token))
    return frozenset(out)


VALUE_UNIT = "zvaluez"  # a word, so that the tokenizer keeps it


def masked_units(text: str) -> list[str]:
    """The turn as a sequence of units for alignment: words, each CJK character on its own, every value
    (number, date, time, name) as "#", and the words that say a change left out."""
    text = _ANNOTATION.sub(" ", SPEAKER_PREFIX.sub("", text[:TEXT_CHARS], count=1))
    for pattern in (
        _DATE,
        _CLOCK,
        _ORDINAL,
        _NUMBER,
        ZH_NUMBER,
        _DAY_ZH,
        _COMMON_VALUES_ZH,
        _CAPITAL,
        _IDENT,
    ):
        text = pattern.sub(f" {VALUE_UNIT} ", text)
    text = _CHANGE.sub(" ", text)
    out: list[str] = []
    for token in TOKEN.findall(text.casefold()):
        if _CJK_CHAR.match(token):
            out.extend(c for c in token if c not in _STOP_ZH)
        elif token in _COMMON_VALUES:
            out.append(VALUE_UNIT)
        elif token not in _STOP or token == VALUE_UNIT:
            out.append(token)
    return out


def is_content(unit: str) -> bool:
    return unit != VALUE_UNIT and unit not in _STOP and unit not in _STOP_ZH and unit not in _FILLER_SUBJECT
