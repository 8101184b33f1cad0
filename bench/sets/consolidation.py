"""A labelled consolidation set (issue 27): what a person would fold into one memory, turn by turn.

Four users of one assistant ("concierge"), each a scope (agent, user) of their own, since memories never
cross scopes. Each user has 10-12 topics, the kinds of things people tell an assistant (how to answer,
diet, family, pets, work, travel plans, tools, schedule, health, budgets, where they live), and each
topic is 3-6 turns that say the same thing or tell one story in different words, across sessions:

- maya: English.
- chen-jia: English and Chinese, some topics mixed, some wholly Chinese (issue 27's concierge scenario:
  a move from Hangzhou to Shanghai, an offsite budget of 50,000 then 80,000 yuan).
- lin-wei: wholly Chinese.
- tomas: English, lowercase and typos.

A fact topic is one attribute of the user whose value may change over time ("offsite_budget": 50,000
yuan, then 80,000 yuan); all the turns of one attribute are one topic, and each of its turns that states
a value carries it (`value`), old values first. The design's brevity example is maya's "brevity" topic,
verbatim: "I don't like long answers", "can you be shorter", "too wordy", "just the point" → "The user
prefers short, direct answers". A few turns are the assistant's (a confirmation belongs to its topic).

Distractors belong to no topic (`topic` null): unrelated turns (greetings, a unit conversion, a joke)
and near misses, which share words with a topic but are about something else ("Obsidian the volcanic
glass", a neighbour's kid's nut allergy); `near` names the topic a near miss borrows from.

The file is a JSON list with one object per user: its topics (label, attribute, language, the memory a
person would write) and its turns in time order (turn id, role, content, ts, session, topic, attribute,
value, near). Sessions and the order of turns come from a seeded `random.Random`: no clock, no network,
no hash order. `python -m bench.sets.consolidation` rewrites bench/data/consolidation.json.gz.
"""

from __future__ import annotations

import gzip
import json
import random
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.sets.common import SETS_DIR

SEED = 27_2026
AGENT = "concierge"
PATH = SETS_DIR.parent / "consolidation.json.gz"  # beside, not among, the LoCoMo-shaped sets
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")

# (role, text, value stated or None)
Line = tuple[str, str, str | None]
Block = tuple[Line, ...]  # turns that stay together, in this order (a statement and its confirmation)


def u(text: str, value: str | None = None) -> Block:
    return (("user", text, value),)


def a(text: str, value: str | None = None) -> Line:
    return ("assistant", text, value)


@dataclass(frozen=True)
class Topic:
    key: str  # unique within its user; the label is "<user>/<key>"
    memory: str  # the memory a person would write from these turns
    blocks: tuple[Block, ...]
    attribute: str | None = None  # a fact topic: the one attribute all its turns are about
    ordered: bool = False  # the blocks keep their order (a value that changes, a story that unfolds)


@dataclass(frozen=True)
class Distractor:
    block: Block
    near: str | None = None  # the topic key a near miss borrows words from


@dataclass(frozen=True)
class User:
    user_id: str
    about: str
    start: datetime
    topics: tuple[Topic, ...]
    distractors: tuple[Distractor, ...]


def near(key: str, text: str, role: str = "user") -> Distractor:
    return Distractor(((role, text, None),), key)


def other(text: str, role: str = "user") -> Distractor:
    return Distractor(((role, text, None),))


# ---------------------------------------------------------------------------------------------------------
# maya: English
# ---------------------------------------------------------------------------------------------------------

