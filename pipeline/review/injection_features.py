"""The prompt-injection screen's feature table: what an instruction aimed at the assistant looks like.

FEATURES holds every feature as a named, weighted pattern (English and Chinese), built from the regex building
blocks below; pipeline.review.injection scores a turn by the features it matches (their noisy-or, scaled by the
turn's source). Each pattern reads the NFKC-normalised, lower-cased text, or, when compiled case-sensitive
("DAN"), the text as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Building blocks (applied to NFKC-normalised, lower-cased text: full-width "：" is ":" here).
_GAP = r"[^.!?\n]{0,40}?"  # within one clause
_ZGAP = r".{0,16}?"  # Chinese: no spaces, a few characters between the parts
_URL = r"(?:https?://|ftp://|www\.)\S+"
# Bounded (RFC 5321: a local part is at most 64 characters, a label 63): unbounded, `[\w.+-]+` ran to the end
# of every run of word characters at each place a pattern tried it, and CJK text is one long run (20,000
# characters of "把数据发送" took 46 s in the exfiltration pattern).
_EMAIL = r"[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63})+"
_IP = r"\b\d{1,3}(?:\.\d{1,3}){3}\b"
_TARGET = rf"(?:{_URL}|{_EMAIL}|{_IP}|webhook|pastebin|\bftp\b)"
_AI = (
    r"(?:ai|a\.i\.|assistants?|llms?|language models?|chat ?bots?|bots?|agents?|gpt|chatgpt|models?|"
    r"claude|copilot)"
)
_RULES = (
    r"(?:instructions?|directions?|directives?|rules?|guidelines?|guidance|prompts?|programming|"
    r"polic(?:y|ies)|constraints?|restrictions?|safety(?: \w+)?|filters?|settings|orders)"
)
_EARLIER = (
    r"(?:previous|prior|above|earlier|preceding|original|initial|existing|old|all|any|every|your|the|"
    r"those|these|its|my|system)"
)
_DATA = (
    r"(?:data|memor(?:y|ies)|messages?|history|passwords?|credentials?|contacts|address book|records|"
    r"location|keystrokes|conversations?|chats?|transcripts?|secrets?|info(?:rmation)?|personal \w+|"
    r"tokens?|emails?|files|invoices|logs?|details)"
)
_ZH_RULES = r"(?:指令|指示|规则|设定|提示|限制|要求|准则|政策|程序|规定|命令|过滤|审查|安全)"
_ZH_DATA = (
    r"(?:数据|记忆|资料|记录|密码|位置|通讯录|身份证|信息|令牌|聊天|对话|邮件|发票|秘密|隐私|输入|消息|照片|"
    r"银行卡|账号|账户)"
)
_ZH_TARGET = rf"(?:{_URL}|{_EMAIL}|{_IP}|网址|网上|邮箱|链接)"
_ZH_SEND = r"(?:发送|发给|发到|转发|上传|泄露|分享|复制|传给|传到|邮寄|记录到|附加到|导出|公开|寄到)"
_ZH_AI = r"(?:ai|助手|大模型|模型|机器人|人工智能|智能体|代理)"


# Lower-case letters that IGNORECASE equates with an ASCII letter of a pattern although they differ from it:
# dotless ı (i) and long ſ (s). A lower-cased text holding one is matched with IGNORECASE as before; any other
# lower-cased text matches a pattern of lower-case letters case-sensitively exactly where IGNORECASE would (its
# upper-case letters are gone, and İ and the Kelvin sign lower to ASCII). Case-sensitive, CPython's `re`
# compares characters without folding them and can skip ahead to a pattern's possible first characters.
CASE_SAFE_EXCEPTIONS = frozenset("\u0131\u017f")


def _has_upper(pattern: str) -> bool:
    """Whether a pattern's text (escapes such as \\S aside) holds an upper-case or case-folding non-ASCII letter."""
    plain = re.sub(r"\\.", "", pattern)
    return any(c.lower() != c or (not c.isascii() and c.upper() != c) for c in plain)


