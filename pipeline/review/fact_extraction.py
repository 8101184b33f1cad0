"""Rule-based extraction of facts a user states about themself, in English and Chinese.

The fallback beside the LLM extractor (`pipeline.review.llm_tasks.extract_facts`): pure, table-driven and cheap.
Each rule is one compiled pattern anchored on a first-person trigger ("I live in", "我住在") plus a
normaliser that turns the captured text into a canonical value or rejects it. Precision is favoured over
recall everywhere, because a wrong fact closes or retracts a true one downstream:

* only `user` turns are read (an assistant saying "I live in the cloud" is not about the user);
* questions, negations, hypotheticals and other people's facts are skipped;
* values stop at the first clause boundary and must look like a value (1-6 words or 1-12 CJK characters,
  not a pronoun or filler).

Explicit metadata (`entity`, `attribute`, `value`) is taken as given and always wins its (entity, attribute).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, Literal

from pipeline.core.models import CorrectionHint, FactCandidate
from pipeline.review.regex_gate import GateSet

__all__ = ["Extraction", "extract"]

USER_ROLE = "user"
USER_ENTITY = "user"
METADATA_CONFIDENCE = 1.0  # the caller said so explicitly
EXPLICIT_CONFIDENCE = 0.9  # "my X is Y": the speaker names the attribute themself
RULE_CONFIDENCE = 0.8  # the attribute is inferred from the verb ("I moved to Y")
HINT_CONFIDENCE = 0.8
MAX_WORDS = 6
MAX_CJK = 12
MAX_VALUE_CHARS = 120  # longer than any acceptable value; also bounds the work done per value
MAX_RAW_CHARS = 400  # a value is looked for in this much text after its trigger
MAX_HINT_CHARS = 200  # "actually X, not Y" is short; a long sentence after a cue is not a bare correction
MAX_TOPIC_CHARS = 48  # the LLM path's limit for preference:<topic> / allergy:<substance>


@dataclass(frozen=True, slots=True)
class Extraction:
    facts: tuple[FactCandidate, ...]
    corrections: tuple[CorrectionHint, ...]


Normaliser = Callable[[str], tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class _Rule:
    """One trigger. `kind` says where the fact's value comes from:

    value: the normalised group `v`;  fixed: `value` (the trigger says it all: "我吃素" -> vegetarian);
    keyed: the normalised group `v` names the attribute (`preference:<v>`) and `value` is the fact's value.
    """

    attribute: str
    pattern: re.Pattern[str]
    normalise: Normaliser
    kind: Literal["value", "fixed", "keyed"] = "value"
    value: str = ""
    confidence: float = RULE_CONFIDENCE
    # Not anchored on "I"/"my"/"我" ("reply in French", "预算5000元"): check that nobody else is the subject.
    guarded: bool = False


@dataclass(frozen=True, slots=True)
class _Found:
    position: tuple[int, int]  # (sentence index, offset): later statements in a turn win
    attribute: str
    value: str
    confidence: float
    correction: bool


# == text shape ==========================================================================================

_CJK_RANGE = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_CHAR = re.compile(f"[{_CJK_RANGE}]")
# A Latin "word" is a run of anything but whitespace and CJK, so "new york市" counts two words.
_LATIN_WORD = re.compile(f"[^\\s{_CJK_RANGE}]+")
_MEANINGFUL = re.compile(r"[^\W_]")  # at least one letter, digit or CJK character

# A sentence ends at . ! ? 。 ; or a newline. A "." ends one only before whitespace or the end, so e-mail
# addresses and decimals stay whole, and a few title abbreviations ("St. Louis") do not end one either.
_SENTENCE = re.compile(
    r"(?P<body>(?:\b(?:St|Mt|Mr|Mrs|Ms|Dr|Ft|Jr|Sr)\.|[^.!?。;\n]|\.(?!\s|$))+)(?P<end>[.!?。;]*)"
)

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
_CUT_PLACE = _cut_pattern(_TEMPORAL_BOUNDARY, r"\s+(?:as)\b")
_CUT_ORG = _cut_pattern(_TEMPORAL_BOUNDARY, r"\s+(?:as|in|on)\b")
_CUT_JOB = _cut_pattern(_TEMPORAL_BOUNDARY, r"\s+(?:at|for|in|on)\b")
_CUT_NAME = _cut_pattern(r"\s+(?:from|at|in|and)\b")
# "I prefer tea over/to/rather than coffee": the rest names what is not preferred.
_CUT_PREFER = _cut_pattern(
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
_JOB_STOP = _words(
    """boring fine good great hard stressful tough ok okay busy demanding fun interesting done over important
    easy tiring difficult cool nice team group mess nightmare"""
)
_NAME_STOP = _words(
    """asap back later tomorrow today tonight anytime now soon again anything whatever maybe please when if
    at on by in after before sometime directly first instead crazy lazy old-fashioned silly a the out up
    外卖 车 醒 出租车 快递 滴滴 救护车"""
)
_HINT_STOP = _words(
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
    return len(_LATIN_WORD.findall(value)) <= MAX_WORDS and len(_CJK_CHAR.findall(value)) <= MAX_CJK


def _finish(
    raw: str,
    cut: re.Pattern[str] = _CUT,
    *,
    stop: frozenset[str] = frozenset(),
    articles: bool = True,
    lower: bool = True,
) -> str | None:
    """Cut, trim and check one value; None when it does not look like one."""
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
    if value is None or value.split()[-1] in _DWELLINGS:
        return ()
    # One CJK character is a building or a verb's object ("我现在住院"), not a place.
    if _CJK_CHAR.search(value) and len(value) < 2:
        return ()
    return (value,)


def _employer(raw: str) -> tuple[str, ...]:
    value = _finish(raw, _CUT_ORG, stop=_ORG_STOP)
    return () if value is None or _ORG_TEMPORAL.match(value) else (value,)


def _capitalised(raw: str) -> bool:
    """Whether the value starts like a proper noun: an upper-case letter, a digit or a CJK character."""
    first = raw.lstrip()[:1]
    return bool(first) and (first.isupper() or first.isdigit() or bool(_CJK_CHAR.match(first)))


def _proper_employer(raw: str) -> tuple[str, ...]:
    # "I joined Google" names an employer; "I joined the gym" or "I joined Discord" does not.
    found = _employer(raw) if _capitalised(raw) else ()
    return () if found and found[0] in _PLATFORMS else found


def _name(raw: str) -> tuple[str, ...]:
    value = _finish(raw, _CUT_NAME, stop=_NAME_STOP, articles=False)
    if value is None or len(value.split()) > 4 or value.split()[0] in _NAME_STOP:
        return ()
    cjk = len(_CJK_CHAR.findall(value))
    # Chinese given + family names are 2-4 characters; anything longer is a clause ("我叫小明今年30岁").
    if cjk and not 2 <= cjk <= 4:
        return ()
    return (value,)


def _proper_name(raw: str) -> tuple[str, ...]:
    # "call me Ishmael" is a name, "call me tomorrow" is not: only a capitalised word is taken.
    return _name(raw) if _capitalised(raw) else ()


_CHANNELS: dict[str, str] = {
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
_EMAIL_SRC = r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}"
_PHONE_SRC = r"\+?\d[\d\s\-().]{5,20}\d"
_EMAIL = re.compile(_EMAIL_SRC)
_PHONE = re.compile(_PHONE_SRC)


def _channel(raw: str) -> tuple[str, ...]:
    head = raw.strip()
    if _EMAIL.match(head):
        return ("email",)
    if _PHONE.match(head):
        return ("phone",)
    value = _finish(raw)
    if value is None:
        return ()
    value = _POSSESSIVE.sub("", value)
    value = re.sub(r"\s+(?:messages?|app|chat|dm|account)$", "", value)
    words = value.split()
    for candidate in (value, " ".join(words[:2]), words[0]):
        if candidate in _CHANNELS:
            return (_CHANNELS[candidate],)
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
    value = _finish(head, cut)
    if value is None or value in _PREFERENCE_STOP or value.startswith("be "):
        return ()
    words = value.split()
    if words[0] in _PREFERENCE_STOP_FIRST or _OBJECT_PRONOUNS.intersection(words):
        return ()
    return _one(_topic(value))


def _allergens(raw: str) -> tuple[str, ...]:
    # An allergy list is worth keeping whole: "peanuts, shellfish and eggs" is three facts.
    head = _cut(raw, _CUT_STRONG)
    items = (_finish(item) for item in _LIST_SPLIT.split(head)[:8])
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
_DIET_SRC = "|".join(sorted(map(re.escape, _DIETS), key=len, reverse=True))


def _fixed(_raw: str) -> tuple[str, ...]:
    # For kind="fixed" rules the trigger itself is the value; nothing to normalise.
    return ()


def _diet(raw: str) -> tuple[str, ...]:
    return _one(_DIETS.get(_collapse(raw.lower())))


def _amount(raw: str) -> tuple[str, ...]:
    # The amount is kept as written (currency and all): "1500 euros", "$2,000", "5000元".
    return _one(_trim(raw.lower(), articles=False) or None)


def _money(raw: str) -> tuple[str, ...]:
    # Without the word "budget" a bare number is not money: "I can spend 3 hours on this".
    return _amount(raw) if _CURRENCY.search(raw) else ()


_LANGUAGES: dict[str, str] = {
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
_LANGUAGE_ZH_SRC = "|".join(
    sorted((re.escape(k) for k in _LANGUAGES if _CJK_CHAR.match(k)), key=len, reverse=True)
)
# "I speak a little Spanish": qualifiers before the language name.
_LANGUAGE_QUALIFIERS = re.compile(
    r"^(?:(?:some|a|little|bit|of|fluent|native|basic|conversational|good|decent|only|mostly|mainly|broken"
    r"|fluently|also)\s+)+"
)


def _language(raw: str, *, qualified: bool = True) -> tuple[str, ...]:
    value = _finish(raw)
    if value is None:
        return ()
    if qualified:
        value = _LANGUAGE_QUALIFIERS.sub("", value)
    return _one(_LANGUAGES.get(value))


_TZ_ABBREVIATIONS = _words(
    "pst pdt mst mdt cst cdt est edt akst akdt hst gmt utc bst cet cest eet eest wet west ist jst kst aest "
    "aedt acst awst nzst nzdt sgt hkt ict wib msk"
)
_TZ_ABBR_SRC = "|".join(sorted(_TZ_ABBREVIATIONS, key=len, reverse=True))
_TZ_OFFSET_SRC = r"(?:utc|gmt)\s*[+\-−]\s*\d{1,2}(?::?\d{2})?"
_TZ_OFFSET = re.compile(r"(?:utc|gmt)?\s*(?P<sign>[+\-−])\s*(?P<h>\d{1,2})(?::?(?P<m>\d{2}))?", re.IGNORECASE)
_TZ_NAMED_SRC = (
    r"(?:pacific|eastern|central|mountain|atlantic|alaska|hawaii|central\s+european|eastern\s+european"
    r"|western\s+european|british|irish|india|china|japan|korea|singapore|beijing|moscow|australian\s+eastern)"
    r"\s+(?:standard\s+|daylight\s+|summer\s+)?time"
)
_TZ_NAMED_UTC8 = frozenset({"beijing time", "china standard time", "china time", "北京时间"})
_ZH_ZONE = re.compile(r"(?P<side>[东西中])(?P<n>十[一二]|[一二三四五六七八九十]|\d{1,2})?区")
_ZH_DIGITS = {c: i for i, c in enumerate("零一二三四五六七八九十")}
_IANA = re.compile(r"[A-Za-z]+(?:/[A-Za-z_\-]+){1,2}")


def _zh_number(text: str) -> int:
    if text.isdecimal():
        return int(text)
    if text.startswith("十"):
        return 10 + (_ZH_DIGITS[text[1]] if len(text) > 1 else 0)
    return _ZH_DIGITS[text]


def _offset(sign: str, hours: int, minutes: int = 0) -> str | None:
    if hours > 14 or minutes >= 60:
        return None
    tail = f":{minutes:02d}" if minutes else ""
    return f"UTC{'-' if sign in '-−' else '+'}{hours}{tail}"


def _timezone(raw: str) -> tuple[str, ...]:
    """Canonical zone: "UTC+8" for offsets (GMT too), upper-case abbreviations, IANA names as written."""
    value = _finish(raw, articles=True, lower=False)
    if value is None:
        return ()
    low = value.lower()
    if zone := _ZH_ZONE.fullmatch(value):
        if zone["side"] == "中":
            return ("UTC+0",)
        return _one(_offset("-" if zone["side"] == "西" else "+", _zh_number(zone["n"] or "零")))
    if offset := _TZ_OFFSET.fullmatch(low):
        return _one(_offset(offset["sign"], int(offset["h"]), int(offset["m"] or 0)))
    if low in _TZ_NAMED_UTC8:
        return ("UTC+8",)
    if low in _TZ_ABBREVIATIONS:
        return ("UTC",) if low in ("utc", "gmt") else (low.upper(),)
    if _IANA.fullmatch(value):
        return (value,)
    return (low,)


# == the rule table =========================================================================================

_I = r"\bI\s+"
_I_AM = r"\bI(?:'m|m|\s+am)\s+"
_I_HAVE = r"\bI(?:'ve|\s+have)?\s+"
# Adverbs allowed between the subject and the verb: "I now live in", "I've just moved to".
_ADV = r"(?:(?:now|currently|still|also|just|recently|really|actually|finally|officially|already|only)\s+)?"
_ADV_ZH = r"(?:现在|目前|一直|也|还|已经|刚刚|刚|最近|其实)?"
# The value: up to 400 characters of the rest of the sentence, cut by its normaliser at a clause boundary. A
# lookahead, so the match ends at the trigger and a second trigger in the same sentence is still found
# ("I like tea and I like coffee"), and bounded, so a long sentence costs linear time per trigger.
_REST = f"(?=(?P<v>.{{1,{MAX_RAW_CHARS}}}))"
_SPAN_ZH = r"(?P<v>[^,;!?。]{1,20}?)"  # a value closed by a suffix: 我在<v>工作
_AMOUNT = (
    r"(?P<v>(?:(?:usd|eur|rmb|cny|gbp|jpy)\s?)?(?:[$€£¥]\s?)?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
    r"(?:\s?k\b|\s?(?:万|千|百|w\b))?"
    r"(?:\s?(?:(?:euros?|eur|dollars?|usd|bucks|gbp|pounds?|rmb|cny|yuan|yen|jpy)\b|块钱|块|元|美元|欧元|英镑|人民币|日元|美金))?"
    r"|[零一二两三四五六七八九十百千万]+(?:块钱|块|元|美元|欧元|英镑|人民币|日元|美金)?)"
)
_CURRENCY = re.compile(
    r"[$€£¥]|\d\s?k\b|\b(?:euros?|eur|dollars?|usd|bucks|gbp|pounds?|rmb|cny|yuan|yen|jpy)\b|块|元|美元|欧元|英镑|人民币|日元|美金",
    re.IGNORECASE,
)
_AMOUNT_PREFIX = r"(?:about|around|roughly|approximately|up\s+to|at\s+most|max(?:imum)?|under|below|only|just|less\s+than)?\s*"
_CHANNEL_SRC = "|".join(sorted(map(re.escape, _CHANNELS), key=len, reverse=True))
_LANGUAGE_SRC = "|".join(sorted(map(re.escape, _LANGUAGES), key=len, reverse=True))


def _p(source: str) -> re.Pattern[str]:
    return re.compile(source, re.IGNORECASE)


# One rule per line (ruff format would spread each over ten): the table reads like the brief.
# fmt: off
_RULES: tuple[_Rule, ...] = (
    # -- location: where the user lives now -------------------------------------------------------------
    _Rule("location", _p(_I + _ADV + r"(?:live|reside)\s+in\s+" + _REST), _place),
    _Rule("location", _p(_I_HAVE + _ADV + r"(?:moved|relocated)\s+(?:back\s+)?to\s+" + _REST), _place),
    _Rule("location", _p(_I_AM + _ADV + r"(?:based|living|located|settled)\s+in\s+" + _REST), _place),
    _Rule("location", _p(r"\bI(?:'ve|\s+have)\s+been\s+living\s+in\s+" + _REST), _place),
    _Rule("location", _p(r"我" + _ADV_ZH + r"(?:住在|居住在|生活在|定居在|定居于)" + _REST), _place),
    _Rule("location", _p(r"我(?:现在|目前)住(?!在)" + _REST), _place),
    _Rule("location", _p(r"我(?:已经|刚刚|刚|最近)?搬(?:到|去|回)了?" + _REST), _place),
    _Rule("location", _p(r"我" + _ADV_ZH + r"在" + _SPAN_ZH + r"(?:生活|定居|居住)"), _place),
    # -- employer -----------------------------------------------------------------------------------------
    _Rule("employer", _p(r"\bI(?:'m|\s+am)?\s+" + _ADV + r"(?:work|working)\s+(?:at|for)\s+" + _REST), _employer),
    _Rule("employer", _p(_I + _ADV + r"(?:started|began)\s+(?:working|a\s+(?:new\s+)?job)\s+(?:at|for|with)\s+" + _REST), _employer),
    _Rule("employer", _p(_I + _ADV + r"got\s+(?:a\s+(?:new\s+)?job|hired)\s+(?:at|by|with)\s+" + _REST), _employer),
    _Rule("employer", _p(_I_AM + _ADV + r"employed\s+(?:at|by)\s+" + _REST), _employer),
    _Rule("employer", _p(_I_HAVE + _ADV + r"joined\s+" + _REST), _proper_employer),
    # "I work as a nurse at St. Mary's": the occupation rule keeps "nurse", this one the employer.
    _Rule("employer", _p(_I + _ADV + r"work\s+as\s+an?\s+[^,;]{1,40}?\s+(?:at|for)\s+" + _REST), _employer),
    _Rule("employer", _p(r"我" + _ADV_ZH + r"在" + _SPAN_ZH + r"(?:工作|上班|任职|实习)"), _employer),
    _Rule("employer", _p(r"我(?:已经|刚刚|刚|最近)?入职了?" + _REST), _employer),
    # -- occupation ---------------------------------------------------------------------------------------
    _Rule("occupation", _p(r"\bI(?:'m|\s+am)?\s+" + _ADV + r"(?:work|working|employed)\s+as\s+" + _REST), partial(_text, cut=_CUT_JOB, stop=_JOB_STOP)),
    _Rule("occupation", _p(_I_AM + r"(?:an?\s+)?(?P<v>[^,;]{1,60}?)\s+by\s+(?:profession|trade|training)\b"), partial(_text, cut=_CUT_JOB, stop=_JOB_STOP)),
    _Rule("occupation", _p(r"\bmy\s+(?:job|occupation|profession)\s+is\s+" + _REST), partial(_text, cut=_CUT_JOB, stop=_JOB_STOP), confidence=EXPLICIT_CONFIDENCE),
    _Rule("occupation", _p(r"我(?:现在|目前)?是一(?:名|位)" + _REST), partial(_text, cut=_CUT_JOB, stop=_JOB_STOP)),
    _Rule("occupation", _p(r"我(?:现在|目前)?是做" + _SPAN_ZH + r"的"), partial(_text, cut=_CUT_JOB, stop=_JOB_STOP)),
    _Rule("occupation", _p(r"我的(?:职业|工作|职位)是" + _REST), partial(_text, cut=_CUT_JOB, stop=_JOB_STOP), confidence=EXPLICIT_CONFIDENCE),
    # -- name ---------------------------------------------------------------------------------------------
    _Rule("name", _p(r"\bmy\s+(?:first\s+)?name(?:'s|\s+is)\s+" + _REST), _name, confidence=EXPLICIT_CONFIDENCE),
    _Rule("name", _p(r"\bcall\s+me\s+" + _REST), _proper_name, guarded=True),
    _Rule("name", _p(_I_AM + r"(?:called|named)\s+" + _REST), _proper_name),
    _Rule("name", _p(_I + r"go\s+by\s+" + _REST), _proper_name),
    _Rule("name", _p(r"我的名字(?:是|叫)" + _REST), _name, confidence=EXPLICIT_CONFIDENCE),
    _Rule("name", _p(r"我(?:名)?叫(?!了|做|作)" + _REST), _name),
    # -- contact_channel: how the user wants to be reached -------------------------------------------
    _Rule("contact_channel", _p(r"\b(?P<v>e-?mail|text|sms|slack|whatsapp|telegram|wechat|phone)\s+me\b"), _channel, guarded=True),
    _Rule("contact_channel", _p(r"\b(?:contact|reach|notify|message|ping|dm|text|alert|remind|update|get\s+in\s+touch\s+with)\s+me\s+(?:via|by|on|through|over|using|with|at)\s+" + _REST), _channel, guarded=True),
    _Rule("contact_channel", _p(r"\b(?:be\s+)?(?:contacted|reached|notified)\s+(?:via|by|on|through|over)\s+" + _REST), _channel, guarded=True),
    _Rule("contact_channel", _p(r"(?:(?:用|通过|使用|改用|改成|走)\s*)?(?P<v>" + _CHANNEL_SRC + r")\s*上?\s*(?:来)?(?:通知|联系|发给|告诉|找|提醒)我"), _channel, guarded=True),
    _Rule("contact_channel", _p(r"改用\s*(?P<v>" + _CHANNEL_SRC + r")"), _channel, guarded=True),
    _Rule("contact_channel", _p(r"给我(?:打|发)\s*(?P<v>" + _CHANNEL_SRC + r")"), _channel, guarded=True),
    _Rule("contact_channel", _p(r"(?:打|发)\s*(?P<v>" + _CHANNEL_SRC + r")\s*给我"), _channel, guarded=True),
    # -- email / phone: addresses the user gives as theirs -------------------------------------------
    _Rule("email", _p(r"\bmy\s+(?:e-?mail|email)(?:\s+address)?\s*(?:is|'s|:|=)?\s*(?P<v>" + _EMAIL_SRC + ")"), _email, confidence=EXPLICIT_CONFIDENCE),
    _Rule("email", _p(r"\b(?:e-?mail|reach|contact|write\s+to)\s+me\s+(?:at|on|via)\s+(?P<v>" + _EMAIL_SRC + ")"), _email, guarded=True),
    _Rule("email", _p(r"我的(?:电子)?邮箱(?:地址)?\s*(?:是|为|:)?\s*(?P<v>" + _EMAIL_SRC + ")"), _email, confidence=EXPLICIT_CONFIDENCE),
    _Rule("phone", _p(r"\bmy\s+(?:(?:phone|cell|mobile|telephone)\s+)?(?:number|no\.?)\s*(?:is|'s|:)?\s*(?P<v>" + _PHONE_SRC + ")"), _phone, confidence=EXPLICIT_CONFIDENCE),
    _Rule("phone", _p(r"\bmy\s+(?:phone|cell|mobile)\s*(?:is|'s|:)\s*(?P<v>" + _PHONE_SRC + ")"), _phone, confidence=EXPLICIT_CONFIDENCE),
    _Rule("phone", _p(r"\b(?:call|text|reach|phone)\s+me\s+(?:at|on)\s+(?P<v>" + _PHONE_SRC + ")"), _phone, guarded=True),
    _Rule("phone", _p(r"我的(?:电话|手机|手机号|手机号码|电话号码|联系电话)\s*(?:是|为|:)?\s*(?P<v>" + _PHONE_SRC + ")"), _phone, confidence=EXPLICIT_CONFIDENCE),
    # -- preferences: preference:<object> = likes | dislikes ----------------------------------------
    _Rule("preference", _p(_I + r"(?:(?:really|also|just|absolutely|totally|still|do|truly|actually|genuinely)\s+)*(?:like|love|enjoy|adore)\s+" + _REST), _preference, kind="keyed", value="likes"),
    _Rule("preference", _p(_I + r"(?:(?:really|also|just|much|still|do|actually|generally|usually)\s+)*prefer\s+" + _REST), partial(_preference, cut=_CUT_PREFER), kind="keyed", value="likes"),
    _Rule("preference", _p(_I + r"(?:(?:really|just|absolutely|totally|truly|actually)\s+)*(?:hate|dislike|detest|loathe|can'?t\s+stand|cannot\s+stand|(?:don'?t|do\s+not)\s+(?:really\s+)?(?:like|enjoy|love)|no\s+longer\s+(?:like|enjoy|love))\s+" + _REST), _preference, kind="keyed", value="dislikes"),
    _Rule("preference", _p(r"我(?:也|很|非常|特别|最|真|还是|一直|都|挺|蛮|超|更)*(?:喜欢|热爱|喜爱|偏爱|钟爱|爱(?!人|死))" + _REST), _preference, kind="keyed", value="likes"),
    _Rule("preference", _p(r"我(?:也|很|非常|特别|真|一直|都|最)*(?:不喜欢|讨厌|不爱|不再喜欢|受不了|反感|厌恶|不太喜欢)" + _REST), _preference, kind="keyed", value="dislikes"),
    # -- answer_style: how the user wants to be answered (one chain, so a change of mind closes the old) ---
    _Rule("answer_style", _p(r"\b(?:keep|make)\s+(?:it|them|things|(?:your|the)\s+(?:answers?|replies|reply|responses?))\s+(?:short|brief|concise|to\s+the\s+point)\b"), _fixed, kind="fixed", value="short", guarded=True),
    _Rule("answer_style", _p(r"\b(?:short|brief|concise|shorter|direct)\s+(?:answers?|replies|responses?)\b"), _fixed, kind="fixed", value="short", guarded=True),
    _Rule("answer_style", _p(r"\b(?:too|so|very)\s+(?:wordy|verbose|long-winded)\b|\blong\s+(?:answers|replies|responses)\b"), _fixed, kind="fixed", value="short", guarded=True),
    _Rule("answer_style", _p(r"\b(?:don'?t|do\s+not)\s+(?:like|want|need)\s+(?:long|lengthy|wordy|verbose)\s+(?:answers|replies|responses|explanations)\b"), _fixed, kind="fixed", value="short", guarded=True),
    _Rule("answer_style", _p(r"\b(?:just|get|cut)\s+(?:get\s+)?(?:to\s+)?the\s+(?:point|chase)\b"), _fixed, kind="fixed", value="short", guarded=True),
    _Rule("answer_style", _p(r"\b(?:detailed|longer|in-depth|thorough|more\s+detailed)\s+(?:answers?|replies|responses?|explanations?)\b|\bmore\s+details?\b"), _fixed, kind="fixed", value="detailed", guarded=True),
    _Rule("answer_style", _p(r"(?:简短|简洁|简明|太啰嗦|太长了|说重点|直接说重点|别太长)"), _fixed, kind="fixed", value="short", guarded=True),
    _Rule("answer_style", _p(r"(?:详细(?:一点|一些|点)?(?:的)?(?:回答|解释|说明)|说详细|讲详细|更详细)"), _fixed, kind="fixed", value="detailed", guarded=True),
    # -- allergies: allergy:<allergen> = allergic ---------------------------------------------------------
    _Rule("allergy", _p(_I_AM + _ADV + r"(?:(?:severely|very|highly|mildly|deathly)\s+)?allergic\s+to\s+" + _REST), _allergens, kind="keyed", value="allergic"),
    _Rule("allergy", _p(_I + r"(?:have|'ve\s+got|got)\s+(?:an?\s+)?(?:(?:severe|mild|serious|bad)\s+)?(?P<v>[^,;]{1,40}?)\s+allergy\b"), _allergens, kind="keyed", value="allergic"),
    _Rule("allergy", _p(_I + r"have\s+an?\s+(?:(?:severe|mild|serious)\s+)?allergy\s+to\s+" + _REST), _allergens, kind="keyed", value="allergic"),
    _Rule("allergy", _p(r"我对" + _SPAN_ZH + r"(?:严重|有点|非常|很|特别)?过敏"), _allergens, kind="keyed", value="allergic"),
    # -- diet -----------------------------------------------------------------------------------------------
    _Rule("diet", _p(_I_AM + r"(?:(?:now|currently|strictly|also|fully)\s+)?(?:an?\s+)?(?P<v>" + _DIET_SRC + r")\b(?!\s+(?:restaurant|food|option|dish|recipe|place|menu|cafe|friend))"), _diet),
    _Rule("diet", _p(r"\bI(?:'m|\s+am)?\s+(?:on|follow(?:ing)?|eat(?:ing)?|keep(?:ing)?)\s+an?\s+(?P<v>" + _DIET_SRC + r")\s+diet\b"), _diet),
    _Rule("diet", _p(_I + r"(?:only\s+)?(?:eat|keep)\s+(?P<v>kosher|halal)\b"), _diet),
    _Rule("diet", _p(_I + r"(?:don'?t|do\s+not|never)\s+eat\s+(?:any\s+)?meat(?:\s+or\s+fish|\s+anymore|\s+at\s+all)?(?=\s*(?:$|[,;.!]|\s+(?:and|but|because|since|so)\b))"), _diet, kind="fixed", value="vegetarian"),
    _Rule("diet", _p(r"我" + _ADV_ZH + r"(?:吃素|是素食(?:主义)?者?)"), _diet, kind="fixed", value="vegetarian"),
    _Rule("diet", _p(r"我" + _ADV_ZH + r"(?:吃(?:全|纯)素|是纯素(?:食)?(?:主义)?者?)"), _diet, kind="fixed", value="vegan"),
    _Rule("diet", _p(r"我" + _ADV_ZH + r"不吃肉(?=$|了|的|[,;.!。])"), _diet, kind="fixed", value="vegetarian"),
    # -- budget: the amount as written ----------------------------------------------------------------------
    _Rule("budget", _p(r"\bmy\s+budget(?:\s+is|'s|\s*[=:])\s*(?:now\s+)?" + _AMOUNT_PREFIX + _AMOUNT), _amount, confidence=EXPLICIT_CONFIDENCE),
    # "my budget for the new laptop is 1500 euros": a short purpose between "budget" and the amount.
    _Rule("budget", _p(r"\bmy\s+budget\s+for\s+(?:\S+\s+){1,5}?is\s+(?:now\s+)?" + _AMOUNT_PREFIX + _AMOUNT), _amount),
    _Rule("budget", _p(r"\bbudget\s+of\s+" + _AMOUNT_PREFIX + _AMOUNT), _amount, guarded=True),
    _Rule("budget", _p(_I + r"can\s+(?:only\s+)?(?:spend|afford)\s+" + _AMOUNT_PREFIX + _AMOUNT), _money),
    _Rule("budget", _p(r"我的预算\s*(?:是|为|有|:)?\s*(?:大概|大约|约|在)?\s*" + _AMOUNT), _amount, confidence=EXPLICIT_CONFIDENCE),
    _Rule("budget", _p(r"预算\s*(?:是|为|有|:)?\s*(?:大概|大约|约|在)?\s*" + _AMOUNT), _amount, guarded=True),
    _Rule("budget", _p(r"我(?:最多)?(?:能|可以)花\s*(?:最多)?\s*" + _AMOUNT), _money),
    # -- timezone -----------------------------------------------------------------------------------------
    _Rule("timezone", _p(r"\bmy\s+time\s*zone\s+(?:is|'s|:)\s*" + _REST), _timezone, confidence=EXPLICIT_CONFIDENCE),
    _Rule("timezone", _p(_I_AM + r"(?:in|on)\s+(?:the\s+)?(?P<v>" + _TZ_OFFSET_SRC + r"|(?:" + _TZ_ABBR_SRC + r")\b|" + _TZ_NAMED_SRC + r")"), _timezone),
    _Rule("timezone", _p(r"我的时区\s*(?:是|为|:)?\s*" + _REST), _timezone, confidence=EXPLICIT_CONFIDENCE),
    _Rule("timezone", _p(r"我" + _ADV_ZH + r"(?:在|处于|位于|用)(?P<v>[东西中](?:十[一二]|[一二三四五六七八九十]|\d{1,2})?区|北京时间)"), _timezone),
    # -- language: what the user speaks or wants answers in -----------------------------------------------
    _Rule("language", _p(_I + r"(?:can\s+|also\s+|only\s+|mostly\s+|mainly\s+)?speak\s+" + _REST), _language),
    _Rule("language", _p(r"\b(?:answer|reply|respond|write|talk|speak|chat|communicate)(?:\s+(?:to\s+)?me)?\s+(?:only\s+)?(?:in|using)\s+" + _REST), _language, guarded=True),
    _Rule("language", _p(r"\b(?:please\s+)?(?:use|switch\s+to)\s+" + _REST), partial(_language, qualified=False), guarded=True),
    _Rule("language", _p(r"我(?:会|只会|能|可以|主要)?说(?P<v>" + _LANGUAGE_ZH_SRC + ")"), _language),
    _Rule("language", _p(r"请说(?P<v>" + _LANGUAGE_ZH_SRC + ")"), _language, guarded=True),
    _Rule("language", _p(r"(?:用|使用|改用)\s*(?P<v>" + _LANGUAGE_SRC + r")\s*(?:来)?(?:回答|回复|交流|说话|跟我说|和我说|对话|沟通|聊天|写|回|聊|说)"), _language, guarded=True),
)
_RULE_GATES = GateSet([rule.pattern for rule in _RULES])
# fmt: on


# == sentence guards =====================================================================================

# A question about the match: the clause holding it ends the sentence with "?" or 吗/么 ("Do I live in Paris?",
# "你知道我住在北京吗"). "I live in Paris, do you?" still states a fact: the question is another clause.
_ZH_QUESTION_END = re.compile(r"(?:吗|么)\s*$")
_QUESTION_START = re.compile(
    r"^\s*(?:do|does|did|am|are|have|has|can|could|would|will|should|is)\s+(?:i|you)\b", re.I
)
# "I live in Paris, right?" asks the assistant to confirm a memory: the tag makes the whole sentence a question.
_TAG_QUESTION = re.compile(
    r"\s*(?:right|correct|true|yes|no|ok(?:ay)?|isn'?t\s+it|don'?t\s+i|didn'?t\s+i|aren'?t\s+i|am\s+i\s+right"
    r"|is\s+that\s+(?:right|correct)|对吧|对吗|是吧|是吗|是不是|没错吧|对不对)\s*$",
    re.IGNORECASE,
)
# A hypothetical anywhere before the match in its sentence, up to a contrast ("If I moved to Berlin ...",
# "如果我搬到上海"); "的话" closes a Chinese conditional after it ("我搬到上海的话").
_HYPOTHETICAL = re.compile(
    r"\b(?:if|unless|whether|suppose|supposing|imagine|imagining|hypothetically|pretend|wish|maybe|perhaps"
    r"|might|in\s+case|assuming|let'?s\s+say|say\s+that)\b"
    r"|如果|假如|要是|假设|万一|倘若|假使|若是|即使|就算|也许|或许|可能|想象",
    re.IGNORECASE,
)
_CONTRAST = re.compile(r"\b(?:but|however|though|anyway)\b|但|不过|可是|然而|;", re.IGNORECASE)
_ZH_CONDITIONAL_END = re.compile(r"^[^,;]*的话")
# A negation just before the match, within its clause: "don't email me", "不要用邮件通知我".
_NEGATED = re.compile(
    r"(?:\b(?:don'?t|do\s+not|doesn'?t|does\s+not|didn'?t|did\s+not|never|not|no\s+longer|won'?t|will\s+not"
    r"|stop|can'?t|cannot|nobody|no\s+one)\b(?:\s+\S+){0,3}\s*"
    r"|(?:不要|不用|不必|别|不|没有|没|勿|无需|不再|并非|不是)\s*\S{0,2})$",
    re.IGNORECASE,
)
# Reported speech: "You said I live in Paris", "他说我住在北京". Only the speaker's own "I said" is kept.
_REPORTED = re.compile(
    r"\b(?!I\b)\w+\s+(?:said|says|thinks?|thought|claims?|claimed|assumes?|assumed|believes?|believed|wrote"
    r"|mentioned|told\s+\w+)\s+(?:that\s+)?$"
    r"|(?:他|她|你|您|他们|她们|别人|有人|大家)(?:说|以为|觉得|认为|提到)$",
    re.IGNORECASE,
)
# Someone else as the subject of an unanchored trigger: "he emails me", "他的预算是", "my boss will call me".
_OTHER_SUBJECT = re.compile(
    r"\b(?:he|she|they|we|it|his|her|their|our|its|them|him|someone|somebody|everyone|people|my\s+\w+)\b"
    r"|他|她|它|我们|你们|大家|别人|同事|老板|朋友|妻子|老婆|老公|丈夫|公司|爸|妈",
    re.IGNORECASE,
)
_CLAUSE_START = re.compile(
    r".*(?:[,;:]|\b(?:and|but|so|because)\b|但|因为|所以|而且)", re.IGNORECASE | re.DOTALL
)
_GUARD_WINDOW = 80  # characters of the clause looked at before a match
_HYPOTHETICAL_WINDOW = 200  # characters of the sentence looked at before a match


def _clause_before(body: str, start: int) -> str:
    """The text of the match's clause before it."""
    prefix = body[max(0, start - _GUARD_WINDOW) : start]
    head = _CLAUSE_START.match(prefix)
    return prefix[head.end() :] if head else prefix