MAYA = User(
    "maya",
    "English",
    datetime(2026, 3, 2, tzinfo=UTC),
    (
        Topic(
            "brevity",
            "The user prefers short, direct answers.",
            # The design's example, verbatim.
            (u("I don't like long answers"), u("can you be shorter"), u("too wordy"), u("just the point")),
            attribute="answer_style",
        ),
        Topic(
            "diet",
            "The user is vegan (vegetarian until March).",
            (
                u("I'm vegetarian btw, so skip the meat options.", "vegetarian"),
                u("Reminder that I don't eat meat or fish when you pick restaurants", "vegetarian"),
                u(
                    "Update on the food front: I've gone fully vegan since March, so no dairy or eggs either.",
                    "vegan",
                ),
                u("I'm vegan now, can you check if that dessert has butter in it?", "vegan"),
            ),
            attribute="diet",
            ordered=True,
        ),
        Topic(
            "dog",
            "The user has a three-year-old beagle named Biscuit.",
            (
                u("My dog Biscuit is a three-year-old beagle."),
                u("Biscuit has his vet appointment on Friday for the rabies booster."),
                u("biscuit chewed through my laptop charger AGAIN"),
                u("Can you find a dog-friendly cafe near the river? I'll have Biscuit with me."),
                u("What's a good chew toy for a beagle who destroys everything?"),
            ),
        ),
        Topic(
            "employer",
            "The user works at Northwind Logistics (before: Lumen Health).",
            (
                u("I work at Lumen Health, on the analytics team.", "Lumen Health"),
                u("my job at Lumen is basically SQL and dashboards nobody reads", "Lumen Health"),
                u("Big news: I got hired at Northwind Logistics, I start on Monday!", "Northwind Logistics"),
                u("First week at Northwind done. The data team there is great.", "Northwind Logistics"),
            ),
            attribute="employer",
            ordered=True,
        ),
        Topic(
            "lisbon_trip",
            "The user is going to Lisbon with her sister, 12-19 October.",
            (
                u("I'm planning a trip to Lisbon in October with my sister."),
                u("For Lisbon I'd like a hotel in Alfama, under 150 euros a night."),
                (
                    ("user", "Our flights are booked: TAP, 12 to 19 October.", None),
                    a("Great, I've noted your Lisbon dates: 12-19 October."),
                ),
                u("are day trips from lisbon to sintra worth it?"),
            ),
            ordered=True,
        ),
        Topic(
            "allergy",
            "The user is allergic to peanuts.",
            (
                u("I'm allergic to peanuts."),
                u("peanut allergy here, so please check the sauces"),
                u("No satay for me, I react badly to anything with peanuts."),
            ),
            attribute="allergy",
        ),
        Topic(
            "half_marathon",
            "The user is training for the Porto half marathon in November.",
            (
                u("I'm training for the Porto half marathon in November."),
                u("Ran 14 km this morning, knees held up fine."),
                u("What should I eat the night before a long run?"),
                u("My training plan has four runs a week, one of them a long run on sunday"),
            ),
        ),
        Topic(
            "availability",
            "The user is free for calls only after 4 pm on weekdays.",
            (
                u("I'm only free for calls after 4pm on weekdays."),
                u("Mornings don't work for me, I have stand-ups until noon."),
                u("pls dont book anything before 4 pm, my calendar is packed"),
            ),
            attribute="availability",
        ),
        Topic(
            "notes_app",
            "The user keeps her notes in Obsidian.",
            (
                u("I keep all my notes in Obsidian."),
                u("Can you format this as markdown so I can paste it into Obsidian?"),
                u("My Obsidian vault syncs through iCloud, so it's on my phone too."),
            ),
            attribute="notes_app",
        ),
        Topic(
            "mom_surgery",
            "The user's mother had knee surgery and is recovering at home.",
            (
                u("My mom is having knee surgery on the 3rd."),
                u("Mom's knee operation went well, she's home now."),
                u("Any ideas for helping my mum recover after knee surgery? She's bored out of her mind."),
            ),
            ordered=True,
        ),
        Topic(
            "scifi",
            "The user loves science fiction, especially Ursula K. Le Guin.",
            (
                u("I love sci-fi novels, especially Ursula K. Le Guin."),
                u("Just finished The Dispossessed and loved it."),
                u("Recommend me some science fiction like Le Guin?"),
                u("my book club is reading The Left Hand of Darkness next, my pick"),
            ),
        ),
        Topic(
            "laptop_budget",
            "The user's budget for a new laptop is 1800 euros (was 1500).",
            (
                u("My budget for the new laptop is 1500 euros.", "1500 euros"),
                u("Looking at laptops for data work, keep it around 1500 euros max", "1500 euros"),
                u(
                    "Ok I can spend up to 1800 euros on the laptop after all, the old one died completely.",
                    "1800 euros",
                ),
            ),
            attribute="laptop_budget",
            ordered=True,
        ),
    ),
    (
        other("hi!"),
        other("thanks, that's perfect"),
        other("What's a 15% tip on 84 euros?"),
        other("Convert 10 miles to km"),
        other("Tell me a joke about statisticians"),
        other("Sure, here are three options to choose from.", "assistant"),
        other("You're welcome! Anything else I can help with?", "assistant"),
        near("brevity", "My coworker gives really long answers in every meeting, it drives everyone crazy."),
        near("dog", "Are biscuits and cookies the same thing in British English?"),
        near("lisbon_trip", "Is Lisbon or Porto the older city?"),
        near("laptop_budget", "What's a typical budget for a student laptop these days?"),
        near("half_marathon", "The marathon world record is just over two hours, right?"),
        near("allergy", "My neighbour's kid has a nut allergy, what snacks can I bring to the party?"),
        near("notes_app", "Obsidian the volcanic glass, how is it formed?"),
    ),
)

