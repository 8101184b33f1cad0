"""The long-request shape of knowledge updates (issue 46): `bench/data/sets/updates_long.json.gz`.

A user asks an assistant for help in 200-400-word requests about something else (CSS, a script, a trip, a
cover letter, 写周报, 改简历…), and states a value in passing inside one of them: "…so now I have 14 plants
in total…", "…现在每个月的额度是5000次…". Weeks later another request states the new value the same way.
Sometimes the assistant echoes the old value ("Got it: 48 open tickets."). Questions ask in the plain
present tense ("How many plants do I have?", "我现在有几盆植物？"), some ask for the previous value ("What
was my previous …?", "我以前…是多少？"). Look-alike pairs that are both true: another holder's value ("my
sister has 5 plants"), another named thing ("the Borealis budget"), a plan ("I'm planning to get to 20"),
a hypothetical ("if I had 20 …").

Same JSON layout as `bench.sets.updates` (conversations with turns and labelled pairs), so `hindsight bench
updates --set long` runs it through the same pipeline. Attributes alternate between the dev and test halves
(a test conversation's attributes and request topics were never in a dev one); 40% of the conversations
are Chinese or mixed. Regenerate with `python -m bench.sets.updates_long`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.sets.common import SETS_DIR, write_json_set

PATH = SETS_DIR / "updates_long.json.gz"
SEED = 46
CONVERSATIONS = 40  # 20 dev, 20 test


@dataclass(frozen=True, slots=True)
class Attr:
    """One changing value: how it is stated in passing (EN, ZH), the question, its previous form."""

    key: str
    en: str  # "{v}" is the value
    zh: str
    q_en: str
    q_prev_en: str
    q_zh: str
    q_prev_zh: str
    values: tuple[str, str]
    other_en: str  # the same value held by another person / thing (a look-alike that is also true)
    other_zh: str
    plan_en: str  # a plan or supposition (not a value that holds)
    plan_zh: str


ATTRS = (
    Attr(
        "plants",
        "so now I have {v} plants in total on the balcony",
        "现在阳台上一共有{v}盆植物",
        "How many plants do I have on the balcony?",
        "How many plants did I have on the balcony before?",
        "我阳台上有几盆植物？",
        "我以前阳台上有几盆植物？",
        ("9", "14"),
        "my sister has {v} plants on her balcony",
        "我姐姐的阳台上有{v}盆植物",
        "I'm planning to get to {v} plants on the balcony by summer",
        "我打算夏天之前把阳台上的植物加到{v}盆",
    ),
    Attr(
        "tickets",
        "the open support tickets are at {v} right now",
        "现在未处理的工单有{v}个",
        "How many open support tickets are there?",
        "How many open support tickets were there previously?",
        "现在未处理的工单有多少个？",
        "之前未处理的工单有多少个？",
        ("48", "31"),
        "the billing team has {v} open support tickets",
        "财务组那边未处理的工单有{v}个",
        "if the open support tickets went up to {v} we would need another hire",
        "如果未处理的工单涨到{v}个，我们就得再招人",
    ),
    Attr(
        "limit",
        "our API plan has a monthly limit of {v} requests",
        "我们的API套餐每个月的额度是{v}次请求",
        "What is the monthly limit of our API plan?",
        "What was the original monthly limit of our API plan?",
        "我们API套餐每个月的额度是多少？",
        "我们API套餐原来每个月的额度是多少？",
        ("2,000", "5,000"),
        "the Borealis account's API plan has a monthly limit of {v} requests",
        "Borealis那个账号的API套餐每个月额度是{v}次请求",
        "we might move to an API plan with a monthly limit of {v} requests",
        "我们可能会换成每个月{v}次请求的API套餐",
    ),
    Attr(
        "load",
        "the page load time is {v} seconds on mobile",
        "手机上页面加载时间是{v}秒",
        "What is the page load time on mobile?",
        "What was the page load time on mobile before?",
        "手机上页面加载时间是多少秒？",
        "以前手机上页面加载时间是多少秒？",
        ("3.4", "1.2"),
        "the competitor's page load time is {v} seconds on mobile",
        "竞品的手机页面加载时间是{v}秒",
        "I hope to get the page load time down to {v} seconds on mobile",
        "希望能把手机上页面加载时间降到{v}秒",
    ),
    Attr(
        "team",
        "my team is {v} engineers at the moment",
        "我们组目前有{v}个工程师",
        "How many engineers are on my team?",
        "How many engineers were on my team previously?",
        "我们组有几个工程师？",
        "我们组以前有几个工程师？",
        ("6", "9"),
        "my friend's team is {v} engineers",
        "我朋友他们组有{v}个工程师",
        "if my team grew to {v} engineers I would split it in two",
        "要是我们组扩到{v}个工程师，我就把它拆成两个组",
    ),
    Attr(
        "rent",
        "my rent is {v} dollars a month",
        "我现在的房租是每月{v}元",
        "How much is my rent?",
        "How much was my rent before?",
        "我的房租每月多少钱？",
        "我以前的房租每月多少钱？",
        ("1,450", "1,620"),
        "my roommate's old rent was {v} dollars a month",
        "我室友的房租是每月{v}元",
        "I'm thinking of moving somewhere with rent around {v} dollars a month",
        "我在考虑搬到房租每月{v}元左右的地方",
    ),
    Attr(
        "run",
        "I'm running {v} kilometres a week",
        "我每周跑{v}公里",
        "How many kilometres a week do I run?",
        "How many kilometres a week did I use to run?",
        "我每周跑多少公里？",
        "我以前每周跑多少公里？",
        ("15", "25"),
        "my brother runs {v} kilometres a week",
        "我哥哥每周跑{v}公里",
        "I'd love to build up to {v} kilometres a week",
        "我希望以后能每周跑到{v}公里",
    ),
    Attr(
        "standup",
        "our standup is at {v} every morning",
        "我们每天早上{v}开站会",
        "What time is our morning standup?",
        "What time was our morning standup originally?",
        "我们早上几点开站会？",
        "我们原来早上几点开站会？",
        ("9:30am", "10:15am"),
        "the design team's standup is at {v} every morning",
        "设计组每天早上{v}开站会",
        "we could move the standup to {v} if people prefer",
        "要是大家愿意，站会也可以改到{v}",
    ),
)
# Request bodies (~200-300 words with the value sentence), each about something else than the value.
TOPICS_EN = (
    "I'm building a small landing page and the hero section keeps collapsing on narrow screens. The layout "
    "uses a flex container with an image and a text block, and below 600 pixels the text overflows the "
    "card while the image shrinks to almost nothing. I tried flex-wrap, a min-width on the image and a "
    "media query that switches to a column, but the card height stays fixed and the text spills under the "
    "next section.",
    "Could you help me write a Python script that reads a CSV export from my bank, groups the rows by "
    "merchant and prints monthly totals sorted from largest to smallest? The dates are day first, some "
    "amounts have a thousands separator that breaks float parsing, and rows in other currencies should be "
    "skipped with a warning rather than crash the run. Standard library only, please.",
    "I'm planning a four-day trip to Lisbon in the autumn and I'd like a loose itinerary that mixes "
    "museums with long walks, one day trip by train, and evenings that don't start before eight. I don't "
    "drive, I hate queues, and I'd rather eat where locals eat than anywhere with a picture menu outside.",
    "Can you review the cover letter below for a product analyst role? I want it to sound confident "
    "without overselling, to lead with the pricing experiment I ran last year, and to cut anything that "
    "repeats the CV. The company is mid-sized, remote-first, and their posting stresses written "
    "communication and SQL.",
    "Our nightly backup job on the build server fails about once a week with a timeout while uploading "
    "to the object store. The logs show the multipart upload stalling at the same part number each time, "
    "and a manual retry always works. I'd like to understand what could cause that pattern and how to "
    "make the job retry only the failed part.",
    "I need a short onboarding guide for new volunteers at the community garden: where the tools are, "
    "how the watering rota works, who to call when the gate code changes, and what not to compost. It "
    "should fit on two pages and be friendly rather than bureaucratic.",
)
TOPICS_ZH = (
    "帮我写一份这周的周报吧，主要是三件事：支付页的改版上线了，灰度到百分之二十；数据看板的口径跟财务对齐了；"
    "还有下周要开始做会员体系的需求评审。语气正式一点，但别写成流水账，每件事最好说清楚结果和下一步。",
    "我在改简历，想投数据分析的岗位。帮我看看项目经历那一段怎么写更有说服力，我之前做过一个定价实验，"
    "转化率提升了一些，但是简历上写得太平淡了。另外技能那一栏要不要把Excel删掉？感觉有点显得不专业。",
    "周末想带爸妈去杭州玩两天，他们腿脚不太好，不想走太多路，也不想排长队。帮我排一个轻松一点的行程，"
    "最好有一顿正宗的杭帮菜，住的地方离西湖近一点，交通尽量打车或者地铁。",
    "我们的定时任务每周总有一次超时失败，日志里看是上传到对象存储的时候卡住了，手动重试又都正常。"
    "帮我分析一下可能是什么原因，还有怎么改成只重试失败的那一部分，而不是整个任务重跑。",
    "帮我给新来的实习生写一份入职指南，包括代码仓库怎么申请权限、本地环境怎么搭、每周的例会安排，"
    "还有遇到问题先找谁。篇幅控制在两页以内，语气友好一点。",
)
ECHO_EN = "Got it, {v} noted. Here's what I'd suggest for the rest."
ECHO_ZH = "好的，记下了：{v}。下面是我的建议。"
REPLY_EN = (
    "Here's a structured take on that. First, the core problem, then two options with their trade-offs, and "
    "finally a short checklist you can follow. Let me know which option fits and I'll expand it."
)
REPLY_ZH = "好的，我先梳理一下问题，再给你两个方案和各自的优缺点，最后附一个可以照着做的清单。你看哪个方案合适，我再展开。"
FILLER_EN = ("Thanks, that helps a lot.", "Makes sense, I'll try that tonight.", "Perfect, thank you!")
FILLER_ZH = ("谢谢，很有帮助。", "明白了，我今晚试试。", "好的，太感谢了！")


def _request(lang: str, topic: str, passing: str, rng: random.Random) -> str:
    """A long request with the value said in passing, in the middle or at the end."""
    if lang == "zh":
        aside = rng.choice(("顺便说一下，", "对了，", "另外提一句，")) + passing + "。"
        tail = "麻烦你了，越具体越好。"
        sentences = [x for x in topic.split("。") if x]
        cut = rng.randrange(1, len(sentences) + 1)
        return "。".join(sentences[:cut]) + "。" + aside + "。".join(sentences[cut:]) + tail
    aside = rng.choice(("By the way, ", "Unrelated, but ", "For context, ", "Oh, and ")) + passing + ". "
    tail = (
        "Please be specific and keep the explanation practical; I'd rather have one clear recommendation "
        "than a list of everything that could possibly matter."
    )
    sentences = topic.split(". ")
    cut = rng.randrange(1, len(sentences))
    return ". ".join(sentences[:cut]) + ". " + aside + ". ".join(sentences[cut:]) + " " + tail


def _lang_of(i: int) -> str:
    return "zh" if i % 5 in (1, 3) else "mixed" if i % 10 == 4 else "en"  # 40% Chinese or mixed


def build(i: int, rng: random.Random) -> dict[str, Any]:
    split = "dev" if i % 2 == 0 else "test"
    lang = _lang_of(i)
    cid = f"upl-{lang}-{i:03d}"
    # Attributes and topics alternate between the halves: a test conversation never uses a dev one's.
    attrs = [a for j, a in enumerate(ATTRS) if j % 2 == i % 2]
    chosen = rng.sample(attrs, 3)
    text_lang = "en" if lang == "en" else "zh"
    topics = list(TOPICS_ZH if text_lang == "zh" else TOPICS_EN)
    topics = [t for j, t in enumerate(topics) if j % 2 == i % 2] or topics
    start = datetime(2025, 3, 3, 9, 0, tzinfo=UTC) + timedelta(days=rng.randrange(0, 60))
    turns: list[dict[str, Any]] = []
    pairs: list[dict[str, Any]] = []

    def say(session: int, ts: datetime, role: str, text: str) -> str:
        tid = f"{cid}-t{len(turns) + 1:04d}"
        turns.append(
            {
                "turn_id": tid,
                "session_id": f"{cid}-s{session}",
                "role": role,
                "speaker": "Sam" if role == "user" else "Aide",
                "content": text,
                "ts": ts.isoformat(),
            }
        )
        return tid

    session = 0

    def exchange(ts: datetime, passing: str, echo: str | None) -> list[str]:
        nonlocal session
        session += 1
        # Two things asked at once, as long requests often are: 200-400 words with the value in passing.
        parts = rng.sample(topics, len(topics))
        joined = (" 还有一件事：" if text_lang == "zh" else " Another thing: ").join(parts)
        ids = [say(session, ts, "user", _request(text_lang, joined, passing, rng))]
        if echo is not None:
            ids.append(say(session, ts + timedelta(minutes=1), "assistant", echo))
        else:
            say(session, ts + timedelta(minutes=1), "assistant", REPLY_ZH if text_lang == "zh" else REPLY_EN)
        say(
            session,
            ts + timedelta(minutes=3),
            "user",
            rng.choice(FILLER_ZH if text_lang == "zh" else FILLER_EN),
        )
        return ids

    for n, a in enumerate(chosen):
        old_v, new_v = a.values if rng.random() < 0.7 else a.values[::-1]
        t_old = start + timedelta(days=n * 3, hours=rng.randrange(8))
        t_new = t_old + timedelta(days=20 + rng.randrange(20))
        stated = a.zh if text_lang == "zh" else a.en
        echo = None
        if rng.random() < 0.5:
            echo = (ECHO_ZH if text_lang == "zh" else ECHO_EN).format(v=old_v)
        old_ids = exchange(t_old, stated.format(v=old_v), echo)
        new_ids = exchange(t_new, stated.format(v=new_v), None)
        previous = rng.random() < 0.3
        q_lang = "en" if lang in ("en", "mixed") else "zh"  # mixed: Chinese requests asked in English
        if q_lang == "zh":
            question = a.q_prev_zh if previous else a.q_zh
        else:
            question = a.q_prev_en if previous else a.q_en
        pairs.append(
            {
                "pair_id": f"{cid}-p{len(pairs) + 1:02d}",
                "label": "update",
                "lang": lang,
                "attribute": a.key,
                "value_kind": "number" if a.key != "standup" else "time",
                "rule_table": False,
                "asks": "previous" if previous else "current",
                # The wanted statement is listed as "new" (what must come first), the other as "old".
                "old_turns": new_ids if previous else old_ids,
                "new_turns": old_ids[:1] if previous else new_ids,
                "question": question,
                "old_value": new_v if previous else old_v,
                "current_value": old_v if previous else new_v,
            }
        )
        # A look-alike that is also true: another holder or thing, or a plan / hypothetical.
        kind = rng.choice(("other", "plan"))
        other_text = (
            (a.other_zh if text_lang == "zh" else a.other_en)
            if kind == "other"
            else (a.plan_zh if text_lang == "zh" else a.plan_en)
        )
        other_v = str(rng.choice((7, 12, 20, 30)))
        look_ids = exchange(t_new + timedelta(days=2), other_text.format(v=other_v), None)
        pairs.append(
            {
                "pair_id": f"{cid}-p{len(pairs) + 1:02d}",
                "label": "lookalike",
                "lang": lang,
                "attribute": a.key,
                "value_kind": "number",
                "lookalike_kind": "other_holder_or_thing" if kind == "other" else "plan",
                "rule_table": False,
                "old_turns": new_ids[:1],
                "new_turns": look_ids,
                "question": a.q_zh if q_lang == "zh" else a.q_en,
                "evidence": new_ids[:1],
            }
        )
    turns.sort(key=lambda t: (t["ts"], t["turn_id"]))
    return {
        "conversation_id": cid,
        "split": split,
        "shape": "long_request",
        "lang": lang,
        "agent_id": "helper",
        "user_id": f"sam-{i:03d}",
        "speakers": {"user": "Sam", "assistant": "Aide"},
        "turns": turns,
        "pairs": pairs,
    }


def generate() -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    return [build(i, rng) for i in range(CONVERSATIONS)]


def main() -> None:
    write_json_set(PATH, generate())
    print(f"wrote {PATH}")


if __name__ == "__main__":
    main()