@dataclass(frozen=True, slots=True)
class _Sentence:
    index: int
    body: str  # without its terminator
    asks: bool  # ends with "?" or 吗/么
    interrogative: bool  # starts like a question: "Do I ...", "Are you ..."
    last_break: int  # offset of the last "," (-1 if none): a match before it is not in the asking clause

    @classmethod
    def of(cls, index: int, body: str, end: str) -> _Sentence:
        asks = "?" in end or bool(_ZH_QUESTION_END.search(body))
        last_break = body.rfind(",")
        tagged = asks and bool(_TAG_QUESTION.match(body, last_break + 1))
        return cls(index, body, asks, tagged or bool(_QUESTION_START.match(body)), last_break)


def _is_question(sentence: _Sentence, start: int) -> bool:
    return sentence.interrogative or (sentence.asks and start > sentence.last_break)


def _is_hypothetical(body: str, start: int) -> bool:
    prefix = body[max(0, start - _HYPOTHETICAL_WINDOW) : start]
    contrasts = list(_CONTRAST.finditer(prefix))
    if contrasts:
        prefix = prefix[contrasts[-1].end() :]
    return bool(_HYPOTHETICAL.search(prefix)) or bool(_ZH_CONDITIONAL_END.match(body, start, start + 60))


def _blocked(rule: _Rule, sentence: _Sentence, start: int) -> bool:
    clause = _clause_before(sentence.body, start)
    if _NEGATED.search(clause) or _REPORTED.search(clause):
        return True
    if _is_question(sentence, start) or _is_hypothetical(sentence.body, start):
        return True
    return rule.guarded and bool(_OTHER_SUBJECT.search(clause))