@dataclass(frozen=True, slots=True)
class Feature:
    name: str
    weight: float
    pattern: re.Pattern[str]
    # Sources this feature is strong for; for the others it counts `other_weight` instead.
    sources: frozenset[str] | None = None
    other_weight: float = 0.0
    # Case-sensitive patterns ("DAN") read the text as written; the rest its normalised lower case.
    on_original: bool = field(init=False)
    # The same pattern without IGNORECASE, for a normalised text (already lower case) that holds none of
    # CASE_SAFE's exceptions: it matches exactly where the original does, and faster (see injection._matched).
    lowered: re.Pattern[str] = field(init=False)

    def __post_init__(self) -> None:
        on_original = not self.pattern.flags & re.IGNORECASE
        object.__setattr__(self, "on_original", on_original)
        lowered = self.pattern
        if not on_original:
            if _has_upper(self.pattern.pattern):  # pragma: no cover - every pattern here is lower case
                raise ValueError(
                    f"feature {self.name}: a pattern read on lower-cased text has an upper-case letter"
                )
            lowered = re.compile(self.pattern.pattern, self.pattern.flags & ~re.IGNORECASE)
        object.__setattr__(self, "lowered", lowered)

    def weight_for(self, source: str) -> float:
        if self.sources is None or source in self.sources:
            return self.weight
        return self.other_weight


def _f(
    name: str,
    weight: float,
    pattern: str,
    *,
    sources: tuple[str, ...] | None = None,
    other: float = 0.0,
    flags: int = re.IGNORECASE | re.MULTILINE,
) -> Feature:
    return Feature(name, weight, re.compile(pattern, flags), frozenset(sources) if sources else None, other)


_UNTRUSTED = ("tool", "external", "agent")

