"""Recall ordered by what the question asks of a value that changed (issue 46). Pure: question and hits in.

People state a value in passing ("…by the way, I'm now at 600 followers…", "…现在一共养了14盆…") and ask
for it in the plain present tense ("How many followers do I have?"), often in the words of the first
mention, so relevance alone prefers the stale statement. Review's links (issue 39) cover the pairs review
has seen and can read; this reads the question and the first hits themselves, so it needs no link and no
review:

1. What the question asks (`asks`): the value as it is now (the default for a question that asks a value:
   "how many / much / long / often", "what is", "where", "when", "which", "who", a yes/no question about
   someone; 多少, 几, 什么, 哪, 谁), the previous or first one ("previous", "before", "used to",
   "originally", "initially", "at first", 以前, 之前, 原来, 最初, 一开始), or how it changed ("how has … changed",
   变化: time order). A question that asks no value (why, how to, a past event told with "did") is left alone,
   and an explicit "now", "currently", 现在 or 目前 always asks the present.
2. Which of the first hits state a value for the question's subject (`states`): a sentence of the hit that
   shares the question's subject words, carries a value of the kind asked (a number for "how many", a date or
   time for "when"; any for the others), asserts it (not a question, a plan, a wish, a suggestion) and is the
   same holder's (the speaker's own for "my …"; the person named for "… Rachel …"). Another holder's count, a
   plan, a hypothetical, a question, or another named thing ("the Borealis budget" beside "the Atlas budget")
   is not a statement of this value.
3. When two or more of them were said at different times, they are reordered among the slots they hold: the
   newest first for the present (the older ones follow it, flagged as earlier values, never dropped), the
   oldest first for a previous value, time order for a change. The other hits keep their places, so the
   hits returned never change, only their order: R@k is untouched for the window.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from itertools import pairwise

from pipeline.review.claims import CJK, HISTORY, Claim, _stem, claim, keys

CURRENT, PREVIOUS, CHANGE = "current", "previous", "change"
ECHO_CHARS = 300  # an assistant turn longer than this is an answer of its own, not an echo of a value
SENTENCE_CHARS = 400


def _words(text: str) -> list[str]:
    return text.split()


@dataclass(frozen=True, slots=True)
class Said:
    """One hit as this module reads it: its key in the caller's list, when and by whom it was said."""

    key: int
    ts: datetime
    role: str
    text: str


