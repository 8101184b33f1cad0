"""Knowledge updates in short agent chats (issue 46): `bench/data/sets/updates_agents.json.gz`.

A user tells an assistant a value (sometimes the assistant echoes it: "Noted: a $4,000 monthly marketing
budget"), two unrelated turns follow, an unrelated session ten days later, and forty days in the user states
the new value, often in passing inside a request ("…finance cut things back, so the marketing budget is now
$2,500 a month…", "I sold the old city bike, so I'm down to two bikes"). Questions ask in the plain present
tense or for the previous value (the wanted statement is then the older one). Look-alikes that are both
true: another person's value ("my wife works at Porsche"), another thing's ("Project Beta has a budget of
$20,000"), a plan ("I want to sleep 8 hours a night starting next month"), a hypothetical.

Written by hand on 2026-12-07 as agent scenarios none of the other sets has (they are the shape issue 46
says a changed value must come back first in). The dev half was read, and three defects it showed were
fixed the same day (a thing's budget read as the user's, a fact chain leaving the assistant's echo of the
old value current, a "previous" question not finding what a fact chain closed); the test half was written
before any of it ran; its misses were read after the first run (6 of 11), and one fix followed (numbers
written in Chinese characters), so its figures after that are no longer held out. Same JSON layout as
`bench.sets.updates`, so `hindsight bench updates --set agents` runs it through the same pipeline.
Regenerate with `python -m bench.sets.updates_agents`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from bench.sets.common import SETS_DIR, write_json_set

PATH = SETS_DIR / "updates_agents.json.gz"
T0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
FILLER = [
    ("user", "Can you suggest a good podcast about history? Something with short episodes."),
    ("assistant", "Try 'The Rest Is History' or 'Fall of Civilizations' — both have shorter episodes too."),
    ("user", "Thanks. Also, how do I make my sourdough starter more active?"),
    ("assistant", "Feed it twice a day at room temperature with equal weights of flour and water."),
]
# Scenarios whose two statements both hold (the older is wanted for every question): what kind of look-alike.
LOOKALIKES = {
    "two_projects": "other_holder_or_thing",
    "two_projects_plain": "other_holder_or_thing",
    "sister": "other_holder_or_thing",
    "wife": "other_holder_or_thing",
    "h_colleague": "other_holder_or_thing",
    "plan": "plan",
    "h_plan_only": "plan",
    "hypo": "hypothetical",
}
RULE_TABLE = {
    "budget",
    "city",
    "two_projects",
    "two_projects_plain",
    "employer",
    "diet",
    "channel",
    "wife",
    "hypo",
    "zh_job",
    "cross_lang",
}
# Questions about another thing than the older statement's: left out (both statements hold; the other
# question of the scenario asks about the older one).
SKIP_QUESTIONS = {"What is Project Beta's budget?"}

Scenario = dict[str, Any]

DEV: dict[str, Scenario] = {
    "budget": {
        "old": [
            ("user", "My monthly marketing budget is $4,000, mostly for ads on Instagram."),
            ("assistant", "Noted: a $4,000 monthly marketing budget, mostly Instagram ads."),
        ],
        "new": [
            (
                "user",
                "I need help re-planning our spring campaign. We sell handmade candles online and most of "
                "our customers find us through Instagram and a few through Pinterest. The problem is that "
                "finance cut things back, so the marketing budget is now $2,500 a month, and I still want "
                "to launch the lavender line in April. Could you propose a split between paid ads, "
                "influencer gifting and email, with rough weekly numbers, and tell me what to drop first "
                "if sales are slow in the first two weeks? I also want to keep some money for photos.",
            )
        ],
        "q": ["What is my monthly marketing budget?", "How much do I spend on marketing each month?"],
        "prev": "What was my marketing budget before it was cut?",
    },
    "cats": {
        "old": [("user", "I have two cats, Miso and Tofu, and they hate the vacuum cleaner.")],
        "new": [
            (
                "user",
                "Quick question about feeding. We adopted a little kitten last weekend, so now there are "
                "three cats in the flat and the older two keep stealing the kitten's food. What kind of "
                "feeding schedule or bowls would stop that? The kitten is about ten weeks old and eats "
                "wet food, the other two get dry food twice a day.",
            )
        ],
        "q": ["How many cats do I have?"],
        "prev": None,
    },
    "5k": {
        "old": [("user", "My best 5k time is 28 minutes, I'd love to get under 25 this year.")],
        "new": [
            (
                "user",
                "I'm building a training plan for a half marathon in October. For context, I finally ran "
                "a 5k in 25:40 last Sunday, so my best 5k time is now 25:40, and I can run about 40 km a "
                "week without pain. Can you suggest how to structure long runs and tempo runs over the "
                "next 16 weeks, and how fast my easy pace should be?",
            )
        ],
        "q": ["What is my best 5k time?"],
        "prev": "What was my 5k time originally?",
    },
    "city": {
        "old": [("user", "I'm based in Berlin and work remotely for a Dutch company.")],
        "new": [
            (
                "user",
                "Since I moved to Munich last month I've been trying to find a climbing gym and a good "
                "co-working space close to the Isar. Can you list what I should look for in a co-working "
                "membership, like day passes versus fixed desks, and how to compare prices?",
            )
        ],
        "q": ["Where am I based?", "Which city do I live in?"],
        "prev": "Where did I live before?",
    },
    "python": {
        "old": [("user", "Our backend runs on Python 3.9 with Django 3.2 and PostgreSQL 13.")],
        "new": [
            (
                "user",
                "After upgrading the backend to Python 3.12 last sprint, some of our Celery tasks started "
                "failing with a deprecation error about datetime.utcnow. Here is the traceback: "
                "DeprecationWarning: datetime.datetime.utcnow() is deprecated and scheduled for removal. "
                "What's the cleanest way to fix this across the codebase, and should we also move to "
                "zoneinfo for time zones?",
            )
        ],
        "q": ["Which Python version does our backend use?"],
        "prev": None,
    },
    "rent_zh": {
        "old": [("user", "我每个月房租是3800块，住在浦东。")],
        "new": [
            (
                "user",
                "帮我算一下每个月的开销吧。房东上个月通知说房租涨到4200了，再加上水电大概300，交通费每月"
                "200左右，吃饭大概2000。我想每个月存下5000块，工资税后是12000，你觉得可行吗？",
            )
        ],
        "q": ["我的房租是多少？"],
        "prev": "我以前的房租是多少？",
    },
    "two_projects": {
        "old": [("user", "Project Alpha has a budget of $10,000 for the quarter.")],
        "new": [("user", "Project Beta has a budget of $20,000 for the quarter, twice Alpha's.")],
        "q": ["What is Project Alpha's budget?"],
        "prev": None,
        "both_true": True,
    },
    "two_projects_plain": {
        "old": [("user", "Project Alpha has a budget of $10,000 for the quarter.")],
        "new": [("user", "Project Beta has a budget of $20,000 for the quarter.")],
        "q": ["What is Project Alpha's budget?", "What is Project Beta's budget?"],
        "prev": None,
    },
    "sister": {
        "old": [("user", "I have 2 kids, both in primary school.")],
        "new": [("user", "My sister has 3 kids and they're coming over for the weekend, any game ideas?")],
        "q": ["How many kids do I have?"],
        "prev": None,
    },
    "plan": {
        "old": [("user", "I work out 3 times a week at the gym near my office.")],
        "new": [("user", "I'm thinking about maybe working out 5 times a week next year, is that too much?")],
        "q": ["How many times a week do I work out?"],
        "prev": None,
    },
    "salary_echo_long": {
        "old": [
            ("user", "I earn 52,000 euros a year as a junior data analyst."),
            ("assistant", "Got it, 52,000 euros a year as a junior data analyst."),
        ],
        "new": [
            (
                "user",
                "Good news first: after the review in January I got promoted, and my salary is now "
                "61,000 euros a year. I want to use the raise well. Could you help me plan how much to put "
                "into my emergency fund, how much into an index fund, and whether I should pay off my "
                "student loan faster? The loan is at 2.1% interest with 9,000 euros left.",
            )
        ],
        "q": ["What is my salary?", "How much do I earn a year?"],
        "prev": "What was my salary before the promotion?",
    },
    "employer": {
        "old": [
            ("user", "I work at Siemens as a controls engineer."),
            ("assistant", "Great, a controls engineer at Siemens."),
        ],
        "new": [
            (
                "user",
                "I started at Bosch last week, same kind of role, and I'm still learning their tooling. Any tips for the first 90 days?",
            )
        ],
        "q": ["Where do I work?", "Who is my employer?"],
        "prev": "Where did I work before?",
    },
    "diet": {
        "old": [("user", "I'm vegetarian, so please no meat in recipes.")],
        "new": [("user", "I've gone fully vegan since January, so no dairy or eggs either from now on.")],
        "q": ["What is my diet?", "Am I vegetarian or vegan?"],
        "prev": None,
    },
    "channel": {
        "old": [("user", "Email me the weekly summary, please.")],
        "new": [("user", "Actually, send me the weekly summary on Slack instead of email from now on.")],
        "q": ["How should you send me the weekly summary?"],
        "prev": None,
    },
    "standup": {
        "old": [("user", "Our daily standup is at 9:30 every morning.")],
        "new": [
            (
                "user",
                "The standup moved to 10:15 because of the new team in Lisbon, can you update my calendar notes?",
            )
        ],
        "q": ["What time is our standup?"],
        "prev": "What time was our standup before?",
    },
    "wife": {
        "old": [("user", "I work at Bosch in Stuttgart.")],
        "new": [("user", "My wife works at Porsche now, she started in May.")],
        "q": ["Where do I work?"],
        "prev": None,
    },
    "hypo": {
        "old": [("user", "My budget for the new bike is 800 euros.")],
        "new": [("user", "If my budget for the new bike were 1,500 euros, which model would you pick?")],
        "q": ["What is my budget for the new bike?"],
        "prev": None,
    },
    "zh_job": {
        "old": [("user", "我在腾讯做产品经理。")],
        "new": [
            ("user", "我上个月跳槽到字节跳动了，还是做产品，新团队节奏很快，你能帮我规划一下前三个月吗？")
        ],
        "q": ["我在哪家公司工作？"],
        "prev": "我以前在哪家公司工作？",
    },
    "cross_lang": {
        "old": [("user", "我住在杭州。")],
        "new": [("user", "I moved to Shanghai in March for the new job.")],
        "q": ["Where do I live?", "我住在哪里？"],
        "prev": None,
    },
    "weight": {
        "old": [("user", "I weigh 84 kg at the moment and want to get to 78.")],
        "new": [
            (
                "user",
                "Down to 80 kg this morning! Can you adjust my meal plan so I don't lose muscle while cutting the last two kilos?",
            )
        ],
        "q": ["How much do I weigh?", "What is my weight?"],
        "prev": "What did I weigh at the start?",
    },
}

TEST: dict[str, Scenario] = {
    "h_gym_fee": {
        "old": [
            ("user", "My gym membership costs 35 euros a month."),
            ("assistant", "Okay, 35 euros a month for the gym."),
        ],
        "new": [
            (
                "user",
                "They raised the price, the gym is 42 euros a month now. Should I switch to the one near work?",
            )
        ],
        "q": ["How much is my gym membership?"],
        "prev": "What did my gym membership cost before the price rise?",
    },
    "h_laptop": {
        "old": [("user", "I'm coding on a 2019 MacBook Pro with 16 GB of RAM.")],
        "new": [
            (
                "user",
                "I replaced the old MacBook with a ThinkPad X1 Carbon with 32 GB of RAM last month, and now Docker builds are much faster. How do I set up pyenv on it?",
            )
        ],
        "q": ["What laptop do I use?", "How much RAM does my laptop have?"],
        "prev": None,
    },
    "h_team_size": {
        "old": [("user", "I manage a team of 6 engineers.")],
        "new": [
            (
                "user",
                "We hired two more people, so I'm managing 8 engineers now. How should I run one-on-ones without losing a whole day every week?",
            )
        ],
        "q": ["How many engineers do I manage?"],
        "prev": "How many engineers did I manage originally?",
    },
    "h_colleague": {
        "old": [("user", "I commute 45 minutes each way by train.")],
        "new": [
            (
                "user",
                "My colleague Priya commutes 90 minutes each way, poor her. Any book recommendations I could pass on to her?",
            )
        ],
        "q": ["How long is my commute?"],
        "prev": None,
        "both_true": True,
    },
    "h_zh_salary": {
        "old": [("user", "我现在月薪一万五。")],
        "new": [("user", "年初调薪了，现在月薪一万八。我想开始定投指数基金，每个月投多少比较合适？")],
        "q": ["我的月薪是多少？"],
        "prev": "我原来的月薪是多少？",
    },
    "h_deadline": {
        "old": [("user", "The thesis deadline is June 30.")],
        "new": [
            (
                "user",
                "Good news, my supervisor extended the thesis deadline to August 15, so I have time to redo chapter 4. Can you help me outline it?",
            )
        ],
        "q": ["When is my thesis deadline?"],
        "prev": "What was the original thesis deadline?",
    },
    "h_plan_only": {
        "old": [("user", "I sleep about 6 hours a night.")],
        "new": [
            ("user", "I want to sleep 8 hours a night starting next month. What evening routine would help?")
        ],
        "q": ["How many hours do I sleep a night?"],
        "prev": None,
        "both_true": True,
    },
    "h_bike_count": {
        "old": [("user", "I own three bikes: a road bike, a gravel bike and an old city bike.")],
        "new": [
            (
                "user",
                "I sold the old city bike at the flea market, so I'm down to two bikes. Which one should I take on the ferry to the islands?",
            )
        ],
        "q": ["How many bikes do I own?"],
        "prev": None,
    },
}


def _lang(texts: list[str]) -> str:
    zh = [any("\u4e00" <= ch <= "\u9fff" for ch in t) for t in texts]
    return "zh" if all(zh) else "mixed" if any(zh) else "en"


def conversation(name: str, sc: Scenario, split: str) -> dict[str, Any]:
    """One scenario as a conversation of the updates sets' layout, with its labelled pairs."""
    cid = f"uag-{name}"
    sessions = [
        ("s1", sc["old"] + FILLER[:2], T0),
        ("s2", FILLER[2:], T0 + timedelta(days=10)),
        ("s3", sc["new"] + FILLER[:1], T0 + timedelta(days=40)),
    ]
    turns, ids = [], {}
    for session, said, start in sessions:
        for i, (role, content) in enumerate(said):
            tid = f"{cid}-{session}-{i}"
            ids[(session, i)] = tid
            turns.append(
                {
                    "turn_id": tid,
                    "session_id": f"{cid}-{session}",
                    "role": role,
                    "speaker": "Ana" if role == "user" else "Aide",
                    "content": content,
                    "ts": (start + timedelta(minutes=i)).isoformat(),
                }
            )
    old = [ids[("s1", i)] for i in range(len(sc["old"]))]
    new = [ids[("s3", 0)]]
    texts = [t for _, t in sc["old"] + sc["new"]]
    questions = [(q, "current") for q in sc["q"] if q not in SKIP_QUESTIONS]
    if sc.get("prev"):
        questions.append((sc["prev"], "previous"))
    pairs = []
    for n, (q, asks) in enumerate(questions, start=1):
        lang = _lang([*texts, q])
        base = {"pair_id": f"{cid}-p{n:02d}", "lang": lang, "rule_table": name in RULE_TABLE, "question": q}
        if name in LOOKALIKES:
            # The older statement holds; the newer one is another's value, a plan or a hypothetical.
            pairs.append(
                {
                    **base,
                    "label": "lookalike",
                    "lookalike_kind": LOOKALIKES[name],
                    "old_turns": old[:1],
                    "new_turns": new,
                    "evidence": old[:1],
                }
            )
        elif asks == "previous":
            # The wanted statement is listed as "new" (what must come first), as `bench.sets.updates_long` does.
            pairs.append(
                {**base, "label": "update", "asks": "previous", "old_turns": new, "new_turns": old[:1]}
            )
        else:
            pairs.append({**base, "label": "update", "asks": "current", "old_turns": old, "new_turns": new})
    return {
        "conversation_id": cid,
        "split": split,
        "shape": "agent_chat",
        "lang": _lang(texts),
        "agent_id": "agent",
        "user_id": name,
        "speakers": {"user": "Ana", "assistant": "Aide"},
        "turns": turns,
        "pairs": pairs,
    }


def build() -> list[dict[str, Any]]:
    return [conversation(n, sc, "dev") for n, sc in DEV.items()] + [
        conversation(n, sc, "test") for n, sc in TEST.items()
    ]


if __name__ == "__main__":
    write_json_set(PATH, build())
    print(f"wrote {PATH}")