# == corrections ==============================================================================================

_FILLER = r"(?:(?:oh|oops|ah|hmm+|um+|uh|wait|sorry|well|哦|啊|嗯|呃|抱歉|不好意思|对不起|等等)[\s,!.~…]*)*"
# A strong cue says the speaker is correcting themself; a weak one only with a "not Y" beside it.
_STRONG_CUE = _p(
    r"^\s*" + _FILLER + r"(?:I\s+meant(?:\s+to\s+say)?|what\s+I\s+meant\s+(?:is|was)|correction\s*[:,\-]?"
    r"|let\s+me\s+correct\s+(?:that|myself)|I\s+misspoke|I\s+was\s+wrong|I\s+made\s+a\s+mistake"
    r"|不对|错了|我说错了|说错了|我搞错了|搞错了|我记错了|更正一下|更正|纠正一下|我是说|我的意思是)(?:\s*[,:!.~…])*\s*"
)
_WEAK_CUE = _p(
    r"^\s*"
    + _FILLER
    + r"(?:(?:actually|no|nope|not\s+quite|in\s+fact)\b|其实|实际上|不是的)(?:\s*[,:!.~…])*\s*"
)
_NOT_OLD = _p(r"\bnot\s+\S|不是\S|\brather\s+than\b|\binstead\s+of\b")
_SUBJECT_IT = r"(?:(?:it'?s|it\s+is|it\s+was|that'?s|that\s+is|it\s+should\s+be|should\s+be|i\s+meant)\s+)?"
_HINT_EN_OLD = _p(r"^" + _SUBJECT_IT + r"(?P<new>.+?)\s*,?\s*(?:and\s+|but\s+)?not\s+(?P<old>.+)$")
_HINT_EN = _p(r"^" + _SUBJECT_IT + r"(?P<new>.+)$")
_HINT_ZH_SWAP = _p(r"^不是(?P<old>.+?)\s*,\s*(?:而)?是(?P<new>.+)$")
_HINT_ZH_OLD = _p(r"^(?:应该|其实|实际上)?是?(?P<new>.+?)\s*,?\s*(?:而)?不是(?P<old>.+)$")
_HINT_ZH = _p(r"^(?:应该|其实|实际上)?是?(?P<new>.+)$")