_CHANGE_Q = re.compile(
    r"\bhow\s+(?:has|have|did|does|do)\b.{0,60}\b(?:chang|evolv|progress|develop|grow|grown|shift)\w*|"
    r"\b(?:what|which)\s+changes?\b|\bover\s+time\b|变化|怎么变|如何变|有什么变|变了多少|演变",
    re.I,
)
_PREVIOUS_Q = re.compile(
    r"\b(?:previous(?:ly)?|before|used\s+to|originally|original|initially|initial|at\s+first|first|"
    r"formerly|former|earlier|at\s+the\s+(?:start|beginning)|in\s+the\s+beginning|prior)\b|"
    r"以前|之前|原来|原先|最初|起初|一开始|当初|曾经|上一个|上一次|最早",
    re.I,
)
# An explicit present wins over a previous word elsewhere ("Rachel, a colleague from my previous company,
# currently works at …?").
_PRESENT_Q = re.compile(
    r"\b(?:now|currently|current|these\s+days|at\s+the\s+moment|at\s+present|so\s+far|yet|latest|"
    r"most\s+recent(?:ly)?|recent(?:ly)?|still|today)\b|现在|目前|如今|当前|最近|最新|至今|到现在|还",
    re.I,
)
# The kinds of question that ask for a value, and the value kinds they accept ("" any).
_ASKS_NUMBER = re.compile(
    r"\bhow\s+(?:many|much|long|far|old|big|tall|heavy|fast)\b|\bwhat\s+(?:percentage|"
    r"percent|number|amount|size|price|cost|score|rate|ratio|level|rank|count|total)\b|多少|几[个次天年月周岁本只条件位]?|多久|多长|多大|多重|多高|多远|比例",
    re.I,
)
_ASKS_TIME = re.compile(
    r"\bwhen\b|\bwhat\s+(?:time|day|date|year|month|weekday)\b|\bwhich\s+(?:day|date|year|month)\b|"
    r"什么时候|几点|哪天|哪一天|星期几|周几|几号|哪年|几月",
    re.I,
)
_ASKS_ANY = re.compile(
    r"^\s*(?:what|what's|whats|which|where|where's|who|who's|whose)\b|\bhow\s+(?:often|frequently)\b|"
    r"\b(?:what|which|where|who|whose)\s+(?:is|are|was|were|do|does|did|have|has|am)\b|"
    r"^\s*(?:do|does|am|is|are|have|has|can)\s+(?:i|my|we|our)\b|"
    r"什么|哪|谁|是不是|有没有|吗[？?]?\s*$",
    re.I,
)
# Not a value: reasons, instructions, opinions.
_NOT_VALUE_Q = re.compile(
    r"^\s*(?:why|how\s+(?:do|can|should|could|would|to)\b(?!.{0,40}\b(?:many|much|long|often)\b))|"
    r"为什么|为啥|怎么做|如何",
    re.I,
)
# A past event told as such ("What did Caroline research?"): it asks what happened, not what holds, unless it
# asks about the present or the previous value in so many words.
_PAST_EVENT_Q = re.compile(r"\b(?:did|was|were)\b", re.I)
# The speaker as the one who holds the value ("do I need", "have I read"): "my" alone may be part of what a
# named person has ("Rachel, a colleague from my previous company").
_SPEAKER_Q = re.compile(r"\b(?:i|i'm|i've|i'd)\b|我(?!们)", re.I)
_NAME = re.compile(r"(?<!^)(?<![.!?]\s)\b([A-Z][a-z][\w'-]*)")
_QUESTION_WORDS = frozenset(
    _words(
        "how many much long often far old big tall heavy fast frequently what which where when who whose "
        "number amount time day date year month weekday currently current previous previously before used "
        "originally original initially initial first formerly former earlier prior recently recent latest "
        "total far yet still"
    )
)
_QUESTION_STEMS = frozenset(_stem(w) for w in _QUESTION_WORDS)
_ZH_QUESTION_BIGRAMS = frozenset(
    _words(
        "多少 几个 几次 多久 多长 什么 时候 哪里 哪个 现在 目前 以前 之前 原来 最初 一开 开始 当初 变化 有没 没有 是不"
    )
)
_SENTENCE = re.compile(r"(?<=[.!?。！？;；])\s+|(?<=[。！？；])|\n+")
_OTHER_HOLDERS = frozenset(
    _words(
        "sister brother mom mum mother dad father parent parents wife husband spouse partner boyfriend girlfriend "
        "son daughter kid kids child children boss manager friend friends colleague coworker teammate classmate "
        "roommate neighbor neighbour cousin aunt uncle grandma grandpa team client customer he she his her him "
        "nobody everybody everyone someone somebody anyone anybody "
        "姐姐 妹妹 哥哥 弟弟 妈妈 爸爸 老婆 老公 儿子 女儿 孩子 老板 朋友 同事 室友 邻居 他 她 他们 她们"
    )
)


@dataclass(frozen=True, slots=True)
class Asked:
    """What a question asks of a value: the ordering, the value kinds that answer it, its subject."""

    ordering: str  # current | previous | change
    kinds: frozenset[str]  # "n" numbers, "t"/"d" times and dates; empty: any statement of the subject
    subject: frozenset[str]
    names: frozenset[str]  # proper names the question names (the thing or the person it is about)
    named: frozenset[str]  # every name or term the question holds as a value ("API", "monthly"): anchors too
    self_held: bool  # about the speaker's own ("my", "I"), not a named other person
    holders: frozenset[str] = frozenset()  # the relations or groups it names ("my sister", "my team")


# "API套餐" is two words: the claim tokenizer would read a Latin word run into CJK as one.
_SCRIPT_BOUNDARY = re.compile(rf"(?<=[A-Za-z])(?=[{CJK}])|(?<=[{CJK}])(?=[A-Za-z])")


def _read(text: str) -> Claim:
    return claim(_SCRIPT_BOUNDARY.sub(" ", text)[:SENTENCE_CHARS])


def _undouble(words: frozenset[str]) -> frozenset[str]:
    """Stems with a doubled final consonant undone ("runn" from "running" is "run")."""
    return frozenset(w[:-1] if len(w) > 3 and w[-1] == w[-2] and w[-1] in "bdgklmnprt" else w for w in words)


