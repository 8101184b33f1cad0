"""Short informal messenger chats between two friends, some in English, some mixing English and Chinese.

Unlike LoCoMo's long polished turns, a turn here is a text message: a few words, lowercase, typos,
emoji, one thought split over several messages, replies that only make sense after the message before
("yes!! twice"), and a lot of filler ("haha", "ok", "good night"). Real information is mentioned in
passing, inside small scripted episodes ("arcs"): a move whose city changes, a new phone number, a job
offer accepted then declined, a kitten, a sick parent, a bargain. Each arc is a template with slots
filled from pools, spread over several sessions (a session is one day's burst of messages), and
carries the questions someone would later ask about it, with the turns that hold the answer.

Questions are written apart from the messages (paraphrased, other words), and the arcs carry
distractors (a cousin's move, a work number, someone else's ticket price). Everything is drawn from
one seeded `random.Random`: no clock, no network, no set or hash order.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from bench.sets.common import Conversation

SEED = 20250611
ARC_LINES_PER_SESSION = 26  # arc lines one session may hold (the rest is filler; a session is <= 40)
MAX_SESSION = 40

# --------------------------------------------------------------------------------------------------
# Templates: a small script language.
#
#   A: text [key]        a message by the arc's subject (A) or the other friend (B); [key] (or [k1,k2])
#                        names it for evidence; several lines may share a key
#   --- +N | +mN         the next part, in a later session at least N days later, or in a session on or
#                        after the 1st of the month N months after the previous part's month
#   ===                  then questions: `category | question || alternative | answer | key key`
#
# Slots: {A} and {B} are the friends' names, {name} a value drawn from the template's pool for that
# slot (distinct within a conversation). In messages, {mon+N} / {cmon+N} is the month N months after
# the session ("march" / "3月"), {wd+N} / {cwd+N} the weekday N days after it ("friday" / "周五").
# In questions and answers, {date:key+N}, {month:key+N}, {cdate:key+N}, {cmonth:key+N} are the date (or
# the month, N months on) of the session holding key's first line, {gap:k1:k2} the time between two.
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Template:
    name: str
    lang: str  # "en" | "zh": which conversations draw it
    group: str  # at most one template of a group per conversation (two bosses would contradict)
    slots: tuple[tuple[str, str], ...]  # (slot, pool)
    script: str


@dataclass
class Line:
    who: str  # "A" | "B"
    text: str
    keys: tuple[str, ...]


@dataclass
class Part:
    gap_days: int
    gap_months: int
    lines: list[Line]


@dataclass
class Ask:
    category: str
    question: str
    answer: str
    keys: tuple[str, ...]


@dataclass
class Arc:
    """A template instantiated for one conversation: slots filled, A and B mapped to the friends."""

    name: str
    parts: list[Part]
    asks: list[Ask]
    sessions: list[int] = field(default_factory=list)  # where each part was placed


_LINE = re.compile(r"^([AB]):\s*(.*?)\s*(?:\[([\w,]+)\])?$")
_GAP = re.compile(r"^---\s*(?:\+(m?)(\d+))?$")
_SLOT = re.compile(r"\{([A-Za-z]\w*)\}")
_TEXT_DATE = re.compile(r"\{(mon|cmon|wd|cwd)([+-]\d+)\}")
_QA_DATE = re.compile(r"\{(date|month|cdate|cmonth):(\w+?)([+-]\d+)?\}")
_QA_GAP = re.compile(r"\{gap:(\w+):(\w+)\}")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
CN_WEEKDAYS = ("周一", "周二", "周三", "周四", "周五", "周六", "周日")


def parse_script(template: Template) -> tuple[list[Part], list[Ask]]:
    """The parts and questions of a template's script (slots still unfilled)."""
    body, _, questions = template.script.partition("\n===\n")
    parts = [Part(0, 0, [])]
    for raw in body.strip().splitlines():
        row = raw.strip()
        if not row:
            continue
        if gap := _GAP.match(row):
            months, n = gap.group(1), int(gap.group(2) or 0)
            parts.append(Part(0 if months else n, n if months else 0, []))
            continue
        m = _LINE.match(row)
        if not m:
            raise ValueError(f"{template.name}: not a script line: {row!r}")
        keys = tuple(k for k in (m.group(3) or "").split(",") if k)
        parts[-1].lines.append(Line(m.group(1), m.group(2), keys))
    asks = [_parse_ask(template.name, row) for row in questions.strip().splitlines() if row.strip()]
    known = {k for p in parts for line in p.lines for k in line.keys}
    for ask in asks:
        if missing := [k for k in ask.keys if k not in known]:
            raise ValueError(f"{template.name}: question {ask.question!r} names unknown keys {missing}")
    return parts, asks


def _parse_ask(name: str, row: str) -> Ask:
    fields = [f.strip() for f in row.split(" | ")]
    if len(fields) != 4 or not fields[3]:
        raise ValueError(f"{name}: not a question line: {row!r}")
    return Ask(fields[0], fields[1], fields[2], tuple(fields[3].split()))


def fill_slots(text: str, values: dict[str, str]) -> str:
    def one(m: re.Match[str]) -> str:
        if m.group(1) not in values:
            raise KeyError(f"no value for slot {m.group(1)!r} in {text!r}")
        return values[m.group(1)]

    return _SLOT.sub(one, text)


def add_months(ts: datetime, n: int) -> tuple[int, int]:
    k = ts.year * 12 + ts.month - 1 + n
    return k // 12, k % 12 + 1


def month_name(year: int, month: int) -> str:
    return datetime(year, month, 1).strftime("%B")


def fill_text_dates(text: str, ts: datetime) -> str:
    def one(m: re.Match[str]) -> str:
        kind, n = m.group(1), int(m.group(2))
        if kind in ("mon", "cmon"):
            year, month = add_months(ts, n)
            return month_name(year, month).lower() if kind == "mon" else f"{month}月"
        day = (ts + timedelta(days=n)).weekday()
        return WEEKDAYS[day] if kind == "wd" else CN_WEEKDAYS[day]

    return _TEXT_DATE.sub(one, text)


def fill_qa_dates(text: str, when: dict[str, datetime]) -> str:
    def one(m: re.Match[str]) -> str:
        kind, key, n = m.group(1), m.group(2), int(m.group(3) or 0)
        ts = when[key]
        if kind in ("month", "cmonth"):
            year, month = add_months(ts, n)
            return f"{month_name(year, month)} {year}" if kind == "month" else f"{year}年{month}月"
        day = ts + timedelta(days=n)
        return f"{day.day} {day:%B} {day.year}" if kind == "date" else f"{day.year}年{day.month}月{day.day}日"

    def gap(m: re.Match[str]) -> str:
        days = (when[m.group(2)].date() - when[m.group(1)].date()).days
        return f"{days} days" if days < 14 else f"about {round(days / 7)} weeks"

    return _QA_GAP.sub(gap, _QA_DATE.sub(one, text))


# --------------------------------------------------------------------------------------------------
# Pools for the slots (values are drawn without replacement within a conversation).
# --------------------------------------------------------------------------------------------------

