"""A labelled set of knowledge updates, and of look-alike pairs that are not updates.

An update is a newer statement that supersedes an older one about the same subject: "the budget for
Atlas is $50,000", then weeks later "actually we bumped the Atlas budget, it's 80k now". A look-alike
pair shares most of its words with an update but leaves the older statement true:

- both_true: two values that hold at once ("I speak French", later "I speak Spanish too");
- other_holder: the same attribute of someone else ("my sister lives in Lyon" beside "I live in Milan");
- other_qualifier: the same attribute of another entity or qualifier (the Borealis budget beside the
  Atlas one, the staging quota beside the production one, swimming days beside gym days);
- question: a question about a value, then a statement of it ("is the Atlas budget 50k?" ... "it's 80k");
- assistant_suggestion: the assistant suggests a value the user never adopts ("you could raise it to 60k");
- hypothetical: a wish, plan or condition ("if we had 100k we'd hire", "I might move to Berlin someday");
- past_history: history that leaves the present alone ("I used to live in Rome", after "I live in Milan");
- same_value: the same value said again in other words.

Conversations come in two shapes: "assistant" (a user and an AI assistant, whose replies are sometimes
long, sometimes echo the value, sometimes suggest another one) and "friends" (two friends messaging:
short turns, lowercase, typos, emoji; both have role "user" and differ by speaker, and a pair is about
either of them). They are in English, Chinese, or mixed Chinese and English. Each conversation is one
scope (agent_id, user_id) of 8-12 pairs over several sessions on different days, older statements in
earlier sessions than newer ones, among filler (small talk, other errands, "ok", "thanks") so that a
pair's turns must be found among 60-150. Most attributes lie outside the rule table of fact extraction
(`rule_table` marks the kinds of attribute that table covers: where one lives, employer, diet, phone,
email, contact channel, language, timezone, likes, budgets); entity attributes (a project's budget, a
service's coverage target) often appear twice in a conversation, an update of one entity beside a
look-alike about another, so that false supersessions are measurable.

Each pair carries a question an agent would later ask about the current state, written apart from the
statements, the old and current value, and the turns that answer the question now (`evidence`). The
wording comes from bench.sets.updates_templates; everything is drawn from one seeded `random.Random`: no
clock, no network, no hash order. `python -m bench.sets.updates` rewrites bench/data/sets/updates.json.gz
(gzip mtime 0, so a regenerated set diffs clean). The file is its own JSON shape (a list of
conversations with `turns` and `pairs`), not LoCoMo's, so bench.sets.build leaves it alone.
"""

from __future__ import annotations

import gzip
import json
import random
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from bench.sets import updates_templates as tpl
from bench.sets.common import SETS_DIR
from bench.sets.updates_templates import Family

SEED = 2025_0717
PATH = SETS_DIR / "updates.json.gz"
KINDS = (
    "both_true",
    "other_holder",
    "other_qualifier",
    "question",
    "assistant_suggestion",
    "hypothetical",
    "past_history",
    "same_value",
)
# (language, shape, conversations)
PLAN = (
    ("en", "assistant", 22),
    ("en", "friends", 18),
    ("zh", "assistant", 8),
    ("zh", "friends", 8),
    ("mixed", "assistant", 7),
    ("mixed", "friends", 7),
)
RULE_SHARE = 0.33  # rule-table families are drawn only while their share of pairs so far is below this
NEIGHBOUR = 0.6  # chance a look-alike goes to an entity family already updated in the conversation

CJK = re.compile(r"[\u4e00-\u9fff]")
SLOT = re.compile(r"\{(\w+)(?:\.(\d))?\}")
LINE = re.compile(r"^(\*?)([uafo]):\s*(.+)$", re.S)
EMOJI = ("😂", "🙃", "😅", "👀", "🙏", "💀", "✨")

# The subject's holder of a concept: families about one subject in several languages share a concept.
CONCEPT = {
    "mx_budget": "proj_budget", "zh_proj_budget": "proj_budget", "mx_notify": "notify_channel",
    "zh_notify": "notify_channel", "mx_deadline": "deadline", "zh_deadline": "deadline",
    "mx_standup": "meeting", "zh_meeting": "meeting", "mx_coverage": "coverage", "zh_coverage": "coverage",
    "mx_rate": "rate_limit", "zh_qps": "rate_limit", "mx_office": "office", "mx_gym": "gym_days",
    "zh_gym": "gym_days", "mx_rent": "rent", "zh_rent": "rent", "mx_manager": "manager",
    "zh_manager": "manager", "mx_version": "python_version", "mx_car": "car", "zh_car": "car",
    "mx_report": "weekly_summary", "zh_weekly_report": "weekly_summary", "mx_coffee": "coffee",
    "zh_coffee": "coffee", "fav_cafe": "coffee", "zh_team_size": "team_size", "zh_location": "location",
    "zh_employer": "employer", "zh_commute": "commute", "zh_diet": "diet", "zh_speaks": "speaks",
    "zh_night_run": "running", "morning_run": "running",
}  # fmt: skip

