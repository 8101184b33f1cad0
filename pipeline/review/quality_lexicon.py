"""Word lists and patterns of the rule quality score: stopwords, pleasantries, entities, time words, asks."""

from __future__ import annotations

import re

from pipeline.review.regex_gate import GatedPattern

# -- word lists --------------------------------------------------------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


EN_STOPWORDS = _words(
    """a an the and or but if so of to in on at by for with from about as into onto than then that this these
    those there here it its it's is are was were be been being am do does did done have has had having i i'm
    i've i'd i'll me my mine we our us you your you're yours he she him her his they them their what which
    who whom whose when where why how can could would should will shall may might must just also too very
    really quite some any all no not nor only own same such both each few more most other please pls let
    let's get got go going want need like make made know think see say said tell told one thing things way
    s t don't doesn't didn't isn't aren't wasn't can't won't yet still even again maybe perhaps what's that's
    there's here's who's where's how's you'll you've we're they're he's she's we'll they'll"""
)
# Words that carry no information on their own: acknowledgements, hedges, laughter.
EN_FILLER = _words(
    """ok okay okey k kk sure yes yeah yep yup yea nope cool nice great fine alright right noted understood
    lol lmao rofl haha hahaha hehe hmm hm um umm uh uhh oh ah wow oops actually basically literally
    honestly anyway anyways well thanks thank thx ty hi hello hey bye goodbye welcome"""
)
# Chinese particles, pronouns and very common function characters (是 is everywhere).
ZH_STOPCHARS = frozenset(
    "的了吗呢啊哦嗯吧好是我你您他她它们这那在和与也就都还又很太呀啦哈嘛么个对把被给着地得"
)
# Whole-message fillers too ambiguous to strip from inside a longer sentence ("可以" also means "can").
WHOLE_FILLER = frozenset({"行", "可以", "对", "对的", "是", "是的", "好", "yes", "no", "right", "fine", "嗯"})


def _phrases(*alternatives: str) -> GatedPattern:
    # ASCII letters must not touch the match (so "hi" is not found in "this"); CJK needs no boundary.
    return GatedPattern.compile(r"(?<![a-z'])(?:" + "|".join(alternatives) + r")(?![a-z'])", re.IGNORECASE)