# fmt: off
POOLS: dict[str, tuple[str, ...]] = {
    "city": (
        "Denver", "Austin", "Portland", "Seattle", "Chicago", "Boston", "Atlanta", "Phoenix", "Minneapolis",
        "Nashville", "Toronto", "Vancouver", "San Diego", "Philly", "Pittsburgh", "Raleigh", "Columbus",
        "Sacramento", "Salt Lake", "Milwaukee",
    ),
    "trip": (
        "Kyoto", "Lisbon", "Mexico City", "Reykjavik", "Seoul", "Barcelona", "Hanoi", "Istanbul",
        "Copenhagen", "Buenos Aires", "Bali", "Edinburgh", "Oaxaca", "Porto", "Taipei", "Vienna",
    ),
    "fem": (
        "Sarah", "Jess", "Rachel", "Ashley", "Megan", "Kayla", "Tara", "Brooke", "Dani", "Nicole", "Lauren",
        "Amber", "Jenna", "Steph", "Carmen", "Bianca",
    ),
    "masc": (
        "Kevin", "Mike", "Tom", "Chris", "Eric", "Josh", "Noah", "Luis", "Derek", "Matt", "Jason", "Kyle",
        "Omar", "Brandon", "Tyrone", "Pete",
    ),
    "date": (
        "Ethan", "Daniel", "Ava", "Leo", "Jordan", "Riley", "Cameron", "Morgan", "Jamie", "Taylor", "Marco",
        "Zoe", "Aiden", "Nina",
    ),
    "company": (
        "Stripe", "Figma", "Target", "Deloitte", "Spotify", "Shopify", "Airbnb", "Wayfair", "Zillow",
        "Intuit", "Adobe", "Peloton", "Etsy", "Duolingo", "Nike", "Expedia",
    ),
    "role": (
        "ux designer", "data analyst", "product manager", "account exec", "junior dev",
        "marketing coordinator", "pharmacist", "physical therapist", "recruiter", "copywriter",
    ),
    "restaurant": (
        "Lucky Noodle", "Bao Haus", "Golden Lotus", "Mama Kim's", "Jade Garden", "Dragon Court",
        "Red Lantern", "Noodle Bar 88", "Shanghai Corner", "Pearl River", "Mister Wong's", "Ginger House",
    ),
    "show": (
        "Severance", "The Bear", "Shrinking", "Slow Horses", "Abbott Elementary", "Hacks", "Beef",
        "Succession", "Reservation Dogs", "Only Murders", "The Diplomat", "Blue Eye Samurai", "Fleabag",
        "Ted Lasso", "Poker Face", "The Pitt",
    ),
    "band": (
        "Phoebe Bridgers", "Tame Impala", "Mitski", "The National", "Bleachers", "Khruangbin",
        "Vampire Weekend", "Arctic Monkeys", "boygenius", "Hozier", "SZA", "Fleet Foxes",
        "Japanese Breakfast",
    ),
    "item": (
        "standing desk", "road bike", "kitchenaid mixer", "dyson vacuum", "espresso machine",
        "herman miller chair", "record player", "rowing machine", "le creuset pot", "patio set",
    ),
    "pet": (
        "Mochi", "Biscuit", "Pickles", "Noodle", "Bean", "Olive", "Waffles", "Pepper", "Tofu", "Miso",
        "Ziggy", "Nugget", "Pumpkin", "Clementine",
    ),
    "dog": ("Rocco", "Bailey", "Chewie", "Duke", "Lola", "Murphy", "Penny", "Benji", "Hank", "Rosie"),
    "book": (
        "Tomorrow and Tomorrow and Tomorrow", "Project Hail Mary", "Piranesi", "The Midnight Library",
        "Klara and the Sun", "Lessons in Chemistry", "Demon Copperhead", "Yellowface", "Normal People",
        "Station Eleven",
    ),
    "hood": (
        "Capitol Hill", "Fremont", "Logan Square", "Wicker Park", "the Mission", "Silver Lake",
        "Park Slope", "Astoria", "Fishtown", "Eastside", "Old Town", "Highland Park",
    ),
    "gift": (
        "polaroid camera", "silk scarf", "vinyl of her fav album", "fancy candle set", "custom star map",
        "pottery class voucher", "pair of gold hoops", "weighted blanket",
    ),
    "venue": (
        "a vineyard in napa", "lake tahoe", "a barn outside nashville", "her parents' backyard in ohio",
        "a lodge in the poconos", "a beach in cabo",
    ),
    "phone": (
        "415-555-0182", "628-555-0147", "312-555-0126", "773-555-0190", "646-555-0133", "917-555-0164",
        "206-555-0118", "503-555-0175", "512-555-0109", "720-555-0151", "617-555-0193", "404-555-0122",
    ),
    "ccity": (
        "杭州", "成都", "深圳", "南京", "苏州", "厦门", "武汉", "西安", "重庆", "长沙", "青岛", "昆明", "天津", "合肥",
    ),
    "ctrip": ("大理", "三亚", "西双版纳", "桂林", "张家界", "稻城", "哈尔滨", "喀什", "敦煌", "景德镇"),
    "cfriend": (
        "小王", "阿杰", "李娜", "陈晨", "小美", "老张", "刘洋", "周周", "王磊", "晓雯", "阿伟", "婷婷", "大鹏", "小林",
    ),
    "cguy": ("阿杰", "王磊", "刘洋", "大鹏", "阿伟", "老周", "小宇", "浩然"),
    "cco": ("字节", "腾讯", "阿里", "美团", "网易", "小红书", "华为", "京东", "拼多多", "米哈游"),
    "cshow": ("漫长的季节", "繁花", "狂飙", "隐秘的角落", "山海情", "我的阿勒泰", "去有风的地方", "人世间"),
    "cpet": ("团子", "可乐", "年糕", "豆豆", "布丁", "汤圆", "咪咪", "奶茶"),
    "crest": ("老码头火锅", "小龙坎", "大龙燚", "蜀大侠", "巴奴", "珮姐火锅", "谭鸭血", "楠火锅"),
    "citem": ("扫地机器人", "空气炸锅", "戴森吹风机", "按摩椅", "咖啡机", "投影仪", "洗碗机", "显示器"),
    "cphone": (
        "139 1826 4471", "186 0217 3390", "158 6634 0912", "137 5102 8846", "189 3371 2205",
        "135 8820 6617", "152 4096 3378", "177 2653 0194",
    ),
}
# fmt: on

# Third parties' names: not content words when the wording of a question is compared with its evidence.
PERSON_POOLS = ("fem", "masc", "date", "cfriend", "cguy")


def T(name: str, lang: str, group: str, slots: str, script: str) -> Template:
    pairs = tuple((s.split(":")[0], s.split(":")[1]) for s in slots.split())
    return Template(name, lang, group, pairs, script)


# --------------------------------------------------------------------------------------------------
# English arcs.
# --------------------------------------------------------------------------------------------------