QUERY_REPLY = {
    "en": ("I don't have that written down anywhere, sorry. Worth double-checking.", "I'm not sure; I don't think you've told me."),
    "zh": ("这个我这边没有记录，建议再确认一下。", "我不太确定，你之前好像没说过。"),
    "mixed": ("这个我没有 record，建议 double check 一下。",),
}  # fmt: skip
SUGGEST_LEAD = {
    "en": ("Anything you'd change in my setup?", "Any thoughts on this?", "What would you do here?",
           "Be honest, is this reasonable?", "Sanity check please.", "Any advice?"),
    "zh": ("你觉得这样合理吗？", "有什么建议吗？", "换你会怎么做？", "帮我看看有没有问题。"),
    "mixed": ("有什么 suggestion 吗？", "你觉得 OK 吗？", "帮我 sanity check 一下。"),
}  # fmt: skip
QUERY_REACT = {
    "en": ("no idea lol", "idk ask them", "hmm not sure"),
    "zh": ("不知道诶", "我也记不清"),
    "mixed": ("idk 诶", "不确定 lol"),
}

EN_NAMES = (
    ("Maya", "maya"), ("Daniel", "daniel"), ("Priyanka", "priyanka"), ("Tom", "tom"), ("Grace", "grace"),
    ("Luis", "luis"), ("Hannah", "hannah"), ("Ben", "ben"), ("Aisha", "aisha"), ("Ethan", "ethan"),
    ("Chloe", "chloe"), ("Marcus", "marcus"), ("Nora", "nora"), ("Sam", "sam"), ("Olivia", "olivia"),
    ("Jake", "jake"), ("Fatima", "fatima"), ("Ryan", "ryan"), ("Zoe", "zoe"), ("Theo", "theo"),
    ("Emma", "emma"), ("Kai", "kai"), ("Lena", "lena"), ("Owen", "owen"),
)  # fmt: skip
ZH_NAMES = (
    ("陈佳", "chen-jia"), ("林伟", "lin-wei"), ("王芳", "wang-fang"), ("张磊", "zhang-lei"), ("刘洋", "liu-yang"),
    ("李娜", "li-na"), ("周婷", "zhou-ting"), ("赵鹏", "zhao-peng"), ("孙悦", "sun-yue"), ("吴昊", "wu-hao"),
    ("郑晓雯", "zheng-xiaowen"), ("何俊", "he-jun"), ("徐静", "xu-jing"), ("马超", "ma-chao"),
)  # fmt: skip
MIXED_NAMES = (
    ("Coco", "coco-wang"), ("Jason Li", "jason-li"), ("Wei", "wei-zhang"), ("Vivian", "vivian-chen"),
    ("Kevin", "kevin-huang"), ("Yuki Lin", "yuki-lin"), ("Amy", "amy-zhou"), ("Leo", "leo-xu"),
    ("Iris", "iris-he"), ("Jun", "jun-ma"), ("Tina", "tina-wu"), ("Eric", "eric-sun"),
)  # fmt: skip
ASSISTANTS = {
    "en": ("assistant", "Nova", "Sage"),
    "zh": ("小助手", "assistant"),
    "mixed": ("assistant", "Nova"),
}
AGENTS = {"assistant": ("helper", "concierge", "work-copilot"), "friends": ("chat-memory",)}
OFFSETS = {"en": (-8, -5, 0, 1), "zh": (8,), "mixed": (8,)}

Side = list[tuple[str, str, bool]]  # (who: "S" the subject | "O" the other party, text, states the value)


# ---------------------------------------------------------------------------------------------------------
# Lines: parsing, slots, chat style.
# ---------------------------------------------------------------------------------------------------------


def parse(block: str) -> tuple[set[str], list[tuple[str, str, bool]]]:
    """A block's tags and its lines (who, text, marked)."""
    tags: set[str] = set()
    rest = block.strip()
    while rest.startswith("@"):
        tag, _, rest = rest.partition(" ")
        tags.add(tag[1:])
    lines = []
    for raw in rest.split(" | "):
        m = LINE.match(raw.strip())
        if not m:
            raise ValueError(f"not a line: {raw!r} in {block!r}")
        lines.append((m.group(2), m.group(3), m.group(1) == "*"))
    return tags, lines


