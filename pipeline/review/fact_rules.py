"""The rule table of fact extraction: one first-person trigger, its attribute and its normaliser per line."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Literal

from pipeline.review.fact_values import (
    CHANNELS,
    CUT_JOB,
    CUT_PREFER,
    DIET_SRC,
    EMAIL_SRC,
    JOB_STOP,
    LANGUAGE_ZH_SRC,
    LANGUAGES,
    MAX_RAW_CHARS,
    PHONE_SRC,
    TZ_ABBR_SRC,
    TZ_NAMED_SRC,
    TZ_OFFSET_SRC,
    _allergens,
    _amount,
    _channel,
    _diet,
    _email,
    _employer,
    _fixed,
    _language,
    _money,
    _name,
    _phone,
    _place,
    _preference,
    _proper_employer,
    _proper_name,
    _text,
    _timezone,
)
from pipeline.review.regex_gate import GateSet

EXPLICIT_CONFIDENCE = 0.9  # "my X is Y": the speaker names the attribute themself
RULE_CONFIDENCE = 0.8  # the attribute is inferred from the verb ("I moved to Y")


Normaliser = Callable[[str], tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class _Rule:
    """One trigger. `kind` says where the fact's value comes from:

    value: the normalised group `v`;  fixed: `value` (the trigger says it all: "我吃素" -> vegetarian);
    keyed: the normalised group `v` names the attribute (`preference:<v>`) and `value` is the fact's value;
    purposed: the group `k` names what the value is for (`budget:<k>`), the normalised group `v` is the value.
    """

    attribute: str
    pattern: re.Pattern[str]
    normalise: Normaliser
    kind: Literal["value", "fixed", "keyed", "purposed"] = "value"
    value: str = ""
    confidence: float = RULE_CONFIDENCE
    # Not anchored on "I"/"my"/"我" ("reply in French", "预算5000元"): check that nobody else is the subject.
    guarded: bool = False


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
_AMOUNT_PREFIX = r"(?:about|around|roughly|approximately|up\s+to|at\s+most|max(?:imum)?|under|below|only|just|less\s+than)?\s*"
_CHANNEL_SRC = "|".join(sorted(map(re.escape, CHANNELS), key=len, reverse=True))
_LANGUAGE_SRC = "|".join(sorted(map(re.escape, LANGUAGES), key=len, reverse=True))


# A word naming what a budget is for ("the team offsite budget"). Never a determiner, a copula or "budget"
# itself: in "my budget is my budget is 0" the words between "my" and the last "budget" are a repeated
# clause, not a purpose (it gave the attribute "budget:my").
_PURPOSE_WORD = (
    r"(?!(?:the|a|an|my|our|your|their|his|her|its|this|that|is|are|was|were|be|budget|now)\b)[a-z][\w-]*"
)


def _p(source: str) -> re.Pattern[str]:
    return re.compile(source, re.IGNORECASE)


# One rule per line (ruff format would spread each over ten): the table reads like the brief.
# fmt: off
RULES: tuple[_Rule, ...] = (
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
    _Rule("occupation", _p(r"\bI(?:'m|\s+am)?\s+" + _ADV + r"(?:work|working|employed)\s+as\s+" + _REST), partial(_text, cut=CUT_JOB, stop=JOB_STOP)),
    _Rule("occupation", _p(_I_AM + r"(?:an?\s+)?(?P<v>[^,;]{1,60}?)\s+by\s+(?:profession|trade|training)\b"), partial(_text, cut=CUT_JOB, stop=JOB_STOP)),
    _Rule("occupation", _p(r"\bmy\s+(?:job|occupation|profession)\s+is\s+" + _REST), partial(_text, cut=CUT_JOB, stop=JOB_STOP), confidence=EXPLICIT_CONFIDENCE),
    _Rule("occupation", _p(r"我(?:现在|目前)?是一(?:名|位)" + _REST), partial(_text, cut=CUT_JOB, stop=JOB_STOP)),
    _Rule("occupation", _p(r"我(?:现在|目前)?是做" + _SPAN_ZH + r"的"), partial(_text, cut=CUT_JOB, stop=JOB_STOP)),
    _Rule("occupation", _p(r"我的(?:职业|工作|职位)是" + _REST), partial(_text, cut=CUT_JOB, stop=JOB_STOP), confidence=EXPLICIT_CONFIDENCE),
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
    # "send me notifications by email": what the user is sent names how they want to be reached (issue 28).
    _Rule("contact_channel", _p(r"\bsend\s+me\s+(?:the\s+|my\s+|all\s+)?(?:notifications?|updates?|alerts?|reminders?|receipts?|summaries|reports?|confirmations?|invoices?)\s+(?:via|by|on|through|over)\s+" + _REST), _channel, guarded=True),
    _Rule("contact_channel", _p(r"(?:(?:用|通过|使用|改用|改成|走)\s*)?(?P<v>" + _CHANNEL_SRC + r")\s*上?\s*(?:来)?(?:通知|联系|发给|告诉|找|提醒)我"), _channel, guarded=True),
    _Rule("contact_channel", _p(r"改用\s*(?P<v>" + _CHANNEL_SRC + r")"), _channel, guarded=True),
    _Rule("contact_channel", _p(r"给我(?:打|发)\s*(?P<v>" + _CHANNEL_SRC + r")"), _channel, guarded=True),
    _Rule("contact_channel", _p(r"(?:打|发)\s*(?P<v>" + _CHANNEL_SRC + r")\s*给我"), _channel, guarded=True),
    # -- email / phone: addresses the user gives as theirs -------------------------------------------
    _Rule("email", _p(r"\bmy\s+(?:e-?mail|email)(?:\s+address)?\s*(?:is|'s|:|=)?\s*(?P<v>" + EMAIL_SRC + ")"), _email, confidence=EXPLICIT_CONFIDENCE),
    _Rule("email", _p(r"\b(?:e-?mail|reach|contact|write\s+to)\s+me\s+(?:at|on|via)\s+(?P<v>" + EMAIL_SRC + ")"), _email, guarded=True),
    # "my address is lin.wei@example.com": an address that is an e-mail address is one (issue 28).
    _Rule("email", _p(r"\bmy\s+(?:new\s+|work\s+|personal\s+|home\s+)?address\s*(?:is|'s|:)\s*(?P<v>" + EMAIL_SRC + ")"), _email, confidence=EXPLICIT_CONFIDENCE),
    _Rule("email", _p(r"我的(?:电子)?邮箱(?:地址)?\s*(?:是|为|:)?\s*(?P<v>" + EMAIL_SRC + ")"), _email, confidence=EXPLICIT_CONFIDENCE),
    _Rule("phone", _p(r"\bmy\s+(?:(?:phone|cell|mobile|telephone)\s+)?(?:number|no\.?)\s*(?:is|'s|:)?\s*(?P<v>" + PHONE_SRC + ")"), _phone, confidence=EXPLICIT_CONFIDENCE),
    _Rule("phone", _p(r"\bmy\s+(?:phone|cell|mobile)\s*(?:is|'s|:)\s*(?P<v>" + PHONE_SRC + ")"), _phone, confidence=EXPLICIT_CONFIDENCE),
    _Rule("phone", _p(r"\b(?:call|text|reach|phone)\s+me\s+(?:at|on)\s+(?P<v>" + PHONE_SRC + ")"), _phone, guarded=True),
    _Rule("phone", _p(r"我的(?:电话|手机|手机号|手机号码|电话号码|联系电话)\s*(?:是|为|:)?\s*(?P<v>" + PHONE_SRC + ")"), _phone, confidence=EXPLICIT_CONFIDENCE),
    # -- preferences: preference:<object> = likes | dislikes ----------------------------------------
    _Rule("preference", _p(_I + r"(?:(?:really|also|just|absolutely|totally|still|do|truly|actually|genuinely)\s+)*(?:like|love|enjoy|adore)\s+" + _REST), _preference, kind="keyed", value="likes"),
    _Rule("preference", _p(_I + r"(?:(?:really|also|just|much|still|do|actually|generally|usually)\s+)*prefer\s+" + _REST), partial(_preference, cut=CUT_PREFER), kind="keyed", value="likes"),
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
    _Rule("diet", _p(_I_AM + r"(?:(?:now|currently|strictly|also|fully)\s+)?(?:an?\s+)?(?P<v>" + DIET_SRC + r")\b(?!\s+(?:restaurant|food|option|dish|recipe|place|menu|cafe|friend))"), _diet),
    _Rule("diet", _p(r"\bI(?:'m|\s+am)?\s+(?:on|follow(?:ing)?|eat(?:ing)?|keep(?:ing)?)\s+an?\s+(?P<v>" + DIET_SRC + r")\s+diet\b"), _diet),
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
    # "the team offsite budget is now 80,000 yuan": the budget of a thing is its own chain, so it never
    # closes (or joins a memory with) the user's laptop budget (issue 27).
    _Rule("budget", _p(r"\b(?:the|our|my)\s+(?P<k>(?:" + _PURPOSE_WORD + r"\s+){0,2}?" + _PURPOSE_WORD + r")\s+budget(?:\s+is|'s|\s*[=:])\s*(?:now\s+)?" + _AMOUNT_PREFIX + _AMOUNT), _amount, kind="purposed"),
    _Rule("budget", _p(_I + r"can\s+(?:only\s+)?(?:spend|afford)\s+" + _AMOUNT_PREFIX + _AMOUNT), _money),
    _Rule("budget", _p(r"我的预算\s*(?:是|为|有|:)?\s*(?:大概|大约|约|在)?\s*" + _AMOUNT), _amount, confidence=EXPLICIT_CONFIDENCE),
    _Rule("budget", _p(r"预算\s*(?:是|为|有|:)?\s*(?:大概|大约|约|在)?\s*" + _AMOUNT), _amount, guarded=True),
    # "启明项目的预算是10万": a thing's budget is its own chain, as "the Atlas project budget" is (the guarded rule
    # above leaves it: not the speaker's). The thing is the whole run before 的, never a person ("我的", "他的",
    # "我们的"): "我这次旅行的预算" is the speaker's budget, read by the guarded rule.
    _Rule("budget", _p(r"(?:^|(?<=[\s,.;:!?()]))(?P<k>[^\s,.;:!?()的我你您他她它]{1,12})(?<!们)的预算\s*(?:是|为|有|:)?\s*(?:大概|大约|约|在)?\s*" + _AMOUNT), _amount, kind="purposed"),
    _Rule("budget", _p(r"我(?:最多)?(?:能|可以)花\s*(?:最多)?\s*" + _AMOUNT), _money),
    # -- timezone -----------------------------------------------------------------------------------------
    _Rule("timezone", _p(r"\bmy\s+time\s*zone\s+(?:is|'s|:)\s*" + _REST), _timezone, confidence=EXPLICIT_CONFIDENCE),
    _Rule("timezone", _p(_I_AM + r"(?:in|on)\s+(?:the\s+)?(?P<v>" + TZ_OFFSET_SRC + r"|(?:" + TZ_ABBR_SRC + r")\b|" + TZ_NAMED_SRC + r")"), _timezone),
    _Rule("timezone", _p(r"我的时区\s*(?:是|为|:)?\s*" + _REST), _timezone, confidence=EXPLICIT_CONFIDENCE),
    _Rule("timezone", _p(r"我" + _ADV_ZH + r"(?:在|处于|位于|用)(?P<v>[东西中](?:十[一二]|[一二三四五六七八九十]|\d{1,2})?区|北京时间)"), _timezone),
    # -- language: what the user speaks or wants answers in -----------------------------------------------
    _Rule("language", _p(_I + r"(?:can\s+|also\s+|only\s+|mostly\s+|mainly\s+)?speak\s+" + _REST), _language),
    _Rule("language", _p(r"\b(?:answer|reply|respond|write|talk|speak|chat|communicate)(?:\s+(?:to\s+)?me)?\s+(?:only\s+)?(?:in|using)\s+" + _REST), _language, guarded=True),
    _Rule("language", _p(r"\b(?:please\s+)?(?:use|switch\s+to)\s+" + _REST), partial(_language, qualified=False), guarded=True),
    _Rule("language", _p(r"我(?:会|只会|能|可以|主要)?说(?P<v>" + LANGUAGE_ZH_SRC + ")"), _language),
    _Rule("language", _p(r"请说(?P<v>" + LANGUAGE_ZH_SRC + ")"), _language, guarded=True),
    _Rule("language", _p(r"(?:用|使用|改用)\s*(?P<v>" + _LANGUAGE_SRC + r")\s*(?:来)?(?:回答|回复|交流|说话|跟我说|和我说|对话|沟通|聊天|写|回|聊|说)"), _language, guarded=True),
)
RULE_GATES = GateSet([rule.pattern for rule in RULES])
# fmt: on
