"""The same conversations written twice, in Chinese and in English: two friends on a messenger, and a
user with an assistant. `bilingual_zh` and `bilingual_en` hold the same sessions, turn order, dia_ids,
questions and evidence; `bilingual_cross` holds the Chinese conversations asked in English, so a bench
can tell "recall reads Chinese worse" from "recall cannot cross languages".

The Chinese is written as people type it, not translated word by word: colloquial, particles, English
words where Chinese speakers use them (app names, offer, deadline, bug, code identifiers). Each template
line carries both wordings (`English || 中文`), so content, order and evidence stay parallel by
construction. Information sits in small scripted episodes ("arcs") spread over sessions on different
dates, among small talk and distractor turns on neighbouring topics (a cousin's move, a colleague's
exam, another bug). Questions are paraphrased, third person, in the file's language.

Everything is drawn from one seeded `random.Random`: no clock, no network, no set or hash order.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from bench.sets.common import Conversation

SEED = 45_005
LANGS = ("en", "zh")
BOT = {"en": "Assistant", "zh": "助手"}

# --------------------------------------------------------------------------------------------------
# Script language (one template = one arc):
#
#   A: english text || 中文 [key]   a turn by the arc's subject (the user, in help chats) or B (the other
#                                   friend, or the assistant); [key] or [k1,k2] names it for evidence
#   --- +N                          the next part, in a later session at least N days on
#   ===                             then questions: `category | en question | zh question | en answer |
#                                   zh answer | keys`
#
# `\n` in a turn is a line break (assistant replies, code). Slots: {A} {B} the speakers, {x} a value of
# the template's pool for x ("English=中文", or one form for both). In turns, {mon+N} is the month N
# months after the session and {wd+N} the weekday N days after it; in questions {date:key} and
# {month:key+N} the date (or month) of the session holding key's first turn.
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Template:
    name: str
    shape: str  # "chat" | "help"
    slots: tuple[tuple[str, str], ...]  # (slot, pool)
    script: str


@dataclass
class Line:
    who: str  # "A" | "B"
    text: dict[str, str]  # lang -> text
    keys: tuple[str, ...]


@dataclass
class Part:
    gap_days: int
    lines: list[Line]


@dataclass
class Ask:
    category: str
    question: dict[str, str]
    answer: dict[str, str]
    keys: tuple[str, ...]


@dataclass
class Arc:
    name: str
    parts: list[Part]
    asks: list[Ask]
    sessions: list[int] = field(default_factory=list)


_LINE = re.compile(r"^([AB]):\s*(.*?)\s*\|\|\s*(.*?)\s*(?:\[([\w,]+)\])?$")
_GAP = re.compile(r"^---\s*(?:\+(\d+))?$")
_SLOT = re.compile(r"\{([A-Za-z]\w*)\}")
_TEXT_DATE = re.compile(r"\{(mon|wd)([+-]\d+)\}")
_QA_DATE = re.compile(r"\{(date|month):(\w+?)([+-]\d+)?\}")
WEEKDAYS = {
    "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "zh": ("周一", "周二", "周三", "周四", "周五", "周六", "周日"),
}


def T(name: str, shape: str, slots: str, script: str) -> Template:
    pairs = tuple((s.split(":")[0], s.split(":")[1]) for s in slots.split())
    return Template(name, shape, pairs, script)


def parse_script(template: Template) -> tuple[list[Part], list[Ask]]:
    body, _, questions = template.script.partition("\n===\n")
    parts = [Part(0, [])]
    for raw in body.strip().splitlines():
        row = raw.strip()
        if not row:
            continue
        if gap := _GAP.match(row):
            parts.append(Part(int(gap.group(1) or 1), []))
            continue
        m = _LINE.match(row)
        if not m:
            raise ValueError(f"{template.name}: not a script line: {row!r}")
        keys = tuple(k for k in (m.group(4) or "").split(",") if k)
        text = {"en": m.group(2).replace("\\n", "\n"), "zh": m.group(3).replace("\\n", "\n")}
        parts[-1].lines.append(Line(m.group(1), text, keys))
    asks = []
    for row in questions.strip().splitlines():
        if not row.strip():
            continue
        f = [x.strip() for x in row.split(" | ")]
        if len(f) != 6:
            raise ValueError(f"{template.name}: not a question line: {row!r}")
        asks.append(Ask(f[0], {"en": f[1], "zh": f[2]}, {"en": f[3], "zh": f[4]}, tuple(f[5].split())))
    known = {k for p in parts for line in p.lines for k in line.keys}
    for ask in asks:
        if missing := [k for k in ask.keys if k not in known]:
            raise ValueError(f"{template.name}: {ask.question['en']!r} names unknown keys {missing}")
    return parts, asks


def fill(text: str, values: dict[str, dict[str, str]], lang: str) -> str:
    def one(m: re.Match[str]) -> str:
        if m.group(1) not in values:
            raise KeyError(f"no value for slot {m.group(1)!r} in {text!r}")
        return values[m.group(1)][lang]

    return _SLOT.sub(one, text)


def add_months(ts: datetime, n: int) -> tuple[int, int]:
    k = ts.year * 12 + ts.month - 1 + n
    return k // 12, k % 12 + 1


def month_text(year: int, month: int, lang: str, with_year: bool) -> str:
    if lang == "zh":
        return f"{year}年{month}月" if with_year else f"{month}月"
    name = datetime(year, month, 1).strftime("%B")
    return f"{name} {year}" if with_year else name


def fill_text_dates(text: str, ts: datetime, lang: str) -> str:
    def one(m: re.Match[str]) -> str:
        kind, n = m.group(1), int(m.group(2))
        if kind == "mon":
            return month_text(*add_months(ts, n), lang, with_year=False)
        return WEEKDAYS[lang][(ts + timedelta(days=n)).weekday()]

    return _TEXT_DATE.sub(one, text)


def fill_qa_dates(text: str, when: dict[str, datetime], lang: str) -> str:
    def one(m: re.Match[str]) -> str:
        kind, ts, n = m.group(1), when[m.group(2)], int(m.group(3) or 0)
        if kind == "month":
            return month_text(*add_months(ts, n), lang, with_year=True)
        day = ts + timedelta(days=n)
        return f"{day.year}年{day.month}月{day.day}日" if lang == "zh" else f"{day.day} {day:%B} {day.year}"

    return _QA_DATE.sub(one, text)


# --------------------------------------------------------------------------------------------------
# Pools ("English=中文"; a value without "=" reads the same in both).
# --------------------------------------------------------------------------------------------------

# fmt: off
POOLS: dict[str, tuple[str, ...]] = {
    "city": (
        "Hangzhou=杭州", "Chengdu=成都", "Shenzhen=深圳", "Nanjing=南京", "Suzhou=苏州", "Xiamen=厦门",
        "Wuhan=武汉", "Xi'an=西安", "Chongqing=重庆", "Changsha=长沙", "Qingdao=青岛", "Kunming=昆明",
        "Tianjin=天津", "Hefei=合肥", "Guangzhou=广州", "Shanghai=上海",
    ),
    "trip": (
        "Dali=大理", "Sanya=三亚", "Guilin=桂林", "Zhangjiajie=张家界", "Harbin=哈尔滨", "Dunhuang=敦煌",
        "Jingdezhen=景德镇", "Tokyo=东京", "Osaka=大阪", "Chiang Mai=清迈", "Bangkok=曼谷", "Seoul=首尔",
    ),
    "person": (
        "Zhang Lei=张磊", "Xiaomei=小美", "Liu Yang=刘洋", "Wang Qian=王倩", "Awei=阿伟", "Zhouzhou=周周",
        "Lao Li=老李", "Xiaolin=小林", "Mengqi=梦琪", "Haoran=浩然", "Tiantian=甜甜", "Da Liu=大刘",
    ),
    "company": (
        "ByteDance=字节", "Tencent=腾讯", "Alibaba=阿里", "Meituan=美团", "NetEase=网易",
        "Xiaohongshu=小红书", "Huawei=华为", "JD=京东", "miHoYo=米哈游", "DJI=大疆",
    ),
    "cat": (
        "Tuanzi=团子", "Kele=可乐", "Niangao=年糕", "Doudou=豆豆", "Buding=布丁", "Tangyuan=汤圆",
        "Naicha=奶茶", "Mantou=馒头",
    ),
    "item": (
        "air fryer=空气炸锅", "robot vacuum=扫地机器人", "Dyson hair dryer=戴森吹风机", "projector=投影仪",
        "massage chair=按摩椅", "coffee machine=咖啡机", "dishwasher=洗碗机", "monitor=显示器",
    ),
    "price": ("899", "1299", "1599", "2199", "2499", "3199", "1799", "999"),
    "show": (
        "The Long Season=漫长的季节", "Blossoms Shanghai=繁花", "The Knockout=狂飙", "The Bad Kids=隐秘的角落",
        "To the Wonder=我的阿勒泰", "Meet Yourself=去有风的地方", "A Lifelong Journey=人世间",
        "Minning Town=山海情",
    ),
    "hotpot": (
        "Lao Matou Hotpot=老码头火锅", "Xiaolongkan=小龙坎", "Banu Hotpot=巴奴", "Peijie Hotpot=珮姐火锅",
        "Tan Duck Blood=谭鸭血", "Dalongyi=大龙燚",
    ),
    "phone": (
        "139 1826 4471", "186 0217 3390", "158 6634 0912", "137 5102 8846", "189 3371 2205",
        "135 8820 6617", "152 4096 3378", "177 2653 0194",
    ),
    "sport": ("swimming=游泳", "boxing=拳击", "yoga=瑜伽", "badminton=羽毛球", "tennis=网球", "climbing=攀岩"),
    "rel": ("dad=爸", "mom=妈", "grandma=奶奶", "grandpa=外公"),
    "gift": (
        "a silk scarf=一条丝巾", "a massage gun=一个筋膜枪", "a tea set=一套茶具", "a pair of running shoes=一双跑鞋",
        "a Kindle=一个Kindle", "a gold bracelet=一个金手镯",
    ),
    "project": ("shiji", "petpal", "ledgerly", "tripnote", "mealbot", "inkwell", "quizly", "tidyhome"),
    "framework": ("FastAPI", "Flask", "Django", "Express", "NestJS", "Gin", "Spring Boot"),
    "db": ("PostgreSQL", "MySQL", "MongoDB", "SQLite"),
    "func": ("parse_order", "load_config", "sync_users", "build_report", "fetch_prices", "merge_rows"),
    "field": ("user_id", "price", "created_at", "token", "sku", "order_no"),
    "lang": ("Python", "TypeScript", "Go", "Kotlin", "Rust"),
    "exam": ("IELTS=雅思", "TOEFL=托福", "GRE", "JLPT N2=日语N2", "CPA exam=CPA考试"),
    "allergy": ("peanuts=花生", "shrimp=虾", "mango=芒果", "kiwi=猕猴桃", "eggs=鸡蛋"),
    "rent": ("3800", "4200", "4500", "5200", "6000"),
    "race": ("Xiamen=厦门", "Wuxi=无锡", "Lanzhou=兰州", "Chongqing=重庆", "Beijing=北京", "Shanghai=上海"),
}
# fmt: on

# --------------------------------------------------------------------------------------------------
# Friends on a messenger: short turns, one thought over several messages.
# --------------------------------------------------------------------------------------------------

# fmt: off
CHAT_TEMPLATES: tuple[Template, ...] = (
    T("move", "chat", "c1:city c2:city c3:city p:person", r"""
