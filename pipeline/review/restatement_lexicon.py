"""Word tables for linking restated requests and preferences (issue 40; pipeline/review/restatements.py).

MiniLM puts "too wordy" and "can you be shorter" far apart (cosine ~0.2), and reads Chinese not at all. What
an agent is told to do, and what a user says they prefer, falls into a handful of *subjects* that are the same
for every assistant: how long and in what format to answer, in which language and tone, with what in it
(examples, sources, code in which language), which units and time zone, how to reach the user, what they
eat. Each subject here is a pattern over its words in English and Chinese, whatever the value said ("short"
and "more detail" are one subject: a change of mind, not two memories). The tables name subjects, never a
data set's topics; a turn none of them matches is linked by its acknowledgement or not at all.
"""

from __future__ import annotations

import re

_B = r"(?<![a-z'])"  # no ASCII letter may touch an English word; CJK needs no boundary
_E = r"(?![a-z'])"


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _en(*words: str) -> str:
    return _B + "(?:" + "|".join(words) + ")" + _E


def _zh(*words: str) -> str:
    return "(?:" + "|".join(words) + ")"


# subject -> its words (English, Chinese). Matched on the case-folded, NFKC-normalised text.
SUBJECTS: dict[str, re.Pattern[str]] = {
    name: re.compile("|".join(parts), re.IGNORECASE)
    for name, parts in {
        "answer_length": (
            _en(
                r"short(?:er)?",
                r"brief(?:er|ly)?",
                r"concise(?:ly)?",
                r"succinct",
                r"wordy",
                r"verbose",
                r"long[- ]winded",
                r"lengthy",
                r"rambl\w*",
                r"gist",
                r"tl;?dr",
                r"(?:to|get to|cut to) the (?:point|chase)",
                r"just the point",
                r"long (?:answers?|repl(?:y|ies)|responses?|explanations?|messages?)",
                r"essays?",
                r"walls? of text",
                r"(?:more )?detail(?:ed|s)?",
                r"elaborate",
                r"in[- ]depth",
                # more ways people say it; each phrase names length whatever else the turn is about
                r"(?:way |far |much )?too long|fewer words|less text|brevity|snappy|short version",
                r"over-?explain\w*|one[- ]liners?|(?:a )?sentence or two|one paragraph|word count",
                r"(?:under|at most|max(?:imum)?) \d+ words|\d+ words (?:max|or less|or fewer)",
                r"cut (?:it|them|that) (?:down|short)|trim (?:it|them|your \w+)",
                r"thorough(?:ly)?|expand(?: on)?|go deeper|more depth|explain more|more explanations?",
            ),
            _zh(
                "简短",
                "简洁",
                "简明",
                "精简",
                "啰嗦",
                "啰唆",
                "太长",
                "短一点",
                "短一些",
                "短点",
                "说重点",
                "讲重点",
                "言简意赅",
                "那么长",
                "一两句",
                "几句话",
                "长篇大论",
                "详细",
                "展开讲",
                "一句话",
                "长话短说|说简单点|简单点说|简单说|废话|字数|篇幅|冗长|精炼|写短|短些|啰里啰嗦|几行",
                "细节|展开说|深入|具体一点|具体些|解释那么多",
            ),
        ),
        "reply_language": (
            _en(
                r"english",
                r"chinese",
                r"mandarin",
                r"spanish",
                r"french",
                r"german",
                r"japanese",
                r"portuguese",
                r"italian",
                r"korean",
                r"cantonese|russian|arabic|hindi|dutch|vietnamese|thai|turkish|polish|swedish|greek",
            ),
            _zh(
                "中文|英文|英语|汉语|普通话|日语|法语|德语|西班牙语|韩语",
                "粤语|日文|法文|德文|韩文|俄语|俄文|葡萄牙语|意大利语|繁体|简体|西语",
            ),
        ),
        "answer_format": (
            _en(
                r"bullet(?: points?)?s?",
                r"numbered (?:lists?|steps)",
                r"(?:as )?a list(?! of)",
                r"lists",
                r"tables?(?! (?:of|for (?:two|\d)))",
                r"markdown",
                r"headings?",
                r"plain text",
                r"step[- ]by[- ]step",
                r"checklists?|headers|numbered|code blocks?",
            ),
            _zh(
                "列表",
                "表格",
                "分点",
                "要点",
                "条列",
                "分条",
                "一步一步",
                "标题",
                "清单|分几点|分成几点|编号|分段",
            ),
        ),
        "code_language": (
            _en(
                r"python",
                r"javascript",
                r"typescript",
                r"java",
                r"rust",
                r"golang",
                r"ruby",
                r"kotlin",
                r"swift",
                r"php",
                r"c\+\+",
                r"c#",
                r"bash",
                r"go code",
                r"(?:in|use|using) go(?:lang)?|scala|haskell|node(?:\.?js)|c sharp",
            ),
            _zh("代码用", "用代码", "写代码|代码请用|代码都用|示例代码", r"用\s*(?:go|c)\s*写"),
        ),
        "tone": (
            _en(
                r"formal(?:ly)?",
                r"casual(?:ly)?",
                r"informal",
                r"friendly",
                r"polite(?:ly)?",
                r"emojis?",
                r"jokes?",
                r"sarcas\w*",
                r"tone",
                r"cheesy",
                r"exclamation (?:marks?|points?)",
                r"professional(?:ly)?|cheerful|chatty|smil(?:ey|eys|ies)|emoticons?|playful|slang",
            ),
            _zh(
                "正式",
                "随意",
                "口语化",
                "表情",
                "语气",
                "客气",
                "开玩笑",
                "感叹号",
                "太随便|那么随便|嘻嘻哈哈|严肃|礼貌|活泼|幽默|俏皮|专业一点|专业些|专业点|更专业",
            ),
        ),
        "examples": (
            _en(r"examples?(?! of)", r"samples?(?! of)"),
            _zh("例子", "举例", "示例", "范例"),
        ),
        "sources": (
            _en(r"sources?", r"citations?", r"cite", r"references?", r"links?"),
            _zh("来源", "出处", "引用", "参考资料", "链接"),
        ),
        "units": (
            _en(
                r"metric",
                r"imperial",
                r"celsius",
                r"fahrenheit",
                r"kilomet(?:er|re)s?",
                r"km",
                r"miles?",
                r"kilos?",
                r"kilograms?",
                r"pounds",
                r"lbs",
                r"feet|foot|inch(?:es)?|met(?:er|re)s|centimet(?:er|re)s|grams|ounces|oz",
            ),
            _zh("公制", "英制", "摄氏", "华氏", "公里", "英里", "公斤", "英尺|英寸|厘米|千克|磅"),
        ),
        "time_zone": (
            _en(
                r"time ?zones?",
                r"cst",
                r"pst",
                r"est",
                r"utc",
                r"gmt",
                r"cet",
                r"central time",
                r"pacific time",
                r"beijing time",
                r"local time",
                r"eastern time",
                r"(?:tokyo|london|paris|berlin|new york|sydney|singapore|shanghai|hong kong|mountain) time",
                r"pdt|edt|cdt|mst|jst|bst|cest|aest",
            ),
            _zh(
                "时区",
                "北京时间",
                "东八区",
                "(?:美东|美西|东京|伦敦|纽约|巴黎|柏林|悉尼|新加坡|香港|上海|当地|本地)时间",
                "[东西][一二三四五六七八九十]+区",
            ),
        ),
        "contact_channel": (
            _en(
                r"sms",
                r"text me",
                r"text(?:ing)? me|(?:by|via|a) text|text messages?|texts",
                r"ping me|dm me|dms|imessage|voicemail|(?:by|via) phone|phone me",
                r"e-?mails?",
                r"inbox",
                r"phone calls?",
                r"whatsapp",
                r"wechat",
                r"telegram",
                r"slack",
            ),
            _zh("短信", "邮件", "邮箱", "微信", "打电话", "电话", "发我手机|打我手机|钉钉|飞书|私信"),
        ),
        "address": (
            _en(
                r"call me(?! (?:rather|instead|on|at|back|later|when|if|before|after|directly|any ?time|first|an?|the))",
                r"my name is",
                r"address me",
            ),
            _zh("叫我", "称呼我", "我的名字"),
        ),
        "diet": (
            _en(r"vegetarian", r"vegan", r"meat", r"dairy", r"pescatarian", r"halal", r"kosher", r"gluten"),
            _en(r"pork|beef|plant[- ]based|spicy"),
            _zh("素食", "吃素", "不吃肉", "忌口", "清真", "素菜|猪肉|牛肉|不吃辣|吃不了辣|不能吃辣"),
        ),
        "allergy": (
            _en(r"allerg\w*", r"anaphyla\w*"),
            _zh(
                "过敏",
            ),
        ),
    }.items()
}