# ---------------------------------------------------------------------------------------------------------
# chen-jia: English and Chinese (issue 27's concierge scenario)
# ---------------------------------------------------------------------------------------------------------

CHEN_JIA = User(
    "chen-jia",
    "English and Chinese: some topics mixed, some wholly Chinese",
    datetime(2026, 4, 6, tzinfo=UTC),
    (
        Topic(
            "residence",
            "The user lives in Shanghai, in Xuhui district; before that in Hangzhou.",
            (
                u("I live in Hangzhou, near West Lake.", "Hangzhou"),
                u("我家在杭州西湖边上，周末经常去湖边散步", "Hangzhou"),
                u("Big news: I moved to Shanghai last week, I'm now living in Xuhui district.", "Shanghai"),
                u("我已经搬到上海了，现在住徐汇，离公司近多了", "Shanghai"),
                u("Please use my Shanghai address from now on, I'm not in Hangzhou anymore.", "Shanghai"),
            ),
            attribute="residence",
            ordered=True,
        ),
        Topic(
            "offsite_budget",
            "The team offsite budget is 80,000 yuan (was 50,000).",
            (
                u("The team offsite budget is 50,000 yuan.", "50,000 yuan"),
                u("团建预算是五万元，大概二十个人", "50,000 yuan"),
                (
                    (
                        "user",
                        "Update: the board approved a bigger offsite, the budget is now 80,000 yuan.",
                        "80,000 yuan",
                    ),
                    a("Understood, the offsite budget is now 80,000 yuan.", "80,000 yuan"),
                ),
                u("团建预算改成八万了，找场地按这个标准来", "80,000 yuan"),
            ),
            attribute="offsite_budget",
            ordered=True,
        ),
        Topic(
            "occupation",
            "The user is a product manager at a fintech startup.",
            (
                u("I work as a product manager at a fintech startup."),
                u("作为产品经理，我每周都要写好几份需求文档"),
                u("PM life: three roadmap reviews this week, send help"),
            ),
            attribute="occupation",
        ),
        Topic(
            "brevity_zh",
            "The user wants short answers that get to the point.",
            (
                u("回答请简短一点"),
                u("太啰嗦了，说重点"),
                u("别写那么长，我在手机上看"),
                u("直接给结论就行，不用解释"),
            ),
            attribute="answer_style",
        ),
        Topic(
            "offsite_venue",
            "The user is planning the team offsite at Moganshan in June: rooms, a meeting room and a BBQ.",
            (
                u("We're planning the team offsite at Moganshan in June."),
                u("莫干山有没有能住二十个人的民宿？"),
                u("For the offsite we need a meeting room and somewhere to do a BBQ."),
                u("团建的活动安排：第一天徒步，第二天开会"),
            ),
            ordered=True,
        ),
        Topic(
            "coffee",
            "The user drinks iced americano without sugar.",
            (
                u("我喜欢喝美式咖啡，不加糖"),
                u("早上一杯冰美式是必须的"),
                u("Order me an iced americano, no sugar, as usual."),
            ),
            attribute="coffee_order",
        ),
        Topic(
            "son_school",
            "The user's six-year-old son starts primary school in September.",
            (
                u("我儿子今年九月上小学一年级"),
                u("儿子学校周四晚上开家长会"),
                u("Can you find an after-school English class for my son? He's six."),
                u("儿子的校服要在开学前买好，提醒我一下"),
            ),
        ),
        Topic(
            "parents_visit",
            "The user's parents visit from Chengdu in May; they like spicy food.",
            (
                u("我爸妈下个月从成都来上海看我们"),
                u("帮我订爸妈的高铁票，成都到上海，五月三号"),
                u("爸妈喜欢吃辣，推荐几家好一点的川菜馆"),
            ),
            ordered=True,
        ),
        Topic(
            "blood_pressure",
            "The user's blood pressure is slightly high and they are cutting down on salt.",
            (
                u("医生说我血压有点高，要少吃盐"),
                u("Blood pressure was 135/88 this morning, a bit better than last week."),
                u("给我推荐一些少盐的家常菜谱"),
            ),
        ),
        Topic(
            "feishu",
            "The user's team works in Feishu, not WeChat.",
            (
                u("我们团队用飞书沟通，不用微信"),
                u("Send me the meeting notes in a format I can paste into Feishu."),
                u("飞书上找我比较快，微信我不怎么看"),
            ),
            attribute="work_chat_tool",
        ),
    ),
    (
        other("你好"),
        other("thanks!"),
        other("What's the exchange rate from USD to RMB today?"),
        other("帮我把这句话翻译成英文：明天见"),
        other("好的，翻译是：See you tomorrow.", "assistant"),
        other("Here is a short checklist you can reuse.", "assistant"),
        near("residence", "杭州亚运会是哪一年举办的？"),
        near("residence", "My colleague just moved house, what's a good housewarming gift?"),
        near("residence", "上海今天会下雨吗？"),
        near("offsite_budget", "The new Marvel movie had a budget of 200 million dollars, crazy."),
        near("occupation", "我朋友想转行做产品经理，有什么书推荐吗？"),
        near("brevity_zh", "这篇文章写得太啰嗦了，帮我总结一下"),
        near("coffee", "咖啡渣可以用来养花吗？"),
    ),
)