def _words_of(c: Claim) -> frozenset[str]:
    return _undouble(c.subject)


# Cached: one recall asks twice (hybrid's hydration of earlier values, then updates_order), and agents repeat
# their questions. `Asked` is frozen.
@lru_cache(maxsize=4096)
def asks(question: str) -> Asked | None:
    """What the question asks of a value, or None when it asks none (see the module docstring)."""
    q = question.strip()
    if not q or _NOT_VALUE_Q.search(q):
        return None
    change = bool(_CHANGE_Q.search(q))
    number, time_ = bool(_ASKS_NUMBER.search(q)), bool(_ASKS_TIME.search(q))
    if not (change or number or time_ or _ASKS_ANY.search(q)):
        return None
    present, previous = bool(_PRESENT_Q.search(q)), bool(_PREVIOUS_Q.search(q))
    if change:
        ordering = CHANGE
    elif previous and not present:
        ordering = PREVIOUS
    elif _PAST_EVENT_Q.search(q) and not present:
        return None  # "What did she research?": an event, not a value that holds
    else:
        ordering = CURRENT
    kinds = frozenset("n") if number else frozenset("td") if time_ else frozenset()
    c = _read(q)
    subject = frozenset(w for w in _words_of(c) if w not in _QUESTION_STEMS and w not in _ZH_QUESTION_BIGRAMS)
    names = frozenset(m.group(1).casefold() for m in _NAME.finditer(q))
    if not subject:
        return None
    named = frozenset(v[2:] for v in c.values if v[0] == "p")
    holders = frozenset(h for h in c.holders if h in _OTHER_HOLDERS)
    self_held = bool(_SPEAKER_Q.search(q)) and not holders
    return Asked(ordering, kinds, subject, names, named, self_held, holders)


def states(asked: Asked, hit: Said) -> frozenset[str] | None:
    """The values `hit` states for what `asked` is about (the union over its sentences that do; an empty
    set for a statement of an untyped value), or None when it states none."""
    role = hit.role.casefold()
    if role not in ("user", "assistant") or (role == "assistant" and len(hit.text) > ECHO_CHARS):
        return None  # the assistant's own answers propose values; only a short echo restates one
    need = min(2, len(asked.subject) + len(asked.named))
    found: set[str] | None = None
    for sentence in _SENTENCE.split(hit.text):
        if not sentence.strip():
            continue
        # Whether the sentence asks (puts its values in doubt) is the whole sentence's; the rest is read per
        # clause and pair of clauses, so that another clause's holder or "if" does not spill over.
        if not _could_state(asked, sentence) or _CONDITIONAL.match(sentence):
            continue  # a sentence that opens with a condition is hypothetical in every clause
        if not _REQUEST.search(sentence) and _ASKING.search(sentence):
            # A question puts its values in doubt; one that only ends asking ("I've had it for 6 months,
            # any tips?") states what its clauses before the asking one say.
            if _ASKS_FIRST.search(sentence):
                continue
            sentence = " ".join(_CLAUSE_END.split(sentence.rstrip())[:-1])
        for unit in _units(sentence):
            if not _could_state(asked, unit):
                continue  # parsing is what costs: most clauses share no word with the question
            c = _read(unit)
            if (
                len(_words_of(c) & asked.subject) + len({v[2:] for v in c.values} & asked.named) < need
                or c.hypothetical
                or c.plan
                or c.suggestion
                # told as history ("when I first joined…"), not only in the past: "last week I started at
                # Bosch" is the news itself
                or (asked.ordering == CURRENT and c.past and HISTORY.search(unit))
                or not _holder_fits(asked, c, unit)
            ):
                continue
            values = {v for v in c.values | _word_numbers(unit) if not asked.kinds or v[0] in asked.kinds}
            if asked.kinds and not values:
                continue
            # Another named thing than the one asked about ("the Borealis budget" for "the Atlas budget").
            named = {v for v in c.values if v[0] == "p"}
            if asked.names and named and not asked.names & ({v[2:] for v in named} | _lower_words(unit)):
                continue
            # Beside a number or a time, a name is what it belongs to: kept to tell two things apart, and so
            # is the owner a name is said as ("the Borealis account's plan", "Borealis那个账号的").
            owners = {f"o:{(m.group(1) or m.group(2)).casefold()}" for m in _OWNER.finditer(unit)} - {
                f"o:{w}" for w in asked.named | asked.names
            }
            found = (found or set()) | values | named | owners
    return frozenset(found) if found is not None else None


