"""Fact-rule value normalisers: where a captured value stops, what it may not be, its canonical form."""

from __future__ import annotations

import re

from pipeline.review.claims import MONTHS
from pipeline.review.zh_numbers import zh_number

MAX_WORDS = 6
MAX_CJK = 12
MAX_VALUE_CHARS = 120  # longer than any acceptable value; also bounds the work done per value
MAX_RAW_CHARS = 400  # a value is looked for in this much text after its trigger
MAX_TOPIC_CHARS = 48  # the LLM path's limit for preference:<topic> / allergy:<substance>


# == text shape ==========================================================================================

_CJK_RANGE = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_CHAR = re.compile(f"[{_CJK_RANGE}]")
# A Latin "word" is a run of anything but whitespace and CJK, so "new york市" counts two words.
_LATIN_WORD = re.compile(f"[^\\s{_CJK_RANGE}]+")
_MEANINGFUL = re.compile(r"[^\W_]")  # at least one letter, digit or CJK character

# -- where a value stops ---------------------------------------------------------------------------------
# Strong boundaries end a clause; list separators (", " " and " "、") only end a value that is not a list.
_STRONG_BOUNDARY = (
    r"[;!?()\[\]\"。|]|:(?!\d)"  # a colon ends a clause, but not a time ("UTC+5:30")
    r"|(?<!\bst)(?<!\bmt)(?<!\bmr)(?<!\bms)(?<!\bdr)(?<!\bft)(?<!\bmrs)\.(?=\s|$)"
    r"|\s+-+\s+|\s*—"
    # conjunctions and new subjects start another clause: "I live in Paris because ...", "... I think"
    r"|\s+(?:but|because|cause|so|since|though|although|while|whereas|which|who|whom|whose|where|when"
    r"|if|unless|until|once|i|we|you|he|she|they|it'?s)\b"
    r"|但|因为|所以|而且|并且|然后|不过|可是|由于|如果|的话|虽然|只是"
    # what follows "not" is the old value of a correction: "Hangzhou not Suzhou", "杭州不是苏州"
    r"|\s+not\b|而?不是"
)
_LIST_BOUNDARY = r",|\s+and\b|、"
# Time phrases after a place or employer are not part of it: "Berlin last year", "北京三年了".
_TEMPORAL_BOUNDARY = (
    r"\s+(?:with|from\s+now|as\s+of|starting|in\s+\d{4}|last|this|next|recently|lately"
    r"|for\s+(?:\d|a\b|an\b|the\s+(?:past|last)|about|over|almost|nearly|more|several|many|some|quite"
    r"|two|three|four|five|six|seven|eight|nine|ten))\b"
    r"|已经|已|快|好久|很久|多年|好多年|\d+\s*(?:年|个月|周|天)|[一二三四五六七八九十两几半]+(?:年|个月|周|天)"
    r"|去年|今年|前年|上个月|这个月|上周|最近|以来|之后|以后|以前|开始"
)


def _cut_pattern(*extra: str) -> re.Pattern[str]:
    return re.compile("|".join((_STRONG_BOUNDARY, _LIST_BOUNDARY, *extra)), re.IGNORECASE)


_CUT_STRONG = re.compile(_STRONG_BOUNDARY, re.IGNORECASE)
_CUT = _cut_pattern()
# A month, a season or a purpose after a place is not part of it: "I moved to Shanghai in March for the new
# job" gave "Shanghai in March for the new job", too long to be a value, so the move was never read.
_CUT_PLACE = _cut_pattern(
    _TEMPORAL_BOUNDARY,
    r"\s+(?:as|for|in\s+(?:the\s+)?(?:(?:early|late|mid)\s+)?(?:"
    + "|".join(MONTHS)
    + r"|spring|summer|autumn|fall|winter))\b",
)
_CUT_ORG = _cut_pattern(_TEMPORAL_BOUNDARY, r"\s+(?:as|in|on)\b")
CUT_JOB = _cut_pattern(_TEMPORAL_BOUNDARY, r"\s+(?:at|for|in|on)\b")
_CUT_NAME = _cut_pattern(r"\s+(?:from|at|in|and)\b")
# "I prefer tea over/to/rather than coffee": the rest names what is not preferred.
CUT_PREFER = _cut_pattern(
    r"\s+(?:over|to|than|for|rather\s+than|instead\s+of|vs\.?|versus)\b|而不是|胜过|多过"
)
# Items of an allergy list: "peanuts, shellfish and eggs", "花生和虾".
_LIST_SPLIT = re.compile(
    r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&)\s+|、|和|及|以及|与|还有|/", re.IGNORECASE
)