A: ok so I have news || 跟你说个事
A: I'm moving to {c1}, probably around {mon+2} || 我要搬去{c1}了 大概{mon+2}吧 [m1]
B: wait what?? since when || 啊？？啥时候定的
A: {p} got an offer there and I can work remote anyway || {p}在那边拿了个offer 我反正可以remote [why]
B: nooo who am I gonna eat hotpot with || 不要啊 以后谁陪我吃火锅
A: lol come visit || 哈哈来找我玩呗
--- +8
B: btw my cousin just moved to {c3} || 对了我表姐刚搬去{c3} [d1]
B: everyone's leaving me 😭 || 大家都走了😭
A: haha does she like it there || 哈哈她喜欢那边吗
B: says the food is too spicy || 她说吃的太辣了
--- +10
A: update on the move || 搬家的事有变
A: {c1} is off || {c1}不去了 [m2]
A: {p}'s company moved the position to {c2}, so it's {c2} now || {p}公司把岗位调到{c2}了 所以现在是去{c2} [m3]
B: ok honestly {c2} sounds better || 也行 {c2}感觉更好
A: rent is higher though || 就是房租贵一点
===
knowledge-update | Which city is {A} moving to in the end? | {A}最后是搬去哪个城市？ | {c2} | {c2} | m2 m3
single-hop | Why is {A} relocating in the first place? | {A}当初为什么要搬走？ | {p} got a job offer there and {A} can work remotely | {p}在那边拿到offer，{A}可以远程办公 | why
single-hop | Which of {B}'s relatives moved, and to where? | {B}家哪个亲戚搬家了，搬去了哪？ | {B}'s cousin, to {c3} | {B}的表姐，搬去了{c3} | d1
"""),
    T("phone", "chat", "ph1:phone ph2:phone ph3:phone", r"""
A: changed my number, save this one || 我换号了 存一下这个
A: {ph1} || {ph1} [n1]
B: saved 👍 || 存了👍
--- +12
B: did you change your number again?? my message bounced || 你是不是又换号了？？我发消息发不出去
A: yeah sorry 🙈 || 对不起🙈换了 [n2]
A: I was getting like ten spam calls a day || 一天十几个骚扰电话 受不了 [why]
A: use {ph2} from now on, delete the old one || 以后打{ph2} 之前那个删了吧 [n3]
B: you change numbers more than a drug dealer lol || 你换号比毒贩还勤哈哈
B: if I don't pick up, my work line is {ph3} || 我要是没接 就打我公司座机{ph3} [d1]
===
knowledge-update | What number reaches {A} now? | 现在要联系{A}该打哪个号码？ | {ph2} | {ph2} | n2 n3
single-hop | Why did {A} switch numbers the second time? | {A}第二次换号是因为什么？ | about ten spam calls a day | 每天十几个骚扰电话 | why
single-hop | What backup number did {B} give? | {B}给了哪个备用号码？ | {ph3}, {B}'s work line | {ph3}，{B}公司的座机 | d1
"""),
    T("offer", "chat", "co1:company co2:company p:person", r"""