# fmt: off
EN_TEMPLATES: tuple[Template, ...] = (
    T("move", "en", "move", "c1:city c2:city c3:city p:date", """
A: ok so
A: big news
A: we're moving to {c1} 😳 [m1]
A: prob around {mon+2} [m1]
B: WAIT
B: {c1}??? since when
A: {p} got a job there and i can work remote so [why]
B: noooo who am i gonna get drunk brunch with
A: lol u can visit
--- +10
B: my cousin is moving to {c3} btw [d1]
B: everyone is leaving me 😭
A: lol is she excited
B: no she cried at the airport
--- +14
A: update on the move
A: {c1} is off lol [m2]
A: {p}'s company gave the role to the {c2} office so now its {c2} [m3]
B: omg ok
B: honestly {c2} is cooler
A: ya rent is worse tho
===
update | Which city is {A} ultimately relocating to? || After the plans shifted, where is {A} headed? | {c2} | m2 m3
single-hop | Why was {A} leaving town in the first place? | {p} got a job there and {A} can work remotely | why
single-hop | Which relative of {B} was also relocating, and to where? | {B}'s cousin, to {c3} | d1
temporal | Around which month did {A} first expect the relocation to happen? | {month:m1+2} | m1
multi-hop | Whose career decides where {A} will live, and where did that career end up? | {p}'s; the role went to {c2} | why m3
"""),
    T("phone", "en", "phone", "ph1:phone ph2:phone ph3:phone", """
A: new phone who dis 😂
A: jk but i got a new number [n1]
A: {ph1} [n1]
B: saved 👍
--- +12
B: did u change ur number again?? my text bounced
A: omg yes sorry [n2]
A: getting like 10 spam calls a day so i switched [why]
A: {ph2} is the one now, toss the other one [n3]
B: ur worse than a drug dealer lol
---
B: fyi if my cell dies my work line is {ph3} [d1]
A: kk
===
update | What number should {B} use to reach {A} these days? || How can someone text {A} at the latest? || What's {A}'s new phone number now? | {ph2} | n2 n3
single-hop | What made {A} swap numbers the second time? || Why did {A} change phone numbers again? | constant spam calls, about ten a day | why
single-hop | Which number did {B} give as a backup in case the cell is dead? | {ph3} (work phone) | d1
multi-hop | How many different numbers has {A} handed out to {B}? | two ({ph1}, then {ph2}) | n1 n3
"""),
    T("offer", "en", "job", "co0:company co1:company", """
A: ok i have news but dont tell anyone
A: got an offer from {co1} [o1]
B: AHHHH
B: are u taking it
A: signed this morning 🫡 [o2]
A: gotta tell my boss at {co0} on monday lol [o0]
B: she's gonna cry
--- +7
A: soooo plot twist
A: im not going to {co1} [o3]
B: WHAT
A: {co0} countered. 15% more and i get to stay remote [o4]
A: so i emailed {co1} and backed out. felt awful [o3]
B: honestly smart
B: the {co1} people will live
===
update | Which company does {A} work for after all the back and forth? || Where is {A} employed at this point? | {co0} (declined {co1}) | o3 o4
single-hop | What convinced {A} to reverse the decision about switching employers? || Why did {A} back out of the {co1} offer? | {co0} countered: 15% higher pay and staying remote | o4
temporal | On what day did {A} commit to the {co1} position? | {date:o2} | o2
multi-hop | How much time passed between {A} accepting and pulling out of the {co1} deal? | {gap:o2:o3} | o2 o3
"""),
    T("newjob", "en", "boss", "role:role boss:fem", """
A: first day at the new place tmrw 😬 [j1]
B: ur gonna kill it
A: idk what to wear lol
B: not the green sweater
A: rude
--- +5
B: hows the new job
A: ok being a {role} is actually fun [j2]
A: but my manager {boss} [j5]
A: schedules standup at 7:30 am [j3]
A: who does that
B: a psychopath
--- +10
A: {boss} did it again
A: moved standup to 7 [j4]
B: LMAO
A: im not ok
===
single-hop | What is {A}'s title at the new workplace? || What's {A}'s new job? | {role} | j2
temporal | When did {A} begin the new position? || When was {A}'s first day at the new job? | {date:j1+1} | j1
update | What time does {A}'s daily team check-in begin now? | 7 am (it was 7:30) | j4 j3
single-hop | Who supervises {A} at the new company? | {boss} | j5 j3
"""),
    T("trip", "en", "trip", "t:trip t2:trip", """
A: BOOKED IT [t1]
A: {t} in {mon+2}!!! [t1]
B: omg finally
B: how long
A: 5 nights [t2]
A: hotel was 140 a night which hurt [t3]
B: worth
--- +4
B: my parents did {t2} last year and mom got food poisoning day 1 [d1]
B: so dont eat street oysters lol
A: noted 😂
--- +m3
A: back!!! [t4]
A: {t} was unreal
A: the trains are so clean i wanna cry [t5]
B: pics or it didnt happen
===
temporal | In which month was {A}'s {t} vacation scheduled? | {month:t1+2} | t1
multi-hop | Roughly what did {A}'s lodging cost for the whole stay? || How much did {A}'s hotel cost in total for the {t} trip? | about $700 (5 nights at $140) | t2 t3
single-hop | Where did {B}'s parents go on holiday, and what went wrong? | {t2}; {B}'s mom got food poisoning | d1
single-hop | How many nights was {A} staying abroad? | five | t1 t2
single-hop | What impressed {A} about public transport while away? | how clean the trains were | t4 t5
"""),
    T("dating", "en", "love", "p1:date p2:date", """
A: third date w {p1} tonight 🫣 [r1]
B: THIRD
B: ok its serious
A: shut up lol
--- +12
A: so {p1} and i are done [r2]
B: nooo what happened
A: cancelled on me 4 times in 2 weeks [r3]
A: im not a backup plan
B: good for u honestly
--- +14
A: ok dont make it weird
A: i've been seeing someone [r4]
B: 👀👀👀
A: {p2}. we met at the climbing gym [r5]
B: ofc u did lol
===
update | Who is {A} romantically involved with at the latest point? || Whom is {A} dating now? | {p2} | r4 r5
single-hop | Why did {A} stop seeing {p1}? | {p1} kept bailing on plans (four times in two weeks) | r2 r3
single-hop | Where did {A} first run into {p2}? || Where did {A} and {p2} meet? | at the climbing gym | r5
temporal | Around what date was {A}'s third outing with {p1}? | {date:r1} | r1
"""),
    T("kitten", "en", "pet", "pet:pet", """
A: WE GOT A KITTEN [k1]
A: her name is {pet} [k2]
A: shes grey with one white paw [k3]
B: SEND PICS NOW
B: omg
B: i would die for her
--- +8
A: {pet} knocked my coffee off the desk during a zoom call lol
B: iconic
--- +10
A: vet bill was 230 😭 [k4]
B: what happened??
A: she ate a hair tie [k5]
A: shes fine now just dramatic
===
temporal | When did {A} bring home the new cat? || When did {A} get the kitten? | {date:k1} | k1
single-hop | What did {A} call the new kitten? | {pet} | k1 k2
multi-hop | What does the animal that needed the pricey vet visit look like? | grey with one white paw | k3 k4
single-hop | Why did {A}'s cat need the vet, and what did it cost? || What did {A}'s kitten eat that needed a vet, and how much was the bill? | she swallowed a hair tie; $230 | k4 k5
"""),
    T("dad", "en", "parent", "", """
A: hey sorry been mia
A: my dad's in the hospital [h1]
A: they think its his gallbladder [h2]
B: oh no
B: sending so much love. do u need anything
A: just distract me lol
--- +5
A: surgery went fine!! [h3]
A: they're sending him home {wd+2} [h4]
B: omg thank god
--- +15
B: my grandma is getting her hip done next month, same hospital lol [d1]
A: tell her the jello is good
===
single-hop | What medical issue put {A}'s father in the hospital? || Why is {A}'s dad in the hospital? | a gallbladder problem | h1 h2
temporal | On what date was {A}'s father expected to be discharged? | {date:h3+2} | h3 h4
single-hop | What procedure is {B}'s grandmother scheduled for? | hip surgery | d1
multi-hop | Which of {B}'s relatives is going to the facility where {A}'s father was treated? | {B}'s grandmother | h1 d1
temporal | What was going on with {A}'s family around {date:h1}? | {A}'s dad was hospitalized (gallbladder) | h1 h2
"""),
    T("foodpref", "en", "food", "", """
A: ordering thai want anything
B: pad see ew
B: NO cilantro pls [c1]
B: tastes like soap to me [c2]
A: i know i know
--- +10
B: also i cant do dairy anymore [c3]
B: doctor said to cut it out for my stomach [c4]
A: rip ur cheese era
B: 😭
===
single-hop | Which herb can't {B} stand, and why? || What does {B} not want in the food, and why? | cilantro, it tastes like soap to {B} | c1 c2
single-hop | Why did {B} give up milk products? | on the doctor's advice, for {B}'s stomach | c3 c4
multi-hop | If {A} cooks for {B}, what two things should be left out? | cilantro and dairy | c1 c3
"""),
    T("show", "en", "tv", "s1:show s2:show", """
B: u have to watch {s1} [s1]
B: ep 3 is insane
A: ok adding it
--- +6
B: do NOT watch {s2} [s2]
B: quit after 2 eps so boring [s3]
--- +8
A: started {s1} [s4]
A: ok i see it now
A: the ending of ep 3?????? [s5]
B: TOLD U
===
single-hop | Which series did {B} push {A} to start? || What show did {B} tell {A} to watch? | {s1} | s1
single-hop | Which show did {B} abandon, and why? | {s2}; it was dull, {B} gave up after two episodes | s2 s3
multi-hop | Did {A} follow {B}'s TV suggestion, and what was the verdict? | yes, started {s1} and was hooked by the third episode | s1 s4 s5
"""),
    T("restaurant", "en", "eat", "r:restaurant", """
A: went to {r} last night [f1]
A: the dumplings 🤤🤤 [f2]
A: and like 40 bucks for 2 ppl [f3]
B: wait where is that
A: by the old movie theater on 5th [f4]
--- +9
B: went to {r} bc of u [f5]
B: waited an HOUR [f6]
B: worth it tho
===
single-hop | What dish did {A} rave about at {r}? | the dumplings | f1 f2
single-hop | What did a meal for two cost at the spot {A} recommended? || How much was dinner for two at {r}? | about $40 | f1 f3
single-hop | Where is {r}? | near the old movie theater on 5th | f4
multi-hop | How long did {B} queue at the place {A} praised for its dumplings? | about an hour | f2 f5 f6
temporal | On what date did {A} first eat at {r}? | {date:f1-1} | f1
"""),
    T("concert", "en", "music", "band:band", """
A: GOT {band} TIX [t1]
A: 80 bucks each [t2]
B: 80?? what a steal [t3]
B: i paid 200 for a resale taylor ticket lol [d1]
A: got 2, ur coming [t4]
B: YESSS
--- +m1
A: {band} last night 😭😭 [t5]
A: lost my voice
B: best night ever
===
single-hop | What did {B} think of what {A} paid to see {band}? | a great deal, a bargain | t2 t3
multi-hop | How much did {A} spend on concert tickets altogether? || How much did {A} pay for the {band} tickets in total? | $160 (two at $80) | t2 t4
temporal | On what date did {A} and {B} see {band} live? | {date:t5-1} | t5
single-hop | How much did {B} once pay for a secondhand ticket? | $200 | d1
"""),
    T("bargain", "en", "buy", "it:item", """
A: got a {it} on marketplace for 25 bucks [b1]
B: shut up
B: what a steal [b2]
B: i paid like 300 for mine 💀 [b3]
A: the guy just wanted it gone lol
A: had to carry it up 4 flights tho
--- +7
A: the {it} died lol [b4]
B: well it was 25 bucks
===
single-hop | What did {A} pick up secondhand, and for how much? || What did {A} buy on marketplace and how much was it? | a {it}, $25 | b1
single-hop | What did {B}'s own {it} cost? | about $300 | b1 b3
update | Does {A}'s cheap find still work? | no, it broke | b4
"""),
    T("gossip", "en", "gossip", "f1:fem f2:fem", """
B: ok someone leaked what happened at {f1}'s party [g1]
A: the kiss??? [g2]
B: yes!! twice [g3]
A: 💀💀
A: who even told
B: {f2} [g4]
B: she told literally everyone at work
--- +5
A: {f1} is not speaking to {f2} now lol [g5]
B: i mean fair
===
single-hop | Who spread the story about {f1}'s party? || Who blabbed about {f1}'s get-together? || Who told everyone what happened at {f1}'s party? | {f2} | g1 g4
single-hop | What happened at {f1}'s party that got around, and how often? | a kiss, twice | g1 g2 g3
single-hop | How are things between {f1} and {f2} after the rumor got out? | {f1} stopped talking to {f2} | g5
multi-hop | Why has {f1} gone silent on one of her friends? | {f2} told everyone about the kiss at {f1}'s party | g4 g5
"""),
    T("gift", "en", "gift", "f:fem gift:gift", """
A: {f}'s bday is next week [g1]
A: thinking a {gift}?? [g2]
B: she'd love that
B: or a gift card lol [g5]
A: no ur so boring
--- +8
A: gave {f} the {gift} [g3]
A: she literally teared up [g4]
B: awww
===
single-hop | What present did {A} pick out for {f}? || What gift did {A} get {f} for her birthday? | a {gift} | g2 g3
single-hop | How did {f} react to the present? | got emotional, teared up | g3 g4
temporal | Around when is {f}'s birthday? | the week after {date:g1} | g1
single-hop | What did {B} jokingly suggest instead of {A}'s idea? | a gift card | g2 g5
"""),
    T("gym", "en", "fitness", "", """
A: i joined a gym. dont laugh [y1]
A: 45 a month [y2]
B: proud of u
--- +12
B: hows the gym
A: went twice [y3]
A: in 2 weeks
A: lol
--- +20
A: cancelled the membership [y4]
A: gonna just run outside [y5]
B: ur gonna run once
A: wow
===
single-hop | What did {A}'s fitness membership cost per month? || How much is {A}'s gym per month? | $45 | y1 y2
update | Is {A} still paying for the gym, and what's the exercise plan now? | no, cancelled; running outdoors instead | y4 y5
single-hop | How often did {A} work out in the first couple of weeks? | twice | y3
"""),
    T("apartment", "en", "home", "h1:hood h2:hood", """
A: saw a 1br in {h1} today [a1]
A: 2100, no dishwasher [a2]
B: hard pass
B: u will not do dishes
--- +10
A: SIGNED A LEASE [a3]
A: not {h1} lol, its in {h2} [a4]
A: 1950 and it has a dishwasher [a5]
B: LOOK AT U
===
update | Which neighborhood did {A} end up renting in? || Where is {A}'s new apartment? | {h2} | a3 a4
single-hop | What is the monthly rent at {A}'s new place? | $1950 | a3 a5
multi-hop | How much cheaper per month is {A}'s new flat than the first one viewed? | $150 ($1950 vs $2100) | a2 a5
single-hop | What was missing in the first unit {A} toured? | a dishwasher | a1 a2
"""),
    T("car", "en", "car", "f:masc", """
A: my car died on the highway [v1]
A: on the way to work
B: omg are u ok
A: ya just mad
--- +3
A: mechanic says alternator [v2]
A: 600 bucks [v3]
B: thats robbery
B: my guy {f} would do it for like 350 [v4]
A: send me his number
===
multi-hop | What failed in the car that gave out during {A}'s commute? | the alternator | v1 v2
single-hop | Who did {B} suggest for a cheaper repair, and at what price? | {f}, about $350 | v4
temporal | When did {A} break down on the road? | {date:v1} | v1
single-hop | What quote did the first garage give {A}? | $600 | v2 v3
"""),
    T("wedding", "en", "wedding", "f:fem venue:venue", """
B: {f}'s wedding is in {mon+2} [w1]
B: do i bring someone or
A: bring me lol
B: ...
B: actually yes [w2]
A: wait really
B: ur my plus one. dress nice [w3]
--- +10
B: the wedding is at {venue} btw [w4]
B: so we need a hotel
A: i'll find one
===
single-hop | Who is accompanying {B} to {f}'s wedding? || Who is {B}'s plus one at {f}'s wedding? | {A} | w2 w3
temporal | In which month is {f} getting married? | {month:w1+2} | w1
single-hop | Where is {f}'s ceremony taking place? | {venue} | w4
multi-hop | For whose big day and which place does {A} have to sort out lodging? | {f}'s wedding at {venue} | w1 w4
"""),
    T("pottery", "en", "hobby", "sis:fem", """
A: signed up for a pottery class lol [p1]
A: tuesdays after work [p2]
B: u??
B: love that
B: my sister {sis} does salsa on tuesdays, she says its the best night of her week [d1]
--- +14
A: made my first bowl [p3]
A: its so lopsided [p4]
A: i love it
B: frame it
===
single-hop | Which evening does {A} go to the clay workshop? | Tuesday, after work | p1 p2
single-hop | What came out of {A}'s first attempt in class? || What did {A} make first in pottery class? | a lopsided bowl | p3 p4
single-hop | What does {B}'s sister {sis} do on Tuesdays? | salsa dancing | d1
multi-hop | What has {A} produced so far at the weekly evening course? | a lopsided bowl | p2 p3
"""),
    T("baby", "en", "family", "sis:fem", """
A: omg my sister {sis} is pregnant!!!! [s1]
A: due in {mon+5} [s2]
B: AUNTIE ERA
--- +30
A: its a boy!!! [s3]
A: they found out today
A: {sis} wants to name him after our grandpa lol [s4]
===
temporal | When is {A}'s sister expecting? | {month:s2+5} | s2
multi-hop | Is {sis}'s baby a boy or a girl? | a boy | s1 s3
single-hop | Whom might {sis}'s son be named after? | {A} and {sis}'s grandfather | s4
"""),
    T("screen", "en", "gadget", "", """
A: dropped my phone. screen is spiderwebbed [x1]
A: repair is 180 or a new one is 900 [x2]
B: repair obv
--- +4
A: i got the new one 🙈 [x3]
B: ofc u did
A: it comes in green or blue [x6]
B: the blue one [x4]
A: done [x5]
===
update | Did {A} get the cracked handset fixed? | no, bought a new phone (~$900) instead | x2 x3
single-hop | What color is {A}'s replacement phone? || What color is {A}'s new phone? | blue | x6 x4 x5
single-hop | What would fixing the shattered display have cost? | $180 | x1 x2
multi-hop | About how much did {A} pay for the blue phone? | about $900 | x2 x6 x4
"""),
    T("race", "en", "run", "", """
A: ok i signed up for a half marathon [r1]
A: its in {mon+2} [r1]
B: why would u do that
A: midlife crisis
--- +m3
A: FINISHED [r2]
A: 2:05!! [r3]
A: cant feel my legs
B: ur insane. proud of u
===
single-hop | What was {A}'s finishing time in the 21k? || What was {A}'s half marathon time? | 2 hours 5 minutes | r2 r3
temporal | In what month did {A} run the race? | {month:r1+2} | r1
"""),
    T("deck", "en", "boss", "boss:masc", """
A: {boss} made me redo the deck 3 times [w1]
A: for a meeting that got CANCELLED [w2]
B: im screaming
B: quit
A: i wish
--- +10
A: {boss} is going on leave for a month [w3]
A: free at last
===
single-hop | How many times did {A}'s boss send the slides back? | three | w1
single-hop | What happened to the meeting the slides were for? | it was cancelled | w1 w2
single-hop | Why is {A} relieved about {boss}? | {boss} is away on leave for a month | w3
multi-hop | Who made {A} rework the presentation, and what is that person doing next? | {boss}; going on leave for a month | w1 w3
temporal | What was frustrating {A} at work around {date:w1}? | redoing a presentation three times for a meeting that was then cancelled | w1 w2
"""),
    T("roommate", "en", "roommate", "rm:fem", """
A: my roommate {rm} ate my leftovers AGAIN [m1]
A: i labeled them
B: label them with poison lol
--- +14
A: {rm} is moving out end of the month!!! [m2]
A: into her bf's place [m3]
B: celebrate
===
single-hop | Who keeps stealing {A}'s food? || Who ate {A}'s leftovers? | {A}'s roommate {rm} | m1
single-hop | Where is {rm} going to live? | her boyfriend's place | m2 m3
temporal | When is {rm} leaving {A}'s apartment? | end of {month:m2} | m2
multi-hop | What is the person who raids {A}'s fridge doing at month's end? | moving out, to her boyfriend's place | m1 m2 m3
"""),
    T("book", "en", "book", "bk:book", """
B: reading {bk} rn [k1]
B: u'd love it
B: its about like grief but funny?
A: add to list
--- +20
A: finished {bk} on the plane [k2]
A: cried at the end ngl [k3]
===
single-hop | What novel did {B} suggest to {A}? | {bk} | k1
multi-hop | Where was {A} when finishing the novel {B} recommended? | on a plane | k1 k2
single-hop | How did {A} feel about how {bk} ended? | it made {A} cry | k2 k3
"""),
    T("dogsit", "en", "pet", "dog:dog c:city", """
B: can u watch {dog} this weekend [d1]
B: im at my brother's in {c} [d2]
A: obviously
A: what does he eat
B: 1 cup morning 1 cup night. NO grapes [d3]
--- +3
A: {dog} ate a sock [d4]
A: its out now dont ask
B: ...
B: thank u for ur service
===
single-hop | How much food does {dog} get per day? || How much does {dog} eat a day? | two cups (one morning, one night) | d3
single-hop | Where was {B} while {A} pet-sat? | at {B}'s brother's in {c} | d1 d2
single-hop | What did {dog} swallow while staying with {A}? | a sock | d4
multi-hop | What did the dog that must never have grapes eat by mistake? | a sock | d3 d4
"""),
    T("promotion", "en", "job", "", """
A: got promoted!!!! [p1]
A: senior now lol [p2]
A: raise is only 8% tho [p3]
B: still!!
B: drinks on u
===
single-hop | How big was {A}'s pay bump? || How much of a raise did {A} get with the promotion? | 8% | p1 p3
single-hop | What is {A}'s new level at work? | senior | p1 p2
"""),
    T("camping", "en", "outdoors", "f1:fem f2:masc", """
B: camping trip w {f1} and {f2} in 2 weekends [k1]
B: u in?
A: if there are bathrooms
B: there are "bathrooms"
A: ugh fine [k2]
--- +16
A: never again [k3]
A: it rained both nights and the tent flooded [k4]
B: it builds character
===
single-hop | Who else was on the camping weekend besides {A} and {B}? | {f1} and {f2} | k1 k2
multi-hop | What went wrong on the outing {A} reluctantly agreed to? | it rained both nights and the tent flooded | k2 k4
"""),
    T("airpods", "en", "lost", "", """
A: left my airpods on the bus 😭 [l1]
A: the new ones
B: nooo
--- +4
A: someone turned them in!!! [l2]
A: lost and found at the depot [l3]
B: faith in humanity restored
===
update | Did {A} get the lost earbuds back? | yes, someone turned them in at the depot's lost and found | l2 l3
single-hop | Where did {A} lose the earbuds? || Where did {A} leave the airpods? | on the bus | l1
"""),
    T("coworker", "en", "gossip", "f:masc", """
A: someone at work got fired today [x1]
A: {f} [x3]
A: for expensing a jet ski [x2]
B: A JET SKI
B: how do u even
A: he said it was "client entertainment"
===
single-hop | Why was {f} let go? || Why did {f} get fired? | expensing a jet ski | x1 x3 x2
temporal | When did {A}'s colleague lose his job? | {date:x1} | x1
"""),
    T("covid", "en", "health", "", """
A: i have covid again [c1]
A: third time lol
B: noooo
B: soup is coming to ur door
--- +6
A: finally tested negative [c2]
B: welcome back to society
===
temporal | How much time passed between {A} reporting the infection and being in the clear? | {gap:c1:c2} | c1 c2
single-hop | How many times has {A} had covid? | three | c1
"""),
)
# fmt: on