# Filler at the ends of a value: punctuation, Chinese sentence particles, "now", "too", "last year" ...
_TRAILING = re.compile(
    r"(?:[\s.,;:!?'\"()\[\]…~\-—_*]+"
    r"|[了啦呢吧啊呀哦嘛哈噢喔咯的哟]+"
    r"|\s+(?:now|currently|nowadays|these\s+days|anymore|any\s+more|already|too|as\s+well|again|recently|better"
    r"|lately|today|yesterday|please|thanks|thank\s+you|a\s+lot|very\s+much|so\s+much|though|instead"
    r"|right\s+now|at\s+the\s+moment|for\s+now|lol|haha|full[\s-]time|part[\s-]time|only)"
    r"|\s+(?:last|this|next)\s+(?:week|month|year|summer|winter|spring|fall|autumn|weekend)"
    r"|\s+\S+\s+(?:years?|months?|weeks?|days?)\s+ago|\s+in\s+\d{4})$",
    re.IGNORECASE,
)
_LEADING = re.compile(r"^[\s.,;:!?'\"()\[\]…~\-—=*]+")
_ARTICLE = re.compile(r"^(?:a|an|the)\s+", re.IGNORECASE)
_POSSESSIVE = re.compile(r"^my\s+", re.IGNORECASE)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words a value cannot start with: pronouns, demonstratives, question words, conjunctions.
_STOP_FIRST = _words(
    """it it's its that that's this these those there here them him her his their our your yours you me
    we they he she i i'm im i'd i'll i've what how why when where which who whom whose whatever something
    someone somebody somewhere anything anyone anywhere everything everyone nothing nobody nowhere so very
    really too not no yes just also and but or because if then than be being been to a an the"""
)
# Words a value cannot end with: a cut left it dangling ("I enjoy working with | you").
_STOP_LAST = _words("with to for at on in of about by from the a an my your our and or")
# Words that make a value about the conversation, not the user: "I like your idea".
_SECOND_PERSON = frozenset({"i", "you", "your", "yours", "u", "ur"})
# CJK values that are pronouns, demonstratives or question words: "我喜欢你", "我住在这里".
_CJK_STOP = re.compile(
    r"^(?:我|你|您|他|她|它|这|哪|谁|啥|什么|自己|大家|别人|那(?:里|儿|个|边|样|些|么)|不是|不要|没有|不会|不能)"
)
# "I like the second option", "I hate to bother you": about the conversation, not a lasting taste.
_PREFERENCE_STOP_FIRST = _words(
    """first second third last other next previous former latter one option both either neither all none
    some any each every more most way idea"""
)
_PREFERENCE_STOP = _words("bother say ask interrupt admit disappoint rush complain hear see know help")
_OBJECT_PRONOUNS = frozenset({"it", "them", "him", "her", "us", "this", "that", "these", "those"})