A: don't tell anyone yet || 先别跟别人说啊
A: I got an offer from {co1}!! || 我拿到{co1}的offer了！！ [o1]
B: WHAT congrats!!! || 卧槽 恭喜！！！
A: they want an answer by {wd+4} || 他们要我{wd+4}之前给答复 [dl]
A: but the commute is 1.5 hours each way 😩 || 但是通勤单程一个半小时😩 [con]
B: hmm that's brutal || 嗯 那确实要命
--- +5
B: my coworker {p} just quit to go to {co1} lol || 我同事{p}刚辞职去{co1}了 哈哈 [d1]
A: small world || 世界真小
--- +6
A: ok decision made || 定了
A: turned down {co1} || {co1}我拒了 [o2]
A: took {co2} instead, they let me work from home three days a week || 去{co2} 他们一周可以在家办公三天 [o3]
B: smart, that commute would've killed you || 明智 那个通勤会要你命的
===
knowledge-update | Which company is {A} joining in the end? | {A}最后去了哪家公司？ | {co2} | {co2} | o2 o3
single-hop | What bothered {A} about the first offer? | 第一个offer让{A}犹豫的是什么？ | the commute, an hour and a half each way | 通勤太远，单程一个半小时 | con
multi-session | Why did {A} prefer {co2} over {co1}? | {A}为什么选了{co2}而不是{co1}？ | {co1} meant a 1.5-hour commute; {co2} allows three days a week at home | {co1}通勤单程一个半小时，{co2}一周可以三天在家办公 | con o3
single-hop | Who from {B}'s work left for {co1}? | {B}的哪个同事跳槽去了{co1}？ | {p} | {p} | d1
"""),
    T("cat", "chat", "cat:cat p:person", r"""
A: look look look || 快看快看
A: adopted a kitten today!! a little orange one, her name is {cat} || 今天领养了一只小橘猫！！叫{cat} [c1]
B: OMG the paws 😍 || 天呐这小爪子😍
A: got her from a rescue group, she's about three months || 救助群里领的 差不多三个月大 [c2]
B: I'm coming over this weekend to see her || 这周末我要去撸猫
--- +9
A: {cat} has been sneezing all day || {cat}今天一直打喷嚏
A: took her to the vet, just a cold, antibiotics for a week || 带去宠物医院看了 就是感冒 吃一周抗生素 [v1]
B: poor baby || 可怜的宝贝
B: {p}'s dog had the same thing last month || {p}家的狗上个月也这样 [d1]
===
single-hop | What is the name of {A}'s cat? | {A}的猫叫什么名字？ | {cat} | {cat} | c1
temporal | When did {A} adopt the kitten? | {A}是什么时候领养那只小猫的？ | {date:c1} | {date:c1} | c1
single-hop | What did the vet say was wrong with {A}'s cat? | 兽医说{A}的猫是什么问题？ | just a cold; a week of antibiotics | 只是感冒，吃一周抗生素 | v1
"""),
    T("trip", "chat", "t1:trip t2:trip price:price", r"""
B: we still doing the trip in {mon+1}? || 我们{mon+1}那个旅行还去不去
A: yesss I'm thinking {t1} || 去啊 我想去{t1} [t1]
B: ok I'm in, I'll look at flights || 行 我来看机票
--- +4
B: flights to {t1} are {price} round trip || 去{t1}的机票来回{price} [f1]
A: kinda pricey but fine, book it || 有点贵 但行吧 订 [f2]
B: done ✈️ || 订好了✈️
--- +7
A: my sister just came back from {t2}, she said it was packed || 我姐刚从{t2}回来 说人巨多 [d1]
B: good thing we didn't pick it || 幸好我们没选那
===
single-hop | Where are {A} and {B} going on their trip? | {A}和{B}要去哪里旅行？ | {t1} | {t1} | t1
single-hop | How much were the round-trip tickets? | 往返机票多少钱？ | {price} | {price} | f1
single-hop | Where had {A}'s sister just been? | {A}的姐姐刚去过哪里？ | {t2} | {t2} | d1
"""),
    T("food", "chat", "hp:hotpot", r"""
B: dinner friday? || 周五吃饭吗
A: sure but nothing spicy please || 可以 但别吃辣的
A: I've had stomach issues, the doctor told me no spicy food for now || 最近肠胃不好 医生说暂时不能吃辣 [p1]
B: aw ok, cantonese then? || 好吧 那吃粤菜？
A: perfect || 可以
--- +14
B: {hp} has a new branch near me || {hp}在我家附近开了新店 [d1]
A: ugh I wish, still on the no-spice diet || 唉 我还在忌口 吃不了辣 [p2]
B: they have a mushroom broth || 他们有菌汤锅
A: ok then maybe 😂 || 那可以考虑😂
===
preference | What should {B} keep in mind when choosing a restaurant with {A}? | 和{A}约饭选餐厅要注意什么？ | no spicy food, doctor's orders for {A}'s stomach | 不能吃辣，{A}肠胃不好，医生说要忌口 | p1 p2
single-hop | Which restaurant opened a branch near {B}? | 哪家店在{B}家附近开了分店？ | {hp} | {hp} | d1
"""),
    T("show", "chat", "s1:show s2:show", r"""
A: just finished {s1} in one weekend || 我一个周末刷完了{s1} [s1]
A: honestly best show I've seen in years || 真的是这几年看过最好的剧 [s2]
B: ok adding it || 好 加入片单
B: I gave up on {s2} after two episodes, too slow || {s2}我看了两集就弃了 太慢 [d1]
--- +10
B: started {s1}, episode 3 now || 开始看{s1}了 看到第三集
A: wait till the ending 😭 || 等你看到结局😭
===
single-hop | Which show did {A} binge over a weekend? | {A}一个周末刷完的是哪部剧？ | {s1} | {s1} | s1
single-hop | Which show did {B} drop, and why? | {B}弃了哪部剧？为什么？ | {s2}, too slow | {s2}，节奏太慢 | d1
"""),
    T("sick", "chat", "rel:rel", r"""
A: sorry I've been slow to reply || 不好意思最近回消息慢
A: my {rel} is in hospital, gallbladder surgery on {wd+2} || 我{rel}住院了 {wd+2}做胆囊手术 [h1]
B: oh no, anything I can do? || 啊 需要帮忙吗
A: it's ok, I'm flying home tomorrow || 没事 我明天飞回去 [h2]
--- +5
B: how did the surgery go? || 手术怎么样了
A: went well! home in 3 days they say || 挺顺利的！说三天后能出院 [h3]
B: so glad ❤️ || 太好了❤️
===
single-hop | What surgery did {A}'s {rel} have? | {A}的家人做的是什么手术？ | gallbladder surgery | 胆囊手术 | h1
temporal | In which month was {A}'s family member in hospital? | {A}家人是几月份住院的？ | {month:h1} | {month:h1} | h1
multi-session | How did the surgery turn out? | 手术结果怎么样？ | it went well; discharge expected in three days | 很顺利，三天后出院 | h1 h3
"""),
    T("buy", "chat", "it:item price:price", r"""
A: bought a {it} in the sale || 双十一抢了个{it} [b1]
A: only {price} 😎 || 才{price}😎 [b1]
B: nice, any good? || 不错 好用吗
--- +6
A: returning the {it} || {it}我退了 [b2]
A: it's so loud, and it doesn't fit in the kitchen || 太吵了 厨房也放不下 [b3]
B: lol rip || 哈哈哈 白折腾
===
knowledge-update | Does {A} still have the {it}? | {A}那个{it}还在用吗？ | no, returned it | 没有，已经退了 | b2
single-hop | How much did {A} pay in the sale? | {A}抢购花了多少钱？ | {price} | {price} | b1
single-hop | What was wrong with the {it}? | 那个{it}有什么问题？ | too loud and did not fit in the kitchen | 太吵，厨房也放不下 | b3
"""),
    T("sport", "chat", "sp:sport p:person", r"""
A: signed up for {sp} classes, twice a week || 报了个{sp}课 一周两次 [s1]
B: since when are you sporty 😂 || 你什么时候这么爱运动了😂
A: my back is wrecked from sitting all day || 天天坐着 腰不行了 [why]
--- +9
B: how's {sp} going || {sp}上得怎么样
A: quit lol, the coach was always late || 不去了哈哈 教练老迟到 [s2]
A: doing pilates with {p} now instead || 现在改跟{p}练普拉提了 [s3]
===
knowledge-update | What exercise does {A} do now? | {A}现在在练什么运动？ | pilates, with {p} | 普拉提，和{p}一起 | s2 s3
single-hop | Why did {A} start exercising? | {A}为什么开始运动？ | back pain from sitting all day | 久坐腰不好 | why
"""),
    T("gift", "chat", "g1:gift g2:gift", r"""