# --------------------------------------------------------------------------------------------------
# Chinese (and code-switched) arcs.
# --------------------------------------------------------------------------------------------------

# fmt: off
ZH_TEMPLATES: tuple[Template, ...] = (
    T("zmove", "zh", "move", "c1:ccity c2:ccity c3:ccity", """
A: 跟你说个事
A: 我下个月搬到{c1} [m1]
B: ？？？
B: 真的假的 怎么这么突然
A: 公司在{c1}开了新 office 让我过去 [m2]
B: 呜呜呜 那以后谁陪我吃火锅
--- +5
B: 我表姐刚从{c3}搬回来了 [d1]
B: 说那边太潮了受不了 [d2]
A: 哈哈哈
--- +12
A: 搬家的事有变化
A: {c1}不去了 [m3]
A: 改成{c2}了 office 换地方了 😂 [m4]
B: ok fine {c2}也不错
B: 离我还近一点
===
update | {A}现在最终要去哪个城市生活？ || Where is {A} relocating after the change of plan? | {c2} | m3 m4
chinese | What was the reason {A} had to leave in the first place? || {A}一开始为什么要换城市？ | the company opened a new office there and sent {A} || 公司在那边开了新办公室，派{A}过去 | m1 m2
chinese | {B}的表姐是从哪里回来的？为什么？ || Which city did {B}'s cousin leave, and why? | {c3}，那边太潮湿受不了 || {c3}; it was too humid there | d1 d2
temporal | In what month was {A} first supposed to relocate? | {month:m1+1} | m1
"""),
    T("zjob", "zh", "job", "co:cco", """
A: 我拿到{co}的 offer 了!!! [j1]
B: 啊啊啊啊 恭喜
B: 什么岗位
A: 产品经理 [j2]
A: 工资涨了 30% [j3]
B: 请吃饭！！
--- +14
A: 入职一周了 累死 [j4]
A: 每天 meeting 开到晚上九点 [j5]
B: 大厂就这样
===
chinese | What position was {A} hired for at {co}? || {A}在{co}做什么职位？ | product manager || 产品经理 | j1 j2
chinese | {A}去{co}工资涨了多少？ || How big a salary increase came with {A}'s move to {co}? | 30% | j1 j3
chinese | What is {A}'s main gripe about the first week in the new role? || {A}新工作第一周最受不了的是什么？ | meetings run until 9 pm every day || 每天开会开到晚上九点 | j4 j5
temporal | {A}大概哪天开始在{co}上班？ | 大约{cdate:j4-7} | j4
multi-hop | At which company do {A}'s meetings drag on until nine at night? | {co} | j1 j5
"""),
    T("zgym", "zh", "fitness", "", """
A: 明天去 gym 吗 [g1]
B: 几点
A: 七点 下班直接去
B: ok
--- +6
B: 我办了年卡 [g2]
B: 2800 一年 有点肉疼 [g3]
A: 那你得去够一百次才回本 哈哈
--- +20
B: 我的年卡转给别人了 [g4]
B: 膝盖受伤了 医生说三个月不能跑 [g5]
A: 啊 好好休息
===
chinese | How much was {B}'s annual gym card? || {B}那张健身房会员卡多少钱？ | 2800 yuan || 2800元 | g2 g3
update | Does {B} still hold the annual gym membership? | no, {B} passed it on to someone else after hurting a knee | g4 g5
chinese | {B}为什么暂时不能运动？ || What is keeping {B} from exercising for a while? | 膝盖受伤，医生说三个月不能跑 || a knee injury; the doctor said no running for three months | g5
multi-hop | What became of the pass {B} spent 2800 on? | {B} gave it to someone else after a knee injury | g3 g4
"""),
    T("zfood", "zh", "food", "r:crest", """
B: 周五吃火锅？
A: 好啊
A: 不过你知道我不吃香菜的 [c1]
A: 也不能太辣 胃不好 [c2]
B: 那去{r} 可以点鸳鸯锅 [c3]
A: 好 就它
--- +3
A: {r}的虾滑绝了 [c4]
A: 下次还去
===
chinese | Which herb does {A} refuse to eat? || {A}点菜时要去掉哪种配料？ | cilantro (香菜) || 香菜 | c1
chinese | {A}为什么不能吃太辣的东西？ || Why does {A} have to avoid very spicy food? | 胃不好 || a weak stomach | c2
chinese | What did {A} love most at {r}? || {A}觉得{r}哪道菜最好吃？ | the shrimp paste (虾滑) || 虾滑 | c4
chinese | {A}和{B}那次周五去哪家店吃火锅？ || Which hotpot place did {A} and {B} pick for Friday? | {r} | c3
"""),
    T("zphone", "zh", "phone", "ph1:cphone ph2:cphone", """
A: 我换号了 [n1]
A: 新号码 {ph1} [n1]
B: 存了
--- +15
A: 又换了 哈哈 之前那个老有骚扰电话 [n2]
A: 现在用 {ph2} [n3]
B: 你是特工吗
===
update | {A}最新的联系电话是多少？ || Which number reaches {A} now? | {ph2} | n2 n3
chinese | Why did {A} switch numbers a second time? || {A}后来为什么再次更换号码？ | too many harassing calls on the old one || 旧号码骚扰电话太多 | n2
"""),
    T("zpet", "zh", "pet", "pet:cpet", """
B: 我们家猫{pet}生病了 😭 [p1]
B: 一直吐
A: 啊 带去医院了吗
B: 去了 兽医说是肠胃炎 [p2]
B: 花了1200 [p3]
--- +7
B: {pet}好了!!! 又开始抢我的饭 [p4]
A: 哈哈哈 好样的
===
chinese | What did the vet diagnose {B}'s cat with? || {B}的猫被诊断出什么问题？ | gastroenteritis (肠胃炎) || 肠胃炎 | p1 p2
chinese | {B}家猫生病看兽医花了多少钱？ || How much did {B} spend on the cat's treatment? | 1200 元 || 1,200 yuan | p1 p3
chinese | {B}家的猫叫什么？ || What is {B}'s cat called? | {pet} | p1
update | Has {B}'s cat recovered? | yes, it is well again and stealing food | p4
"""),
    T("ztrip", "zh", "trip", "t:ctrip f1:cfriend f2:cfriend", """
A: {cmon+2}去{t}玩 机票买好了!! [t1]
A: 三个人 我 {f1} 还有{f2} [t2]
B: 羡慕
B: 住哪
A: 民宿 一晚 380 [t3]
--- +m3
A: 我回来了 [t4]
A: {t}太美了 就是晒黑了两个度 [t5]
===
chinese | {A}几月份出发去{t}？ || Which month is {A} flying to {t}? | {cmonth:t1+2} || {month:t1+2} | t1
chinese | Who is travelling with {A}? || {A}和谁一起去{t}？ | {f1} and {f2} || {f1}和{f2} | t1 t2
chinese | {A}在{t}住的民宿一晚多少钱？ || What is {A}'s nightly rate for the guesthouse? | 380 元 || 380 yuan | t3
chinese | What was the downside of {A}'s holiday in {t}? || {A}这趟{t}之行有什么遗憾？ | got a lot more tanned || 晒黑了不少 | t4 t5
"""),
    T("zparent", "zh", "parent", "", """
A: 我妈住院了 [h1]
A: 血压太高 晕倒了 [h2]
B: 天 阿姨现在怎么样
A: 稳定了 要观察几天
--- +6
A: 我妈出院了 [h3]
A: 医生让她少吃盐 [h4]
B: 太好了
===
chinese | Why was {A}'s mother admitted? || {A}的妈妈因为什么进了医院？ | very high blood pressure; she fainted || 血压太高晕倒了 | h1 h2
chinese | 医生叮嘱{A}妈妈注意什么？ || What did the doctor tell {A}'s mother to cut back on? | 少吃盐 || salt | h3 h4
temporal | When did {A}'s mom come home from the hospital? | around {date:h3} | h3
"""),
    T("zlove", "zh", "love", "bf:cguy", """
A: 我跟{bf}在一起了 [r1]
B: ！！！！！我就知道
B: 什么时候的事
A: 上周末 他表白的 [r2]
--- +15
A: 跟{bf}分了 [r3]
A: 他要去国外读书 异地太累了 [r4]
B: 抱抱
B: 晚上出来喝一杯
===
update | {A}和{bf}现在还在交往吗？ || Are {A} and {bf} still a couple? | 不，分手了 | r3
chinese | Why did {A} break up with {bf}? || {A}和{bf}为什么没能继续走下去？ | he is going abroad to study and long distance was too tiring || {bf}要出国读书，异地太累 | r3 r4
temporal | Roughly when did {A} and {bf} get together? | the weekend before {date:r1} | r1 r2
"""),
    T("zshop", "zh", "buy", "it:citem", """
A: 大促买了个{it} 才399 [b1]
A: 血赚 [b2]
B: 我上个月买的799 😭 [b3]
B: 亏麻了
A: 哈哈哈哈
===
chinese | How much did {A} pay for the {it}? || {A}那个{it}花了多少钱？ | 399 yuan || 399元 | b1
chinese | {B}上个月买{it}花了多少？ || What did {B} pay for the same {it}? | 799 元 || 799 yuan | b1 b3
"""),
    T("zgossip", "zh", "gossip", "f1:cfriend f2:cfriend", """
B: 听说{f1}要辞职了 [g1]
A: 真的假的
B: 真的 要去读研 [g2]
A: 谁说的
B: {f2}说的 她们一个组 [g3]
===
chinese | Why is {f1} quitting? || {f1}为什么要离职？ | going back to school for a master's degree || 要去读研 | g1 g2
chinese | 谁透露了{f1}要离职的消息？ || Who was the source of the news about {f1} leaving the job? | {f2} | g1 g3
"""),
    T("zovertime", "zh", "boss", "", """
A: 老板又让我周末加班 [o1]
A: 项目 deadline 提前到{cmon+1}15号了 [o2]
B: 这老板有病吧
--- +m1
A: 项目终于上线了 [o3]
A: 奖金发了五千 [o4]
B: 可以啊 请客
===
chinese | What new due date was {A}'s project pulled forward to? || {A}项目的截止日期改到了哪天？ | 15 {month:o2+1} || {cmonth:o2+1}15日 | o2
chinese | {A}的项目上线以后拿到多少奖金？ || How much bonus did {A} receive after the launch? | 五千 || 5,000 yuan | o3 o4
multi-hop | What did {A} eventually get for the weekends given up to that project? | a 5,000 bonus once it launched | o1 o4
"""),
    T("zshow", "zh", "tv", "s:cshow", """
B: 最近在看《{s}》 [s1]
B: 超好看 强推 [s2]
A: ok 周末看
--- +10
A: 《{s}》看完了 [s3]
A: 结局我哭死 [s4]
===
chinese | Which drama did {B} recommend? || {B}推荐了哪部剧？ | {s} || 《{s}》 | s1 s2
chinese | {A}看完那部剧后反应如何？ || How did {A} react to the end of that drama? | 结局看哭了 || cried at the ending | s3 s4
multi-hop | Did {A} get through the series {B} praised, and how did it land? | yes, finished {s} and cried at the ending | s1 s3 s4
"""),
    T("zwedding", "zh", "wedding", "f:cfriend", """
A: {f}{cmon+3}结婚 [w1]
A: 份子钱给多少啊
B: 看关系吧
A: 我打算给800 [w2]
B: 可以了
===
temporal | {f}哪个月办婚礼？ | {cmonth:w1+3} | w1
chinese | How much gift money is {A} planning to give at {f}'s wedding? || {A}准备给{f}包多少红包？ | 800 yuan || 800元 | w1 w2
"""),
    T("zdriving", "zh", "study", "", """
A: 我报名学车了 [e1]
A: {cmon+2}考科目二 [e1]
B: 加油 别压线
--- +m3
A: 科目二过了!!! [e2]
A: 一次过 还是满分 [e3]
B: 牛啊 以后你开车带我
===
chinese | How did {A} do on the driving skills test? || {A}的科目二考得怎么样？ | passed on the first try with full marks || 一次就过，满分 | e2 e3
temporal | When was {A}'s driving test scheduled? | {month:e1+2} | e1
"""),
)
# fmt: on