# Per attribute: values the trigger often takes that are not facts ("I live in fear", "I work at night").
_PLACE_STOP = _words(
    """home house apartment flat place room dorm city country town suburbs peace fear hope denial moment past
    present future harmony bubble hell heaven reality new place new apartment new house 家 家里 宿舍 新家 公司
    学校 酒店 附近 这边 那边 楼上 楼下 隔壁 院"""
)
_DWELLINGS = frozenset({"apartment", "flat", "house", "place", "room", "dorm", "home", "condo", "building"})
_ORG_STOP = _words(
    """home night moment myself yourself free fun money living while hours work weekends weekend night shift
    remote remotely 家 家里 这里 那里 公司 单位 办公室 外地 国外 海外 外面"""
)
_PLATFORMS = _words(
    "discord slack twitter x linkedin reddit facebook instagram tiktok github telegram whatsapp wechat zoom teams"
)
_ORG_TEMPORAL = re.compile(r"^\d+\s*(?:hours?|hrs?|minutes?|mins?|days?|weeks?|months?|years?)\b")
JOB_STOP = _words(
    """boring fine good great hard stressful tough ok okay busy demanding fun interesting done over important
    easy tiring difficult cool nice team group mess nightmare"""
)
_NAME_STOP = _words(
    """asap back later tomorrow today tonight anytime now soon again anything whatever maybe please when if
    at on by in after before sometime directly first instead crazy lazy old-fashioned silly a the out up
    外卖 车 醒 出租车 快递 滴滴 救护车"""
)
HINT_STOP = _words(
    """fine ok okay good great alright right correct true wrong bad cool nice sure enough possible necessary
    needed important problem big deal now later nothing thanks worries way"""
)


# == normalisers ===========================================================================================
# Each takes the raw captured text (original case) and returns zero or more canonical values.


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _trim(text: str, *, articles: bool) -> str:
    """Strip fillers from both ends until nothing changes (a few rounds at most)."""
    previous = None
    while previous != text:
        previous = text
        text = _LEADING.sub("", text)
        if articles:
            text = _ARTICLE.sub("", text)
        text = _TRAILING.sub("", text)
    return _collapse(text)


def _cut(raw: str, cut: re.Pattern[str]) -> str:
    """The raw value up to its first clause boundary."""
    return cut.split(_LEADING.sub("", raw[:MAX_RAW_CHARS]), maxsplit=1)[0]


def _looks_like_value(value: str) -> bool:
    if not value or len(value) > MAX_VALUE_CHARS or not _MEANINGFUL.search(value):
        return False
    words = value.split()
    if words[0] in _STOP_FIRST or words[-1] in _STOP_LAST or _SECOND_PERSON.intersection(words):
        return False
    if _CJK_STOP.match(value):
        return False
    return len(_LATIN_WORD.findall(value)) <= MAX_WORDS and len(CJK_CHAR.findall(value)) <= MAX_CJK


def _finish(
    raw: str,
    cut: re.Pattern[str] = _CUT,
    *,
    stop: frozenset[str] = frozenset(),
    articles: bool = True,
    lower: bool = False,
) -> str | None:
    """Cut, trim and check one value; None when it does not look like one.

    The value keeps the user's casing ("Hangzhou", "Ana", issue 27): values are compared case-insensitively
    (`conflicts.normalise`), so casing costs nothing. `lower` is for values that are keys of a vocabulary
    (channels, languages, preference and allergy topics)."""
    value = _cut(raw, cut)
    if len(value) > MAX_VALUE_CHARS:
        return None
    value = _trim(value.lower() if lower else value, articles=articles)
    if not _looks_like_value(value.lower()) or value.lower() in stop:
        return None
    return value


def _one(value: str | None) -> tuple[str, ...]:
    return (value,) if value else ()


def _text(raw: str, cut: re.Pattern[str] = _CUT, stop: frozenset[str] = frozenset()) -> tuple[str, ...]:
    return _one(_finish(raw, cut, stop=stop))


def _place(raw: str) -> tuple[str, ...]:
    value = _finish(raw, _CUT_PLACE, stop=_PLACE_STOP)
    if value is None or value.split()[-1].lower() in _DWELLINGS:
        return ()
    # One CJK character is a building or a verb's object ("我现在住院"), not a place.
    if CJK_CHAR.search(value) and len(value) < 2:
        return ()
    return (value,)


def _employer(raw: str) -> tuple[str, ...]:
    value = _finish(raw, _CUT_ORG, stop=_ORG_STOP)
    return () if value is None or _ORG_TEMPORAL.match(value) else (value,)