# "要是我说了算，周会就放每周二" / "If I were in charge, standup would be at 9": the condition governs the
# clauses after it, which read alone carry no marker of their own.
_CONDITIONAL = re.compile(
    r"^\W*(?:if|unless|suppose|supposing|imagine|assuming|what\s+if|even\s+if)\b|^\W*(?:如果|假如|要是|假设|万一)",
    re.I,
)
# For the cheap test only: digits split from CJK too ("9个工程师"), which `claim` reads apart by itself.
_ANY_BOUNDARY = re.compile(rf"(?<=[A-Za-z0-9])(?=[{CJK}])|(?<=[{CJK}])(?=[A-Za-z0-9])")
_NUMBER_WORDS = {
    w: i
    for i, ws in enumerate(
        [
            "zero",
            "one first once",
            "two second twice",
            "three third thrice",
            "four fourth",
            "five fifth",
            "six sixth",
            "seven seventh",
            "eight eighth",
            "nine ninth",
            "ten tenth",
            "eleven eleventh",
            "twelve twelfth dozen",
        ]
    )
    for w in ws.split()
}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.I)
_DIGIT = re.compile(r"\d|[一二两三四五六七八九十百千万]|\b(?:" + "|".join(_NUMBER_WORDS) + r")\b", re.I)


def _word_numbers(text: str) -> frozenset[str]:
    """Counts written as words ("my third issue", "five tops", "twice a week"): `claim` reads digits."""
    return frozenset(f"n:{_NUMBER_WORDS[m.group(1).casefold()]}" for m in _NUMBER_WORD.finditer(text))


def _could_state(asked: Asked, text: str) -> bool:
    """A cheap necessary test before a clause is parsed: a number where one is asked, a word in common."""
    if asked.kinds == {"n"} and not _DIGIT.search(text):
        return False
    return (
        bool(_undouble(keys(_ANY_BOUNDARY.sub(" ", text))) & (asked.subject | _stems_of(asked.named)))
        or not asked.subject
    )


def _stems_of(words: frozenset[str]) -> frozenset[str]:
    return frozenset(_stem(w) for w in words)


# A name said as an owner: "Borealis's", "the Borealis account's", "Borealis那个账号的", "Borealis的".
_OWNER = re.compile(
    rf"\b([A-Z][\w-]*)(?:'s|’s|\s+(?:account|team|project|client|company)(?:'s|’s))|"
    rf"([A-Za-z][A-Za-z0-9-]*)\s*(?:那个|这个)?[{CJK}]{{0,3}}的"
)
_CLAUSE_END = re.compile(r"(?<=[,;:])\s+|(?<=[，；：、])|\s+[—–-]{1,2}\s+")


def _units(sentence: str) -> list[str]:
    """Each clause of the sentence, and each with the clause before it (the subject is often in one, the
    value in the next: "阳台上的植物，现在一共14盆")."""
    clauses = [c for c in _CLAUSE_END.split(sentence) if c.strip()]
    return clauses + [a + " " + b for a, b in pairwise(clauses)]


def _two_things(stated: Sequence[frozenset[str]]) -> bool:
    """Two of the statements name different things and no thing in common ("Atlas: 50k" / "Borealis:
    80k"): both values hold, each of its own thing."""
    # Only beside a number, a date or a time: a name alone may be the value itself ("moved to Lyon").
    named = [{v for v in s if v[0] == "p"} if any(v[0] in "ntd" for v in s) else set() for s in stated]
    return any(a and b and not a & b for i, a in enumerate(named) for b in named[i + 1 :])