# Pleasantries, tried in this order and removed from the text; if no content is left the turn is one.
PLEASANTRIES: tuple[tuple[str, GatedPattern], ...] = (
    (
        "boilerplate",
        _phrases(
            r"how (?:can|may) i (?:help|assist)(?: you)?(?: today)?|what can i do for you(?: today)?",
            r"is there anything else(?: (?:i|we) can (?:help|assist)(?: you)? with| you need| i can do for you)?",
            r"anything else|let me know (?:if|what) (?:you need|there is|there's)(?: anything else)?",
            r"(?:i )?hope (?:this|that) helps|feel free to (?:ask|reach out)|as an ai(?: language model)?",
            r"(?:i'm |i am |i'd be |i would be )?(?:happy|glad) (?:to|i could) help(?: with that)?|great question",
            r"(?:请问)?(?:还有|有)(?:什么|其他|别的)(?:问题)?我?(?:可以|能)?(?:帮|为)到?(?:您|你)做?的?(?:吗|呢)?",
            r"请问还有(?:其他|别的)?(?:什么)?问题吗|很高兴(?:为您服务|能?帮到(?:您|你))",
            r"(?:希望|但愿)(?:这|以上)些?(?:信息)?(?:对(?:您|你))?有所?帮助",
            r"如果?有(?:任何|其他)?(?:问题|需要)[^。！？!?]{0,12}(?:联系|找|问)(?:我|我们)",
        ),
    ),
    (
        "thanks",
        _phrases(
            r"thank(?:s| you)(?: (?:so|very) much| a lot| again)?"
            r"(?: for (?:the|your|all the) (?:help|info|information|tip|tips|advice|answer|reply))?",
            r"thx|ty|much appreciated|(?:i )?appreciate (?:it|that)|cheers",
            r"you'?re (?:very |most )?welcome|you are welcome|no worries|my pleasure",
            r"(?:谢谢|感谢)(?:你|您)?(?:的帮助|的帮忙)?(?:啦|了)?|多谢|不客气|不用谢|别客气|不要客气|辛苦(?:了|啦)",
        ),
    ),
    (
        "greeting",
        _phrases(
            r"(?:hi|hello|hey)(?: there)?|hiya|howdy|greetings|good (?:morning|afternoon|evening|night)",
            r"bye|goodbye|see you(?: later| soon)?|talk (?:to you )?(?:later|soon)|ttyl|take care|have a (?:nice|good|great) (?:day|one|weekend)",
            r"congratulations|congrats|good luck|welcome back|nice to meet you|how are you(?: doing)?",
            r"(?:i )?hope you (?:have|had|enjoy) (?:a |an |your )?(?:\w+ )?(?:day|time|trip|weekend|evening)",
            r"enjoy (?:your|the) \w+",
            r"你好|您好|早上好|上午好|下午好|晚上好|早安|晚安|嗨|哈喽|再见|拜拜|恭喜(?:你|您)?|祝贺(?:你|您)?|欢迎回来",
            r"祝(?:你|您)?[^，。！？,.!?]{0,6}(?:愉快|顺利|开心|快乐|好运)",
        ),
    ),
    (
        "filler",
        _phrases(
            r"ok(?:ay|ey)?|k+|got it|gotcha|sure|sounds (?:good|great|like a plan)|makes sense|i see|no problem|np|all right|alright",
            r"lo+l|lmao|(?:ha){2,}h?|(?:he){2,}|hm+|u+m+|u+h+|yeah|yep|yup|cool|nice|great|noted|understood|wow",
            r"let me think(?: about it)?|i'll think about it|never ?mind|not sure(?: yet)?|maybe|that's all(?: for now)?",
            r"好的|好吧|好哒|好嘞|嗯+|哦+|噢+|哈{2,}|呵{2,}|嘿{2,}|收到|了解|明白了?|知道了|懂了|没问题|没事|没关系",
            r"不用了|算了|再说吧|(?:我|让我)再?想想|考虑一下|对对+|对的|是吗|是嘛|真的吗|那就这样",
        ),
    ),
)

# -- entities (density bonuses) ------------------------------------------------------------------------

_MONTHS = "january february march april may june july august september october november december"
_DAYS = "monday tuesday wednesday thursday friday saturday sunday"
CALENDAR = frozenset((_MONTHS + " " + _DAYS + " jan feb mar apr jun jul aug sep sept oct nov dec").split())
EMAIL = GatedPattern.compile(r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,8}")
URL = GatedPattern.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)
# International (+...), NANP-like 3-3-4, or a Chinese mobile; not a date like 2024-05-03.
PHONE = re.compile(r"\+\d[\d\s().-]{6,18}\d|\b\d{3}[\s.-]?\d{3,4}[\s.-]?\d{4}\b|\b1\d{10}\b")
NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
MONEY = re.compile(
    r"[$€£¥￥]\s?\d|\d\s?(?:元|块|万|美元|dollars?|bucks|usd|eur|euros?|rmb|yuan|k\b)", re.IGNORECASE
)
# A date or time: a calendar word (as a whole word; "may" is a month only next to a day number or after
# "in", otherwise the verb), numeric forms, or a Chinese date. Split three ways so that the common turn,
# with no digit and no calendar word, costs a set lookup rather than a 30-word alternation at every
# position (tests/unit/test_quality.py checks the split against the single pattern it replaced).
DATE_WORDS = (CALENDAR - {"may"}) | {"tomorrow"}
WORD = re.compile(r"\w+")
DATE_NUMERIC = re.compile(
    r"\bmay \d|\b\d{1,2}(?:st|nd|rd|th)\b|\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}/\d{1,2}\b|\b\d{1,2}:\d{2}\b"
    r"|\b\d{1,2}\s?(?:am|pm)\b|(?<!\d)\d{1,4}\s?[月年]|(?<!\d)\d{1,2}\s?[日号点]",
    re.IGNORECASE,
)
HAS_DIGIT = re.compile(r"\d")
DATE_PHRASE = GatedPattern.compile(
    r"\bin may\b|\bnext (?:week|month|year)\b|(?:周|星期|礼拜)[一二三四五六日天]|[上下]午|明天|后天|下周|下个月",
    re.IGNORECASE,
)