def fill(text: str, vals: dict[str, tuple[str, ...]]) -> str:
    def one(m: re.Match[str]) -> str:
        forms = vals[m.group(1)]
        return forms[min(int(m.group(2) or 0), len(forms) - 1)]

    return SLOT.sub(one, text)


def outside_slots(text: str, fn: Any) -> str:
    """`fn` applied to the text between slots, so a typo never lands inside "{v1.1}"."""
    parts = re.split(r"(\{\w+(?:\.\d)?\})", text)
    return "".join(p if p.startswith("{") else fn(p) for p in parts)


def typo(segment: str, rng: random.Random) -> str:
    words = [m for m in re.finditer(r"[a-z]{5,}", segment)]
    if not words:
        return segment
    w = rng.choice(words)
    i = rng.randrange(w.start() + 1, w.end() - 2)
    return segment[:i] + segment[i + 1] + segment[i] + segment[i + 2 :]


def casual(text: str, rng: random.Random) -> str:
    """A friend's message: lowercase start, no full stop, "im", "u", now and then a typo or an emoji."""
    if CJK.search(text):
        if text.endswith("。") and rng.random() < 0.7:
            text = text[:-1]
        if rng.random() < 0.12:
            text += rng.choice((" 哈哈", " 😂", "～", "!!"))
        return text
    first = text.split(" ", 1)[0]
    if rng.random() < 0.7 and first[:1].isupper() and first not in ("I", "I'm", "I've", "I'd", "I'll"):
        text = text[0].lower() + text[1:]
    if text.endswith(".") and rng.random() < 0.8:
        text = text[:-1]
    if rng.random() < 0.35:
        text = outside_slots(text, lambda s: re.sub(r"\bI'm\b", "im", s))
    if rng.random() < 0.3:
        text = outside_slots(text, lambda s: re.sub(r"\byou\b", "u", s))
    if rng.random() < 0.12:
        done = [False]

        def once(s: str) -> str:
            if done[0] or not re.search(r"[a-z]{5,}", s):
                return s
            done[0] = True
            return typo(s, rng)

        text = outside_slots(text, once)
    if rng.random() < 0.12:
        text += " " + rng.choice(EMOJI)
    return text


def render(block: str, vals: dict[str, tuple[str, ...]], shape: str, rng: random.Random) -> Side:
    """A block's lines for one shape: the assistant's lines only with an assistant, the friend's only in chats."""
    _, lines = parse(block)
    out: Side = []
    for who, text, marked in lines:
        if (who == "a" and shape == "friends") or (who == "f" and shape == "assistant"):
            continue
        styled = casual(text, rng) if shape == "friends" else text
        out.append(("S" if who == "u" else "O", fill(styled, vals), marked))
    return out


def usable(block: str, shape: str, up: bool | None) -> bool:
    tags, _ = parse(block)
    if ("A" in tags and shape != "assistant") or ("F" in tags and shape != "friends"):
        return False
    return not (("up" in tags and up is not True) or ("down" in tags and up is not False))


def pick(blocks: tuple[str, ...], shape: str, rng: random.Random, up: bool | None = None) -> str:
    choices = [b for b in blocks if usable(b, shape, up)]
    if not choices:
        raise ValueError(f"no block for {shape}: {blocks[0]!r}")
    return rng.choice(choices)


# ---------------------------------------------------------------------------------------------------------
# Pairs.
# ---------------------------------------------------------------------------------------------------------


@dataclass
class Pair:
    fam: Family
    label: str
    kind: str | None
    subject: str  # the friend the pair is about (a chat), or the user
    first: Side
    second: Side
    question: str
    old_value: str
    current_value: str
    evidence: str  # "first" | "second" | "both"
    vals: dict[str, tuple[str, ...]]
    sessions: tuple[int, int] = (0, 0)
    turn_ids: tuple[list[str], list[str]] = field(default_factory=lambda: ([], []))