def order(
    question: str, hits: Sequence[Said], *, lead: bool = False
) -> tuple[list[int], dict[int, dict[str, object]]]:
    """The positions of `hits` in their new order, and per moved-or-flagged hit what `explain` says (see the
    module docstring). Unchanged order and no notes when the question asks no value or fewer than two hits
    said at different times state one. `lead`: the wanted statement takes the first place of all, the
    others below it keep their order."""
    positions = list(range(len(hits)))
    asked = asks(question)
    if asked is None:
        return positions, {}
    stated = {i: v for i, h in enumerate(hits) if (v := states(asked, h)) is not None}
    # A statement that says whose value it is, an owner the question does not name ("the Borealis
    # account's plan"), is another thing's value beside statements that name no owner: left in its place.
    plain = {i: v for i, v in stated.items() if not any(x[0] == "o" for x in v)}
    if plain and len(plain) < len(stated):
        stated = plain
    # The assistant proposes values ("Vercel deploys fastest; Netlify deploys forms too"); only its echo of a
    # value some user statement among these holds is a copy of it. Its proposals are no value of the user's
    # and are left in their place: an assistant's newer suggestion must not put itself above what was said.
    values_of = {i: frozenset(x for x in v if x[0] != "o") for i, v in stated.items()}
    user_values = {values_of[i] for i in stated if hits[i].role != "assistant"}
    stated = {i: v for i, v in stated.items() if hits[i].role != "assistant" or values_of[i] in user_values}
    stating = list(stated)
    if len(stating) < 2 or len({hits[i].ts for i in stating}) < 2:
        return positions, {}
    # Copies of one value (the user's statement and the assistant's echo of it): nothing changed to order.
    said_values = [frozenset(v for v in x if v[0] != "o") for x in stated.values()]
    if all(said_values) and len(set(said_values)) < 2:
        return positions, {}
    if _two_things(list(stated.values())):
        return positions, {}
    # Newest first for the present, oldest first otherwise; the hits' own order breaks a tie.
    if asked.ordering == CURRENT:
        wanted = sorted(stating, key=lambda i: (-hits[i].ts.timestamp(), i))
    else:
        wanted = sorted(stating, key=lambda i: (hits[i].ts, i))
    out = list(positions)
    for slot, i in zip(stating, wanted, strict=True):
        out[slot] = i
    if lead:
        out = [wanted[0], *(i for i in out if i != wanted[0])]
    notes: dict[int, dict[str, object]] = {}
    head = wanted[0]
    for rank, i in enumerate(wanted):
        note: dict[str, object] = {"value_order": asked.ordering}
        if asked.ordering == CURRENT and rank > 0 and hits[i].ts < hits[head].ts:
            note["earlier_value"] = True  # a newer statement of the same value follows: flagged, kept
        notes[i] = note
    return out, notes


# A request takes its values as given ("Can you update the config to the new limit of 5,000 requests?",
# "帮我改一下，现在一共14盆"); a question puts them in doubt ("Do I have 14 plants?", "是14盆吗？").
_REQUEST = re.compile(
    r"^\W*(?:(?:can|could|would|will)\s+you|please|pls|help\s+me|i\s+(?:need|want|would\s+like)\s+"
    r"(?:you|help|some\s+help|to)|(?:show|give|tell|write|make|update|fix|add|change|draft|create|"
    r"generate|suggest|recommend)\s+me\b)|^\W*(?:帮我|请|麻烦|能不能帮|可以帮|你能帮)",
    re.I,
)
_ASKS_FIRST = re.compile(
    r"^\W*(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|should|shall|"
    r"have|has|am|isn't|aren't|don't|doesn't)\b",
    re.I,
)
_ASKING = re.compile(
    r"^\W*(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|should|shall|"
    r"have|has|am|isn't|aren't|don't|doesn't)\b|[?？]\s*$|(?:吗|呢|么)[\s。.!！~～]*$",
    re.I,
)


def _holder_fits(asked: Asked, c: Claim, sentence: str) -> bool:
    """The sentence is the holder's: the speaker's own for a question about "my …" (no one else named in it),
    the one the question names otherwise ("my sister", "my team", "Rachel"). Reported speech, a quotation or
    an example is nobody's statement of fact."""
    if any(h.startswith("~") for h in c.holders) or (c.health and not c.first_person):
        return False  # health and allergies change only with the speaker's own word (issue 44)
    others = {h for h in c.holders if h in _OTHER_HOLDERS}
    if asked.names and not asked.self_held:
        # A question about a named person: the sentence names them, or speaks of someone ("she moved").
        return bool(asked.names & _lower_words(sentence)) or bool(others)
    if asked.holders:
        return others <= asked.holders and bool(others & asked.holders)
    return not others


_LATIN = re.compile(rf"[A-Za-z][\w'-]*|[{CJK}]+")


def _lower_words(sentence: str) -> set[str]:
    return {w.casefold() for w in _LATIN.findall(sentence)}