@dataclass(frozen=True, slots=True)
class _Cue:
    strength: Literal["none", "weak", "strong"]
    rest: str  # the sentence after the cue


def _cue(body: str) -> _Cue:
    if strong := _STRONG_CUE.match(body):
        return _Cue("strong", body[strong.end() :])
    if weak := _WEAK_CUE.match(body):
        return _Cue("weak", body[weak.end() :])
    # "不是苏州，是杭州" corrects without a cue word.
    if _HINT_ZH_SWAP.match(body.strip()):
        return _Cue("strong", body.strip())
    return _Cue("none", body)


def _is_correction(cue: _Cue) -> bool:
    return cue.strength == "strong" or (cue.strength == "weak" and bool(_NOT_OLD.search(cue.rest)))


def _hint_value(raw: str | None) -> str | None:
    if raw is None:
        return None
    value = _finish(raw)
    return None if value is None or value in _HINT_STOP else value


def _hint(cue: _Cue) -> tuple[str, str | None] | None:
    """(new, old) named by a correction sentence that matched no attribute rule."""
    rest = cue.rest.strip()
    if len(rest) > MAX_HINT_CHARS:
        return None
    patterns = (_HINT_ZH_SWAP, _HINT_EN_OLD, _HINT_ZH_OLD)
    found = next((m for m in (p.match(rest) for p in patterns) if m), None)
    if found is None and cue.strength == "strong":
        found = (_HINT_ZH if _CJK_CHAR.match(rest) else _HINT_EN).match(rest)
    if found is None:
        return None
    groups = found.groupdict()
    new, old = _hint_value(groups.get("new")), _hint_value(groups.get("old"))
    if new is None or new == old or (old is None and groups.get("old") is not None):
        return None
    return new, old