B: my mom's birthday is next {wd+5}, help || 我妈下{wd+5}生日 救命 [bd]
B: I have no idea what to get || 完全不知道送什么
A: what about {g1}? || 送{g1}？
B: she has three already lol || 她已经有三个了哈哈
--- +3
B: went with {g2} in the end || 最后买了{g2} [g1]
A: she'll love it || 她肯定喜欢
===
single-hop | What did {B} end up getting {B}'s mom for her birthday? | {B}最后给妈妈买了什么生日礼物？ | {g2} | {g2} | g1
temporal | Around when is {B}'s mother's birthday? | {B}妈妈的生日大概在什么时候？ | within a week after {date:bd} | {date:bd}之后的一周内 | bd
"""),
)

# Small talk: (speaker, English, 中文), speaker X or Y; a block is one exchange.
CHAT_FILLER: tuple[tuple[tuple[str, str, str], ...], ...] = (
    (("X", "so tired today", "今天好累"), ("Y", "same, work was insane", "我也是 上班上疯了"), ("X", "monday energy", "周一综合症")),
    (("X", "what are you having for lunch", "中午吃啥"), ("Y", "ordered malatang on Meituan", "美团点了麻辣烫"), ("X", "again? lol", "又是麻辣烫？哈哈")),
    (("X", "it's pouring here", "我这边下暴雨了"), ("Y", "ugh no umbrella", "我没带伞"), ("X", "rip", "惨")),
    (("X", "did you see the group chat", "你看群消息了没"), ("Y", "no what happened", "没 咋了"), ("X", "nothing, just memes lol", "没啥 就是在斗图哈哈")),
    (("X", "my boss scheduled a meeting at 6pm", "老板六点约会议"), ("Y", "classic", "经典"), ("X", "there goes my evening", "晚上又没了")),
    (("X", "I can't sleep", "睡不着"), ("Y", "put the phone down lol", "放下手机哈哈"), ("X", "never", "不可能")),
    (("X", "coffee or bubble tea", "咖啡还是奶茶"), ("Y", "bubble tea obviously", "当然奶茶"), ("X", "heytea or chagee", "喜茶还是霸王茶姬"), ("Y", "chagee", "霸王茶姬")),
    (("X", "the metro was so crowded this morning", "早上地铁挤死了"), ("Y", "line 2 is the worst", "2号线最惨"), ("X", "literally couldn't breathe", "根本喘不过气")),
    (("X", "weekend plans?", "周末有安排吗"), ("Y", "sleep", "睡觉"), ("X", "respect", "尊重")),
    (("X", "haha", "哈哈哈哈"), ("Y", "😂😂", "😂😂")),
    (("X", "my screen cracked again", "手机屏又碎了"), ("Y", "how", "怎么搞的"), ("X", "dropped it on the stairs", "楼梯上摔的"), ("Y", "oof", "心疼")),
    (("X", "sent you a link", "给你发了个链接"), ("Y", "lmao that's so us", "笑死 这不就是我们"), ("X", "right??", "是吧？？")),
    (("X", "the deadline got pushed up again", "deadline又提前了"), ("Y", "noooo", "不要啊"), ("X", "whole team is dying", "全组都要疯了")),
    (("X", "made dumplings today", "今天包饺子了"), ("Y", "pics or it didn't happen", "有图有真相"), ("X", "ate them all before I remembered", "忘拍了 全吃完了")),
    (("X", "ok", "好"), ("Y", "👍", "👍")),
    (("X", "are you free to call later?", "晚点能打电话吗"), ("Y", "after 9?", "九点以后？"), ("X", "ok", "行")),
    (("X", "my neighbour is drilling again", "楼上又在装修"), ("Y", "on a sunday??", "周日还装？？"), ("X", "every single day", "天天都在钻")),
    (("X", "Taobao sale starts tonight", "今晚淘宝开抢"), ("Y", "my cart is already full", "购物车早就满了"), ("X", "same lol", "我也是哈哈")),
    (("X", "I forgot my umbrella at the office", "伞落公司了"), ("Y", "third one this month?", "这个月第三把了吧"), ("X", "don't", "别说了")),
    (("X", "wanna play Honor of Kings tonight", "今晚王者开黑吗"), ("Y", "yes after dinner", "吃完饭来"), ("X", "bring your good hero", "别再玩辅助了")),
    (("X", "my plant died", "我的绿萝死了"), ("Y", "how do you kill a pothos", "绿萝你都能养死"), ("X", "talent", "天赋")),
    (("X", "look at this cat video", "快看这个猫的视频"), ("Y", "HAHAHA the jump", "哈哈哈哈那一跳"), ("X", "I've watched it 10 times", "我看了十遍")),
    (("X", "good morning", "早"), ("Y", "morning, up already?", "早 这么早就起了"), ("X", "couldn't sleep in", "睡不着了")),
    (("X", "work is so boring today", "今天上班好无聊"), ("Y", "fake being busy", "假装很忙"), ("X", "that's my full-time job", "这就是我的主业")),
    (("X", "haven't been to the gym in two weeks", "两周没去健身房了"), ("Y", "the membership is crying", "年卡在哭"), ("X", "I know", "我知道")),
    (("X", "the delivery guy left my food at the wrong door", "外卖小哥送错门了"), ("Y", "did you get it back", "拿回来了吗"), ("X", "neighbour ate half lol", "邻居吃了一半哈哈")),
    (("X", "wechat pay isn't working for me", "微信支付用不了"), ("Y", "try restarting", "重启试试"), ("X", "worked, thanks", "好了 谢谢")),
    (("X", "I'm getting a haircut tomorrow", "明天去剪头发"), ("Y", "don't let them talk you into a perm", "别被忽悠办卡"), ("X", "no promises", "不敢保证")),
)
CHAT_OPEN = (("hey", "在吗"), ("yo", "哈喽"), ("you there?", "在不在"), ("morning!", "早上好"), ("hiii", "嗨"))
CHAT_CLOSE = (
    ("ok gotta go", "先不说了"), ("night!", "晚安"), ("talk later", "回头聊"), ("bye 👋", "拜拜👋"), ("sleeping now", "睡了睡了"),
)
# fmt: on

# --------------------------------------------------------------------------------------------------
# A user and an assistant: short questions, longer replies, some code.
# --------------------------------------------------------------------------------------------------

# fmt: off
HELP_TEMPLATES: tuple[Template, ...] = (
    T("stack", "help", "proj:project fw:framework db1:db db2:db", r"""
