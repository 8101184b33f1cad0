"""Rule-based quality score of one conversation turn (DESIGN §2). Pure: no I/O, no models.

Four dimensions, each in [0, 1], for English and Chinese text:

- density: content words (English words minus stopwords/filler; each CJK character counts as 0.6 of a
  word, minus particles), plus bonuses for numbers, dates, money, contacts, names, places and titles.
- timeliness: how long the statement stays true (identity, family, allergies, habits high; "today" low).
- uniqueness: 1 - max cosine with the scope's kept memories.
- actionability: preferences, constraints, instructions and corrections high; plain questions low.

rule_score = weighted mean x content gate x novelty gate x staleness gate. The gates exist because a
weighted sum alone lets one dimension carry a worthless turn: "ok" is perfectly novel, and a verbatim
repeat of a good fact is still dense and actionable. Both must land in cold storage, so thin content,
near-duplicates and "right now" statements scale the whole score down instead of just losing their share
of it. total = rule_score x source trust, so an agent/external turn (trust 0.7) is never kept on rules
alone: at best it reaches the judge band.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

from pipeline.core.models import QualityScore
from pipeline.review.regex_gate import GatedPattern


@dataclass(frozen=True)
class QualityWeights:
    """Weights of the four dimensions. The score divides by their sum, so they need not add up to 1."""

    density: float = 0.35
    timeliness: float = 0.15
    uniqueness: float = 0.2
    actionability: float = 0.3


SOURCE_TRUST: dict[str, float] = {"user": 1.0, "tool": 0.9, "agent": 0.7, "external": 0.7}
UNKNOWN_TRUST = 0.7  # an unknown source is trusted like something inferred

# Below this density the content gate scales the score down: gate = min(1, GATE_FLOOR + GATE_SLOPE * d).
# Two content words (density ~0.5) pass in full; "ok" keeps only GATE_FLOOR.
GATE_FLOOR = 0.25
GATE_SLOPE = 2.0
# Uniqueness below this knee scales the score down (0.1 = cosine 0.9). With MiniLM a cosine of 0.8-0.9 is
# "same topic", not "same fact" ("I won an international tournament yesterday!" beside an earlier turn
# about the tournament): at a knee of 0.2 those turns fell into the judge band and, with no LLM, went
# cold, ~2% of LoCoMo's evidence turns. Near-verbatim repeats (0.95+) still land cold. Corrections
# restate what they correct, so they sit close to it by nature and get a lower knee.
NOVELTY_KNEE = 0.1
CORRECTION_NOVELTY_KNEE = 0.05
# A pleasantry may carry one content word (or a two-character Chinese word) and still be one.
PLEASANTRY_MAX_CONTENT = 1.2
# A statement that is stale by tomorrow ("I'm tired right now") cannot be kept on its other merits alone:
# gate = min(1, STALENESS_FLOOR + timeliness), so only timeliness below 0.4 bites.
STALENESS_FLOOR = 0.6
DUPLICATE_LIKE_AT = 0.9
CJK_CHAR_WEIGHT = 0.6  # a Chinese word is one to two characters

# -- word lists --------------------------------------------------------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_EN_STOPWORDS = _words(
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
_EN_FILLER = _words(
    """ok okay okey k kk sure yes yeah yep yup yea nope cool nice great fine alright right noted understood
    lol lmao rofl haha hahaha hehe hmm hm um umm uh uhh oh ah wow oops actually basically literally
    honestly anyway anyways well thanks thank thx ty hi hello hey bye goodbye welcome"""
)
# Chinese particles, pronouns and very common function characters (是 is everywhere).
_ZH_STOPCHARS = frozenset(
    "的了吗呢啊哦嗯吧好是我你您他她它们这那在和与也就都还又很太呀啦哈嘛么个对把被给着地得"
)
# Whole-message fillers too ambiguous to strip from inside a longer sentence ("可以" also means "can").
_WHOLE_FILLER = frozenset(
    {"行", "可以", "对", "对的", "是", "是的", "好", "yes", "no", "right", "fine", "嗯"}
)


def _phrases(*alternatives: str) -> GatedPattern:
    # ASCII letters must not touch the match (so "hi" is not found in "this"); CJK needs no boundary.
    return GatedPattern.compile(r"(?<![a-z'])(?:" + "|".join(alternatives) + r")(?![a-z'])", re.IGNORECASE)


# Pleasantries, tried in this order and removed from the text; if no content is left the turn is one.
_PLEASANTRIES: tuple[tuple[str, GatedPattern], ...] = (
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
_CALENDAR = frozenset((_MONTHS + " " + _DAYS + " jan feb mar apr jun jul aug sep sept oct nov dec").split())
_EMAIL = GatedPattern.compile(r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,8}")
_URL = GatedPattern.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)
# International (+...), NANP-like 3-3-4, or a Chinese mobile; not a date like 2024-05-03.
_PHONE = re.compile(r"\+\d[\d\s().-]{6,18}\d|\b\d{3}[\s.-]?\d{3,4}[\s.-]?\d{4}\b|\b1\d{10}\b")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_MONEY = re.compile(
    r"[$€£¥￥]\s?\d|\d\s?(?:元|块|万|美元|dollars?|bucks|usd|eur|euros?|rmb|yuan|k\b)", re.IGNORECASE
)
# A date or time: a calendar word (as a whole word; "may" is a month only next to a day number or after
# "in", otherwise the verb), numeric forms, or a Chinese date. Split three ways so that the common turn,
# with no digit and no calendar word, costs a set lookup rather than a 30-word alternation at every
# position (tests/unit/test_quality.py checks the split against the single pattern it replaced).
_DATE_WORDS = (_CALENDAR - {"may"}) | {"tomorrow"}
_WORD = re.compile(r"\w+")
_DATE_NUMERIC = re.compile(
    r"\bmay \d|\b\d{1,2}(?:st|nd|rd|th)\b|\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}/\d{1,2}\b|\b\d{1,2}:\d{2}\b"
    r"|\b\d{1,2}\s?(?:am|pm)\b|(?<!\d)\d{1,4}\s?[月年]|(?<!\d)\d{1,2}\s?[日号点]",
    re.IGNORECASE,
)
_HAS_DIGIT = re.compile(r"\d")
_DATE_PHRASE = GatedPattern.compile(
    r"\bin may\b|\bnext (?:week|month|year)\b|(?:周|星期|礼拜)[一二三四五六日天]|[上下]午|明天|后天|下周|下个月",
    re.IGNORECASE,
)


def _has_date(text: str) -> bool:
    return (
        not _DATE_WORDS.isdisjoint(_WORD.findall(text.lower()))
        or bool(_HAS_DIGIT.search(text) and _DATE_NUMERIC.search(text))
        or bool(_DATE_PHRASE.search(text))
    )


_TITLE = GatedPattern.compile(r"《[^》]{1,40}》|“[^”]{2,60}”|\"[A-Z][^\"]{1,60}\"|「[^」]{1,40}」")
# Chinese has no capitals: places and organisations by their suffix or by "在…工作", names after "我叫".
_ZH_PLACE = GatedPattern.compile(
    r"[\u4e00-\u9fff]{2,8}?(?:省|市|区|县|镇|村|路|街|号楼|大学|公司)|在[\u4e00-\u9fff]{2,8}?(?:工作|上班|上学|读书)"
)
_ZH_NAME = GatedPattern.compile(r"(?:我叫|名字是|名字叫|叫做)[\u4e00-\u9fff]{2,4}")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z']*")
_NOT_NAMES = _EN_STOPWORDS | _EN_FILLER | _CALENDAR
_SENTENCE = re.compile(r"[.!?\n。！？]+")

# -- tokens ----------------------------------------------------------------------------------------

_EN_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7af]")
# The user as subject or owner; not as the object of a request ("help me", "帮我查").
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|my|mine|we|our)\b|(?<![帮给让替])我")
_ABOUT_USER = GatedPattern.compile(r"\b(?:the user|user's)\b|用户")

# -- timeliness ------------------------------------------------------------------------------------

_DURABLE = GatedPattern.compile(
    r"\b(?:my name is|call me|i'm called|i live|i'm living|i work|i'm from|i grew up|i was born|born in"
    r"|my (?:wife|husband|partner|son|daughter|kids?|children|sister|brother|mom|mother|dad|father|parents"
    r"|family|boss|dog|cat)|allergic|allergy|intoleran\w*|vegan|vegetarian|diet|always|never|usually"
    r"|generally|every (?:day|week|morning|time)|prefer\w*|favou?rite|i (?:really )?(?:like|love|hate|dislike)"
    r"|birthday|i'm an? \w+|i am an? \w+)\b"
    r"|我是|我住|我叫|名字|我在[^，。,.]{1,10}(?:工作|上班|上学|读书)|过敏|忌口|喜欢|讨厌|一直|总是|从不|从来"
    r"|通常|平时|每天|每周|吃素|素食|生日|我的?(?:老婆|妻子|丈夫|老公|儿子|女儿|孩子|妈妈|母亲|爸爸|父亲"
    r"|姐姐|妹妹|哥哥|弟弟|家人|父母)",
)
_TRANSIENT = GatedPattern.compile(
    r"\b(?:right now|today|tonight|this (?:morning|afternoon|evening)|at the moment|currently|just now"
    r"|for now|at this point|in a minute|tomorrow)\b|(?<!从)现在|今天|今晚|今早|刚才|刚刚|目前|此刻|马上|这会儿|明天"
)
# Of those, what is stale by tomorrow ("I'm tired today"). The rest name a spell or a plan: "I'm currently
# reading The Lean Startup", "see you tomorrow at McGee's" hold for days to weeks, and are what a friend
# later asks about (on LoCoMo, 22 of the 51 cold personal statements with such a word were evidence turns).
_MOMENTARY = GatedPattern.compile(
    r"\b(?:today|tonight|this (?:morning|afternoon|evening)|just now|in a minute)\b"
    r"|今天|今晚|今早|刚才|刚刚|马上|这会儿"
)

# -- actionability -----------------------------------------------------------------------------------

_ACTION_KINDS: tuple[tuple[str, float, GatedPattern], ...] = (
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
_ACTION_VALUE: dict[str, float] = {kind: value for kind, value, _ in _ACTION_KINDS}
# Polite asks are standing instructions ("please answer in Chinese") unless they ask for a one-off task
# ("please look up the weather") or a question.
_POLITE = GatedPattern.compile(r"\b(?:please|pls|i want|i need|i'd like|i would like)\b|请(?!问)|希望")
_REQUEST = GatedPattern.compile(
    r"^(?:(?:please|pls|can you|could you|would you) )?(?:help me|find|search|look up|look for|check|show me"
    r"|tell me|give me|get me|book|translate|summari[sz]e|write|draft|explain|calculate)\b"
    r"|帮我|帮忙|查一下|查查|搜一下|找一下|看一下|看看|翻译|总结"
)
# Sentences, each with its closing punctuation, so that a question's "?" stays with it.
_SENTENCE_WITH_END = re.compile(r"[^.!?\n。！？]+[.!?。！？]*")
# Content words the non-question sentences of a turn need for it to count as a statement, not a question.
STATEMENT_MIN_CONTENT = 4
_QUESTION = re.compile(
    r"[?？]\s*$|^(?:what|which|who|whom|whose|when|where|why|how|can you|could you|would you|do you|does|is it"
    r"|are there|is there)\b|[吗呢]\s*[?？]?\s*$|什么|怎么|为什么|哪|几[个点天]|多少"
)


def _clamp(x: float) -> float:
    return 0.0 if math.isnan(x) else min(1.0, max(0.0, x))


def _normalise(content: str) -> str:
    # NFKC folds full-width letters/digits and compatibility forms; control characters become spaces.
    text = unicodedata.normalize("NFKC", content)
    if text.isprintable():  # no character of category "Other" (C*): skip the per-character pass
        return text.strip()
    return "".join(" " if unicodedata.category(ch).startswith("C") else ch for ch in text).strip()


def _strip_pleasantries(text: str) -> tuple[str, list[str]]:
    tags: list[str] = []
    for tag, pattern in _PLEASANTRIES:
        text, n = pattern.subn(" ", text)
        if n:
            tags.append(tag)
    return text, tags


def _content_counts(text: str) -> tuple[float, float]:
    """(content tokens, all tokens) of `text`, CJK characters weighted, URLs and emails left out."""
    lowered = _EMAIL.sub(" ", _URL.sub(" ", text.lower()))
    words = _EN_WORD.findall(lowered)
    numbers = len(_NUMBER.findall(lowered))
    cjk = _CJK.findall(lowered)
    content = sum(1 for w in words if w not in _EN_STOPWORDS and w not in _EN_FILLER) + numbers
    content_cjk = sum(1 for ch in cjk if ch not in _ZH_STOPCHARS)
    return content + CJK_CHAR_WEIGHT * content_cjk, len(words) + numbers + CJK_CHAR_WEIGHT * len(cjk)


def _has_name(text: str) -> bool:
    """A capitalised word that does not open a sentence and is not a stopword: a person, place or brand."""
    for sentence in _SENTENCE.split(text):
        opening = len(sentence) - len(sentence.lstrip())
        for match in _LATIN_WORD.finditer(sentence):
            word = match.group()
            # The first word of a sentence is capitalised anyway; "Mac" inside Chinese text is not.
            if (
                match.start() > opening
                and word[0].isupper()
                and len(word) > 1
                and word.lower() not in _NOT_NAMES
            ):
                return True
    return False


def _entities(text: str) -> list[tuple[str, float]]:
    """Density bonuses: concrete details are what make a memory worth recalling."""
    found: list[tuple[str, float]] = []
    checks: tuple[tuple[str, float, bool], ...] = (
        ("has_contact", 0.3, bool(_EMAIL.search(text) or _URL.search(text) or _PHONE.search(text))),
        ("has_money", 0.15, bool(_MONEY.search(text))),
        ("has_date", 0.15, _has_date(text)),
        ("has_number", 0.1, bool(_NUMBER.search(text))),
        ("has_name", 0.15, _has_name(text) or bool(_ZH_NAME.search(text))),
        ("has_place", 0.15, bool(_ZH_PLACE.search(text))),
        ("has_title", 0.15, bool(_TITLE.search(text))),
    )
    for tag, bonus, hit in checks:
        if hit:
            found.append((tag, bonus))
    return found


def _density(remainder: str, entities: list[tuple[str, float]], reasons: list[str]) -> float:
    content, total = _content_counts(remainder)
    # Saturating in the number of content words (2 words ~0.6, 4 ~0.85), with a mild penalty for a low
    # share of content among all tokens ("information per token").
    base = (1.0 - math.exp(-content / 2.0)) * (0.7 + 0.3 * content / total) if total > 0 else 0.0
    bonus = 0.0
    for tag, value in entities:
        reasons.append(tag)
        bonus += value
    return _clamp(base + bonus)


def _timeliness(lowered: str, personal: bool, kinds: list[str], reasons: list[str]) -> float:
    durable, transient = bool(_DURABLE.search(lowered)), bool(_TRANSIENT.search(lowered))
    if durable:
        reasons.append("durable")
    if transient:
        reasons.append("transient")
    if durable:
        return 0.55 if transient else 0.9
    if transient:
        return 0.2 if _MOMENTARY.search(lowered) or not personal else 0.4
    if "question" in reasons or "request" in reasons:
        return 0.2  # what is asked now matters now; the answer, if it lasts, is its own turn
    if {"instruction", "preference", "constraint", "contact"} & set(kinds):
        return 0.7  # a standing order ("don't use emojis") holds until it is revoked
    # A fact about the person, or a fix to one, tends to outlive small talk.
    return 0.6 if personal or "correction" in kinds else 0.5


def _action_kinds(lowered: str) -> list[str]:
    kinds = [kind for kind, _, pattern in _ACTION_KINDS if pattern.search(lowered)]
    if "instruction" not in kinds and _POLITE.search(lowered) and not _asks(lowered):
        kinds.insert(0, "instruction")
    return kinds


def _asks(lowered: str) -> str | None:
    """ "question" or "request" (a one-off task) if the turn asks for something, else None.

    A turn that tells something and then asks back ("I just joined an activist group last Tuesday. What's
    up with you?") is a statement: the question at its end is conversation, the statement is the memory.
    Counting it as a question sent 8% of LoCoMo's evidence turns to cold storage (rules-only review)."""
    if _REQUEST.search(lowered):
        return "request"
    if not _QUESTION.search(lowered):
        return None
    statement = " ".join(s for s in _SENTENCE_WITH_END.findall(lowered) if not _QUESTION.search(s.strip()))
    return None if _content_counts(statement)[0] >= STATEMENT_MIN_CONTENT else "question"


def _actionability(lowered: str, kinds: list[str], personal: bool, reasons: list[str]) -> float:
    if kinds:
        reasons.extend(kinds)
        # The strongest kind, plus a little for each further one ("never ... before 10am").
        return _clamp(max(_ACTION_VALUE[k] for k in kinds) + 0.1 * (len(kinds) - 1))
    asks = _asks(lowered)
    if asks:
        reasons.append(asks)
        return 0.15
    if personal and not _MOMENTARY.search(lowered):
        # A lasting fact about the user ("my sister lives in Berlin") is what personalisation acts on.
        return 0.6 if _DURABLE.search(lowered) else 0.5
    return 0.3


def _pleasantry_only(lowered: str, remainder: str, tags: list[str], kinds: list[str]) -> list[str] | None:
    """The pleasantry tags if the turn is nothing but pleasantries, else None. `remainder` is the text
    with pleasantries removed, `tags` what was removed.

    A pleasantry may carry one content word ("Congratulations on the move!", "Thanks for the info"), but
    not a concrete detail or anything to act on ("Thanks! I'm vegan" is a constraint).
    """
    if re.sub(r"[\W_]+", "", lowered) in _WHOLE_FILLER:
        return ["filler"]
    content = _content_counts(remainder)[0]
    if content == 0:
        return tags or ["empty"]
    if tags and content <= PLEASANTRY_MAX_CONTENT and not kinds:
        return tags
    return None


def score_turn(
    content: str,
    *,
    role: str,
    source: str,
    max_similarity: float,
    weights: QualityWeights = QualityWeights(),
) -> QualityScore:
    """Score one turn. `max_similarity` is its highest cosine with the scope's kept memories (0 if none)."""
    text = _normalise(content)
    lowered = text.lower()
    reasons: list[str] = []
    trust = SOURCE_TRUST.get(source, UNKNOWN_TRUST)
    similarity = 0.0 if math.isnan(max_similarity) else max(-1.0, min(1.0, max_similarity))
    uniqueness = _clamp(1.0 - max(similarity, 0.0))
    kinds = _action_kinds(lowered)
    remainder, tags = _strip_pleasantries(text)
    entities = _entities(text)

    pleasantries = None if entities else _pleasantry_only(lowered, remainder, tags, kinds)
    if pleasantries is not None:
        # No information, nothing to act on, stale by tomorrow.
        reasons.extend(pleasantries)
        density, timeliness, actionability, kinds = 0.0, 0.1, 0.0, []
    else:
        # First person counts as a fact about the user only when the user says it.
        personal = bool(_ABOUT_USER.search(lowered)) or (
            role == "user" and bool(_FIRST_PERSON.search(lowered))
        )
        density = _density(remainder, entities, reasons)
        actionability = _actionability(lowered, kinds, personal, reasons)
        timeliness = _timeliness(lowered, personal, kinds, reasons)
        if personal:
            reasons.append("personal")
        if density < 0.2:
            reasons.append("low_content")

    w_sum = weights.density + weights.timeliness + weights.uniqueness + weights.actionability
    weighted = (
        (
            weights.density * density
            + weights.timeliness * timeliness
            + weights.uniqueness * uniqueness
            + weights.actionability * actionability
        )
        / w_sum
        if w_sum > 0
        else 0.0
    )
    content_gate = min(1.0, GATE_FLOOR + GATE_SLOPE * density)
    staleness_gate = min(1.0, STALENESS_FLOOR + timeliness)
    novelty_gate = min(1.0, uniqueness / (CORRECTION_NOVELTY_KNEE if "correction" in kinds else NOVELTY_KNEE))
    if similarity >= DUPLICATE_LIKE_AT:
        reasons.append("duplicate_like")
    rule_score = _clamp(weighted * content_gate * novelty_gate * staleness_gate)
    return QualityScore(
        density=density,
        timeliness=timeliness,
        uniqueness=uniqueness,
        actionability=actionability,
        rule_score=rule_score,
        trust=trust,
        total=_clamp(rule_score * trust),
        reasons=tuple(dict.fromkeys(reasons)),
    )


def band_decision(total: float, band_keep_at: float = 0.5) -> str:
    """The rule's own verdict inside the judge band, when no LLM is configured or it fails."""
    return "keep" if total >= band_keep_at else "cold"


def decide_keep(
    score: QualityScore,
    *,
    core: bool,
    cold_below: float = 0.3,
    keep_above: float = 0.7,
    band_keep_at: float = 0.5,
) -> tuple[str, str]:
    """("keep" | "cold" | "judge", why). "judge": total in [cold_below, keep_above], the caller asks an LLM
    if it has one, else uses band_decision(total, band_keep_at)."""
    if core:
        return "keep", "core"
    if score.total < cold_below:
        return "cold", f"total {score.total:.2f} < {cold_below}"
    if score.total > keep_above:
        return "keep", f"total {score.total:.2f} > {keep_above}"
    return "judge", f"total {score.total:.2f} in [{cold_below}, {keep_above}], band keeps at {band_keep_at}"