# --------------------------------------------------------------------------------------------------
# Filler: small talk with no fact anyone will ask about. X opens, Y answers; {meal} / {cmeal} vary.
# --------------------------------------------------------------------------------------------------

EN_FILLER = """
X: ugh
X: the bus just drove past me
X: like looked me in the eye and kept going
Y: lmaooo
Y: rip

X: what r u doing
Y: nothing. lying on the floor
X: mood

X: is it just me or is today 100 years long
Y: its so long
Y: i checked the time and it was 10:40
X: 😭

X: did you eat
Y: {meal}
X: fancy
Y: it was from a gas station

X: i need a nap
X: or a vacation
X: or both
Y: both

X: my phone is at 2%
X: if i die its because of that
Y: lol ok

X: sorry was in a meeting
Y: np
Y: it wasnt important lol

X: its so hot today
Y: i know im melting
X: my ac is making a noise too
Y: ominous

X: its raining AGAIN
Y: i forgot my umbrella obviously
X: of course you did

X: watching the worst show rn
Y: why
X: i cant stop
Y: thats how they get you

X: ok im going to be productive today
Y: lol
X: rude
Y: its 2pm

X: what should i have for dinner
Y: {meal}
X: had that yesterday
Y: cereal then
X: perfect

X: the wifi is so bad here
X: im typing from 1998
Y: lol

X: is it the weekend yet
Y: no
X: how
Y: time is fake

X: i cleaned my whole apartment
Y: who are you
X: idk, a new person

X: do u ever just stare at the fridge
Y: every night
X: nothing changes
Y: and yet

X: i fell asleep at 9 lol
Y: grandpa
X: it was amazing though

X: traffic is insane
X: been sitting here 20 min
Y: podcast time
X: ive listened to all of them

X: can i call you later
Y: ya after 8?
X: 👍

X: wait did u see the video i sent
Y: not yet
Y: omg
Y: LMAO
Y: the dog at the end
X: RIGHT

X: my neighbor is drilling again
Y: at 8am??
X: at 8am
Y: war crime

X: i bought a plant
Y: rip plant
X: im going to keep this one alive
Y: sure

X: mondays should be illegal
Y: agreed
Y: sign me up

X: whats your weekend looking like
Y: absolutely nothing
Y: im so excited
X: same honestly

X: omg i just remembered
X: no nvm
Y: ???
X: it was nothing lol
Y: now im curious

X: coffee #3
Y: thats a lot
X: its a lot
Y: drink water

X: hows your day going
Y: fine
Y: tired
Y: u?
X: same tbh

X: i have so many emails
Y: delete them all
X: tempting

X: did you get home ok
Y: yes!
Y: thanks for tonight
X: ❤️

X: just got out of the shower and realized i forgot my towel
Y: lol
Y: classic

X: the cat next door is on my balcony again
Y: adopt him
X: hes not mine to adopt
Y: he chose you

X: should i get bangs
Y: no
X: ok

X: im so bored
Y: go outside
X: its cold
Y: then stay bored

X: this song is stuck in my head
Y: which one
X: idk the one from the commercial
Y: thats every song

X: helping my bro move a couch this weekend
Y: pivot
X: PIVOT
Y: lol

X: i need a new phone case
X: this one is disgusting
Y: get the clear one
X: they turn yellow though

X: ticket line at the movies was insane today
Y: for what
X: some kids movie lol

X: laundry day
Y: fun
X: its not

X: i think im getting sick
Y: noooo
Y: drink tea
X: i only have coffee
Y: thats not how it works

X: look at the moon rn
Y: omg
Y: its huge
X: 🌕

X: i missed my stop
Y: again?
X: its a tradition at this point

X: reminder to drink water
Y: ok mom
X: 💧

X: remember that guy from the bar
Y: which one
X: the one with the hat
Y: oh god yes
X: he followed me on insta
Y: 💀

X: whats the wifi password at your place again
Y: its on the fridge
X: im not at your place
Y: then why do u need it
X: fair

X: im making {meal}
Y: invite me
X: too late

X: do i text him back
Y: no
X: ok
X: i did
Y: of course you did

X: my mom just sent me a 4 min voice memo
Y: lol what about
X: the weather

X: my cousin got a new phone and keeps sending me blurry pics
Y: lol upgrade
X: somehow worse

X: work was so long today
Y: same
X: i want to quit and become a goat farmer
Y: ill visit

X: someone in my office microwaved fish
Y: crime
X: we will find out who

X: should i go to the thing tonight
Y: what thing
X: the work thing
Y: no
X: ok good

X: i just walked into a glass door
Y: HAHAHA
Y: are u ok
X: my pride is not

X: ok i really am going to sleep early tonight
Y: sure you are
X: i mean it this time

X: made {meal} and it was mid
Y: lol
Y: mid is fine

X: why is everyone getting engaged
Y: its that age
X: i just want a sandwich

X: guess who i just saw at the grocery store
Y: who
X: our old math teacher
Y: NO
X: he had so much cereal

X: my landlord texted me "we need to talk"
Y: uh oh
X: it was about the recycling
Y: phew

X: the group chat is so dead
Y: its your turn to revive it
X: no its yours

X: i really need a haircut
Y: go tomorrow
X: i will not go tomorrow
"""