# Fact attributes of the rule tables (pipeline/review/fact_rules.py) that name one of these subjects: a
# restatement joins the memory built on that fact chain instead of making a second memory of the subject.
FACT_SUBJECTS = {
    "answer_style": "answer_length",
    "language": "reply_language",
    "contact_channel": "contact_channel",
    "timezone": "time_zone",
    "diet": "diet",
    "allergy": "allergy",
}

# A standing request or preference, as a user says it to an assistant (not a question about the world).
REQUEST = re.compile(
    "|".join(
        [
            _en(
                r"please",
                r"pls",
                r"plz",
                r"can you",
                r"could you",
                r"would you",
                r"will you",
                r"don'?t",
                r"do not",
                r"stop",
                r"always",
                r"never",
                r"from now on",
                r"going forward",
                r"in future",
                r"next time",
                r"keep",
                r"make",
                r"use",
                r"give me",
                r"send me",
                r"show me",
                r"write",
                r"reply",
                r"respond",
                r"answer",
                r"just",
                r"no more",
                r"less",
                r"skip",
                r"avoid",
                r"too",
                r"prefer(?:s|red)?",
                r"i'?d (?:like|rather)",
                r"i (?:like|love|hate|want|need)",
                r"i'?m (?:vegan|vegetarian|allergic)",
                r"is the best way",
                r"(?:is|are|works?) better",
                r"rather",
                r"remember",
                r"best way to reach",
                r"for me",
                r"to me",
                r"reach me",
                # what else a standing wish starts or ends with
                r"put|format|include|add|cite|no need|instead|only|max|ping me|dm me|text me|call me",
                r"my time ?zone",
            ),
            _zh(
                "请",
                "以后",
                "都用",
                "别",
                "不要",
                "不用",
                "能不能",
                "可不可以",
                "可以",
                "麻烦",
                "希望",
                "我喜欢",
                "我不喜欢",
                "我要",
                "记得",
                "记住",
                "就行",
                "就好",
                "就可以",
                "给我",
                "用",
                "太",
                "回答",
                "回复",
                "我是",
                "我对",
                "我的",
                # "X一点" softens a wish ("正式一点"); "按…", "发我…", "多给…" ask for something; "我不吃…"
                # states one about food
                "一点|按|发我|多给|少点|少说|每次|总是|不用|我不吃|附上|打我",
            ),
        ]
    ),
    re.IGNORECASE,
)
# A one-off task on something at hand ("summarise this article", "帮我总结一下这篇"), not a standing wish:
# unless a standing marker says otherwise.
ONE_OFF = re.compile(
    _en(r"this(?!\s+(?:is|was)\b)", r"these", r"those", r"the article", r"the email", r"the doc(?:ument)?")
    # a thing to make now ("write a short poem", "make a table of ..."): a task, however it is worded
    + "|"
    + _en(r"(?:write|make|draft|create|compose|generate|build|give)(?: me| us)? an?(?! (?:bit|little|lot)\b)")
    + "|"
    + _zh("帮我", "这篇", "这个", "那个", "这段", "这份", "这封")
    + "|"
    + "[写做列发画编]\\s*[一几]?\\s*[个封首篇份张段条]",
    re.IGNORECASE,
)
STANDING = re.compile(
    _en(
        r"always",
        r"never",
        r"from now on",
        r"going forward",
        r"in future",
        r"every time",
        r"next time",
        r"in general",
        r"no more",
        r"anymore",
        r"all (?:your|the) (?:answers|replies)",
    )
    + "|"
    + _zh("以后", "每次", "总是", "一直", "都用", "从现在起", "今后", "不再"),
    re.IGNORECASE,
)
# A question about the world, not a request: it asks and does not ask the assistant to do anything.
ASKS = re.compile(
    r"[?？]\s*$|(?:吗|呢)[。.!！]?\s*$"
    # a question that lost its question mark ("is it rude to use emojis at work")
    + r"|^(?:is|are|was|were|does|did|should i|what|why|which|who|how (?:do|does|is|are|can|much|many))\b"
)
ASKS_ASSISTANT = re.compile(
    _en(r"can you", r"could you", r"would you", r"will you", r"can u", r"could u")
    + "|"
    + _zh("能不能", "可不可以", "可以.*吗", "能.*吗", "好吗", "行吗"),
    re.IGNORECASE,
)
# An assistant's acknowledgement of what it was asked: "Got it, I'll keep it short", "好的，以后都用中文".
ACK = re.compile(
    r"^\W*(?:"
    + "|".join(
        [
            r"got it",
            r"noted",
            r"understood",
            r"sure",
            r"will do",
            r"of course",
            r"ok(?:ay)?",
            r"absolutely",
            r"no problem",
            r"certainly",
            r"sounds good",
            r"i'?ll",
            r"i will",
            r"from now on",
            r"好的",
            r"明白",
            r"收到",
            r"了解",
            r"没问题",
            r"记住了",
            r"知道了",
            r"好",
            r"行",
            r"以后",
        ]
    )
    + r")",
    re.IGNORECASE,
)
# Chinese character pairs that are function words, not what a request is about: two requests sharing "一点"
# ("快一点", "近一点") share no object.
ZH_FUNCTION_PAIRS = _wordset(
    "一点 一些 一下 一个 有点 点儿 时候 什么 怎么 现在 已经 因为 所以 如果 但是 还是 一定 东西 比较 上次 下次 "
    "这样 那样 然后 的话 觉得 感觉 知道 需要 应该 最好 一直 总是"
)
# English words that carry no subject of their own in a request (on top of the quality stopwords).
REQUEST_WORDS = _wordset(
    """please pls plz can could would will don't dont do not stop always never from now on going forward future
    next time keep make use give send show write reply respond answer answers replies reply responses response
    just no more less skip avoid too prefer prefers preferred i'd rather like love hate want need be it them
    things stuff way best reach me my i'm im u ur you your yours for with the a an to in on of and or
    instead everything anything anymore again btw ok okay thanks thank so all"""
)