A: I'm building a side project called {proj}, backend is {fw} with {db1}. How should I lay out the folders? || 我在做一个叫{proj}的side project，后端用的{fw}，数据库是{db1}，目录结构怎么组织比较好？ [s1]
B: For a project that size I'd keep it flat and split by feature, not by layer:\n\n```\n{proj}/\n  app/\n    orders/\n    users/\n    db.py\n  tests/\n```\n\nPut the {db1} connection setup in `db.py` so every feature imports one place. Tests mirror the feature folders. || 这个规模的项目建议按功能拆，不要按层拆：\n\n```\n{proj}/\n  app/\n    orders/\n    users/\n    db.py\n  tests/\n```\n\n{db1}的连接配置放在`db.py`里，所有模块都从这一个地方导入。测试目录跟功能目录一一对应就行。
--- +8
A: change of plan, we're moving {proj} off {db1} to {db2}, the hosting is cheaper || 计划有变，{proj}不用{db1}了，换成{db2}，托管便宜一些 [s2]
B: That's a manageable switch if the queries go through one layer. Check three things: date/time types, how IDs are generated, and any raw SQL. Run the test suite against {db2} in CI before you cut over, and keep a dump of the old data. || 如果查询都走同一层，迁移问题不大。重点检查三个地方：日期时间类型、主键怎么生成、有没有手写的原生SQL。切换之前先在CI里对着{db2}跑一遍测试，旧数据记得留一份dump。
A: my friend said {proj} should just use Firebase lol || 我朋友说{proj}干脆用Firebase算了哈哈 [d1]
B: Firebase is fine for prototypes, but since you already have a relational schema, {db2} keeps your migrations and joins. || Firebase做原型没问题，但你已经有关系型的表结构了，用{db2}可以保留迁移和join。
===
knowledge-update | Which database does {proj} use now? | {proj}现在用的是什么数据库？ | {db2} | {db2} | s2
single-hop | Which web framework is {proj}'s backend written in? | {proj}的后端是用哪个框架写的？ | {fw} | {fw} | s1
single-hop | Why did the user switch {proj}'s database? | 用户为什么给{proj}换数据库？ | the hosting is cheaper | 托管更便宜 | s2
"""),
    T("bug", "help", "fn:func fld:field fn2:func", r"""
A: getting KeyError: '{fld}' in {fn}, only in production, what gives || {fn}里报KeyError: '{fld}'，只有线上环境才出现，怎么回事 [b1]
B: Production is probably getting records without that key, maybe older rows or a different client. Make the access tolerant and log what arrives:\n\n```python\nvalue = row.get("{fld}")\nif value is None:\n    log.warning("missing {fld}", row_id=row.get("id"))\n    continue\n```\n\nThen look at the logged ids to see where they come from. || 线上大概率有一些记录没有这个字段，可能是老数据或者别的客户端写进来的。先把取值改成容错的，再把收到的数据记下来：\n\n```python\nvalue = row.get("{fld}")\nif value is None:\n    log.warning("missing {fld}", row_id=row.get("id"))\n    continue\n```\n\n然后看日志里的id，查查这些数据是从哪来的。 [b2]
--- +3
A: found it, the old mobile app never sent {fld}. fixed now || 找到了，老版本的app从来不传{fld}，已经修好了 [b3]
B: Good catch. Add a test with a payload missing {fld} so it can't come back. || 找得好。加一个缺{fld}字段的测试用例，防止以后再出现。
A: also {fn2} is slow but that's a problem for another day || 另外{fn2}很慢，不过那个以后再说 [d1]
===
single-hop | Which function threw the KeyError in production? | 线上报KeyError的是哪个函数？ | {fn} | {fn} | b1
multi-session | What was the root cause of the missing-key error? | 缺字段那个报错的根本原因是什么？ | the old mobile app never sent {fld} | 老版本app从来不传{fld} | b1 b3
single-hop | What did the assistant suggest for reading the missing field? | 助手建议怎么读取那个可能缺失的字段？ | use row.get() and log a warning with the row id | 用row.get()取值，缺失时记录带id的warning | b2
"""),
    T("style", "help", "lg:lang", r"""
A: quick request: keep answers short, bullet points, and code examples in {lg} please || 提个要求：回答简短点，用要点列出来，代码示例用{lg} [p1]
B: Got it: short answers, bullets, {lg} for code. || 好的：简短、分点、代码用{lg}。
--- +10
A: you went back to long paragraphs 😅 bullets please || 你又开始写大段文字了😅 还是分点吧 [p2]
B: Sorry about that, back to bullets. || 抱歉，改回分点。
===
preference | How does the user want answers formatted? | 用户希望回答用什么格式？ | short, in bullet points | 简短、分点列出 | p1 p2
preference | Which language should code examples be in for this user? | 给这个用户的代码示例应该用什么语言？ | {lg} | {lg} | p1
"""),
    T("deadline", "help", "proj:project", r"""
A: demo for {proj} is due {wd+4}, what should I cut? || {proj}的demo {wd+4}就要交了，哪些功能可以砍？ [d1]
B: Keep the one flow you will show end to end and fake the rest: hard-code the settings page, skip sign-up and seed a demo account, and leave export for later. A demo that never crashes beats one with more screens. || 保留你要演示的那一条完整流程，其余的先糊上：设置页写死，注册先跳过直接用一个演示账号，导出功能以后再做。一个不崩的demo比页面多的demo强。
--- +2
A: good news, the demo got pushed back a week || 好消息，demo推迟一周了 [d2]
B: Then spend two days on sign-up and keep the rest of the plan. || 那可以拿两天把注册做了，其他按原计划。
===
knowledge-update | Was the {proj} demo deadline changed? | {proj}的demo截止时间有变化吗？ | yes, pushed back by a week | 有，推迟了一周 | d1 d2
single-hop | What did the assistant suggest doing for the demo account? | 助手建议demo里账号怎么处理？ | skip sign-up and seed a demo account | 先跳过注册，用一个预置的演示账号 | d1
"""),
    T("travel", "help", "t1:trip rel:rel", r"""
A: taking my {rel} to {t1} in {mon+1}, 5 days, but bad knees, so not much walking. itinerary ideas? || {mon+1}带我{rel}去{t1}玩五天，老人家膝盖不好走不了太多路，帮我排个行程？ [t1]
B: With limited walking I'd base yourselves in one hotel near the centre and plan one main sight per day, with a taxi there and back and a long lunch in between. Avoid anything with steep stairs, and book a hotel with a lift. Mornings are cooler and quieter, so put the busy spot first. || 走路不方便的话，建议住在市中心一家酒店不换，每天只安排一个主要景点，来回打车，中午留足时间吃饭休息。有大量台阶的景点就别去了，酒店订有电梯的。上午人少也凉快，热门的地方放在上午。 [t2]
--- +6
A: my coworker says {t1} is overrated and I should go to a beach instead || 同事说{t1}被高估了，让我去海边 [d1]
B: It depends on what your {rel} enjoys; a beach is easy on the knees too, but you've already planned the trip. || 看你{rel}喜欢什么，海边对膝盖也友好，不过行程你都已经排好了。
===
single-hop | Where is the user travelling with family? | 用户要带家人去哪里旅行？ | {t1} | {t1} | t1
preference | What limitation should the trip plan account for? | 行程安排要照顾到什么情况？ | the family member has bad knees and can't walk much | 家人膝盖不好，不能走太多路 | t1
single-hop | What kind of hotel did the assistant recommend? | 助手建议订什么样的酒店？ | one central hotel with a lift | 市中心、有电梯的酒店，不换酒店 | t2
"""),
    T("exam", "help", "ex:exam p:person", r"""
A: I'm taking the {ex} in {mon+1}… can you make me a study plan || 我{mon+1}要考{ex}，帮我做个复习计划吧 [e1]
B: Here's a simple four-week plan:\n\n- Week 1: a full mock test to find weak spots\n- Week 2-3: one weak area per day, 90 minutes\n- Week 4: two more timed mocks and review\n\nKeep one rest day a week. || 给你一个四周的计划：\n\n- 第1周：先做一套完整模考，找薄弱项\n- 第2-3周：每天攻一个薄弱项，90分钟\n- 第4周：再做两套限时模考，复盘错题\n\n每周留一天休息。 [e2]
--- +10
A: my friend {p} failed the {ex} twice, I'm kind of scared now || 我朋友{p}{ex}挂了两次，我现在有点慌 [d1]
B: That is about {p}'s preparation, not yours. Keep doing the mocks; your scores are what tell you if you're ready. || 那是{p}的准备情况，不代表你。继续做模考，看分数判断自己准备得怎么样。
===
single-hop | Which exam is the user preparing for? | 用户在准备什么考试？ | the {ex} | {ex} | e1
temporal | In which month is the user's exam? | 用户的考试在几月？ | {month:e1+1} | {month:e1+1} | e1
single-hop | What does the study plan have the user do in the last week? | 复习计划最后一周安排做什么？ | two more timed mock tests and review | 再做两套限时模考，复盘错题 | e2
"""),
    T("allergy", "help", "al:allergy", r"""