ZH_FILLER = """
X: 在吗
Y: 在
X: 没事 就是无聊 哈哈
Y: 😂

X: 好累啊今天
Y: 我也是
Y: 开了一天的会
X: 太真实了

X: 吃了吗
Y: 刚吃 {cmeal}
X: 羡慕 我还在加班

X: 下雨了 记得带伞
Y: 已经淋湿了 😭
X: 哈哈哈哈

X: 周末干嘛
Y: 躺着
Y: 什么都不想干
X: 我也是

X: 笑死我了
X: 你看我发你的视频没
Y: 还没
Y: 哈哈哈哈哈哈 绝了
X: 对吧

X: 今天好冷
Y: 我穿了两条裤子
X: 哈哈哈

X: 我先去洗澡了
Y: ok
X: 等下说

X: 下班了吗
Y: 还没 😭
Y: 今天要 work 到很晚
X: 辛苦了

X: 明天几点起
Y: 七点
X: 救命
Y: 习惯了

X: 刚看完一部电影 好无聊
Y: 哪部
X: 不记得名字了 哈哈
Y: ……

X: 我又胖了
Y: 没有吧
X: 有
X: 三斤
Y: 那是水

X: 地铁好挤
Y: 早高峰就这样
X: 我被挤成照片了

X: 你那边天气怎么样
Y: 超好 出太阳了
X: 我这边还在下雨

X: 睡了吗
Y: 还没
Y: 在刷手机
X: 一样 哈哈

X: 我点了外卖
X: {cmeal}
Y: 又是这个
X: 好吃啊

X: 今天 meeting 开了一整天
Y: 辛苦辛苦
X: 脑子已经不转了

X: 楼上又在装修
Y: 还没装完啊
X: 三个月了 无语

X: 我手机快没电了
Y: 那先不聊了
X: 好 晚点说

X: 想喝奶茶
Y: 喝啊
X: 在减肥
Y: 少糖就行 哈哈

X: 刚跑完步
Y: 厉害
X: 就跑了两公里 哈哈

X: 你看今天的新闻没
Y: 哪个
X: 算了 不重要
Y: ？？

X: 好想放假
Y: 还有两周
X: 两周好长

X: 我 boss 今天心情很好
Y: 难得
X: 所以我很害怕

X: 周末有空吗
Y: 看情况
Y: 怎么了
X: 想去逛街
Y: 可以啊

X: 我妈又给我寄了一箱吃的
Y: 好幸福
X: 太多了吃不完

X: 今天 so busy
Y: 我也是
Y: 下周就好了
X: 希望吧

X: 快递到了吗
Y: 到了
Y: 谢谢!!
X: 不客气 😘

X: 电梯坏了
X: 我爬了十八楼
Y: 天哪
Y: 就当锻炼身体了

X: 我换了个新手机壳
Y: 什么颜色
X: 紫色的 哈哈

X: 好想出去玩
Y: 等 project 结束吧
X: 结束不了的

X: 今天做了{cmeal}
Y: 自己做的？
X: 对 厉害吧
Y: 拍照了吗

X: 我同事搬家了 让我去帮忙
Y: 你去了？
X: 去了 搬了一下午 腰断了

X: lol 笑死
X: 我刚在电梯里放了个屁
Y: 哈哈哈哈哈哈哈
Y: 有人吗
X: 有 三个人

X: 你最近在追什么剧
Y: 没追 太忙了
X: 好吧

X: 这个月工资还没发
Y: 我也是
X: 穷死了

X: 我想养只狗
Y: 你连自己都养不活
X: ……扎心了

X: 今天遇到一个超帅的外卖小哥
Y: 然后呢
X: 没有然后 哈哈

X: 明天要早起 先睡了
Y: 好 晚安
X: 晚安 😴

X: 我又迟到了
Y: 几分钟
X: 二十
Y: 哈哈哈 扣钱吗
X: 扣

X: 刚在路上看到一只好胖的猫
Y: 拍了吗
X: 跑了 哈哈
"""