# How an agent asks about a subject before answering ("How long should my answers be?", "用什么语言回复？"):
# question words on top of the subject's own words (SUBJECTS), which a question often lacks.
ASKED: dict[str, re.Pattern[str]] = {
    name: re.compile("|".join(parts), re.IGNORECASE)
    for name, parts in {
        "answer_length": (
            _en(r"how long", r"how short", r"how much detail", r"how detailed", r"length", r"how brief"),
            _zh("多长", "长度", "多详细", "详细程度", "写多少"),
        ),
        "reply_language": (
            _en(r"(?:which|what) language", r"in what language", r"language (?:to|should)"),
            _zh("什么语言", "哪种语言", "语言"),
        ),
        "answer_format": (_en(r"format(?:ted)?", r"layout", r"structure"), _zh("格式", "排版")),
        "code_language": (
            _en(r"programming language", r"code examples?", r"which language .*code"),
            _zh(
                "代码",
            ),
        ),
        "tone": (_en(r"tone", r"style", r"joke", r"emojis?"), _zh("语气", "风格", "玩笑", "表情")),
        "examples": (
            _en(
                r"examples?",
            ),
            _zh("例子", "举例"),
        ),
        "sources": (_en(r"cite", r"sources?", r"references?"), _zh("来源", "引用")),
        "units": (
            _en(r"units?", r"measurements?"),
            _zh(
                "单位",
            ),
        ),
        "time_zone": (
            _en(r"time ?zone", r"which time"),
            _zh(
                "时区",
            ),
        ),
        "contact_channel": (
            _en(r"contact", r"reach", r"reminders?", r"notify", r"message (?:the user|them|him|her)"),
            _zh("联系", "提醒", "通知"),
        ),
        "address": (_en(r"call (?:the user|them|him|her)", r"address"), _zh("称呼", "叫什么")),
        "diet": (
            _en(r"eat", r"food", r"diet(?:ary)?", r"meals?", r"restrictions?"),
            _zh("吃什么", "饮食", "忌口"),
        ),
        "allergy": (
            _en(r"allergic", r"allerg(?:y|ies)"),
            _zh(
                "过敏",
            ),
        ),
    }.items()
}