def _capitalised(raw: str) -> bool:
    """Whether the value starts like a proper noun: an upper-case letter, a digit or a CJK character."""
    first = raw.lstrip()[:1]
    return bool(first) and (first.isupper() or first.isdigit() or bool(CJK_CHAR.match(first)))


def _proper_employer(raw: str) -> tuple[str, ...]:
    # "I joined Google" names an employer; "I joined the gym" or "I joined Discord" does not.
    found = _employer(raw) if _capitalised(raw) else ()
    return () if found and found[0].lower() in _PLATFORMS else found


def _name(raw: str) -> tuple[str, ...]:
    value = _finish(raw, _CUT_NAME, stop=_NAME_STOP, articles=False)
    if value is None or len(value.split()) > 4 or value.split()[0].lower() in _NAME_STOP:
        return ()
    cjk = len(CJK_CHAR.findall(value))
    # Chinese given + family names are 2-4 characters; anything longer is a clause ("我叫小明今年30岁").
    if cjk and not 2 <= cjk <= 4:
        return ()
    return (value,)


def _proper_name(raw: str) -> tuple[str, ...]:
    # "call me Ishmael" is a name, "call me tomorrow" is not: only a capitalised word is taken.
    return _name(raw) if _capitalised(raw) else ()


CHANNELS: dict[str, str] = {
    "email": "email", "e-mail": "email", "mail": "email", "emails": "email", "邮件": "email",
    "邮箱": "email", "电子邮件": "email", "电邮": "email",
    "phone": "phone", "telephone": "phone", "cell": "phone", "cellphone": "phone", "mobile": "phone",
    "phone call": "phone", "call": "phone", "电话": "phone", "手机": "phone",
    "sms": "sms", "text": "sms", "texts": "sms", "text message": "sms", "短信": "sms",
    "slack": "slack", "wechat": "wechat", "weixin": "wechat", "微信": "wechat",
    "feishu": "feishu", "lark": "feishu", "飞书": "feishu",
    "telegram": "telegram", "whatsapp": "whatsapp", "teams": "teams", "microsoft teams": "teams",
    "ms teams": "teams", "dingtalk": "dingtalk", "ding talk": "dingtalk", "钉钉": "dingtalk",
    "signal": "signal", "discord": "discord", "skype": "skype", "line": "line", "qq": "qq",
    "imessage": "imessage", "企业微信": "wecom", "wecom": "wecom",
}  # fmt: skip
EMAIL_SRC = r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}"
PHONE_SRC = r"\+?\d[\d\s\-().]{5,20}\d"
_EMAIL = re.compile(EMAIL_SRC)
_PHONE = re.compile(PHONE_SRC)


def _channel(raw: str) -> tuple[str, ...]:
    head = raw.strip()
    if _EMAIL.match(head):
        return ("email",)
    if _PHONE.match(head):
        return ("phone",)
    value = _finish(raw, lower=True)
    if value is None:
        return ()
    value = _POSSESSIVE.sub("", value)
    value = re.sub(r"\s+(?:messages?|app|chat|dm|account)$", "", value)
    words = value.split()
    for candidate in (value, " ".join(words[:2]), words[0]):
        if candidate in CHANNELS:
            return (CHANNELS[candidate],)
    return ()


def _email(raw: str) -> tuple[str, ...]:
    found = _EMAIL.match(raw.strip())
    return (found.group(0).lower(),) if found else ()


def _phone(raw: str) -> tuple[str, ...]:
    # Canonical form: digits and a leading "+", so "555-123 4567" and "5551234567" are the same value.
    digits = re.sub(r"[^\d+]", "", raw)
    digits = digits[:1] + digits[1:].replace("+", "")
    return (digits,) if 7 <= sum(c.isdigit() for c in digits) <= 15 else ()


def _topic(value: str) -> str:
    """A preference/allergy key in the LLM path's form: word characters joined by "_"."""
    return re.sub(r"[^\w-]+", "_", value).strip("_-")[:MAX_TOPIC_CHARS].strip("_-")