# fmt: off
MEALS = (
    "leftover pizza", "a sad salad", "ramen", "tacos", "chicken and rice", "pasta", "a burrito",
    "instant noodles", "pho", "a bagel", "curry", "nachos", "a poke bowl", "grilled cheese",
)
CMEALS = (
    "麻辣烫", "黄焖鸡", "兰州拉面", "螺蛳粉", "煎饼果子", "酸菜鱼", "沙县小吃", "炸鸡", "饺子", "番茄炒蛋",
)

EN_REACT = (
    "lol", "haha", "hahaha", "lmao", "lmaooo", "ok", "okk", "kk", "👍", "😂", "😂😂", "😭", "omg", "no way",
    "ikr", "true", "fair", "same", "mood", "yesss", "nice", "oof", "rip", "wait what", "hmm", "sure", "ya",
    "yep", "nah", "🙏", "❤️", "ngl same", "idk", "tru", "💀", "bruh", "stoppp", "lolol", "ok ok", "🥲",
    "love that", "hahah yes",
)
ZH_REACT = (
    "哈哈哈", "哈哈哈哈哈", "好的", "嗯嗯", "好滴", "笑死", "真的假的", "我也是", "绝了", "救命", "无语", "啊啊啊", "太真实了", "ok", "👍", "😂",
    "好吧", "行", "可以", "666", "服了", "lol 笑死", "哈哈 same", "对对对", "嗯",
)
EN_OPEN_DAY = ("hey", "heyyy", "hiii", "yo", "omg", "ok so", "are u alive", "hello??", "👋", "sup", "hi hi")
EN_OPEN_MORNING = ("morning!!", "gm ☀️", "good morning", "morninggg")
EN_OPEN_NIGHT = ("u up?", "cant sleep", "are u awake", "heyy")
ZH_OPEN_DAY = ("在吗", "hi", "哈喽", "嘿", "在干嘛", "hello")
ZH_OPEN_MORNING = ("早", "早上好", "早安 ☀️")
ZH_OPEN_NIGHT = ("睡了吗", "还没睡吧", "在吗")
EN_CLOSE_DAY = ("ttyl", "ok gtg", "brb", "talk later", "cya", "👋", "ok back to work", "gotta run")
EN_CLOSE_NIGHT = ("good night", "gn", "night!!", "sleep well", "gnnn 😴", "ok bed", "going to sleep, night")
ZH_CLOSE_DAY = ("先忙了", "拜拜", "回头聊", "我去干活了", "886", "ok 先这样")
ZH_CLOSE_NIGHT = ("晚安", "睡了 晚安", "晚安安", "好 睡觉 🌙", "晚安 明天说")

# Casual spelling: (word, spelling, chance) for the words of filler messages.
TYPOS: tuple[tuple[str, str, float], ...] = (
    ("the", "teh", 0.08), ("you", "u", 0.5), ("your", "ur", 0.5), ("tomorrow", "tmrw", 0.6),
    ("receive", "recieve", 0.5), ("because", "bc", 0.5), ("really", "rly", 0.3), ("definitely", "definately", 0.4),
    ("probably", "prob", 0.4), ("though", "tho", 0.6), ("people", "ppl", 0.5), ("going to", "gonna", 0.5),
    ("want to", "wanna", 0.5), ("weird", "wierd", 0.3), ("okay", "ok", 0.5), ("thanks", "thx", 0.4),
    ("please", "pls", 0.5), ("im", "i'm", 0.2), ("dont", "don't", 0.15),
)


def parse_filler(text: str) -> list[list[tuple[str, str]]]:
    dialogues: list[list[tuple[str, str]]] = []
    for block in text.strip().split("\n\n"):
        rows = [line.split(": ", 1) for line in block.strip().splitlines()]
        dialogues.append([(who, said) for who, said in rows])
    return dialogues


# --------------------------------------------------------------------------------------------------
# The conversations.
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Friend:
    name: str
    zh: float  # the share of this friend's small talk written in Chinese


@dataclass(frozen=True)
class Spec:
    a: Friend
    b: Friend
    start: datetime
    months: int  # the span of the sessions
    sessions: int
    en_arcs: int
    zh_arcs: int


SPECS: tuple[Spec, ...] = (
    Spec(Friend("Jake", 0), Friend("Priya", 0), datetime(2025, 2, 3), 4, 24, 10, 0),
    Spec(Friend("Emma", 0), Friend("Lily", 0), datetime(2025, 3, 10), 3, 20, 9, 0),
    Spec(Friend("Mei", 0.8), Friend("Chen", 0.6), datetime(2025, 4, 2), 5, 26, 3, 7),
    Spec(Friend("Marcus", 0), Friend("Dev", 0), datetime(2025, 5, 19), 2, 18, 8, 0),
    Spec(Friend("Sofia", 0), Friend("Hannah", 0), datetime(2025, 6, 7), 6, 27, 11, 0),
    Spec(Friend("Wei", 0.7), Friend("Jing", 0.7), datetime(2025, 7, 14), 4, 22, 3, 6),
    Spec(Friend("Tyler", 0), Friend("Nate", 0), datetime(2025, 8, 1), 3, 21, 10, 0),
    Spec(Friend("Xiaoyu", 0.8), Friend("Olivia", 0.3), datetime(2025, 9, 8), 5, 25, 4, 6),
    Spec(Friend("Hao", 0.85), Friend("Lei", 0.75), datetime(2025, 10, 20), 4, 23, 2, 7),
    Spec(Friend("Chloe", 0), Friend("Maya", 0), datetime(2025, 11, 3), 5, 27, 11, 0),
    Spec(Friend("Ling", 0.6), Friend("Sam", 0.2), datetime(2025, 12, 1), 4, 21, 4, 5),
    Spec(Friend("Ben", 0), Friend("Ryan", 0), datetime(2026, 1, 12), 3, 19, 9, 0),
)

_TYPO_PATTERNS = tuple((re.compile(rf"\b{re.escape(word)}\b"), typo, p) for word, typo, p in TYPOS)

Message = tuple[str, str, int, tuple[str, ...]]  # speaker, text, arc index (-1: filler), keys


def casual(text: str, rng: random.Random) -> str:
    for pattern, typo, chance in _TYPO_PATTERNS:

        def swap(m: re.Match[str], typo: str = typo, chance: float = chance) -> str:
            return typo if rng.random() < chance else m.group(0)

        text = pattern.sub(swap, text)
    return text


def session_dates(spec: Spec, rng: random.Random) -> list[datetime]:
    span = spec.months * 30
    days = sorted(rng.sample(range(span + 1), spec.sessions))
    out = []
    for day in days:
        hour = rng.choice((8, 9, 11, 12, 13, 15, 17, 18, 19, 20, 21, 21, 22, 22, 23))
        out.append(spec.start + timedelta(days=day, hours=hour, minutes=rng.randrange(60)))
    return out


def instantiate(template: Template, spec: Spec, used: set[str], rng: random.Random) -> Arc:
    """Slots filled with values not yet used in this conversation; A is either friend."""
    # what is said in Chinese is more often about the friend who writes more of it
    share = spec.a.zh / (spec.a.zh + spec.b.zh) if template.lang == "zh" else 0.5
    subject, other = (spec.a, spec.b) if rng.random() < share else (spec.b, spec.a)
    values = {"A": subject.name, "B": other.name}
    for slot, pool in template.slots:
        free = [v for v in POOLS[pool] if v not in used and v not in values.values()]
        values[slot] = rng.choice(free)
        used.add(values[slot])
    parts, asks = parse_script(template)
    who = {"A": subject.name, "B": other.name}
    arc_parts = [
        Part(
            p.gap_days,
            p.gap_months,
            [Line(who[ln.who], fill_slots(ln.text, values), ln.keys) for ln in p.lines],
        )
        for p in parts
    ]
    arc_asks = [
        Ask(a.category, fill_slots(a.question, values), fill_slots(a.answer, values), a.keys) for a in asks
    ]
    return Arc(template.name, arc_parts, arc_asks)


def _earliest(prev: datetime, part: Part) -> datetime:
    if part.gap_months:
        year, month = add_months(prev, part.gap_months)
        return datetime(year, month, 1)
    return datetime(prev.year, prev.month, prev.day) + timedelta(days=part.gap_days)


def _try_place(
    parts: list[Part], dates: list[datetime], load: list[int], rng: random.Random
) -> list[int] | None:
    chosen: list[int] = []
    for part in parts:
        size = len(part.lines)
        if not chosen:
            first = rng.randrange(len(dates) - len(parts) + 1)
            if load[first] + size > ARC_LINES_PER_SESSION:
                return None
            chosen.append(first)
            continue
        earliest = _earliest(dates[chosen[-1]], part)
        later = [
            i
            for i in range(chosen[-1] + 1, len(dates))
            if dates[i] >= earliest and load[i] + size <= ARC_LINES_PER_SESSION
        ]
        if not later:
            return None
        near = later[:5]
        least = min(load[i] for i in near)
        chosen.append(rng.choice([i for i in near if load[i] <= least + 4]))
    return chosen