# -- whose voice (issue 44) -----------------------------------------------------------------------------
# A memory of the user's requests holds the user's own voice only. "My manager always says: please give
# long answers" reports another person's wish, "My mom only reads Spanish, please answer her in Spanish"
# asks for someone else: neither is the user's standing request. Read by grammar, not by sentence: a clause
# whose subject is another person (a person noun after a determiner or a possessive, "he", "she"), a frame
# of reported speech (a holder, a person or a source such as "the book", with a verb of saying or wanting;
# "as ... put it", "according to"), and a request whose recipient is another person ("answer her", "for my
# mom"). "I said", "we always say", "you said you'd ..." stay the speaker's own.
_PEOPLE = (
    r"mom|mum|mother|mama|dad|father|papa|parents?|sister|brother|siblings?|sons?|daughters?|kids?"
    r"|child(?:ren)?|bab(?:y|ies)|wife|husband|partner|spouse|boyfriend|girlfriend|fianc[eé]e?|family"
    r"|grand(?:ma|pa|mother|father|parents?|kids?|son|daughter)|aunt|uncle|cousin|niece|nephew|in-laws?"
    r"|boss|manager|supervisor|ceo|cto|director|colleagues?|co-?workers?|team|teammates?|clients?"
    r"|customers?|teachers?|professor|tutor|coach|doctor|dentist|therapist|nurse|pharmacist|lawyer"
    r"|landlord|neighbou?rs?|room-?mates?|flat-?mates?|friends?|buddy|guests?|students?|patients?"
    r"|editor|reviewer|employees?|staff|secretary|mentor|pastor|priest|coworkers?"
)
_SOURCES = r"book|article|paper|study|post|blog|website|site|sign|label|manual|guide|email|memo|note|policy"
_DETERMINER = r"(?:my|our|his|her|their|your|the|a|an|one of my|some|every)\s+(?:[a-z-]+\s+){0,2}?"
_POSSESSOR = r"[a-z]+'s\s+(?:[a-z-]+\s+)?"  # "my wife's sister": the holder is the sister
# Another person: "my (new) manager", "her boss", "the doctor", "my wife's sister".
_PERSON = rf"(?:{_DETERMINER}|{_POSSESSOR})(?:{_PEOPLE})"
_SOURCE = rf"(?:{_DETERMINER})(?:{_SOURCES})"
_ADVERBS = r"(?:(?:always|usually|often|keeps?|still|also|only|just|really|even|once|never|sometimes)\s+)*"
_SAYING = (
    r"(?:says?|said|saying|tells?(?:\s+(?:me|us))?|told(?:\s+(?:me|us))?|asks?|asked|asking|insists?|insisted"
    r"|wants?|wanted|would\s+(?:say|like|want|prefer)|likes?|prefers?|needs?|thinks?|thought|writes?|wrote"
    r"|mentions?|mentioned|suggests?|suggested|recommends?|recommended|reminds?|goes|put it)"
)
# A clause whose subject is another person ("my mom only reads Spanish", "she hates emojis"); "my mom and
# I" include the speaker. Not "they" or "it": those are as often the answers ("they are too long").
OTHER_SUBJECT = re.compile(
    rf"^\W*(?:{_PERSON}|he|she|someone|somebody|everyone|everybody|people|nobody)(?:'s)?\s+"
    rf"(?!and\s+(?:i|me|myself)\b){_ADVERBS}[a-z']+",
    re.IGNORECASE,
)
# A frame of reported speech anywhere in a sentence: it governs the whole sentence ("my manager always
# says: ...", "keep it short, my boss said", "as the book says", "quote from the book: ...").
REPORTED = re.compile(
    rf"{_B}(?:{_PERSON}|{_SOURCE}|he|she|they|someone|somebody)\s+{_ADVERBS}{_SAYING}{_E}"
    rf"|{_B}(?:quote|quoting|quoted|according to|as the saying goes){_E}",
    re.IGNORECASE,
)
# A request whose recipient is someone else: "answer her in Spanish", "write to my boss", "for my kids".
ON_BEHALF = re.compile(
    rf"{_B}(?:answer|reply|respond|write|talk|speak|explain|send|message|text|email|tell|help|address|call)"
    rf"(?:\s+(?:it|this|things|everything))?(?:\s+to)?\s+(?:him|her|{_PERSON}){_E}"
    rf"|{_B}for\s+(?:him|her|{_PERSON}){_E}",
    re.IGNORECASE,
)
# Chinese: a holder ("我妈", "老板", "他") with a verb of saying or wanting, and a request for someone else.
_ZH_HOLDER = (
    "(?:我|他|她|我们)?(?:妈妈|妈|爸爸|爸|父母|老板|经理|领导|上司|同事|老师|医生|朋友|老婆|老公|妻子|丈夫|孩子"
    "|儿子|女儿|姐姐|妹妹|哥哥|弟弟|奶奶|爷爷|外婆|外公|客户|室友|邻居|男朋友|女朋友)|他们|她们|他|她|别人|书上"
)
ZH_REPORTED = re.compile(
    f"(?:^|[，。！？：、\\s])(?:{_ZH_HOLDER})(?:总是|一直|老是|常|经常|只|也|都)*"
    "(?:说|讲|告诉我|让我|叫我|要求|希望|觉得|认为|喜欢|要|只看|看不懂|不懂|只会|需要|想)"
)
ZH_ON_BEHALF = re.compile(f"(?:给|对|跟|帮|替)(?:{_ZH_HOLDER})(?:回答|回复|说|写|解释|讲|发)|回复(?:他|她)")
# Someone named in what is left of a sentence once its quotes are out ('"Keep it long" - my manager').
HOLDER = re.compile(rf"{_B}(?:{_PERSON}|{_SOURCE}|he|she|they){_E}", re.IGNORECASE)
# A quoted span, set apart ("...", “...”, 「...」); an apostrophe is no quote.
QUOTED = re.compile(r"\"[^\"]+\"|“[^”]*”|「[^」]*」|『[^』]*』|(?<![a-z])'[^']+'(?![a-z])", re.IGNORECASE)