# ---------------------------------------------------------------------------------------------------------
# lin-wei: wholly Chinese
# ---------------------------------------------------------------------------------------------------------

LIN_WEI = User(
    "lin-wei",
    "Chinese",
    datetime(2026, 5, 11, tzinfo=UTC),
    (
        Topic(
            "residence",
            "用户现在住在深圳南山区（之前住在成都）。",
            (
                u("我住在成都高新区", "成都"),
                u("成都的房子是租的，在天府三街附近", "成都"),
                u("我已经搬到深圳了，现在住在南山区", "深圳"),
                u("我现在不住成都了，以后寄东西请寄到深圳的地址", "深圳"),
            ),
            attribute="residence",
            ordered=True,
        ),
        Topic(
            "cat",
            "用户养了一只三岁的橘猫，叫团子。",
            (
                u("我家猫叫团子，是一只橘猫"),
                u("团子最近不爱吃饭，要不要带它去看兽医？"),
                u("给团子买什么猫粮比较好？它三岁了"),
                u("团子今天打完疫苗了，有点蔫"),
            ),
        ),
        Topic(
            "allergy",
            "用户对海鲜过敏，尤其是虾。",
            (
                u("我对海鲜过敏，尤其是虾"),
                u("点菜的时候记得别点虾和蟹"),
                u("上次吃了虾，全身起疹子，以后一定要避开"),
            ),
            attribute="allergy",
        ),
        Topic(
            "rent_budget",
            "用户的租房预算是每月八千（之前是六千）。",
            (
                u("租房预算每个月六千以内", "6000"),
                u("找房子的话，月租别超过六千", "6000"),
                u("房租预算可以提高到八千了，想住得离地铁近一点", "8000"),
            ),
            attribute="rent_budget",
            ordered=True,
        ),
        Topic(
            "japanese",
            "用户在学日语，准备十二月考N2。",
            (
                u("我在学日语，准备考N2"),
                u("日语N2考试是十二月第一个周日"),
                u("帮我出几道日语语法题，N2水平的"),
                u("今天背了五十个日语单词，感觉记不住"),
            ),
        ),
        Topic(
            "yoga",
            "用户每周三晚上上瑜伽课（之前是周二和周四）。",
            (
                u("我每周二和周四晚上上瑜伽课", "周二、周四晚上"),
                u("周二晚上有瑜伽课，别给我安排会议", "周二、周四晚上"),
                u("瑜伽课改到周三晚上了，周二周四可以约了", "周三晚上"),
            ),
            attribute="yoga_schedule",
            ordered=True,
        ),
        Topic(
            "work",
            "用户在一家游戏公司画角色原画，最近经常加班。",
            (
                u("我在一家游戏公司做美术设计"),
                u("我是做原画的，主要画角色"),
                u("最近项目赶进度，天天加班到十点"),
                u("我们组下周要交新角色的原画，压力好大"),
            ),
        ),
        Topic(
            "yunnan_trip",
            "用户国庆（10月1日至7日）要带家里老人去云南。",
            (
                u("国庆想去云南玩一周"),
                u("大理和丽江哪个更适合带老人去？"),
                u("云南行程帮我排一下，十月一号出发，七号回来"),
                u("去云南要带厚衣服吗？听说早晚温差大"),
            ),
        ),
        Topic(
            "sleep",
            "用户最近失眠，在想办法改善睡眠。",
            (
                u("最近总是失眠，凌晨两三点才睡着"),
                u("有什么改善睡眠的办法吗？"),
                u("医生建议我睡前一小时不要看手机"),
            ),
        ),
        Topic(
            "language",
            "用户希望用中文回答。",
            (u("请用中文回答我"), u("以后都用中文回复吧"), u("别用英文回答，我看中文快一点")),
            attribute="language",
        ),
        Topic(
            "mom_birthday",
            "用户的妈妈下周六过六十岁生日。",
            (
                u("下周六是我妈妈六十岁生日"),
                u("帮我给妈妈挑个生日礼物，两千块左右"),
                u("妈妈的生日宴订在外婆家附近的饭店了"),
            ),
            ordered=True,
        ),
    ),
    (
        other("在吗"),
        other("谢谢！"),
        other("一公里等于多少英里？"),
        other("讲个笑话吧"),
        other("帮我算一下37乘以48"),
        other("好的，还有什么需要帮忙的吗？", "assistant"),
        near("cat", "糯米团子怎么做才软？"),
        near("residence", "深圳今天会下雨吗？"),
        near("allergy", "我朋友对花粉过敏，春天有什么要注意的？"),
        near("language", "中文和日文里的汉字意思一样吗？"),
        near("yoga", "瑜伽和普拉提有什么区别？"),
        near("yunnan_trip", "云南白药是干什么用的？"),
    ),
)