def place(arc: Arc, dates: list[datetime], load: list[int], rng: random.Random) -> bool:
    for _ in range(60):
        chosen = _try_place(arc.parts, dates, load, rng)
        if chosen is not None:
            arc.sessions = chosen
            for idx, part in zip(chosen, arc.parts, strict=True):
                load[idx] += len(part.lines)
            return True
    return False


def choose_arcs(
    spec: Spec, dates: list[datetime], usage: dict[str, int], rng: random.Random
) -> tuple[list[Arc], list[int]]:
    """The conversation's arcs, least-used templates first, one per group, each placed in sessions."""
    arcs: list[Arc] = []
    load = [0] * len(dates)
    used: set[str] = {spec.a.name, spec.b.name}
    groups: list[str] = []
    for templates, wanted in ((ZH_TEMPLATES, spec.zh_arcs), (EN_TEMPLATES, spec.en_arcs)):
        draws = [rng.random() for _ in templates]
        order = sorted(range(len(templates)), key=lambda i: (usage.get(templates[i].name, 0), draws[i]))
        taken = 0
        for i in order:
            template = templates[i]
            if taken == wanted:
                break
            if template.group in groups:
                continue
            arc = instantiate(template, spec, used, rng)
            if place(arc, dates, load, rng):
                arcs.append(arc)
                groups.append(template.group)
                usage[template.name] = usage.get(template.name, 0) + 1
                taken += 1
        if taken < wanted:
            raise RuntimeError(f"{spec.a.name}/{spec.b.name}: placed {taken} of {wanted} arcs")
    return arcs, load


class Filler:
    """Small talk for one conversation: dialogues dealt from shuffled decks, so few repeat soon."""

    def __init__(self, spec: Spec, rng: random.Random) -> None:
        self.spec, self.rng = spec, rng
        self.pools = {"en": parse_filler(EN_FILLER), "zh": parse_filler(ZH_FILLER)}
        self.decks: dict[str, list[int]] = {"en": [], "zh": []}

    def _lang(self, friend: Friend) -> str:
        return "zh" if self.rng.random() < friend.zh else "en"

    def _deal(self, lang: str) -> list[tuple[str, str]]:
        if not self.decks[lang]:
            self.decks[lang] = list(range(len(self.pools[lang])))
            self.rng.shuffle(self.decks[lang])
        return self.pools[lang][self.decks[lang].pop()]

    def _text(self, text: str, lang: str) -> str:
        text = text.replace("{meal}", self.rng.choice(MEALS)).replace("{cmeal}", self.rng.choice(CMEALS))
        return casual(text, self.rng) if lang == "en" else text

    def dialogue(self) -> list[Message]:
        x, y = (self.spec.a, self.spec.b) if self.rng.random() < 0.5 else (self.spec.b, self.spec.a)
        lang = "zh" if self.rng.random() < (x.zh + y.zh) / 2 else "en"
        out: list[Message] = [
            ((x if who == "X" else y).name, self._text(text, lang), -1, ()) for who, text in self._deal(lang)
        ]
        if self.rng.random() < 0.3:
            friend = y if out[-1][0] == x.name else x
            react = ZH_REACT if self._lang(friend) == "zh" else EN_REACT
            out.append((friend.name, self.rng.choice(react), -1, ()))
        return out

    def opener(self, hour: int) -> list[Message]:
        friend = self.rng.choice((self.spec.a, self.spec.b))
        zh = self._lang(friend) == "zh"
        pool: tuple[str, ...]
        if hour < 11:
            pool = ZH_OPEN_MORNING if zh else EN_OPEN_MORNING
        elif hour >= 22:
            pool = ZH_OPEN_NIGHT if zh else EN_OPEN_NIGHT
        else:
            pool = ZH_OPEN_DAY if zh else EN_OPEN_DAY
        return [(friend.name, self.rng.choice(pool), -1, ())]

    def closer(self, hour: int) -> list[Message]:
        out: list[Message] = []
        first = self.rng.choice((self.spec.a, self.spec.b))
        second = self.spec.b if first is self.spec.a else self.spec.a
        for friend in (first, second)[: 1 + (self.rng.random() < 0.5)]:
            zh = self._lang(friend) == "zh"
            pool: tuple[str, ...]
            if hour >= 21:
                pool = ZH_CLOSE_NIGHT if zh else EN_CLOSE_NIGHT
            else:
                pool = ZH_CLOSE_DAY if zh else EN_CLOSE_DAY
            out.append((friend.name, self.rng.choice(pool), -1, ()))
        return out


def build_session(
    ts: datetime, parts: list[tuple[int, Part]], filler: Filler, rng: random.Random
) -> list[Message]:
    """One day's messages: an opener, small talk with the arc parts dropped in, maybe a goodbye."""
    arc_blocks = [
        [(line.who, fill_text_dates(line.text, ts), arc, line.keys) for line in part.lines]
        for arc, part in parts
    ]
    arc_lines = sum(len(b) for b in arc_blocks)
    target = max(rng.randint(10, 32), arc_lines + 6)
    closing = filler.closer(ts.hour) if rng.random() < 0.75 else []
    blocks: list[list[Message]] = []
    count = arc_lines + 1 + len(closing)
    while count < target:
        block = filler.dialogue()
        if count + len(block) > MAX_SESSION:
            break
        blocks.append(block)
        count += len(block)
    for block in arc_blocks:
        blocks.insert(rng.randint(0, len(blocks)), block)
    messages = filler.opener(ts.hour)
    for block in blocks:
        messages.extend(block)
    return messages + closing


def build(number: int, spec: Spec, usage: dict[str, int], rng: random.Random) -> Conversation:
    conv = Conversation(f"chat-{number:02d}", "dev" if number % 2 else "test", spec.a.name, spec.b.name)
    dates = session_dates(spec, rng)
    arcs, _ = choose_arcs(spec, dates, usage, rng)
    filler = Filler(spec, rng)
    where: dict[tuple[int, str], list[str]] = {}
    when: dict[tuple[int, str], datetime] = {}
    for s, ts in enumerate(dates):
        parts = [
            (i, arc.parts[k]) for i, arc in enumerate(arcs) for k, idx in enumerate(arc.sessions) if idx == s
        ]
        rng.shuffle(parts)
        conv.new_session(ts)
        for speaker, text, arc_index, keys in build_session(ts, parts, filler, rng):
            dia = conv.say(speaker, text)
            for key in keys:
                where.setdefault((arc_index, key), []).append(dia)
                when.setdefault((arc_index, key), ts)
    for evidence, category, question, answer in resolve_questions(arcs, where, when, rng):
        conv.ask(question, answer, evidence, category)
    return conv


def resolve_questions(
    arcs: list[Arc],
    where: dict[tuple[int, str], list[str]],
    when: dict[tuple[int, str], datetime],
    rng: random.Random,
) -> list[tuple[list[str], str, str, str]]:
    """(evidence, category, question, answer) of every arc, dates filled in, in the order of their evidence."""
    out = []
    zh_next = rng.random() < 0.5  # "chinese" questions alternate between a Chinese and an English wording
    for i, arc in enumerate(arcs):
        arc_when = {key: ts for (j, key), ts in when.items() if j == i}
        for ask in arc.asks:
            evidence = list(dict.fromkeys(d for key in ask.keys for d in where[(i, key)]))
            question, answer = pick(ask, rng, zh_next if ask.category == "chinese" else None)
            if ask.category == "chinese":
                zh_next = not zh_next
            out.append((evidence, ask.category, fill_qa_dates(question, arc_when), fill_qa_dates(answer, arc_when)))
    out.sort(key=lambda a: _position(a[0][0]))
    return out


def pick(ask: Ask, rng: random.Random, zh: bool | None = None) -> tuple[str, str]:
    """One of a question's wordings ("a || b"), with its answer when the answers vary alike (a language);
    `zh` asks for the wording written in Chinese (True) or not (False) when there is one of each."""
    questions, answers = ask.question.split(" || "), ask.answer.split(" || ")
    if len(answers) not in (1, len(questions)):
        raise ValueError(f"{ask.question!r}: {len(answers)} answers for {len(questions)} wordings")
    matching = [i for i, q in enumerate(questions) if written_in_chinese(q) == zh]
    i = rng.choice(matching) if zh is not None and matching else rng.randrange(len(questions))
    return questions[i], answers[i if len(answers) > 1 else 0]


def written_in_chinese(text: str) -> bool:
    """More Chinese characters than English words' worth of letters (names aside, the wording's language)."""
    return len(_CJK.findall(text)) * 3 > len(_LATIN.findall(text))


def _position(dia: str) -> tuple[int, int]:
    session, turn = dia[1:].split(":")
    return int(session), int(turn)


def generate() -> list[Conversation]:
    """The twelve conversations, the same on every run."""
    rng = random.Random(SEED)
    usage: dict[str, int] = {}
    conversations = [build(n, spec, usage, rng) for n, spec in enumerate(SPECS, start=1)]
    for conv in conversations:
        check(conv)
    return conversations


def check(conv: Conversation) -> None:
    """The shape the set promises: 300-700 turns in 15-40 sessions of 8-40 messages, 20+ questions whose
    evidence names turns of their own conversation."""
    sizes = [len(turns) for _, turns in conv.sessions]
    known = {t["dia_id"] for _, turns in conv.sessions for t in turns}
    problems = []
    if not 300 <= sum(sizes) <= 700 or not 15 <= len(sizes) <= 40:
        problems.append(f"{sum(sizes)} turns in {len(sizes)} sessions")
    if not 8 <= min(sizes) <= max(sizes) <= MAX_SESSION:
        problems.append(f"session sizes {min(sizes)}..{max(sizes)}")
    if len(conv.qa) < 20:
        problems.append(f"{len(conv.qa)} questions")
    problems += [f"unknown evidence {e}" for q in conv.qa for e in q["evidence"] if e not in known]
    if problems:
        raise ValueError(f"{conv.sample_id}: {'; '.join(problems)}")