A: I'm allergic to {al}, can you suggest a quick dinner for two? || 我对{al}过敏，推荐个两人份的快手晚餐？ [a1]
B: Tomato and egg noodles take 15 minutes: scramble, add tomatoes until they break down, season with soy and a pinch of sugar, pour over noodles. No {al} anywhere, and check sauce labels for traces. || 番茄鸡蛋面，15分钟搞定：先炒蛋，再下番茄炒出汁，加生抽和一点糖调味，浇在面上。全程不含{al}，买酱料的时候看一下配料表有没有相关成分。
--- +12
A: any snack ideas for a work trip? || 出差带点什么零食好？
B: Roasted seaweed, dried fruit and plain crackers travel well; since you're allergic to {al}, skip mixed packs and read the labels. || 海苔、果干、苏打饼干都方便带；你对{al}过敏，混合装的别买，看清配料表。 [a2]
===
preference | What ingredient must recipes for this user avoid? | 给用户推荐吃的要避开什么？ | {al} (allergy) | {al}（过敏） | a1
single-hop | Which snacks did the assistant suggest for the work trip? | 助手推荐出差带哪些零食？ | roasted seaweed, dried fruit, plain crackers | 海苔、果干、苏打饼干 | a2
"""),
    T("rent", "help", "r1:rent r2:rent", r"""
A: help me set up a monthly budget. rent is {r1} || 帮我做个月度预算，房租{r1} [r1]
B: A simple split: fixed costs first (rent {r1}, utilities, phone), then a fixed amount to savings on payday, then the rest for food and fun. A spreadsheet with one row per category and a column per month is enough. || 简单的分法：先算固定支出（房租{r1}、水电、话费），发工资当天先转一笔固定金额存起来，剩下的再分给吃饭和娱乐。表格每个类别一行、每个月一列就够了。
--- +20
A: landlord raised the rent to {r2} 🙃 update the budget? || 房东把房租涨到{r2}了🙃 预算改一下？ [r2]
B: Then cut the fun budget by the difference first and keep savings unchanged; review again in three months. || 那先从娱乐预算里把涨的部分扣掉，储蓄不变，三个月后再看。
===
knowledge-update | How much is the user's rent now? | 用户现在的房租是多少？ | {r2} | {r2} | r2
temporal | When did the user first ask for a budget? | 用户第一次找助手做预算是什么时候？ | {date:r1} | {date:r1} | r1
"""),
    T("race", "help", "rc:race", r"""