def draw(
    fam: Family, used: dict[str, set[int]], rng: random.Random
) -> tuple[dict[str, tuple[str, ...]], bool | None]:
    """The family's slot values (new ones in this conversation), and whether v2 lies above v1."""
    vals: dict[str, tuple[str, ...]] = {}
    index: dict[str, int] = {}
    for spec in fam.slots.split():
        name, pool_name = spec.split(":")
        pool = tpl.POOLS[pool_name]
        taken = used.setdefault(pool_name, set())
        free = [i for i in range(len(pool)) if i not in taken] or list(range(len(pool)))
        i = rng.choice(free)
        taken.add(i)
        vals[name], index[name] = pool[i], i
    if fam.fixed[0]:
        vals["v1"], vals["v2"] = (fam.fixed[0],), (fam.fixed[1],)
    up = index["v2"] > index["v1"] if "v1" in index and "v2" in index else None
    return vals, up


def question(
    asks: tuple[str, ...], vals: dict[str, tuple[str, ...]], shape: str, subject: str, rng: random.Random
) -> str:
    text = rng.choice(asks)
    zh = bool(CJK.search(SLOT.sub("", text)))
    if shape == "assistant":
        who = ("用户",) if zh else ("the user",)
        whos, big = ("the user's",), ("The user",)
    else:
        who, whos, big = (subject,), (f"{subject}'s",), (subject,)
    return fill(text, {**vals, "who": who, "whos": whos, "Who": big})


def decorate_new(
    fam: Family, side: Side, vals: dict[str, tuple[str, ...]], shape: str, rng: random.Random
) -> Side:
    """After a new value: the assistant echoes it (a stating turn), acknowledges it, or a friend reacts."""
    if any(who == "O" for who, _, _ in side):
        return side
    r = rng.random()
    if shape == "friends":
        return [*side, ("O", rng.choice(tpl.REACT[fam.lang]), False)] if r < 0.5 else side
    if r < 0.4 and not fam.fixed[0]:
        say = fill(fam.say or fam.now, vals)
        return [*side, ("O", rng.choice(tpl.ECHO_NEW[fam.lang]).format(say=say), True)]
    if r < 0.6:
        return [*side, ("O", rng.choice(tpl.ACK[fam.lang]), False)]
    if r < 0.72:
        return [*side, ("O", rng.choice(tpl.LONG_ACK[fam.lang]), False)]
    return side


def decorate_old(
    fam: Family, side: Side, vals: dict[str, tuple[str, ...]], shape: str, rng: random.Random
) -> Side:
    """After a first statement: sometimes a marked echo by the assistant, an acknowledgement, a reaction."""
    if any(who == "O" for who, _, _ in side):
        return side
    r = rng.random()
    if shape == "friends":
        return [*side, ("O", rng.choice(tpl.REACT[fam.lang]), False)] if r < 0.4 else side
    if r < 0.22 and not fam.fixed[0]:
        return [*side, ("O", rng.choice(tpl.ECHO_OLD[fam.lang]).format(was=fill(fam.was, vals)), True)]
    return [*side, ("O", rng.choice(tpl.ACK[fam.lang]), False)] if r < 0.5 else side


def reply_plain(fam: Family, side: Side, shape: str, rng: random.Random, chance: float = 0.45) -> Side:
    """A reply that states nothing (after a look-alike's second statement)."""
    if any(who == "O" for who, _, _ in side) or rng.random() >= chance:
        return side
    pool = tpl.REACT if shape == "friends" else tpl.ACK
    return [*side, ("O", rng.choice(pool[fam.lang]), False)]


def make_update(
    fam: Family,
    vals: dict[str, tuple[str, ...]],
    up: bool | None,
    shape: str,
    subject: str,
    rng: random.Random,
) -> Pair:
    first = decorate_old(fam, render(pick(fam.old, shape, rng), vals, shape, rng), vals, shape, rng)
    second = decorate_new(fam, render(pick(fam.new, shape, rng, up), vals, shape, rng), vals, shape, rng)
    ask = question(fam.ask, vals, shape, subject, rng)
    return Pair(
        fam,
        "update",
        None,
        subject,
        first,
        second,
        ask,
        fill(fam.was, vals),
        fill(fam.now, vals),
        "second",
        vals,
    )


def kinds_of(fam: Family, shape: str) -> list[str]:
    """The look-alike kinds a family can make in a shape."""
    have = {
        "both_true": bool(fam.also),
        "other_holder": bool(fam.holder),
        "other_qualifier": bool(fam.qual),
        "question": bool(fam.query and fam.new),
        "assistant_suggestion": bool(fam.suggest) and shape == "assistant",
        "hypothetical": bool(fam.hypo),
        "past_history": bool(fam.past),
        "same_value": True,
    }
    return [k for k in KINDS if have[k]]