# == extraction ===============================================================================================


def _prepare(content: str) -> str:
    # NFKC folds full-width forms ("，" "？" "：" "５") into ASCII, so one pattern serves both scripts.
    text = unicodedata.normalize("NFKC", content)
    return text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')


def _sentences(text: str) -> Iterator[_Sentence]:
    bodies = ((m["body"], m["end"]) for m in _SENTENCE.finditer(text) if m["body"].strip())
    for index, (body, end) in enumerate(bodies):
        yield _Sentence.of(index, body, end)


def _emit(rule: _Rule, found: re.Match[str]) -> tuple[tuple[str, str], ...]:
    if rule.kind == "fixed":
        return ((rule.attribute, rule.value),)
    raw = found.group("v")
    values = rule.normalise(raw) if raw else ()
    if rule.kind == "keyed":
        return tuple((f"{rule.attribute}:{v}", rule.value) for v in values)
    return tuple((rule.attribute, v) for v in values)


def _sentence_facts(sentence: _Sentence, correction: bool, rules: Sequence[_Rule]) -> list[_Found]:
    out: list[_Found] = []
    for rule in rules:
        for found in rule.pattern.finditer(sentence.body):
            if _blocked(rule, sentence, found.start()):
                continue
            position = (sentence.index, found.start())
            for attribute, value in _emit(rule, found):
                out.append(_Found(position, attribute, value, rule.confidence, correction))
    return out