A: signed up for the {rc} half marathon in {mon+2}, first one ever. training plan? || 报名了{mon+2}的{rc}半马，第一次跑，给个训练计划？ [h1]
B: Three runs a week: one easy, one with short intervals, one long run that grows by about 1 km each week up to 18 km. Add a rest week every fourth week. || 一周跑三次：一次轻松跑，一次短间歇，一次长距离，长距离每周加1公里左右，加到18公里。每四周安排一周减量。
--- +9
A: my left knee hurts after the long runs || 长距离跑完左膝盖疼 [h2]
B: Drop the long run this week and see a physio if it lasts more than a few days. Stronger glutes and quads usually help. || 这周先停掉长距离，疼几天还不好就去看一下康复科。加强臀部和大腿的力量一般会有帮助。
===
single-hop | Which race did the user sign up for? | 用户报名了哪个比赛？ | the {rc} half marathon | {rc}半马 | h1
multi-session | What problem came up in the user's half-marathon training? | 用户半马训练中遇到了什么问题？ | left knee pain after long runs | 长距离跑完左膝盖疼 | h2
"""),
)

# Unrelated help: (user question, assistant reply) in both languages.
HELP_FILLER: tuple[tuple[str, str, str, str], ...] = (
    ("how do I undo the last git commit but keep the changes",
     "Use a soft reset:\n\n```bash\ngit reset --soft HEAD~1\n```\n\nThe commit is gone and its changes stay staged. If you already pushed, prefer `git revert` so nobody's history is rewritten.",
     "git怎么撤销上一次commit但保留改动",
     "用soft reset：\n\n```bash\ngit reset --soft HEAD~1\n```\n\ncommit会撤掉，改动还在暂存区。如果已经push了，最好用`git revert`，别改别人的历史。"),
    ("regex for a chinese mobile number?",
     "Mainland numbers are 11 digits starting with 1 and a second digit 3-9:\n\n```python\nimport re\nPHONE = re.compile(r\"^1[3-9]\\d{9}$\")\n```\n\nStrip spaces and a leading +86 before matching.",
     "匹配国内手机号的正则怎么写",
     "大陆手机号是11位，1开头，第二位3到9：\n\n```python\nimport re\nPHONE = re.compile(r\"^1[3-9]\\d{9}$\")\n```\n\n匹配之前先去掉空格和+86前缀。"),
    ("write a polite email asking my manager for a day off next friday",
     "Subject: Leave request for next Friday\n\nHi, I'd like to take next Friday off for a personal matter. My tasks for that day are covered and I'll make sure nothing is blocked before I leave. Please let me know if that works. Thanks!",
     "帮我写个邮件跟领导请下周五一天假，语气客气点",
     "主题：下周五请假申请\n\n领导您好，我下周五有点私事想请一天假。当天的工作我已经安排好了，走之前会确认没有卡住的事情。您看是否方便？谢谢！"),
    ("pandas: how do I count rows per category",
     "```python\ncounts = df[\"category\"].value_counts()\n# or, as a table with a column name\ncounts = df.groupby(\"category\").size().reset_index(name=\"n\")\n```\n\n`value_counts` sorts by count; add `sort=False` to keep the original order.",
     "pandas怎么按类别统计行数",
     "```python\ncounts = df[\"category\"].value_counts()\n# 或者要一个带列名的表\ncounts = df.groupby(\"category\").size().reset_index(name=\"n\")\n```\n\n`value_counts`默认按数量排序，想保持原顺序加`sort=False`。"),
    ("what's a good way to keep basil alive indoors",
     "Basil wants at least six hours of light, so a south-facing window or a small grow light. Water when the top of the soil is dry, and pinch off the tops so it grows bushy instead of flowering.",
     "室内怎么养罗勒不容易死",
     "罗勒每天至少要晒六个小时，放朝南的窗台或者补个植物灯。表面土干了再浇水，顶端的嫩芽掐掉，它会长得更密，不会急着开花。"),
    ("sql: find users who haven't ordered in 90 days",
     "```sql\nSELECT u.id, u.name\nFROM users u\nLEFT JOIN orders o\n  ON o.user_id = u.id AND o.created_at >= now() - interval '90 days'\nWHERE o.id IS NULL;\n```\n\nThe date condition sits in the join so users with no orders at all are included.",
     "SQL：找出90天内没下过单的用户",
     "```sql\nSELECT u.id, u.name\nFROM users u\nLEFT JOIN orders o\n  ON o.user_id = u.id AND o.created_at >= now() - interval '90 days'\nWHERE o.id IS NULL;\n```\n\n日期条件写在join里，这样一单都没下过的用户也会被查出来。"),
    ("explain docker volumes vs bind mounts in two sentences",
     "A volume is storage Docker manages for you, good for databases and anything the container owns. A bind mount maps a folder from your machine, good for live-editing code during development.",
     "用两句话讲清楚docker的volume和bind mount区别",
     "volume是Docker自己管理的存储，适合数据库这种容器自己的数据。bind mount是把你本机的目录挂进去，适合开发时改代码实时生效。"),
    ("how long should I boil eggs for soft yolks",
     "Six and a half minutes from boiling water, then straight into cold water for a minute. Seven minutes if you want the yolk jammy rather than runny.",
     "溏心蛋要煮几分钟",
     "水开后下锅煮六分半，捞出来马上过冷水一分钟。想要蛋黄稍微凝固一点就煮七分钟。"),
    ("python: read a big csv without running out of memory",
     "Read it in chunks:\n\n```python\nimport pandas as pd\nfor chunk in pd.read_csv(\"big.csv\", chunksize=100_000):\n    process(chunk)\n```\n\nAlso pass `usecols=` and `dtype=` so only the columns you need are loaded.",
     "python读一个很大的csv内存不够怎么办",
     "分块读：\n\n```python\nimport pandas as pd\nfor chunk in pd.read_csv(\"big.csv\", chunksize=100_000):\n    process(chunk)\n```\n\n再加上`usecols=`和`dtype=`，只加载需要的列。"),
    ("recommend a few podcasts for learning english on the commute",
     "Try 6 Minute English (BBC) for short episodes, All Ears English for everyday conversation, and The Daily once you want real news at native speed.",
     "通勤路上听的英语播客推荐几个",
     "可以试试BBC的6 Minute English，每集很短；All Ears English偏日常对话；想听正常语速的新闻可以听The Daily。"),
    ("what does `async` actually buy me in python",
     "It lets one thread wait on many slow I/O operations at once (network calls, database queries) instead of blocking on each. It does nothing for CPU-heavy work; use processes for that.",
     "python里的async到底有什么用",
     "它让一个线程可以同时等待很多慢的I/O操作（网络请求、数据库查询），而不是一个一个阻塞着等。CPU密集的计算它帮不上忙，那种情况用多进程。"),
    ("my laptop fan is always loud, any fixes",
     "Check which process is using the CPU first (Activity Monitor or Task Manager). Browser tabs and sync apps are common culprits. If it's idle and still loud, clean the vents; dust makes the fan work harder.",
     "笔记本风扇一直很响怎么办",
     "先看看是哪个进程在占CPU（活动监视器或者任务管理器），浏览器标签页和同步软件最常见。如果闲着也响，清一下出风口的灰，灰多了风扇就得使劲转。"),
    ("how do I center a div",
     "```css\n.parent {\n  display: flex;\n  justify-content: center;\n  align-items: center;\n}\n```\n\nOr `display: grid; place-items: center;` on the parent.",
     "div怎么水平垂直居中",
     "```css\n.parent {\n  display: flex;\n  justify-content: center;\n  align-items: center;\n}\n```\n\n或者父元素用`display: grid; place-items: center;`。"),
    ("tips for a first job interview in product",
     "Prepare two stories about decisions you made with data, one about a disagreement you resolved, and ask them what a good first three months looks like. Practise saying your answers out loud.",
     "第一次面产品岗有什么建议",
     "准备两个用数据做决策的例子、一个解决分歧的例子，最后问问他们眼中前三个月做得好是什么样。答案要提前出声练几遍。"),
)
HELP_OPEN = (("hi", "你好"), ("hey, quick question", "在吗，问个问题"), ("morning", "早"))
# fmt: on

# --------------------------------------------------------------------------------------------------
# The conversations.
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    shape: str
    a: str  # "English=中文" name of the subject speaker (the user in help chats)
    b: str  # the other friend ("" in help chats: the assistant)
    start: datetime
    days: int  # span of the sessions
    sessions: int
    arcs: int


SPECS: tuple[Spec, ...] = (
    Spec("chat", "Xiaoyu=小雨", "Hao=阿浩", datetime(2025, 3, 3), 70, 5, 4),
    Spec("chat", "Tingting=婷婷", "Jie=阿杰", datetime(2025, 4, 14), 80, 6, 4),
    Spec("chat", "Lina=李娜", "Chenchen=陈晨", datetime(2025, 5, 6), 60, 5, 4),
    Spec("chat", "Mengmeng=萌萌", "Yangyang=阳阳", datetime(2025, 6, 2), 75, 6, 5),
    Spec("chat", "Jiajia=佳佳", "Kai=凯子", datetime(2025, 7, 21), 65, 5, 4),
    Spec("chat", "Xiaoxin=小欣", "Dapeng=大鹏", datetime(2025, 8, 11), 90, 6, 5),
    Spec("chat", "Yuqi=雨琪", "Shi Lei=石磊", datetime(2025, 9, 1), 70, 5, 4),
    Spec("chat", "Fangfang=芳芳", "Xiaowei=小伟", datetime(2025, 10, 13), 85, 6, 4),
    Spec("help", "Zhou Min=周敏", "", datetime(2025, 3, 18), 60, 5, 4),
    Spec("help", "Lin Hao=林浩", "", datetime(2025, 4, 7), 55, 4, 4),
    Spec("help", "Chen Jing=陈静", "", datetime(2025, 5, 20), 70, 5, 5),
    Spec("help", "Wang Tao=王涛", "", datetime(2025, 6, 16), 65, 5, 4),
    Spec("help", "Sun Yue=孙悦", "", datetime(2025, 8, 4), 60, 5, 4),
    Spec("help", "Zhao Yi=赵毅", "", datetime(2025, 9, 15), 75, 5, 5),
    Spec("help", "Huang Li=黄丽", "", datetime(2025, 10, 6), 55, 4, 4),
    Spec("help", "Xu Bo=徐博", "", datetime(2025, 11, 10), 70, 5, 4),
)

Turn = tuple[str, dict[str, str], int, tuple[str, ...]]  # who ("A"/"B"), text by lang, arc (-1 filler), keys


def pair(value: str) -> dict[str, str]:
    en, _, zh = value.partition("=")
    return {"en": en, "zh": zh or en}


def session_dates(spec: Spec, rng: random.Random) -> list[datetime]:
    days = sorted(rng.sample(range(spec.days + 1), spec.sessions))
    hours = (
        (9, 10, 12, 13, 15, 19, 20, 21, 22, 23) if spec.shape == "chat" else (9, 10, 11, 14, 15, 16, 20, 21)
    )
    return [spec.start + timedelta(days=d, hours=rng.choice(hours), minutes=rng.randrange(60)) for d in days]


def instantiate(template: Template, spec: Spec, used: set[str], rng: random.Random) -> Arc:
    values: dict[str, dict[str, str]] = {"A": pair(spec.a), "B": pair(spec.b) if spec.b else dict(BOT)}
    # either friend is the arc's subject: then its "A" turns are spoken by the conversation's B
    flip = spec.shape == "chat" and rng.random() < 0.5
    if flip:
        values["A"], values["B"] = values["B"], values["A"]
    speaker = {"A": "B", "B": "A"} if flip else {"A": "A", "B": "B"}
    for slot, pool in template.slots:
        value = rng.choice([v for v in POOLS[pool] if v not in used])
        used.add(value)
        values[slot] = pair(value)
    parts, asks = parse_script(template)
    filled = [
        Part(
            p.gap_days,
            [
                Line(speaker[ln.who], {g: fill(ln.text[g], values, g) for g in LANGS}, ln.keys)
                for ln in p.lines
            ],
        )
        for p in parts
    ]
    qs = [
        Ask(
            a.category,
            {g: fill(a.question[g], values, g) for g in LANGS},
            {g: fill(a.answer[g], values, g) for g in LANGS},
            a.keys,
        )
        for a in asks
    ]
    return Arc(template.name, filled, qs)


def place(arc: Arc, dates: list[datetime], rng: random.Random) -> bool:
    """Each part in its own session, later parts at least their gap after the one before."""
    for _ in range(50):
        chosen = [rng.randrange(len(dates) - len(arc.parts) + 1)]
        for part in arc.parts[1:]:
            earliest = dates[chosen[-1]] + timedelta(days=part.gap_days)
            later = [i for i in range(chosen[-1] + 1, len(dates)) if dates[i].date() >= earliest.date()]
            if not later:
                break
            chosen.append(rng.choice(later[:2]))
        if len(chosen) == len(arc.parts):
            arc.sessions = chosen
            return True
    return False


def choose_arcs(spec: Spec, dates: list[datetime], usage: dict[str, int], rng: random.Random) -> list[Arc]:
    templates = CHAT_TEMPLATES if spec.shape == "chat" else HELP_TEMPLATES
    draws = [rng.random() for _ in templates]
    order = sorted(range(len(templates)), key=lambda i: (usage.get(templates[i].name, 0), draws[i]))
    used: set[str] = {spec.a, spec.b}
    arcs: list[Arc] = []
    for i in order:
        if len(arcs) == spec.arcs:
            break
        arc = instantiate(templates[i], spec, used, rng)
        if place(arc, dates, rng):
            arcs.append(arc)
            usage[arc.name] = usage.get(arc.name, 0) + 1
    if len(arcs) < spec.arcs:
        raise RuntimeError(f"{spec.a}: placed {len(arcs)} of {spec.arcs} arcs")
    return arcs


class Filler:
    """Small talk (or unrelated help requests) dealt from a shuffled deck, so few repeat soon."""

    def __init__(self, shape: str, rng: random.Random) -> None:
        self.shape, self.rng = shape, rng
        self.deck: list[int] = []

    def _deal(self, size: int) -> int:
        if not self.deck:
            self.deck = list(range(size))
            self.rng.shuffle(self.deck)
        return self.deck.pop()

    def block(self) -> list[Turn]:
        if self.shape == "help":
            en_q, en_a, zh_q, zh_a = HELP_FILLER[self._deal(len(HELP_FILLER))]
            return [("A", {"en": en_q, "zh": zh_q}, -1, ()), ("B", {"en": en_a, "zh": zh_a}, -1, ())]
        x, y = ("A", "B") if self.rng.random() < 0.5 else ("B", "A")
        return [
            (x if who == "X" else y, {"en": en, "zh": zh}, -1, ())
            for who, en, zh in CHAT_FILLER[self._deal(len(CHAT_FILLER))]
        ]

    def opener(self) -> list[Turn]:
        pool = CHAT_OPEN if self.shape == "chat" else HELP_OPEN
        en, zh = self.rng.choice(pool)
        who = self.rng.choice("AB") if self.shape == "chat" else "A"
        return [(who, {"en": en, "zh": zh}, -1, ())]

    def closer(self) -> list[Turn]:
        if self.shape == "help":
            return [("A", {"en": "thanks!", "zh": "好的谢谢"}, -1, ())]
        en, zh = self.rng.choice(CHAT_CLOSE)
        return [(self.rng.choice("AB"), {"en": en, "zh": zh}, -1, ())]


def build_session(
    ts: datetime, parts: list[tuple[int, Part]], filler: Filler, rng: random.Random
) -> list[Turn]:
    arc_blocks: list[list[Turn]] = [
        [(ln.who, {g: fill_text_dates(ln.text[g], ts, g) for g in LANGS}, arc, ln.keys) for ln in part.lines]
        for arc, part in parts
    ]
    arc_turns = sum(len(b) for b in arc_blocks)
    target = rng.randint(15, 23) if filler.shape == "chat" else rng.randint(12, 18)
    blocks: list[list[Turn]] = []
    count = arc_turns
    while count < target:
        block = filler.block()
        blocks.append(block)
        count += len(block)
    for block in arc_blocks:
        blocks.insert(rng.randint(0, len(blocks)), block)
    turns = filler.opener()
    for block in blocks:
        turns.extend(block)
    return turns + (filler.closer() if rng.random() < 0.6 else [])


def build(number: int, spec: Spec, usage: dict[str, int], rng: random.Random) -> dict[str, Conversation]:
    sample_id = f"bi-{spec.shape}-{number:02d}"
    split = "dev" if number % 2 else "test"
    names = {g: pair(spec.a)[g] for g in LANGS}
    others = {g: (pair(spec.b)[g] if spec.b else BOT[g]) for g in LANGS}
    convs = {g: Conversation(sample_id, split, names[g], others[g]) for g in LANGS}
    dates = session_dates(spec, rng)
    arcs = choose_arcs(spec, dates, usage, rng)
    filler = Filler(spec.shape, rng)
    where: dict[tuple[int, str], list[str]] = {}
    when: dict[tuple[int, str], datetime] = {}
    for s, ts in enumerate(dates):
        parts = [
            (i, arc.parts[k]) for i, arc in enumerate(arcs) for k, idx in enumerate(arc.sessions) if idx == s
        ]
        for conv in convs.values():
            conv.new_session(ts)
        for who, text, arc_index, keys in build_session(ts, parts, filler, rng):
            role = "assistant" if spec.shape == "help" and who == "B" else "user"
            dias = {
                g: conv.say(names[g] if who == "A" else others[g], text[g], role) for g, conv in convs.items()
            }
            for key in keys:
                where.setdefault((arc_index, key), []).append(dias["en"])
                when.setdefault((arc_index, key), ts)
    asks: list[tuple[list[str], Ask, dict[str, datetime]]] = []
    for i, arc in enumerate(arcs):
        arc_when = {key: ts for (j, key), ts in when.items() if j == i}
        for ask in arc.asks:
            evidence = list(dict.fromkeys(d for key in ask.keys for d in where[(i, key)]))
            asks.append((evidence, ask, arc_when))
    asks.sort(key=lambda a: _position(a[0][0]))
    for evidence, ask, arc_when in asks:
        for g, conv in convs.items():
            conv.ask(
                fill_qa_dates(ask.question[g], arc_when, g),
                fill_qa_dates(ask.answer[g], arc_when, g),
                evidence,
                ask.category,
            )
    return convs


def _position(dia: str) -> tuple[int, int]:
    session, turn = dia[1:].split(":")
    return int(session), int(turn)


def generate() -> dict[str, list[Conversation]]:
    """{"en": [...], "zh": [...]}: the sixteen conversations in each language, the same on every run."""
    rng = random.Random(SEED)
    usage: dict[str, int] = {}
    out: dict[str, list[Conversation]] = {g: [] for g in LANGS}
    for n, spec in enumerate(SPECS, start=1):
        for g, conv in build(n, spec, usage, rng).items():
            check(conv)
            out[g].append(conv)
    return out


def cross(sets: dict[str, list[Conversation]]) -> list[dict[str, Any]]:
    """The Chinese conversations asked the English questions (the same evidence)."""
    out = []
    for zh, en in zip(sets["zh"], sets["en"], strict=True):
        sample = zh.to_json()
        sample["qa"] = [dict(q) for q in en.qa]
        out.append(sample)
    return out


def check(conv: Conversation) -> None:
    """60-150 turns, 8-15 questions, evidence that names turns of the conversation."""
    turns = sum(len(t) for _, t in conv.sessions)
    known = {t["dia_id"] for _, ts in conv.sessions for t in ts}
    problems = []
    if not 60 <= turns <= 150:
        problems.append(f"{turns} turns")
    if not 8 <= len(conv.qa) <= 15:
        problems.append(f"{len(conv.qa)} questions")
    problems += [f"unknown evidence {e}" for q in conv.qa for e in q["evidence"] if e not in known]
    if problems:
        raise ValueError(f"{conv.sample_id}: {'; '.join(problems)}")
