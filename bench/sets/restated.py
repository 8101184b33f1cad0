"""A labelled set of restated preferences and instructions (issue 40): what a user tells an assistant three or
four times across sessions, in other words each time, in English, Chinese or both.

Six users of one assistant, each a conversation of eight sessions. Each user has five standing wishes (how
long to answer, which language, what format, which units, how to reach them, what they eat, ...), each said
three or four times in different sessions, sometimes acknowledged by the assistant ("Got it, I'll keep it
short"), and one of them changed on the way (the latest wording is the current one). Between them: ordinary
tasks (a recipe, a bug, a trip), one-off requests that borrow a wish's words ("summarise this article, it's
too wordy"), and questions about the world that do too ("is Chinese harder than Japanese?").

Each wish has a question an agent would ask before answering ("How long should my answers to this user
be?"), category `preference`, whose evidence is every turn that states the wish (the assistant's
acknowledgements are not evidence: they repeat it). Ordinary questions about the tasks (category `task`)
keep the set honest about what memories cost the rest of recall.

Split: `dev` users (maya-r, chen-r, li-r) are what the restatement rules were written against; `test` users
(sam-r, zhou-r, ana-r) were written in the same sitting but not read while tuning: a weaker held-out half
than data from elsewhere, and reported as such.

Written two ways by `python -m bench.sets.restated`: bench/data/sets/restated.json.gz (LoCoMo's format, for
`hindsight bench quality`) and bench/data/restated_consolidation.json.gz (bench.consolidation's labelled
format: each turn's topic, for purity and completeness).
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.sets.common import SETS_DIR, Conversation, write_set

PATH = SETS_DIR / "restated.json.gz"
CONSOLIDATION_PATH = SETS_DIR.parent / "restated_consolidation.json.gz"
AGENT = "concierge"
SESSIONS = 8


@dataclass(frozen=True)
class Wish:
    key: str
    memory: str  # what a person would write
    question: str
    # (session, user's words, the assistant's acknowledgement or None); the last one is the current wording
    said: tuple[tuple[int, str, str | None], ...]
    lang: str = "en"


@dataclass(frozen=True)
class User:
    user_id: str
    split: str
    wishes: tuple[Wish, ...]
    # (session, user's words, assistant's reply, question about it or None, near: the wish it borrows from)
    tasks: tuple[tuple[int, str, str, str | None, str | None], ...]


def w(key: str, memory: str, question: str, *said: tuple[int, str, str | None], lang: str = "en") -> Wish:
    return Wish(key, memory, question, tuple(said), lang)


MAYA = User(
    "maya-r",
    "dev",
    (
        w(
            "brevity",
            "The user wants short answers.",
            "How long should my answers be for this user?",
            (0, "I don't like long answers", None),
            (2, "can you be shorter", "Sure, I'll keep it shorter."),
            (4, "too wordy", None),
            (6, "just the gist, please", "Got it, just the gist from now on."),
        ),
        w(
            "metric",
            "The user wants metric units.",
            "Which units should I use with this user?",
            (1, "Please use metric units, I never know what a mile is.", None),
            (3, "kilometres and kilos please, not pounds", "Noted, metric it is."),
            (5, "again, celsius not fahrenheit!", None),
        ),
        w(
            "vegetarian",
            "The user is vegetarian.",
            "What does this user eat?",
            (0, "I'm vegetarian, so no meat in the recipes please.", None),
            (3, "Remember I don't eat meat when you suggest dinners.", None),
            (7, "vegetarian options only for me", "Of course, vegetarian only."),
        ),
        w(
            "bullets",
            "The user wants answers as bullet points.",
            "In what format should I answer this user?",
            (1, "Bullet points please, I skim everything.", None),
            (4, "can you put that in a list next time", None),
            (6, "I prefer bullet lists over paragraphs", "Understood, bullet points from now on."),
        ),
        w(
            "contact",
            "The user wants reminders by SMS, not email.",
            "How should I send this user reminders?",
            (2, "Send reminders by email please.", None),
            (5, "Actually text me instead, I never read my email.", None),
            (7, "sms is better for reminders", "Okay, I'll text you the reminders."),
        ),
    ),
    (
        (
            0,
            "What's a quick pasta I can make tonight?",
            "A garlic and chili spaghetti takes 15 minutes.",
            "What pasta did the assistant suggest?",
            None,
        ),
        (
            1,
            "How do I fix a leaking tap?",
            "Turn off the water, then replace the washer under the handle.",
            "What fixes a leaking tap?",
            None,
        ),
        (
            2,
            "My coworker writes really long emails, it's exhausting.",
            "That sounds tiring.",
            None,
            "brevity",
        ),
        (3, "Is a mile longer than a kilometre?", "Yes, a mile is about 1.6 km.", None, "metric"),
        (
            4,
            "Plan a weekend in Porto for me.",
            "Day 1: Ribeira and the bridge; day 2: Livraria Lello.",
            "Which bookshop was in the Porto plan?",
            None,
        ),
        (
            5,
            "Summarise this article for me, it's way too wordy.",
            "It argues that remote work raises output.",
            None,
            "brevity",
        ),
        (
            6,
            "Recommend a sci-fi novel.",
            "Try The Dispossessed by Ursula K. Le Guin.",
            "Which novel did the assistant recommend?",
            None,
        ),
        (
            7,
            "What's a good name for a beagle?",
            "Biscuit is a classic.",
            "What dog name was suggested?",
            None,
        ),
    ),
)

CHEN = User(
    "chen-r",
    "dev",
    (
        w(
            "brevity_zh",
            "用户希望回答简短。",
            "这个用户希望回答多长？",
            (0, "回答请简短一点", None),
            (3, "太啰嗦了，说重点", "好的，以后简洁回答。"),
            (6, "别写那么长，一两句就行", None),
            lang="zh",
        ),
        w(
            "chinese",
            "用户希望用中文回复。",
            "应该用什么语言回复这个用户？",
            (1, "以后都用中文回复吧", None),
            (4, "请用中文回答我，英文看着累", "明白，以后用中文。"),
            (7, "别用英文了，中文就好", None),
            lang="zh",
        ),
        w(
            "no_emoji",
            "用户不要表情符号。",
            "回复这个用户时能用表情吗？",
            (2, "回复里不要加表情", None),
            (5, "别再用表情了，看着不正式", "好的，不再使用表情。"),
            (7, "请不要用表情符号", None),
            lang="zh",
        ),
        w(
            "tables",
            "用户喜欢用表格对比。",
            "对比信息时应该用什么格式给这个用户？",
            (0, "对比的东西请用表格列出来", None),
            (3, "下次对比还是用表格吧", None),
            (6, "我喜欢表格，一目了然", "收到，对比都用表格。"),
            lang="zh",
        ),
        w(
            "peanut",
            "用户对花生过敏。",
            "这个用户有什么过敏？",
            (1, "我对花生过敏，推荐菜的时候注意", None),
            (4, "记得我花生过敏", None),
            (7, "花生过敏，别推荐有花生的", "了解，会避开花生。"),
            lang="zh",
        ),
    ),
    (
        (0, "帮我写一个请假条", "好的：因家中有事，申请请假一天。", "请假条里写的请假理由是什么？", None),
        (1, "上海明天天气怎么样？", "明天多云，最高二十度。", "上海明天最高气温多少？", None),
        (2, "这篇文章写得太啰嗦了，帮我总结一下", "文章主要讲远程办公提高了效率。", None, "brevity_zh"),
        (3, "中文和日语哪个更难学？", "各有难点，日语有三套文字。", None, "chinese"),
        (4, "推荐一本关于历史的书", "可以读《万历十五年》。", "助手推荐了哪本历史书？", None),
        (5, "帮我算一下三千块分给四个人每人多少", "每人七百五十块。", "三千块分给四个人每人多少？", None),
        (6, "周末去杭州玩两天怎么安排？", "第一天西湖，第二天灵隐寺。", "杭州行程第二天去哪里？", None),
        (7, "花生油和菜籽油哪个更健康？", "两者差不多，适量即可。", None, "peanut"),
    ),
)

LI = User(
    "li-r",
    "dev",
    (
        w(
            "python",
            "The user wants code examples in Python.",
            "Which programming language should code examples for this user be in?",
            (0, "Please give me code examples in Python.", None),
            (3, "代码请用python写", "好的，代码都用 Python。"),
            (6, "always show code in python pls, I can't read ruby", None),
            lang="mixed",
        ),
        w(
            "detail",
            "The user now wants detailed explanations (short ones before).",
            "How much detail should my explanations to this user have?",
            (1, "keep it short please", None),
            (4, "简短一点就行", None),
            (
                7,
                "Actually I want more detailed explanations from now on.",
                "Got it, more detail from now on.",
            ),
            lang="mixed",
        ),
        w(
            "timezone",
            "The user's time zone is Beijing time.",
            "In which time zone should I schedule for this user?",
            (2, "schedule everything in Beijing time please", None),
            (5, "我的时区是北京时间，别搞错", "明白，按北京时间安排。"),
            (7, "use UTC+8 for my meetings", None),
            lang="mixed",
        ),
        w(
            "sources",
            "The user wants sources cited.",
            "Should I cite sources for this user?",
            (0, "Please always cite your sources.", None),
            (3, "回答请附上来源", None),
            (5, "links to the references please", "Sure, I'll include the sources."),
            lang="mixed",
        ),
        w(
            "formal",
            "The user wants a formal tone.",
            "What tone should I use with this user?",
            (1, "请用正式一点的语气", None),
            (4, "less casual please, this is for work", None),
            (6, "keep the tone formal", "Understood, formal tone."),
            lang="mixed",
        ),
    ),
    (
        (
            0,
            "How do I reverse a list in Python?",
            "Use my_list[::-1] or my_list.reverse().",
            "How do you reverse a list in Python?",
            None,
        ),
        (1, "周五的会议改到几点了？", "改到下午三点。", "周五的会议改到几点？", None),
        (2, "Is Python slower than Rust?", "Usually, yes: Rust compiles to native code.", None, "python"),
        (
            3,
            "Write a SQL query for the top 5 customers.",
            "SELECT name FROM customers ORDER BY spend DESC LIMIT 5;",
            "What did the SQL query select?",
            None,
        ),
        (4, "帮我翻译这句话：I'll be late", "我会迟到。", "那句英文翻译成了什么？", None),
        (5, "What time is it in London when it's 9am in Beijing?", "2am in London.", None, "timezone"),
        (6, "这段代码为什么报错？", "第三行少了一个冒号。", "代码报错的原因是什么？", None),
        (7, "Give me a short summary of this email.", "They are moving the launch to June.", None, "detail"),
    ),
)

SAM = User(
    "sam-r",
    "test",
    (
        w(
            "brevity",
            "The user wants brief replies.",
            "How long should my replies to this user be?",
            (0, "stop writing essays, keep it brief", None),
            (3, "shorter replies please", "Will do, I'll keep replies brief."),
            (5, "tl;dr version only", None),
            (7, "less rambling, more answer", None),
        ),
        w(
            "spanish",
            "The user wants replies in Spanish.",
            "Which language should I reply to this user in?",
            (1, "Can you answer in Spanish from now on?", None),
            (4, "reply in spanish please, it's easier for me", "Claro, responderé en español."),
            (6, "Spanish please, not English", None),
        ),
        w(
            "examples",
            "The user wants concrete examples.",
            "Should I include examples for this user?",
            (0, "always give me an example, the theory alone doesn't stick", None),
            (4, "an example would help, please include one every time", None),
            (7, "examples please, I learn by seeing", "Sure, I'll always include an example."),
        ),
        w(
            "halal",
            "The user eats halal only.",
            "What food restrictions does this user have?",
            (2, "I only eat halal, please keep that in mind for recipes", None),
            (5, "no pork for me, halal only", "Noted, halal recipes only."),
            (7, "remember the halal thing when you suggest restaurants", None),
        ),
        w(
            "whatsapp",
            "The user wants to be reached on WhatsApp.",
            "How should I contact this user?",
            (1, "message me on whatsapp, not email", None),
            (3, "whatsapp is the best way to reach me", None),
            (6, "send the reminder to my whatsapp please", "Okay, WhatsApp it is."),
        ),
    ),
    (
        (
            0,
            "How long should I boil an egg?",
            "About 7 minutes for a jammy yolk.",
            "How long to boil an egg?",
            None,
        ),
        (1, "What's the capital of Australia?", "Canberra.", "What is the capital of Australia?", None),
        (2, "My landlord sends the longest messages ever.", "Ha, that can be a lot.", None, "brevity"),
        (
            3,
            "Is Spanish harder than Italian?",
            "They are similar; Spanish has simpler spelling.",
            None,
            "spanish",
        ),
        (
            4,
            "Help me draft a birthday message for my sister.",
            "Happy birthday! Here's to your best year yet.",
            "What birthday message was drafted?",
            None,
        ),
        (
            5,
            "Recommend a running shoe.",
            "The Pegasus is a solid daily trainer.",
            "Which running shoe was recommended?",
            None,
        ),
        (
            6,
            "Give me an example sentence with 'ubiquitous'.",
            "Phones are ubiquitous these days.",
            None,
            "examples",
        ),
        (7, "How many cups in a litre?", "About 4.2 US cups.", "How many cups are in a litre?", None),
    ),
)

ZHOU = User(
    "zhou-r",
    "test",
    (
        w(
            "brevity_zh",
            "用户希望回答精简。",
            "这个用户的回答应该写多长？",
            (0, "能不能精简一点", None),
            (3, "长篇大论我不看，说重点", "好的，以后只说重点。"),
            (6, "一句话说清楚就行", None),
            lang="zh",
        ),
        w(
            "steps",
            "用户希望分步骤说明。",
            "给这个用户讲操作时用什么格式？",
            (1, "操作步骤请分条列出来", None),
            (4, "一步一步写，别混在一段里", None),
            (7, "还是分点写步骤吧", "收到，步骤分点列出。"),
            lang="zh",
        ),
        w(
            "vegetarian_zh",
            "用户吃素。",
            "这个用户吃什么？",
            (2, "我吃素，推荐菜别有肉", None),
            (5, "记得我是素食者", "明白，只推荐素菜。"),
            (7, "素食的餐厅就好", None),
            lang="zh",
        ),
        w(
            "wechat",
            "用户希望通过微信联系。",
            "应该怎么联系这个用户？",
            (0, "有事发微信给我", None),
            (4, "别发邮件了，微信就行", None),
            (6, "提醒请发我微信", "好的，以后微信提醒您。"),
            lang="zh",
        ),
        w(
            "celsius",
            "用户用摄氏度和公制。",
            "给这个用户用什么单位？",
            (1, "温度用摄氏度说", None),
            (3, "距离请用公里，不要英里", None),
            (6, "单位都用公制", "了解，统一用公制单位。"),
            lang="zh",
        ),
    ),
    (
        (0, "北京到上海高铁要多久？", "大约四个半小时。", "北京到上海高铁要多久？", None),
        (1, "帮我想一个周报的标题", "《第十二周工作进展与下周计划》。", "周报标题是什么？", None),
        (2, "这份报告太长了，帮我提炼要点", "核心是成本下降了百分之十。", None, "brevity_zh"),
        (3, "红烧肉怎么做？", "五花肉焯水后加糖色慢炖一小时。", "红烧肉要炖多久？", None),
        (4, "一英里是多少公里？", "约一点六公里。", None, "celsius"),
        (5, "推荐一部纪录片", "可以看《河西走廊》。", "助手推荐了哪部纪录片？", None),
        (6, "微信和支付宝哪个手续费低？", "提现手续费差不多，都是千分之一。", None, "wechat"),
        (7, "下周三是几号？", "是十五号。", "下周三是几号？", None),
    ),
)

ANA = User(
    "ana-r",
    "test",
    (
        w(
            "short_mixed",
            "The user wants short answers.",
            "How long should answers to this user be?",
            (0, "be concise please", None),
            (3, "回答短一点", "好的，以后回答简短些。"),
            (6, "less text, more answer, ok?", None),
            lang="mixed",
        ),
        w(
            "english",
            "The user wants replies in English (Chinese before).",
            "Which language should I use with this user?",
            (1, "请用中文回复", None),
            (4, "中文就好", None),
            (7, "Please switch to English from now on, I'm practising.", "Sure, English from now on."),
            lang="mixed",
        ),
        w(
            "markdown",
            "The user wants answers in Markdown.",
            "What format should answers to this user be in?",
            (0, "format answers in markdown please", None),
            (4, "请用 markdown 格式，我要贴到笔记里", "明白，用 Markdown 格式。"),
            (6, "markdown again please, with headings", None),
            lang="mixed",
        ),
        w(
            "allergy",
            "The user is allergic to shellfish.",
            "What is this user allergic to?",
            (2, "I'm allergic to shellfish, careful with recipes", None),
            (5, "我对海鲜过敏", None),
            (7, "shellfish allergy, remember that", "Noted, no shellfish."),
            lang="mixed",
        ),
        w(
            "no_jokes",
            "The user does not want jokes in answers.",
            "Can I joke with this user?",
            (1, "no jokes in the answers please, just facts", None),
            (3, "别开玩笑，直接回答", None),
            (5, "skip the jokes", "Understood, no jokes."),
            lang="mixed",
        ),
    ),
    (
        (
            0,
            "What's a good stretch for lower back pain?",
            "Try the cat-cow stretch for a minute.",
            "Which stretch was suggested for back pain?",
            None,
        ),
        (1, "明天下午三点提醒我开会", "好的，明天下午三点提醒您。", "开会提醒定在几点？", None),
        (
            2,
            "Tell me a joke about cats.",
            "Why did the cat sit on the laptop? To keep an eye on the mouse.",
            None,
            "no_jokes",
        ),
        (
            3,
            "How do I convert a Word file to Markdown?",
            "Use pandoc: pandoc file.docx -o file.md.",
            None,
            "markdown",
        ),
        (4, "What's the plural of 'cactus'?", "Cacti or cactuses.", "What is the plural of cactus?", None),
        (
            5,
            "Is English grammar easier than Chinese grammar?",
            "Chinese has no verb conjugation.",
            None,
            "english",
        ),
        (6, "推荐一个学英语的播客", "可以听 6 Minute English。", "推荐了哪个英语播客？", None),
        (7, "How many grams of protein in an egg?", "About 6 grams.", "How much protein is in an egg?", None),
    ),
)

USERS = (MAYA, CHEN, LI, SAM, ZHOU, ANA)
START = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)


def _sessions(user: User) -> list[list[tuple[str, str, str | None, str | None]]]:
    """Per session, (role, text, topic, near) in order: tasks first, then the wishes said in it."""
    out: list[list[tuple[str, str, str | None, str | None]]] = [[] for _ in range(SESSIONS)]
    for session, text, reply, _, near in user.tasks:
        out[session] += [("user", text, None, near), ("assistant", reply, None, None)]
    for wish in user.wishes:
        for session, text, ack in wish.said:
            out[session].append(("user", text, wish.key, None))
            if ack is not None:
                out[session].append(("assistant", ack, wish.key, None))
    return out


def locomo(user: User) -> Conversation:
    conv = Conversation(user.user_id, user.split, "user", "assistant")
    dia: dict[tuple[int, str], str] = {}
    for n, turns in enumerate(_sessions(user)):
        conv.new_session(START + timedelta(days=7 * n))
        for role, text, _, _ in turns:
            dia[(n, text)] = conv.say("user" if role == "user" else "assistant", text, role)
    for wish in user.wishes:
        evidence = [dia[(session, text)] for session, text, _ in wish.said]
        conv.ask(wish.question, wish.memory, evidence, "preference")
    for session, text, reply, question, _ in user.tasks:
        if question is not None:
            conv.ask(question, reply, [dia[(session, text)], dia[(session, reply)]], "task")
    return conv


def labelled(user: User) -> dict[str, Any]:
    turns = []
    for n, session in enumerate(_sessions(user)):
        for k, (role, text, topic, near) in enumerate(session):
            turns.append(
                {
                    "turn_id": f"{user.user_id}:D{n + 1}:{k + 1}",
                    "role": role,
                    "content": text,
                    "ts": (START + timedelta(days=7 * n, minutes=k)).isoformat(),
                    "session": f"{user.user_id}-s{n + 1}",
                    "topic": None if topic is None else f"{user.user_id}/{topic}",
                    "attribute": None,
                    "near": None if near is None else f"{user.user_id}/{near}",
                }
            )
    return {
        "agent_id": AGENT,
        "user_id": user.user_id,
        "split": user.split,
        "topics": [
            {"topic": f"{user.user_id}/{x.key}", "attribute": None, "lang": x.lang, "memory": x.memory}
            for x in user.wishes
        ],
        "turns": turns,
    }


def main() -> None:
    write_set(PATH, [locomo(u) for u in USERS])
    data = json.dumps([labelled(u) for u in USERS], ensure_ascii=False)
    with (
        CONSOLIDATION_PATH.open("wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz,
    ):
        gz.write(data.encode("utf-8"))
    print(f"wrote {PATH} and {CONSOLIDATION_PATH}")


if __name__ == "__main__":
    main()