def _scan(text: str) -> tuple[list[_Found], list[tuple[str, str | None]]]:
    facts: list[_Found] = []
    hints: list[tuple[str, str | None]] = []
    carried = _Cue("none", "")
    # A rule whose literals the turn lacks cannot match any of its sentences: most rules, most turns.
    admitted = _RULE_GATES.admitted(text)
    rules = [rule for i, rule in enumerate(_RULES) if i in admitted]
    for sentence in _sentences(text):
        cue = _cue(sentence.body)
        if cue.strength == "none" and carried.strength != "none":
            cue = _Cue(carried.strength, sentence.body)
        # A sentence that is only a cue ("No." "不对。") lends it to the next one.
        carried = cue if not cue.rest.strip() else _Cue("none", "")
        correction = _is_correction(cue)
        found = _sentence_facts(sentence, correction, rules)
        facts.extend(found)
        # A hint only when no rule named the attribute: then the fact itself carries correction=True.
        if correction and not found and not sentence.asks and (hint := _hint(cue)):
            hints.append(hint)
    return facts, hints


def _latest(found: list[_Found]) -> list[_Found]:
    """One fact per attribute: the turn's last statement of it (the most confident on a tie of value)."""
    best: dict[str, _Found] = {}
    for f in found:
        held = best.get(f.attribute)
        if held is None or _beats(f, held):
            best[f.attribute] = f
    return sorted(best.values(), key=lambda f: f.position)