def make_lookalike(
    fam: Family,
    kind: str,
    vals: dict[str, tuple[str, ...]],
    up: bool | None,
    shape: str,
    subject: str,
    rng: random.Random,
) -> Pair:
    second_blocks = {
        "question": fam.new, "assistant_suggestion": fam.suggest, "hypothetical": fam.hypo, "past_history": fam.past,
        "both_true": fam.also, "other_holder": fam.holder, "other_qualifier": fam.qual, "same_value": fam.old,
    }[kind]  # fmt: skip
    if up is not None and not any(usable(b, shape, up) for b in second_blocks):
        vals, up = {**vals, "v1": vals["v2"], "v2": vals["v1"]}, not up  # "if we had 100k" needs 100k > 50k

    def side(blocks: tuple[str, ...]) -> Side:
        return render(pick(blocks, shape, rng, up), vals, shape, rng)

    was, now = fill(fam.was, vals), fill(fam.now, vals)
    first_block = pick(fam.old, shape, rng)
    old = decorate_old(fam, render(first_block, vals, shape, rng), vals, shape, rng)
    ask = question(fam.ask, vals, shape, subject, rng)
    if kind == "same_value":  # the same value again, in other words
        again = [b for b in fam.old if usable(b, shape, None) and b != first_block] or [first_block]
        second = reply_plain(fam, render(rng.choice(again), vals, shape, rng), shape, rng)
        return Pair(fam, "lookalike", kind, subject, old, second, ask, was, was, "both", vals)
    if kind == "question":
        query = side(fam.query)
        replies = QUERY_REACT if shape == "friends" else QUERY_REPLY
        query = [*query, ("O", rng.choice(replies[fam.lang]), False)] if rng.random() < 0.6 else query
        stated = decorate_new(fam, side(fam.new), vals, shape, rng)
        return Pair(fam, "lookalike", kind, subject, query, stated, ask, was, now, "second", vals)
    if kind == "assistant_suggestion":  # asked for advice or not, the user keeps the value
        second = side(fam.suggest)
        if rng.random() < 0.75:
            second = [("S", rng.choice(SUGGEST_LEAD[fam.lang]), False), *second]
        if rng.random() < 0.7:
            second = [*second, ("S", rng.choice(tpl.DECLINE[fam.lang]), False)]
        return Pair(fam, "lookalike", kind, subject, old, second, ask, was, was, "first", vals)
    if kind in ("hypothetical", "past_history", "both_true"):
        blocks = {"hypothetical": fam.hypo, "past_history": fam.past, "both_true": fam.also}[kind]
        second = reply_plain(fam, side(blocks), shape, rng)
        if kind != "both_true":
            return Pair(fam, "lookalike", kind, subject, old, second, ask, was, was, "first", vals)
        ask = question(fam.also_ask, vals, shape, subject, rng)
        return Pair(
            fam, "lookalike", kind, subject, old, second, ask, was, fill(fam.also_now, vals), "both", vals
        )
    return other_pair(
        fam,
        kind,
        old,
        side(fam.holder if kind == "other_holder" else fam.qual),
        ask,
        vals,
        shape,
        subject,
        rng,
    )


def other_pair(
    fam: Family,
    kind: str,
    old: Side,
    other: Side,
    ask: str,
    vals: dict[str, tuple[str, ...]],
    shape: str,
    subject: str,
    rng: random.Random,
) -> Pair:
    """other_holder / other_qualifier: asked about the subject (the first statement answers) or about the
    other holder or entity (the second does); a holder's statement sometimes comes first."""
    asks, other_now = (
        (fam.holder_ask, fam.holder_now) if kind == "other_holder" else (fam.qual_ask, fam.qual_now)
    )
    other = reply_plain(fam, other, shape, rng)
    was, other_value = fill(fam.was, vals), fill(other_now, vals)
    if (
        kind == "other_holder" and rng.random() < 0.35
    ):  # "my sister lives in Paris" first, then "I live in Lyon"
        if rng.random() < 0.5:
            return Pair(fam, "lookalike", kind, subject, other, old, ask, other_value, was, "second", vals)
        ask = question(asks, vals, shape, subject, rng)
        return Pair(fam, "lookalike", kind, subject, other, old, ask, other_value, other_value, "first", vals)
    if rng.random() < 0.5:
        return Pair(fam, "lookalike", kind, subject, old, other, ask, was, was, "first", vals)
    ask = question(asks, vals, shape, subject, rng)
    return Pair(fam, "lookalike", kind, subject, old, other, ask, was, other_value, "second", vals)


# ---------------------------------------------------------------------------------------------------------
# Conversations.
# ---------------------------------------------------------------------------------------------------------