def _preference(raw: str, cut: re.Pattern[str] = _CUT) -> tuple[str, ...]:
    head = _cut(raw, cut)
    head = re.sub(r"^\s*(?:to\s+|my\s+)", "", head, flags=re.IGNORECASE)
    value = _finish(head, cut, lower=True)
    if value is None or value in _PREFERENCE_STOP or value.startswith("be "):
        return ()
    words = value.split()
    if words[0] in _PREFERENCE_STOP_FIRST or _OBJECT_PRONOUNS.intersection(words):
        return ()
    return _one(_topic(value))


def _allergens(raw: str) -> tuple[str, ...]:
    # An allergy list is worth keeping whole: "peanuts, shellfish and eggs" is three facts.
    head = _cut(raw, _CUT_STRONG)
    items = (_finish(item, lower=True) for item in _LIST_SPLIT.split(head)[:8])
    topics = (_topic(item) for item in items if item and len(item.split()) <= 3)
    return tuple(dict.fromkeys(t for t in topics if t))


_DIETS: dict[str, str] = {
    "vegetarian": "vegetarian", "lacto-ovo vegetarian": "vegetarian", "lacto-vegetarian": "vegetarian",
    "ovo-vegetarian": "vegetarian", "vegan": "vegan", "plant-based": "vegan", "plant based": "vegan",
    "pescatarian": "pescatarian", "pescetarian": "pescatarian", "keto": "keto", "ketogenic": "keto",
    "paleo": "paleo", "flexitarian": "flexitarian", "halal": "halal", "kosher": "kosher",
    "gluten-free": "gluten-free", "gluten free": "gluten-free", "dairy-free": "dairy-free",
    "low-carb": "low-carb", "low carb": "low-carb",
}  # fmt: skip
DIET_SRC = "|".join(sorted(map(re.escape, _DIETS), key=len, reverse=True))


def _fixed(_raw: str) -> tuple[str, ...]:
    # For kind="fixed" rules the trigger itself is the value; nothing to normalise.
    return ()


def _diet(raw: str) -> tuple[str, ...]:
    return _one(_DIETS.get(_collapse(raw.lower())))


def _amount(raw: str) -> tuple[str, ...]:
    # The amount is kept as written (currency and all): "1500 euros", "$2,000", "5000元".
    return _one(_trim(raw.lower(), articles=False) or None)


# The currency words of `_AMOUNT` (fact_rules): without one a bare number is not money.
_CURRENCY = re.compile(
    r"[$€£¥]|\d\s?k\b|\b(?:euros?|eur|dollars?|usd|bucks|gbp|pounds?|rmb|cny|yuan|yen|jpy)\b|块|元|美元|欧元|英镑|人民币|日元|美金",
    re.IGNORECASE,
)


def _money(raw: str) -> tuple[str, ...]:
    # Without the word "budget" a bare number is not money: "I can spend 3 hours on this".
    return _amount(raw) if _CURRENCY.search(raw) else ()


LANGUAGES: dict[str, str] = {
    "english": "english", "chinese": "chinese", "mandarin": "chinese", "mandarin chinese": "chinese",
    "cantonese": "cantonese", "japanese": "japanese", "korean": "korean", "french": "french",
    "german": "german", "spanish": "spanish", "italian": "italian", "portuguese": "portuguese",
    "russian": "russian", "arabic": "arabic", "hindi": "hindi", "dutch": "dutch", "swedish": "swedish",
    "norwegian": "norwegian", "danish": "danish", "finnish": "finnish", "polish": "polish",
    "turkish": "turkish", "greek": "greek", "hebrew": "hebrew", "thai": "thai", "vietnamese": "vietnamese",
    "indonesian": "indonesian", "malay": "malay", "czech": "czech", "ukrainian": "ukrainian",
    "中文": "chinese", "汉语": "chinese", "普通话": "chinese", "国语": "chinese", "华语": "chinese",
    "英文": "english", "英语": "english", "日语": "japanese", "日文": "japanese", "韩语": "korean",
    "韩文": "korean", "法语": "french", "法文": "french", "德语": "german", "德文": "german",
    "西班牙语": "spanish", "俄语": "russian", "粤语": "cantonese", "广东话": "cantonese",
    "意大利语": "italian", "葡萄牙语": "portuguese", "阿拉伯语": "arabic",
}  # fmt: skip
LANGUAGE_ZH_SRC = "|".join(
    sorted((re.escape(k) for k in LANGUAGES if CJK_CHAR.match(k)), key=len, reverse=True)
)
# "I speak a little Spanish": qualifiers before the language name.
_LANGUAGE_QUALIFIERS = re.compile(
    r"^(?:(?:some|a|little|bit|of|fluent|native|basic|conversational|good|decent|only|mostly|mainly|broken"
    r"|fluently|also)\s+)+"
)