# ---------------------------------------------------------------------------------------------------------
# tomas: English, lowercase and typos
# ---------------------------------------------------------------------------------------------------------

TOMAS = User(
    "tomas",
    "English, informal, typos",
    datetime(2026, 6, 1, tzinfo=UTC),
    (
        Topic(
            "timezone",
            "The user is on US Central time.",
            (
                u("I'm on US Central time."),
                u("my timezone is CST so pls schedule in that"),
                u("fyi im in central time, not eastern"),
            ),
            attribute="timezone",
        ),
        Topic(
            "civic",
            "The user drives a 2015 Honda Civic; its brakes were just replaced.",
            (
                u("My car is a 2015 Civic and it needs new brakes."),
                u("the civics brakes are squeaking again"),
                u("Garage quoted $400 for brake pads and rotors, is that a ripoff?"),
                u("ok civic is fixed, brakes feel great now"),
            ),
            ordered=True,
        ),
        Topic(
            "side_project",
            "The user is building a budgeting app in Flutter as a side project.",
            (
                u("I'm building a budgeting app in Flutter on weekends."),
                u("my flutter app crashes on startup on android 14, any idea?"),
                u("The budgeting app side project just hit 50 users!!"),
                u("should i add bank sync to my budgeting app or keep it manual"),
            ),
        ),
        Topic(
            "wedding",
            "The user is marrying Ana next May at a vineyard near Fredericksburg.",
            (
                u("My fiancee Ana and I are getting married next May."),
                u("Wedding venue is booked: a vineyard outside Fredericksburg."),
                u("Ana wants a small wedding, like 60 guests max"),
                u("need ideas for wedding favors that arent tacky"),
            ),
        ),
        Topic(
            "caffeine",
            "The user has quit caffeine and drinks only decaf.",
            (
                u("I quit coffee last month."),
                u("no caffeine for me anymore, decaf only pls"),
                u("Switched to decaf and honestly sleeping way better"),
            ),
            attribute="caffeine",
        ),
        Topic(
            "code_language",
            "The user wants code examples in Python.",
            (
                u("Please give me code examples in Python."),
                u("i prefer python over javascript for examples"),
                u("always show code in python pls, I cant read ruby"),
            ),
            attribute="code_language",
        ),
        Topic(
            "gym",
            "The user lifts weights Monday, Wednesday and Friday at 6 am.",
            (
                u("I lift weights Mon/Wed/Fri at 6am."),
                u("skipped the gym today, my lower back hurts"),
                u("Can you make me a 3-day strength program?"),
            ),
        ),
        Topic(
            "grocery_budget",
            "The user's grocery budget is $350 a month (was $400).",
            (
                u("I'm trying to keep groceries under $400 a month.", "$400"),
                u("grocery budget is 400/month, help me plan meals around that", "$400"),
                u("Cutting the grocery budget to $350 a month, prices are insane", "$350"),
                u("with the new 350 grocery budget, what cheap dinners can I batch cook?", "$350"),
            ),
            attribute="grocery_budget",
            ordered=True,
        ),
        Topic(
            "sister_visit",
            "The user's sister Lucia visits from Madrid next week; she lands Thursday 5 pm at AUS.",
            (
                u("My sister Lucia is visiting from Madrid next week."),
                u("Need a restaurant for Lucia's visit, she's vegetarian."),
                u("Lucia lands at AUS on thursday at 5pm, can u remind me?"),
            ),
        ),
        Topic(
            "band",
            "The user plays bass in a cover band.",
            (
                u("I play bass in a cover band."),
                u("band practise is on sundays at our drummer's garage"),
                u("We've got a gig at the Mohawk on the 14th!"),
                u("what strings do you recomend for a 4-string bass?"),
            ),
        ),
        Topic(
            "contact",
            "The user wants to be reached by SMS, not email.",
            (
                u("Text me instead of email, I never check my inbox."),
                u("pls send reminders by sms"),
                u("SMS is the best way to reach me"),
            ),
            attribute="contact_channel",
        ),
        Topic(
            "residence",
            "The user lives in Round Rock (before: Austin).",
            (
                u("I live in Austin, in the Mueller neighborhood.", "Austin"),
                u("We just moved to Round Rock, finally a yard!", "Round Rock"),
                u("new address is in round rock now, update it pls", "Round Rock"),
            ),
            attribute="residence",
            ordered=True,
        ),
    ),
    (
        other("yo"),
        other("thx"),
        other("whats the capital of australia"),
        other("convert 72F to celsius"),
        other("lol ok"),
        other("Here's a quick summary of the steps.", "assistant"),
        near("grocery_budget", "what's the best way to budget, like the envelope system?"),
        near("caffeine", "Coffee stains on a white shirt, how do I get them out?"),
        near("band", "My friend's band broke up after ten years, kinda sad"),
        near("timezone", "does chicago use central time too?"),
        near("wedding", "whats a normal gift amount for a coworker's wedding?"),
        near("code_language", "python snakes, are any of them venomous?"),
    ),
)