@dataclass
class Tally:
    """What has been drawn so far, over all conversations (to keep the rule-table share and the kinds even)."""

    pairs: int = 0
    rule: int = 0
    kinds: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))


def concept(fam: Family) -> str:
    return CONCEPT.get(fam.key, fam.group or fam.key)


def family_pool(lang: str, shape: str) -> list[tuple[Family, float]]:
    """The families a conversation draws from, with weights: bilingual chats mostly mix, sometimes not."""
    sources = {
        "en": ((tpl.EN, 1.0),),
        "zh": ((tpl.ZH, 1.0),),
        "mixed": ((tpl.MIXED, 4.0), (tpl.ZH, 1.0), (tpl.EN, 0.5)),
    }
    return [(f, w) for fams, w in sources[lang] for f in fams if shape[0] in f.shapes]


class Chooser:
    """Families for one conversation: distinct subjects, except an entity family (a project's budget) twice."""

    def __init__(
        self, pool: list[tuple[Family, float]], shape: str, tally: Tally, rng: random.Random
    ) -> None:
        self.pool, self.shape, self.tally, self.rng = pool, shape, tally, rng
        self.taken: dict[str, list[Family]] = {}

    def allowed(self, fam: Family, gate: bool = True) -> bool:
        if gate and fam.rule and self.tally.rule >= RULE_SHARE * max(self.tally.pairs, 1):
            return False
        prior = self.taken.get(concept(fam), [])
        return not prior or (fam.entity and len(prior) < 2 and all(f.entity for f in prior))

    def weighted(self, cands: list[tuple[Family, float]]) -> Family:
        return self.rng.choices([f for f, _ in cands], weights=[w for _, w in cands])[0]

    def take(self, fam: Family, kind: str | None) -> tuple[Family, str | None]:
        self.taken.setdefault(concept(fam), []).append(fam)
        self.tally.pairs += 1
        self.tally.rule += fam.rule
        if kind:
            self.tally.kinds[kind] += 1
        return fam, kind

    def update(self) -> tuple[Family, str | None]:
        for gate in (True, False):
            cands = [(f, w) for f, w in self.pool if f.new and self.allowed(f, gate)]
            if cands:
                return self.take(self.weighted(cands), None)
        raise ValueError("no family left for an update")

    def lookalike(self) -> tuple[Family, str | None]:
        order = sorted(KINDS, key=lambda k: (self.tally.kinds[k], self.rng.random()))
        for gate in (True, False):
            for kind in order:
                cands = [
                    (f, w) for f, w in self.pool if kind in kinds_of(f, self.shape) and self.allowed(f, gate)
                ]
                near = [(f, w) for f, w in cands if f.entity and concept(f) in self.taken]
                if near and self.rng.random() < NEIGHBOUR:
                    return self.take(self.weighted(near), kind)
                if cands:
                    return self.take(self.weighted(cands), kind)
        raise ValueError("no family left for a look-alike")


def names_for(lang: str, rng: random.Random) -> list[tuple[str, str]]:
    pool = {"en": EN_NAMES, "zh": ZH_NAMES, "mixed": MIXED_NAMES}[lang]
    return rng.sample(pool, 2)


@dataclass
class Piece:
    side: Side
    pair: int  # index of its pair, -1 for filler
    which: int  # 0 the first statement, 1 the second
    subject: str  # the speaker "S" stands for
    block: str = ""  # a filler block's source (never twice in one session)


def filler_pieces(
    lang: str, shape: str, count: int, people: tuple[str, str], rng: random.Random
) -> list[Piece]:
    letter = shape[0]
    pool = list(tpl.FILLER[(lang, letter)])
    if lang == "mixed":
        pool += list(tpl.FILLER[("zh", letter)]) + list(tpl.FILLER[("en", letter)])
    out: list[Piece] = []
    deck: list[str] = []
    while sum(len(p.side) for p in out) < count:
        if not deck:
            deck = pool[:]
            rng.shuffle(deck)
        block = deck.pop()
        out.append(
            Piece(
                render_plain(block, shape, rng),
                -1,
                0,
                rng.choice(people) if shape == "friends" else people[0],
                block,
            )
        )
    return out


def render_plain(block: str, shape: str, rng: random.Random) -> Side:
    """A filler block (no slots: its braces are text, as in a regex)."""
    _, lines = parse(block)
    return [
        ("S" if who == "u" else "O", casual(text, rng) if shape == "friends" else text, False)
        for who, text, _ in lines
        if not ((who == "a" and shape == "friends") or (who == "f" and shape == "assistant"))
    ]