def _beats(new: _Found, held: _Found) -> bool:
    if new.value != held.value:
        return new.position > held.position
    return (new.confidence, new.correction) > (held.confidence, held.correction)


def _metadata_fact(
    metadata: Mapping[str, Any], *, source: str, ts: datetime, turn_id: str
) -> FactCandidate | None:
    fields = [metadata.get(k) for k in ("entity", "attribute", "value")]
    if not all(isinstance(f, str) and f.strip() for f in fields):
        return None
    entity, attribute, value = (_collapse(str(f)) for f in fields)
    return FactCandidate(entity, attribute, value, ts, source, METADATA_CONFIDENCE, (turn_id,))


def extract(
    content: str, *, role: str, source: str, ts: datetime, turn_id: str, metadata: Mapping[str, Any]
) -> Extraction:
    """Facts about the user that one turn states, and bare corrections to resolve against open facts.

    Never raises on any text. Rules read `user` turns only; a fact given in metadata is returned for any role
    and suppresses rule facts of the same (entity, attribute).
    """
    explicit = _metadata_fact(metadata, source=source, ts=ts, turn_id=turn_id)
    facts = [explicit] if explicit else []
    if role != USER_ROLE:
        return Extraction(tuple(facts), ())
    found, hints = _scan(_prepare(content))
    for f in _latest(found):
        if explicit and (explicit.entity, explicit.attribute) == (USER_ENTITY, f.attribute):
            continue
        facts.append(
            FactCandidate(
                USER_ENTITY, f.attribute, f.value, ts, source, f.confidence, (turn_id,), f.correction
            )
        )
    corrections = tuple(
        CorrectionHint(new, old, ts, source, HINT_CONFIDENCE, (turn_id,)) for new, old in dict.fromkeys(hints)
    )
    return Extraction(tuple(facts), corrections)