TITLE = GatedPattern.compile(r"《[^》]{1,40}》|“[^”]{2,60}”|\"[A-Z][^\"]{1,60}\"|「[^」]{1,40}」")
# Chinese has no capitals: places and organisations by their suffix or by "在…工作", names after "我叫".
ZH_PLACE = GatedPattern.compile(
    r"[\u4e00-\u9fff]{2,8}?(?:省|市|区|县|镇|村|路|街|号楼|大学|公司)|在[\u4e00-\u9fff]{2,8}?(?:工作|上班|上学|读书)"
)
ZH_NAME = GatedPattern.compile(r"(?:我叫|名字是|名字叫|叫做)[\u4e00-\u9fff]{2,4}")
LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z']*")
NOT_NAMES = EN_STOPWORDS | EN_FILLER | CALENDAR
SENTENCE = re.compile(r"[.!?\n。！？]+")

# -- tokens ----------------------------------------------------------------------------------------

EN_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7af]")
# The user as subject or owner; not as the object of a request ("help me", "帮我查").
FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|my|mine|we|our)\b|(?<![帮给让替])我")
ABOUT_USER = GatedPattern.compile(r"\b(?:the user|user's)\b|用户")

# -- timeliness ------------------------------------------------------------------------------------

DURABLE = GatedPattern.compile(
    r"\b(?:my name is|call me|i'm called|i live|i'm living|i work|i'm from|i grew up|i was born|born in"
    r"|my (?:wife|husband|partner|son|daughter|kids?|children|sister|brother|mom|mother|dad|father|parents"
    r"|family|boss|dog|cat)|allergic|allergy|intoleran\w*|vegan|vegetarian|diet|always|never|usually"
    r"|generally|every (?:day|week|morning|time)|prefer\w*|favou?rite|i (?:really )?(?:like|love|hate|dislike)"
    r"|birthday|i'm an? \w+|i am an? \w+)\b"
    r"|我是|我住|我叫|名字|我在[^，。,.]{1,10}(?:工作|上班|上学|读书)|过敏|忌口|喜欢|讨厌|一直|总是|从不|从来"
    r"|通常|平时|每天|每周|吃素|素食|生日|我的?(?:老婆|妻子|丈夫|老公|儿子|女儿|孩子|妈妈|母亲|爸爸|父亲"
    r"|姐姐|妹妹|哥哥|弟弟|家人|父母)",
)
TRANSIENT = GatedPattern.compile(
    r"\b(?:right now|today|tonight|this (?:morning|afternoon|evening)|at the moment|currently|just now"
    r"|for now|at this point|in a minute|tomorrow)\b|(?<!从)现在|今天|今晚|今早|刚才|刚刚|目前|此刻|马上|这会儿|明天"
)
# Of those, what is stale by tomorrow ("I'm tired today"). The rest name a spell or a plan: "I'm currently
# reading The Lean Startup", "see you tomorrow at McGee's" hold for days to weeks, and are what a friend
# later asks about (on LoCoMo, 22 of the 51 cold personal statements with such a word were evidence turns).
MOMENTARY = GatedPattern.compile(
    r"\b(?:today|tonight|this (?:morning|afternoon|evening)|just now|in a minute)\b"
    r"|今天|今晚|今早|刚才|刚刚|马上|这会儿"
)

# -- actionability -----------------------------------------------------------------------------------