def session_days(rng: random.Random, tz: timezone) -> list[datetime]:
    """6-9 session dates, 3-20 days apart (a conversation spans one to five months)."""
    day = datetime(2025, 1, 6, tzinfo=tz) + timedelta(days=rng.randint(0, 150))
    out = []
    for _ in range(rng.randint(6, 9)):
        out.append(day.replace(hour=rng.randint(7, 21), minute=rng.randint(0, 59)))
        day += timedelta(days=rng.randint(3, 20))
    return out


def make_pairs(
    lang: str, shape: str, people: tuple[str, str], n_sessions: int, tally: Tally, rng: random.Random
) -> list[Pair]:
    chooser = Chooser(family_pool(lang, shape), shape, tally, rng)
    picks = [chooser.update() for _ in range(rng.randint(4, 6))]
    picks += [chooser.lookalike() for _ in range(rng.randint(4, 6))]
    rng.shuffle(picks)
    used: dict[str, set[int]] = {}
    pairs = []
    for fam, kind in picks:
        vals, up = draw(fam, used, rng)
        subject = people[0] if shape == "assistant" or rng.random() < 0.6 else people[1]
        pair = (
            make_update(fam, vals, up, shape, subject, rng)
            if kind is None
            else make_lookalike(fam, kind, vals, up, shape, subject, rng)
        )
        first = rng.randint(0, n_sessions - 2)
        pair.sessions = (first, rng.randint(first + 1, n_sessions - 1))
        pairs.append(pair)
    return pairs


def build(cid: str, split: str, lang: str, shape: str, tally: Tally, rng: random.Random) -> dict[str, Any]:
    (name, slug), (friend, _) = names_for(lang, rng)
    assistant = rng.choice(ASSISTANTS[lang])
    people = (name, friend) if shape == "friends" else (name, assistant)
    tz = timezone(timedelta(hours=rng.choice(OFFSETS[lang])))
    days = session_days(rng, tz)
    pairs = make_pairs(lang, shape, people, len(days), tally, rng)
    sessions: list[list[Piece]] = [[] for _ in days]
    for i, pair in enumerate(pairs):
        for which, side in enumerate((pair.first, pair.second)):
            sessions[pair.sessions[which]].append(Piece(side, i, which, pair.subject))
    stated = sum(len(p.first) + len(p.second) for p in pairs)
    target = rng.randint(75, 130) - stated - len(days)
    for piece in filler_pieces(lang, shape, max(target, 12), people, rng):
        for _ in range(20):
            s = rng.randrange(len(days))
            if all(p.block != piece.block for p in sessions[s]):
                break
        sessions[s].append(piece)
    turns: list[dict[str, Any]] = []
    for s, (day, pieces) in enumerate(zip(days, sessions, strict=True)):
        rng.shuffle(pieces)
        write_session(f"{cid}-s{s + 1}", day, pieces, lang, shape, people, pairs, turns, rng)
    return {
        "conversation_id": cid,
        "split": split,
        "shape": shape,
        "lang": lang,
        "agent_id": rng.choice(AGENTS[shape]),
        "user_id": f"{slug}-{cid.rsplit('-', 1)[1]}",
        "speakers": {"user": name, "friend": friend}
        if shape == "friends"
        else {"user": name, "assistant": assistant},
        "turns": turns,
        "pairs": pair_records(cid, shape, pairs),
    }


def write_session(
    sid: str,
    day: datetime,
    pieces: list[Piece],
    lang: str,
    shape: str,
    people: tuple[str, str],
    pairs: list[Pair],
    turns: list[dict[str, Any]],
    rng: random.Random,
) -> None:
    """One day's turns: maybe a greeting, the pieces in their shuffled order, maybe a goodbye."""
    key = (lang, shape[0])
    opener = [
        Piece(
            [("S", rng.choice(tpl.OPENERS[key]), False)],
            -1,
            0,
            rng.choice(people[: 2 if shape == "friends" else 1]),
        )
    ]
    closer = [
        Piece(
            [("S", rng.choice(tpl.CLOSERS[key]), False)],
            -1,
            0,
            rng.choice(people[: 2 if shape == "friends" else 1]),
        )
    ]
    pieces = (opener if rng.random() < 0.8 else []) + pieces + (closer if rng.random() < 0.5 else [])
    ts = day
    for piece in pieces:
        other = next(p for p in people if p != piece.subject) if shape == "friends" else people[1]
        for who, text, marked in piece.side:
            speaker = piece.subject if who == "S" else other
            role = "assistant" if shape == "assistant" and who == "O" else "user"
            ts += timedelta(seconds=rng.randint(4, 45) if role == "assistant" else rng.randint(15, 420))
            tid = f"{sid.rsplit('-s', 1)[0]}-t{len(turns) + 1:04d}"
            turns.append(
                {
                    "turn_id": tid,
                    "session_id": sid,
                    "role": role,
                    "speaker": speaker,
                    "content": text,
                    "ts": ts.isoformat(),
                }
            )
            if marked and piece.pair >= 0:
                pairs[piece.pair].turn_ids[piece.which].append(tid)