def _language(raw: str, *, qualified: bool = True) -> tuple[str, ...]:
    value = _finish(raw, lower=True)
    if value is None:
        return ()
    if qualified:
        value = _LANGUAGE_QUALIFIERS.sub("", value)
    return _one(LANGUAGES.get(value))


_TZ_ABBREVIATIONS = _words(
    "pst pdt mst mdt cst cdt est edt akst akdt hst gmt utc bst cet cest eet eest wet west ist jst kst aest "
    "aedt acst awst nzst nzdt sgt hkt ict wib msk"
)
TZ_ABBR_SRC = "|".join(sorted(_TZ_ABBREVIATIONS, key=len, reverse=True))
TZ_OFFSET_SRC = r"(?:utc|gmt)\s*[+\-−]\s*\d{1,2}(?::?\d{2})?"
_TZ_OFFSET = re.compile(r"(?:utc|gmt)?\s*(?P<sign>[+\-−])\s*(?P<h>\d{1,2})(?::?(?P<m>\d{2}))?", re.IGNORECASE)
TZ_NAMED_SRC = (
    r"(?:pacific|eastern|central|mountain|atlantic|alaska|hawaii|central\s+european|eastern\s+european"
    r"|western\s+european|british|irish|india|china|japan|korea|singapore|beijing|moscow|australian\s+eastern)"
    r"\s+(?:standard\s+|daylight\s+|summer\s+)?time"
)
_TZ_NAMED_UTC8 = frozenset({"beijing time", "china standard time", "china time", "北京时间"})
_ZH_ZONE = re.compile(r"(?P<side>[东西中])(?P<n>十[一二]|[一二三四五六七八九十]|\d{1,2})?区")
_IANA = re.compile(r"[A-Za-z]+(?:/[A-Za-z_\-]+){1,2}")


def _zone_number(text: str) -> int:
    """A time zone's number, in digits or characters ("8", "八", "十二")."""
    return int(text) if text.isdecimal() else int(zh_number(text) or 0)


def _offset(sign: str, hours: int, minutes: int = 0) -> str | None:
    if hours > 14 or minutes >= 60:
        return None
    tail = f":{minutes:02d}" if minutes else ""
    return f"UTC{'-' if sign in '-−' else '+'}{hours}{tail}"


def _timezone(raw: str) -> tuple[str, ...]:
    """Canonical zone: "UTC+8" for offsets (GMT too), upper-case abbreviations, IANA names as written."""
    value = _finish(raw, articles=True)
    if value is None:
        return ()
    low = value.lower()
    if zone := _ZH_ZONE.fullmatch(value):
        if zone["side"] == "中":
            return ("UTC+0",)
        return _one(_offset("-" if zone["side"] == "西" else "+", _zone_number(zone["n"] or "零")))
    if offset := _TZ_OFFSET.fullmatch(low):
        return _one(_offset(offset["sign"], int(offset["h"]), int(offset["m"] or 0)))
    if low in _TZ_NAMED_UTC8:
        return ("UTC+8",)
    if low in _TZ_ABBREVIATIONS:
        return ("UTC",) if low in ("utc", "gmt") else (low.upper(),)
    if _IANA.fullmatch(value):
        return (value,)
    return (low,)