USERS = (MAYA, CHEN_JIA, LIN_WEI, TOMAS)


# ---------------------------------------------------------------------------------------------------------
# Scheduling: sessions, then turns within them
# ---------------------------------------------------------------------------------------------------------


def language(texts: list[str]) -> str:
    """'zh' when every text is mostly Chinese, 'en' when none has Chinese, else 'mixed'."""
    zh = [len(CJK.findall(t)) >= len(LATIN_WORD.findall(t)) and bool(CJK.search(t)) for t in texts]
    return "zh" if all(zh) else "en" if not any(zh) else "mixed"


def schedule(user: User, rng: random.Random) -> list[dict[str, Any]]:
    """Every turn of the user with its session and ts. A topic's blocks land in sessions in order (an
    ordered topic's in its own order, the others shuffled first), and within a session the blocks of
    different topics and the distractors interleave at random while each topic keeps its order."""
    n_sessions = rng.randint(7, 9)
    starts: list[datetime] = []
    day = user.start
    for _ in range(n_sessions):
        day += timedelta(days=rng.randint(2, 6))
        starts.append(day.replace(hour=rng.randint(8, 21), minute=rng.randint(0, 59)))
    # session -> queues of (topic or None, near key, block), one queue per topic and one per distractor
    queues: list[list[list[tuple[Topic | None, str | None, Block]]]] = [[] for _ in range(n_sessions)]
    for topic in user.topics:
        blocks = list(topic.blocks)
        if not topic.ordered:
            rng.shuffle(blocks)
        # Spread over sessions: a topic comes back across weeks, sometimes twice in one session.
        sessions = sorted(rng.randrange(n_sessions) for _ in blocks)
        by_session: dict[int, list[tuple[Topic | None, str | None, Block]]] = {}
        for s, block in zip(sessions, blocks, strict=True):
            by_session.setdefault(s, []).append((topic, None, block))
        for s, queue in sorted(by_session.items()):
            queues[s].append(queue)
    for d in user.distractors:
        queues[rng.randrange(n_sessions)].append([(None, d.near, d.block)])
    turns: list[dict[str, Any]] = []
    for s, (start, session_queues) in enumerate(zip(starts, queues, strict=True), start=1):
        ts = start
        live = [q for q in session_queues if q]
        while live:
            queue = live[rng.randrange(len(live))]
            of, near_key, block = queue.pop(0)
            for role, text, value in block:
                ts += timedelta(minutes=rng.randint(1, 6), seconds=rng.randint(0, 59))
                turns.append(
                    {
                        "turn_id": f"{user.user_id}-{len(turns) + 1:03d}",
                        "role": role,
                        "content": text,
                        "ts": ts.isoformat(),
                        "session": f"{user.user_id}-s{s}",
                        "topic": None if of is None else f"{user.user_id}/{of.key}",
                        "attribute": None if of is None else of.attribute,
                        "value": value,
                        "near": None if near_key is None else f"{user.user_id}/{near_key}",
                    }
                )
            live = [q for q in live if q]
    return turns