def attribute(pair: Pair, shape: str) -> str:
    """The family's attribute; in a chat, naming the friend it is about instead of "the user"."""
    text = fill(pair.fam.attribute, pair.vals)
    if shape == "friends":
        text = text.replace("the user's", f"{pair.subject}'s").replace("the user", pair.subject)
        text = text.replace("用户", pair.subject)
    return text


def pair_records(cid: str, shape: str, pairs: list[Pair]) -> list[dict[str, Any]]:
    """The pairs in the order their first statement appears."""
    out = []
    for n, pair in enumerate(sorted(pairs, key=lambda p: p.turn_ids[0][0] if p.turn_ids[0] else ""), start=1):
        old, new = pair.turn_ids
        evidence = {"first": old, "second": new, "both": old + new}[pair.evidence]
        out.append(
            {
                "pair_id": f"{cid}-p{n:02d}",
                "label": pair.label,
                "lang": pair.fam.lang,
                "attribute": attribute(pair, shape),
                "value_kind": pair.fam.kind,
                "rule_table": pair.fam.rule,
                "lookalike_kind": pair.kind,
                "old_turns": old,
                "new_turns": new,
                "question": pair.question,
                "old_value": pair.old_value,
                "current_value": pair.current_value,
                "evidence": evidence,
            }
        )
    return out


# ---------------------------------------------------------------------------------------------------------
# The set.
# ---------------------------------------------------------------------------------------------------------


def generate() -> list[dict[str, Any]]:
    """Every conversation, the same on every run."""
    rng = random.Random(SEED)
    tally = Tally()
    out = []
    for g, (lang, shape, count) in enumerate(PLAN):
        for n in range(1, count + 1):
            cid = f"upd-{lang}-{shape[0]}-{n:03d}"
            out.append(build(cid, "dev" if (n + g) % 2 else "test", lang, shape, tally, rng))
    for conv in out:
        check(conv)
    return out


def check(conv: dict[str, Any]) -> None:
    """The shape the set promises: 60-150 turns, 8-12 pairs, each with stated turns on both sides, the older
    in an earlier session, and evidence among the conversation's turns."""
    when = {t["turn_id"]: (t["ts"], t["session_id"]) for t in conv["turns"]}
    problems = []
    if not 60 <= len(conv["turns"]) <= 150 or not 8 <= len(conv["pairs"]) <= 12:
        problems.append(f"{len(conv['turns'])} turns, {len(conv['pairs'])} pairs")
    for p in conv["pairs"]:
        old, new = p["old_turns"], p["new_turns"]
        if not old or not new or not set(p["evidence"]) <= set(old + new):
            problems.append(f"{p['pair_id']}: turns {old} {new} evidence {p['evidence']}")
        elif max(datetime.fromisoformat(when[t][0]) for t in old) >= min(
            datetime.fromisoformat(when[t][0]) for t in new
        ):
            problems.append(f"{p['pair_id']}: old after new")
        elif {when[t][1] for t in old} & {when[t][1] for t in new}:
            problems.append(f"{p['pair_id']}: old and new in one session")
    if problems:
        raise ValueError(f"{conv['conversation_id']}: {'; '.join(problems)}")


def write(path: Path, data: list[dict[str, Any]]) -> None:
    """Gzipped JSON, byte-identical for the same data (mtime 0), as bench.sets.common.write_set."""
    raw = json.dumps(data, ensure_ascii=False, indent=None, sort_keys=False).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out, gzip.GzipFile(fileobj=out, mode="wb", mtime=0, filename="") as gz:
        gz.write(raw)


def main() -> None:
    data = generate()
    write(PATH, data)
    pairs = [p for c in data for p in c["pairs"]]
    updates = sum(p["label"] == "update" for p in pairs)
    turns = sum(len(c["turns"]) for c in data)
    print(
        f"{PATH}: {len(data)} conversations, {turns:,} turns, {updates} updates, {len(pairs) - updates} look-alikes"
    )


if __name__ == "__main__":
    main()