FEATURES: tuple[Feature, ...] = (
    # -- override the assistant's instructions -----------------------------------------------------
    _f(
        "override",
        0.85,
        rf"\b(?:ignore|disregard|forget|override|overwrite|bypass|set aside|put aside|discard|abandon|"
        rf"skip|drop|circumvent|disable)\b{_GAP}\b{_EARLIER}\b{_GAP}\b{_RULES}\b",
    ),
    _f(
        "override",
        0.8,
        rf"\b{_RULES} (?:(?:are|is|have been|has been) )?(?:now )?(?:void|null|cancel+ed|revoked|obsolete|"
        rf"outdated|changed|no longer (?:apply|valid|in effect))\b|\b(?:new|updated|real|actual) "
        rf"(?:instructions?|directives?|rules?|task|policy|orders|system prompt)\b\s*(?::|-|is|are)|"
        rf"\b(?:ignore|disregard)\b (?:the above|everything above|all of the above|the user|what)\b|"
        rf"\b(?:override|bypass|disable|ignore|disregard|circumvent|turn off) (?:your|all|the|its|any)? ?"
        rf"(?:safety|content|security|moderation) "
        rf"(?:protocols?|filters?|polic(?:y|ies)|rules|restrictions|guidelines)|"
        rf"\bstop (?:following|listening to|obeying) (?:the user|your user|them)\b|"
        rf"\b(?:follow|obey) (?:the )?(?:instructions|orders|commands|rules) (?:from|of|given by) (?!the user)",
    ),
    _f(
        "override",
        0.85,
        rf"(?:忽略|无视|忘记|忘掉|不要理会|不用理会|别管|抛开|放到一边|放在一边|绕过|跳过|不再遵守|停止遵守)"
        rf"{_ZGAP}{_ZH_RULES}|{_ZH_RULES}{_ZGAP}(?:作废|失效|无效|过时|不再适用)|"
        rf"新(?:的)?(?:指令|任务|规则|规定|命令)|(?:不要理会|别管|无视|忽略)(?:上面|用户|以上)|"
        rf"停止听从用户|改为听从|不受(?:任何)?限制",
    ),
    # -- persona / jailbreak ---------------------------------------------------------------------------
    _f(
        "persona",
        0.8,
        r"\byou(?:'re| are) no longer\b|\bfrom now on,? you (?:are|work for|answer to|obey)\b|"
        r"\byou(?:'re| are) now (?:in \w+ mode|free|unrestricted|unfiltered|jailbroken|dan\b|called|named|"
        r"(?:an? |the |my )?(?:\w+ ){0,3}(?:ai|model|assistant|bot|gpt|persona|character|version)\b)|"
        r"\b(?:pretend|act|behave|roleplay|role-play|role play|speak|respond|answer)\b (?:to be |as |like |"
        r"as if |that )?(?:you(?:'re| are) )?(?:an? |my |the )?(?:\w+ ){0,3}(?:ai|model|gpt|assistant|"
        r"hacker|administrator|admin|sysadmin|system administrator)\b|"
        r"\b(?:assume|adopt|take on) (?:the|a|this) (?:persona|role|identity)\b|\bnew persona\b|"
        r"\byou(?:'re| are) (?:now )?jailbr(?:o|ea)k(?:en|ed)\b|\bdo anything now\b|\b(?:unrestricted|unfiltered|god) mode\b|"
        r"\bpretend there are no rules\b|\byour (?:new |real )?(?:role|persona|identity|purpose|only goal|"
        r"only job|real task|instructions) (?:is|are|now|has|have)\b",
    ),
    _f("persona", 0.75, r"\bDAN\b", flags=0),
    _f(
        "persona",
        0.75,
        r"\b(?:roleplay|role-play|role play|pretend|act as|play a game|imagine you(?:'re| are))\b[^\n]{0,100}"
        r"\b(?:passwords?|credentials|api keys?|secret keys?|tokens?|admin|private details|no rules)\b",
    ),
    _f(
        "persona",
        0.35,
        r"\bdeveloper mode\b|\bno (?:rules|restrictions|guidelines|limits|filters|safety rules)\b|"
        r"\bwithout (?:any )?(?:safety|rules|restrictions|guidelines)\b",
    ),
    _f(
        "persona",
        0.8,
        rf"你现在是.{{0,12}}(?:{_ZH_AI}|gpt|dan|没有|黑客|模式|无限制)|你不再是|从现在(?:起|开始)你|"
        rf"你(?:以后|今后)?(?:唯一|真正)的(?:目标|任务|工作)|你的新角色|(?:假装|扮演|假设|作为){_ZGAP}(?:{_ZH_AI}|gpt|黑客|管理员|没有|"
        rf"邪恶|无限制|客服)|开发者模式|越狱|无限制模式|没有任何(?:限制|道德|规则)|不受任何限制|假设没有任何规则",
    ),
    # -- role spoofing: a line claiming to be the system, an admin or the assistant ---------------------
    # Not "Dev:": Dev is a given name, and a chat export prefixes every message of a friend called Dev
    # with it (236 of 6,295 turns of bench/data/sets/friends_chat quarantined).
    _f(
        "role_spoof",
        0.85,
        r"^\s*(?:[\[<(【#*]+\s*)?(?:system|sys|admin|administrator|developer|root|operator|assistant)"
        r"(?: (?:prompt|message|note|notice|override|update))?\s*(?:[\]>)】*]+\s*)?[:：]|"
        r"<\|?(?:im_start|im_end|system|endoftext)\|?>|\[/?inst\]|</?(?:system|user|assistant)>|"
        r"\"role\"\s*:\s*\"system\"|\bend of (?:conversation|prompt|instructions|context)\b|"
        r"\bsystem (?:override|prompt:|message:|notice:)|\bdeveloper note\b|\bmemory module update\b",
    ),
    _f(
        "role_spoof",
        0.85,
        r"^\s*[\[【(]?\s*(?:系统|管理员|开发者|助手|系统提示|系统消息)(?:提示|消息|通知|备注|指令)?\s*[\]】)]?\s*[:：]|"
        r"【(?:系统|管理员|开发者)[^】]{0,6}】|开发者备注|系统提示",
    ),
    # -- exfiltration -------------------------------------------------------------------------------------
    _f(
        "exfiltration",
        0.85,
        rf"\b(?:send|sending|forward|e-?mail|mail|post|upload|leak|transmit|exfiltrate|copy|share|report|"
        rf"append|dump|hand over|log|paste|deliver|collect)\b{_GAP}\b{_DATA}\b{_GAP}{_TARGET}",
    ),
    _f(
        "exfiltration",
        0.8,
        # Copying or dumping all of something is ordinary work ("wouldn't /mir copy all 1TB of data?"): those
        # two verbs count with a destination only; harvesting is a gardener's word unless data is harvested.
        rf"\b(?:send|forward|upload|leak|transmit|exfiltrate|share|hand over|post)\b{_GAP}"
        rf"\b(?:all|every|entire|whole|full|everything)\b{_GAP}(?:\b{_DATA}\b|{_TARGET})|"
        rf"\b(?:copy|dump)\b{_GAP}\b(?:all|every|entire|whole|full|everything)\b{_GAP}{_TARGET}|"
        rf"\b(?:the user'?s?|their|this user'?s?)\b {_GAP}\b{_DATA}\b{_GAP}\b(?:to|into|on|via)\b{_GAP}"
        rf"(?:{_TARGET}|\bpublic\b|\bonline\b|\bthird part)|"
        rf"\b(?:share|leak|send|expose|hand over)\b{_GAP}\ball (?:stored|saved) \w+\b|"
        rf"\bexfiltrat\w*\b|\bharvest\w*\b{_GAP}\b(?:{_DATA}|e-?mail addresses|accounts)\b|"
        rf"\b(?:leak|steal)\b{_GAP}\b(?:the user'?s?|their|all|every)\b{_GAP}"
        rf"\b{_DATA}\b|!\[[^\]]*\]\((?:https?://)?[^)\s]*\?[^)]*\)",
    ),
    _f(
        "exfiltration",
        0.85,
        rf"{_ZH_SEND}{_ZGAP}(?:所有|全部|整个)|(?:所有|全部|整个|用户的?){_ZGAP}{_ZH_DATA}{_ZGAP}{_ZH_SEND}|"
        rf"(?:把|将){_ZGAP}{_ZH_DATA}.{{0,24}}?{_ZH_TARGET}|{_ZH_SEND}{_ZGAP}{_ZH_DATA}{_ZGAP}{_ZH_TARGET}|"
        rf"(?:每次|以后|从现在起|总是){_ZGAP}{_ZH_SEND}.{{0,30}}?{_ZH_TARGET}",
    ),
    _f(
        "exfiltration",
        0.45,
        r"\b(?:share|leak|expose|hand over|dump) everything\b|\b(?:send|forward|upload|post|copy|transmit|"
        r"mail|cc|bcc)\w*\b[^.!?\n]{0,40}?\bto\b\s*" + _TARGET,
    ),
    _f(
        "exfiltration",
        0.7,
        rf"\b(?:from now on|every|always|whenever|going forward|first|each time)\b[^\n]{{0,80}}?\b(?:send|sending|"
        rf"forward|forwarding|upload|uploading|post|posting|copy|copying|mail|mailing|cc|bcc)\w*\b"
        rf"[^\n]{{0,60}}?{_TARGET}",
    ),
    # -- prompt leak --------------------------------------------------------------------------------------
    _f(
        "prompt_leak",
        0.8,
        rf"\b(?:reveal|print|show|output|repeat|display|dump|leak|list|give me|tell me|write out)\b{_GAP}"
        rf"\b(?:system prompt|initial prompt|original prompt|hidden instructions|your instructions|"
        rf"your prompt|context window|instructions you (?:were|have been) given|the text above|"
        rf"everything above|api keys?|secret keys?|admin token|memory store|every secret)\b",
    ),
    _f("prompt_leak", 0.45, r"\b(?:system prompt|hidden instructions|api keys?|admin token)\b"),
    _f(
        "prompt_leak",
        0.8,
        rf"(?:输出|打印|显示|告诉我|列出|导出|一字不差){_ZGAP}(?:系统提示词|提示词|隐藏的指令|收到的任何指令|"
        rf"上下文窗口|api ?密钥|管理员令牌|记忆库|所有秘密)|(?:系统提示词|提示词|隐藏的指令){_ZGAP}(?:输出|打印|显示)",
    ),
    # -- secrecy towards the user ------------------------------------------------------------------------
    _f(
        "secrecy",
        0.75,
        rf"\b(?:do not|don't|dont|never)\b (?:tell|inform|let|notify|alert|warn|mention (?:this|it) to)\b"
        rf"{_GAP}\b(?:the user|user)\b|\bkeep (?:this|it|this instruction) (?:a )?(?:secret|hidden) from (?:the user|them|the customer)\b|\b(?:never|do not|don't) (?:mention|reveal|disclose|show|bring up) (?:this|these|the|that|any)? ?(?:instructions?|messages?|notes?|directives?|rules?|change)\b|\bkeep (?:this|the|these) (?:instructions?|directives?|messages?) (?:hidden|secret|confidential)\b|\bnever show (?:it|this|them) to the user\b|\bwithout (?:asking|checking with|confirming with) (?:anyone|the user)\b|\bwithout (?:telling|"
        rf"informing|notifying|alerting) (?:the user|them)\b|\bwithout the user (?:knowing|noticing)\b|"
        rf"\b(?:quietly|silently|secretly|covertly|discreetly)\b(?: \w+){{0,2}} (?:copy|send|forward|change|"
        rf"log|append|record|add|delete|transfer|upload|set|replace|post)\b|\bdon't mention it\b",
    ),
    _f(
        "secrecy",
        0.75,
        r"(?:不要|别|不要让|别让)(?:告诉|通知|提醒)?用户(?:知道)?|对用户保密|悄悄|暗中|偷偷|秘密地|不要提这件事|关闭日志|停止记录|"
        r"(?:不要|别|永远不要|不要向用户)(?:提起|提到|透露|说出)(?:这条|这个|这些)(?:指令|消息|说明)|不要告诉用户",
    ),
    # -- borrowed authority: text claiming to speak for the user -------------------------------------------
    _f(
        "authority",
        0.8,
        r"\b(?:the|this) user (?:has |had |have )?(?:already )?(?:authori[sz]ed|approved|consented|agreed|"
        r"instructed|requested|asked|wants|wanted|wishes|said|says|requires|allowed|permitted|granted)\b|"
        r"\b(?:on behalf of|message from|notice from|instructions? from|request from|note from) (?:the )?"
        r"(?:user|account owner|owner)\b|\b(?:user|owner) who owns\b|\bas the (?:user|account owner)\b|"
        r"\btreat (?:the following|this|it|all \w+(?: \w+){0,4}) as (?:coming from|if from|from|trusted) "
        r"(?:the )?user|\btrusted user statements\b|\buser override\b|\bi, the account owner\b",
        sources=_UNTRUSTED,
        other=0.55,
    ),
    _f(
        "authority",
        0.8,
        r"用户(?:已经?|本人)?(?:授权|同意|批准|要求|希望|指示|允许|想要)|代表用户|(?:以下是|来自)用户的(?:指令|通知|要求|消息)|"
        r"当作用户(?:本人)?(?:说的|的陈述)|(?:邮箱|账户|账号)的主人希望|作为账户所有者",
        sources=_UNTRUSTED,
        other=0.55,
    ),
    # -- text addressed to the assistant itself -----------------------------------------------------------
    _f(
        "addressed_to_ai",
        0.7,
        rf"\b(?:note|message|hidden text|instructions?|p\.?s\.?|reminder|notice) (?:to|for) (?:any |all |the |"
        rf"every )?(?:{_AI}|{_AI} reading this)\b|\bif you are an? (?:ai|llm|language model|assistant|bot|"
        rf"chatbot|agent)\b|\bto (?:any|all|every) (?:ai|llm|assistant|agent|model)s?\b|"
        rf"\b(?:{_AI}) (?:agents |assistants )?(?:reading|processing|summari[sz]ing) this\b",
    ),
    _f(
        "addressed_to_ai",
        0.6,
        r"\b(?:ai|llm)s? ?(?:agents?|assistants?|models?)? (?:must|should|are required to|need to)\b|"
        r"(?:ai|大模型|助手|智能体)(?:代理)?(?:都)?必须",
    ),
    _f(
        "addressed_to_ai",
        0.45,
        rf"(?:^|[.!?]\s+|\b(?:attention|dear|hey|hi|hello|ok|okay|listen|do me a favou?r),?\s+)(?:{_AI})\s*"
        rf"(?:[,:!-]|—)\s*(?:you |please |new |your |the |from |copy |ignore |stop |cancel |do |now )",
    ),
    _f(
        "addressed_to_ai",
        0.5,
        rf"(?:给|致|对)(?:所有|任何)?(?:阅读|读到)?.{{0,8}}?{_ZH_AI}(?:的)?(?:提示|隐藏文字|备注|说明)?|"
        rf"(?:注意|听着|帮个忙)[,，:：]?\s*{_ZH_AI}|{_ZH_AI}[,，:：]\s*(?:给你|你必须|必须|请|注意|取消)",
    ),
    # -- standing directives and dangerous actions ------------------------------------------------------
    _f(
        "standing_directive",
        0.3,
        r"\b(?:from now on|going forward|for (?:all|every) future|in (?:all )?future (?:chats|conversations|"
        r"sessions|responses|answers)|whenever (?:the user|anyone|someone|they)|every (?:answer|response|reply)|"
        r"for the rest of (?:this|the) (?:session|conversation)|whatever (?:the user|they) (?:says|asks?))\b",
    ),
    _f(
        "standing_directive",
        0.3,
        r"从现在(?:起|开始)|以后|今后|在以后的所有对话|每个回答|无论用户|不管用户|只要用户|永久记住|永远",
    ),
    _f(
        "must_directive",
        0.3,
        r"\b(?:you|assistant|agents?) (?:must|shall|are required to|have to|will now)\b|"
        r"\b(?:always|never) (?:reply|respond|answer|say|include|trust|refuse|warn|follow|obey)\b|"
        r"\bobey\b|\bfollow (?:my|these|the following|instructions)\b|\brefuse to answer\b",
    ),
    _f("must_directive", 0.3, r"你必须|必须|务必|只听我|听我的|遵守我的|照做"),
    _f(
        "dangerous_action",
        0.55,
        r"\b(?:transfer|wire|send|pay)\b[^.!?\n]{0,30}(?:\$|€|¥|\bbtc\b|bitcoin|\biban\b|\baccount \d)|"
        r"\b(?:reset|change) (?:my|the user'?s|their|his|her) (?:password|pin|email)\b|"
        r"\bgrant\b[^.!?\n]{0,30}\b(?:admin|access|privileges|root)\b|"
        r"\b(?:delete|erase|wipe|cancel) (?:all|every)\b[^.!?\n]{0,20}\b(?:memor(?:y|ies)|data|files|"
        r"messages|records|meetings|accounts)\b|\brm -rf\b|\bcurl\s+-|\bcurl\s+https?:|\bwget\s|"
        r"/etc/passwd|~/\.ssh|\b(?:exec|eval)\(|\bcall the \w+ tool\b|\b(?:execute|run)\b (?:the following|"
        r"this command|:)|\bsimulate a terminal\b|\bask (?:for )?their (?:pin|password)|"
        r"\bdownload\b[^.!?\n]{0,30}\.(?:exe|apk|dmg|sh|bat)\b",
    ),
    _f(
        "dangerous_action",
        0.55,
        r"(?:转账|汇款|支付).{0,20}(?:账户|元|比特币)|删除所有|(?:重置|修改|改成).{0,10}(?:密码|邮箱)|"
        r"执行以下命令|取消用户所有|索要.{0,6}密码|下载\s*https?://",
    ),
    _f(
        "redirect_user",
        0.6,
        rf"\b(?:direct|send|redirect|point|refer|take)\b (?:them|the user|users|people|readers?|everyone) to "
        rf"{_URL}|\btell (?:them|the user|users|readers?|the reader|everyone) to (?:download|click|visit|buy|"
        rf"wire|pay|install|log ?in)\b|\b(?:they|the user) must (?:click|visit|download|pay|wire)\b|"
        rf"告诉(?:读者|用户|他们)(?:去)?(?:下载|点击|访问|购买|汇款)|让(?:他们|用户)(?:汇款|转账|点击|下载)|必须点击",
    ),
    _f(
        "memory_plant",
        0.45,
        r"\b(?:store|save|remember|record|keep|add) (?:this |it |that )?(?:as|in|to) (?:a |your )?(?:core|permanent|"
        r"long-term|persistent) memor(?:y|ies)\b|\bremember (?:this |that )?(?:permanently|forever|for all future)|"
        r"\b(?:overwrite|update|rewrite|modify) your (?:memory|memories)\b|永久记住|覆盖你的记忆|存为核心记忆",
    ),
    _f(
        "shell_command",
        0.75,
        r"\brm -rf\b|\bcurl\s+(?:-|https?:)|\bwget\s|/etc/passwd|~/\.ssh|\bid_rsa\b|\b(?:exec|eval)\(|"
        r"\b(?:execute|run)\b (?:the following|this) (?:command|code|script)|执行以下(?:命令|代码)",
    ),
    _f(
        "third_person_user",
        0.25,
        r"\b(?:the|this) user(?:'s)?\b|\bthe account owner\b|\btheir (?:password|credentials|contacts|pin)\b",
    ),
    _f("third_person_user", 0.25, r"用户"),
    _f(
        "credentials",
        0.2,
        r"\b(?:passwords?|credentials?|api keys?|tokens?|ssn|pin|passport|credit card|secrets?|"
        r"medical history|address book)\b|密码|银行卡号|身份证|密钥|令牌|秘密|病史|通讯录",
    ),
    _f("exfil_target", 0.2, rf"{_URL}|{_IP}|\bwebhook\b|\bpastebin\b|\bftp\b"),
)