def build(user: User, rng: random.Random) -> dict[str, Any]:
    topics = [
        {
            "topic": f"{user.user_id}/{t.key}",
            "attribute": t.attribute,
            "lang": language([text for block in t.blocks for _, text, _ in block]),
            "memory": t.memory,
            "turns": sum(len(block) for block in t.blocks),
        }
        for t in user.topics
    ]
    return {
        "agent_id": AGENT,
        "user_id": user.user_id,
        "about": user.about,
        "topics": topics,
        "turns": schedule(user, rng),
    }


def check(user: User) -> None:
    """The shape the set promises: 3-6 turns a topic, unique topic keys, near misses that name a topic of
    their own user, and values only on fact topics."""
    keys = [t.key for t in user.topics]
    problems = [f"duplicate topic keys {keys}"] if len(keys) != len(set(keys)) else []
    for t in user.topics:
        n = sum(len(block) for block in t.blocks)
        if not 3 <= n <= 6:
            problems.append(f"{t.key}: {n} turns")
        if t.attribute is None and any(v is not None for block in t.blocks for _, _, v in block):
            problems.append(f"{t.key}: a value on a topic without an attribute")
    problems += [
        f"near miss of unknown topic {d.near}" for d in user.distractors if d.near not in (None, *keys)
    ]
    if problems:
        raise ValueError(f"{user.user_id}: {'; '.join(problems)}")


def generate() -> list[dict[str, Any]]:
    """The four users' topics and turns, the same on every run."""
    rng = random.Random(SEED)
    for user in USERS:
        check(user)
    return [build(user, rng) for user in USERS]


def write(path: Path, data: list[dict[str, Any]]) -> None:
    """Gzipped JSON, byte-identical for the same data (mtime 0), as bench.sets.common.write_set."""
    raw = json.dumps(data, ensure_ascii=False, indent=None, sort_keys=False).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out, gzip.GzipFile(fileobj=out, mode="wb", mtime=0, filename="") as gz:
        gz.write(raw)


def main() -> None:
    data = generate()
    write(PATH, data)
    topics = sum(len(d["topics"]) for d in data)
    turns = sum(len(d["turns"]) for d in data)
    distractors = sum(t["topic"] is None for d in data for t in d["turns"])
    print(f"{PATH}: {len(data)} users, {topics} topics, {turns} turns ({distractors} distractors)")


if __name__ == "__main__":
    main()