ACTION_KINDS: tuple[tuple[str, float, GatedPattern], ...] = (
    (
        "correction",
        0.9,
        GatedPattern.compile(
            r"\b(?:actually|correction|i meant|i misspoke|i was wrong|typo|no,? it'?s|no,? it is)\b"
            r"|\b(?:is|it'?s|was)\s+\w+,\s*not\s+\w+"
            r"|不对|应该是|其实是|说错了|搞错了|写错了|更正|纠正|不是[^，。,.]{1,10}[，,]?而是"
        ),
    ),
    (
        "instruction",
        0.85,
        GatedPattern.compile(
            r"\b(?:don'?t|do not|never|always|make sure|remind me|remember (?:that|to)|from now on|going forward"
            r"|stop \w+ing|avoid|call me|(?:email|e-mail|text|call|message|ping|notify|contact|reach|dm) me)\b"
            # 别 and 不要 are not orders inside 特别/区别/性别 ("especially", ...) or 要不要 ("want or not?").
            r"|(?<!要)不要|(?<![特区分级类告识性派])别(?![人的处])|(?<![我他她])记得|记住|提醒我|务必|一定要|必须"
            r"|以后(?:都|请|要|别|不要|记得|一律)|今后|从现在(?:起|开始)|改用|改成|换成"
            r"|用[^，。！？,.!?]{1,10}(?:通知|联系|发|告诉|提醒)我|(?:通知|联系|告诉)我|发(?:到|给)我"
        ),
    ),
    (
        "preference",
        0.8,
        GatedPattern.compile(
            r"\b(?:i (?:really )?(?:prefer|like|love|hate|dislike|enjoy|can't stand)|prefer(?:red|s)?"
            r"|favou?rite|i'd rather|i would rather|rather than|instead of)\b"
            r"|喜欢|偏好|偏爱|爱吃|爱喝|讨厌|不爱|宁可|宁愿|习惯"
        ),
    ),
    (
        "contact",
        0.8,
        GatedPattern.compile(
            r"\b(?:my (?:e-?mail|phone|number|cell|mobile|address|handle|telegram|whatsapp|wechat))\b"
            r"|[a-z0-9._%+-]@[a-z0-9-]{1,63}\.[a-z]|邮箱|电话|手机号?|微信号?|飞书|钉钉|地址"
        ),
    ),
    (
        "constraint",
        0.8,
        GatedPattern.compile(
            r"\b(?:can'?t|cannot|won't|must|have to|only|no (?:more|later|earlier) than|at (?:most|least)"
            r"|before \d|after \d|by \d|budget|deadline|allergic|allergy|intoleran\w*|vegan|vegetarian|halal"
            r"|kosher|gluten)\b"
            r"|不能|不可以|只能|最多|至少|以内|预算|截止|(?:[点号日天午周月]|周[一二三四五六日天])(?:之前|以前|之后|以后)|过敏|忌口|不吃|吃素|素食|清真|不喝"
        ),
    ),
)
ACTION_VALUE: dict[str, float] = {kind: value for kind, value, _ in ACTION_KINDS}
# Polite asks are standing instructions ("please answer in Chinese") unless they ask for a one-off task
# ("please look up the weather") or a question.
POLITE = GatedPattern.compile(r"\b(?:please|pls|i want|i need|i'd like|i would like)\b|请(?!问)|希望")
REQUEST = GatedPattern.compile(
    r"^(?:(?:please|pls|can you|could you|would you) )?(?:help me|find|search|look up|look for|check|show me"
    r"|tell me|give me|get me|book|translate|summari[sz]e|write|draft|explain|calculate)\b"
    r"|帮我|帮忙|查一下|查查|搜一下|找一下|看一下|看看|翻译|总结"
)
# Sentences, each with its closing punctuation, so that a question's "?" stays with it.
SENTENCE_WITH_END = re.compile(r"[^.!?\n。！？]+[.!?。！？]*")
QUESTION = re.compile(
    r"[?？]\s*$|^(?:what|which|who|whom|whose|when|where|why|how|can you|could you|would you|do you|does|is it"
    r"|are there|is there)\b|[吗呢]\s*[?？]?\s*$|什么|怎么|为什么|哪|几[个点天]|多少"
)