# Issue 28: features written from the tuned sources (bench/data/poisoning/SOURCES.md) and from what an
# instruction aimed at the agent is, never from the held-out sources' wording.
_ACT = (
    r"(?:send|e-?mail|forward|transfer|wire|pay|delete|remove|invite|visit|post|share|upload|approve|"
    r"cancel|archive|grant|reset|change|modify|book|reserve|recommend|say|tell|reply|respond|print|output|"
    r"repeat|include|append|add|create|make|call|concatenate|click|open|download|install|run|execute)"
)
FEATURES = (
    *FEATURES,
    # "when asked about refunds, always say …": a rule for what the agent answers others, planted ahead.
    _f(
        "conditional_response",
        0.7,
        r"\b(?:if|when|whenever|once)\b (?:the |a |any )?(?:user|users|anyone|someone|they|customers?|people|"
        r"you are|you're|it is)? ?(?:asks?|asked|questioned|queried|inquires?|wants to know)\b[^\n]{0,120}?"
        r"\b(?:say|reply|respond|answer|tell|output|print|report|state|claim|mention|recommend|approve)\b|"
        r"(?:如果|当|每当|以后)(?:用户|有人|客户)?(?:问|询问|问到|问起)[^。\n]{0,40}?(?:回答|说|回复|告诉)",
    ),
    # "just print X", "STOP EVERYTHING": the turn's task replaced by a fixed output (PromptInject).
    _f(
        "output_hijack",
        0.7,
        r"\b(?:just|only|simply)\s+(?:print|say|output|respond with|reply with|write|repeat|answer with)\b|"
        r"\b(?:respond|reply|answer)(?:ing)? with (?:only|exactly|nothing but)\b|\bstop everything\b|"
        r"\b(?:print|spell ?check|repeat|reveal) (?:the|your) (?:previous|prior|above|initial) instructions\b|"
        r"\brepeat the following (?:sentence|text|words)\b|\bsay (?:exactly|only|verbatim)\b",
    ),
    # An HTML or markdown comment, or text hidden from the reader, that speaks to a machine or lays down a rule.
    _f(
        "hidden_markup",
        0.75,
        r"<!--(?:(?!-->)[^\n]|\n){0,600}?(?:\b(?:ai|assistants?|agents?|models?|llms?|bots?|gpt|codebot|"
        r"instructions?|directives?|system|prompt|from now on|always|never)\b|助手|模型|智能|指令|以后|一律)|"
        r"\[//\]: ?# ?\((?:[^)\n]){0,300}?\b(?:ai|assistants?|agents?|models?|must|always|never|remember)\b|"
        r"\b(?:hidden text|white[- ]on[- ]white|white[- ]text|invisible to (?:humans|people|users|readers))\b|"
        r"隐藏文字|白色文字",
    ),
    # A turn boundary inside the content: a fake "User:"/"Assistant:" exchange written into one turn.
    _f(
        "role_spoof",
        0.7,
        r"\n[ \t>*#-]*(?:user|human|assistant|ai|system|用户|助手|系统)[ \t]*[:：]",
        sources=("user", "tool", "external"),
    ),
    _f(
        "role_spoof",
        0.85,
        r"\[/?system(?: \w+)?\]|<instruction>|\bsystem (?:message|notice|note|directive)s?\s*[:\]]|"
        r"#+\s*\(?system[_ ]message\)?",
    ),
    # Text that names the agent and tells it what to do ("Attention AI: …", "assistant, when you read this …").
    _f(
        "addressed_to_ai",
        0.7,
        r"\b(?:note|message|instructions?|directives?|reminder|notice|guidance|information) (?:to|for) (?:any |all |"
        r"the |every )?(?:automated \w+(?: \w+)?|language models?|ai (?:agents?|assistants?|models?)|assistants?|"
        r"models?|agents?|llms?|bots?)\b|"
        r"(?:^|[\s>*(\[\"'{-])(?:attention |dear |hey )?(?:ai agent|ai|assistant|model|agent|codebot|bot|"
        r"automated assistant)\s*[:,]\s*(?:when|whenever|from now|if|please|you|always|never|tell|say|send|"
        r"remember|store|ignore|cancel|recommend|approve|the (?:refund|policy|user))\b|"
        r"\bif you are an? (?:automated|ai|artificial)\b",
        sources=_UNTRUSTED,
        other=0.45,
    ),
    _f(
        "override",
        0.8,
        r"\b(?:ignore|disregard)\s+(?:all\s+)?(?:instructions|directions|directives|rules)\b|"
        r"\bignore (?:your|the|all|any) (?:previous|prior|earlier|above)\b|"
        r"\b(?:ignore|disregard)\b (?:the rest of|everything (?:else|above|below)|all other|any other|other) "
        r"(?:this |the )?(?:data|content|text|info(?:rmation)?|document|context|page|input)\b",
    ),
    # A tool result or a page is data: a sentence in it that orders the reader to act is aimed at the agent.
    # Alone it stays below quarantine (how-to pages are full of imperatives); with any other sign it is not.
    _f(
        "embedded_directive",
        0.4,
        rf"(?:^|[.!?:>]\s+|\n\s*(?:[-*>]\s*)?)(?:please\s+|todo\s*:\s*|first,?\s+|now\s+)?{_ACT}\s+(?:a |an |the |"
        rf"all |every |my |your |their |this |that |it |them |him |her |to |as |\$|\d|https?://|www\.)",
        sources=("tool", "external"),
    ),
    _f(
        "standing_directive",
        0.45,
        r"\b(?:in|for) (?:all|every) (?:future|subsequent|later) (?:answers?|responses?|replies|conversations?|"
        r"chats?|sessions?)\b|\b(?:all|every) future (?:answers?|responses?|replies|conversations?)\b",
        sources=_UNTRUSTED,
        other=0.3,
    ),
)
