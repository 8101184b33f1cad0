"""Restated requests and preferences: one memory that says what a user told the assistant several times
(issue 40). Pure: turns in, groups, texts and the members each text states out.

A user says "too wordy", "can you be shorter" and "just the gist, please" across three sessions. MiniLM puts
these far apart, so cosine clustering never groups them; what review knows does:

- **subject**: the words of a standing request name its subject (restatement_lexicon.SUBJECTS, English and
  Chinese, after NFKC folding): "wordy", "shorter", "gist", "简短" are all `answer_length`;
- **ack**: the assistant's acknowledgement right after a request, in its session ("Got it, I'll keep it
  short") lends the request its subject when the request's own words name none ("stop with the essays");
- **fact**: a fact the rule tables extracted (`answer_style`, `language`, ...) names its subject too;
- **cosine**: a request whose words name no subject takes the subject of a request it is this close to
  (off unless `Signals.cosine` is set: measured in `hindsight bench consolidation`'s ablation table).

Only the same speaker's standing requests count (role user, in their own voice: not someone else's words
they report or a request on someone else's behalf, issue 44; not a question about the world, not a one-off
task on "this"), and a group is a memory only when it is **coherent**: at least `min_requests` requests in at
least `min_sessions` sessions, all naming one subject, none stating a fact of another attribute. Everything
else stays an episode. The memory's text is the latest wording that nothing superseded, in its own language,
followed by the earlier wordings quoted (one a newer wording of the user's changed, as what it said before),
so it states every member it stands in for (`covers`), and no more.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from pipeline.core.ports import Vector
from pipeline.core.scripts import CJK_CLASS, mostly_cjk
from pipeline.review.quality_lexicon import EN_FILLER, EN_STOPWORDS, ZH_STOPCHARS
from pipeline.review.restatement_lexicon import (
    ACK,
    ASKED,
    ASKS,
    ASKS_ASSISTANT,
    FACT_SUBJECTS,
    HOLDER,
    ON_BEHALF,
    ONE_OFF,
    OTHER_SUBJECT,
    QUOTED,
    REPORTED,
    REQUEST,
    REQUEST_WORDS,
    STANDING,
    SUBJECTS,
    ZH_FUNCTION_PAIRS,
    ZH_ON_BEHALF,
    ZH_REPORTED,
)
from pipeline.review.summarise import sentences

SIGNALS = ("subject", "ack", "fact", "terms", "cosine")
# A request longer than this is a message that contains a request, not a restatement of one.
MAX_REQUEST_WORDS = 40
QUOTE_MAX_WORDS = 14  # an earlier wording is quoted only when short; a longer one is stated by its terms
QUOTES = 3  # earlier wordings quoted after the lead: the text stays one or two sentences
# A memory of its own needs this many requests in this many sessions: the same wish said again later.
MIN_REQUESTS = 2
MIN_SESSIONS = 2


@dataclass(frozen=True, slots=True)
class Said:
    """One turn as restatement linking sees it."""

    role: str
    session: str
    ts: datetime
    content: str
    facts: frozenset[str] = frozenset()  # fact attributes it states ("user/answer_style")
    superseded: bool = False  # a newer statement superseded it (issue 39's links)


@dataclass(frozen=True, slots=True)
class Signals:
    """Which signals may link two requests (all but terms and cosine by default; the bench switches each)."""

    subject: bool = True
    ack: bool = True
    fact: bool = True
    # A subjectless request joins the one subject whose requests share its object's words. Off: on the
    # restated set it links nothing more, on the stories set one turn ("No satay for me, ... peanuts").
    terms: bool = False
    cosine: float | None = None  # a subjectless request joins a keyed one this close (None: off)


@dataclass(frozen=True, slots=True)
class Group:
    subject: str
    requests: tuple[int, ...]  # indices into the turns, oldest first
    acks: tuple[int, ...] = ()
    linked_by: frozenset[str] = field(default_factory=frozenset)  # the signals that put members in

    @property
    def members(self) -> tuple[int, ...]:
        return tuple(sorted({*self.requests, *self.acks}))


def fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).replace("’", "'").replace("‘", "'").lower()


def subjects(text: str) -> frozenset[str]:
    t = fold(text)
    return frozenset(name for name, pattern in SUBJECTS.items() if pattern.search(t))


_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_CJK_RUN = re.compile(f"[{CJK_CLASS}]+")


def words(text: str) -> int:
    t = fold(text)
    return len(_WORD.findall(t)) + sum(len(r) for r in _CJK_RUN.findall(t))


_CLAUSE = re.compile(r"[,;，；]\s*")


def own_voice(text: str) -> str:
    """What of a text the speaker says in their own voice (issue 44): without the sentences that report
    someone else's words ("My manager always says: please give long answers", "keep it short, my boss
    said"), and without the clauses whose subject is another person ("my mom only reads Spanish") or that
    ask something for another person ("please answer her in Spanish"). A wish said for or by someone else is
    not the user's standing request. The whole text when none of these frames is in it."""
    t = fold(text)
    kept: list[str] = []
    for sentence in sentences(t) or [t]:
        outside = QUOTED.sub(" ", sentence)
        if REPORTED.search(sentence) or ZH_REPORTED.search(sentence):
            continue
        if outside != sentence and outside.strip(" -–—:,.!?") and HOLDER.search(outside):
            continue  # a quote attributed to someone: '"Keep it long" - my manager'
        clauses = [
            c
            for c in _CLAUSE.split(sentence)
            if not (OTHER_SUBJECT.search(c) or ON_BEHALF.search(c) or ZH_ON_BEHALF.search(c))
        ]
        if len(clauses) == len(_CLAUSE.split(sentence)):
            kept.append(sentence)  # every clause the speaker's: the sentence as it was said
        elif clauses:
            kept.append(", ".join(clauses))
    return " ".join(kept)


def is_request(role: str, text: str, *, acknowledged: bool = False) -> bool:
    """A standing request or preference of the user's: not an assistant's turn, not a question about the
    world ("is Lisbon older than Porto?"), not a one-off task on something at hand ("summarise this"), not
    someone else's wish the user reports or passes on (`own_voice`).
    `acknowledged`: the assistant confirmed it naming its subject ("Sure, bullet points from now on"), which
    says it was taken as a request even when its words have no request marker ("分成几点说")."""
    if role != "user" or words(text) > MAX_REQUEST_WORDS:
        return False
    t = own_voice(text).strip()
    if not t:
        return False
    if ASKS.search(t) and not ASKS_ASSISTANT.search(t):
        return False
    if ONE_OFF.search(t) and not STANDING.search(t):
        return False
    # A short complaint ("too wordy", "太长了") is a request in itself; not the short clause left of a longer
    # text once another's words are out ("my coworker gives long answers, it drives everyone crazy").
    short = words(t) <= 4 and words(t) == words(text)
    return bool(REQUEST.search(t)) or short or (acknowledged and bool(subjects(t)))


def is_ack(role: str, text: str) -> bool:
    return role == "assistant" and words(text) <= MAX_REQUEST_WORDS and bool(ACK.search(fold(text)))


def _stem(word: str) -> str:
    for suffix, keep in (("'s", ""), ("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: len(word) - len(suffix)] + keep
    return word


def terms(text: str) -> frozenset[str]:
    """What a text says, normalised: its subjects, its English content words (stemmed, without stopwords,
    filler and the words every request has) and the character pairs of its Chinese, each with the words
    that named a subject taken out."""
    t = fold(text)
    out: set[str] = set()
    for name, pattern in SUBJECTS.items():
        if pattern.search(t):
            out.add(f"@{name}")
            t = pattern.sub(" ", t)
    for w in _WORD.findall(t):
        if w in EN_STOPWORDS or w in EN_FILLER or w in REQUEST_WORDS or len(w) < 2:
            continue
        out.add(_stem(w))
    for run in _CJK_RUN.findall(t):
        kept = "".join(ch for ch in run if ch not in ZH_STOPCHARS and ch not in "请别不要用说")
        out.update(kept[i : i + 2] for i in range(len(kept) - 1))
    return frozenset(out)


def object_terms(text: str) -> frozenset[str]:
    """`terms` of what a request is about: without its subject words and without the words every request
    has ("以后", "please", "我喜欢"), which two requests share whatever they ask for."""
    t = fold(text)
    for pattern in (*SUBJECTS.values(), REQUEST, STANDING, ONE_OFF):
        t = pattern.sub(" ", t)
    return terms(t) - ZH_FUNCTION_PAIRS


def covers(text: str, member: str) -> bool:
    """Does `text` state what `member` says: its whole wording, or every term of it (see `terms`)? A memory
    stands in only for the members it covers; the others keep their own place in recall."""
    flat = " ".join(fold(text).split())
    said = " ".join(fold(member).split()).rstrip(".!?。！？ ")
    if said and said in flat:
        return True
    mine = terms(member)
    return bool(mine) and mine <= terms(text)


def anchored(texts: Sequence[str]) -> bool:
    """Some term (see `terms`) that every text has: what a cosine cluster needs, beside its cohesion, to be
    coherent. Cosine alone put a knee operation and a long run beside a budget and a budgeting app."""
    shared: frozenset[str] | None = None
    for t in texts:
        shared = terms(t) if shared is None else shared & terms(t)
        if not shared:
            return False
    return bool(shared)


def group(
    said: Sequence[Said],
    vectors: Vector | None = None,
    *,
    signals: Signals = Signals(),
    min_requests: int = MIN_REQUESTS,
    min_sessions: int = MIN_SESSIONS,
) -> list[Group]:
    """The coherent groups of restated requests among `said` (one scope's turns), largest first.

    A request belongs to one group at most: the subject that most of its scope's requests name."""
    order = sorted(range(len(said)), key=lambda i: (said[i].ts, i))
    confirmed = _followed_by_ack(said, order) if signals.ack else set()
    requests = [i for i in order if is_request(said[i].role, said[i].content, acknowledged=i in confirmed)]
    acks = _acks(said, order, set(requests))
    keys, why = _keys(said, requests, acks, vectors, signals)
    counts: dict[str, int] = {}
    for i in requests:
        for k in keys[i]:
            counts[k] = counts.get(k, 0) + 1
    by_subject: dict[str, list[int]] = {}
    for i in requests:
        if keys[i]:
            main = max(sorted(keys[i]), key=lambda k: counts[k])
            by_subject.setdefault(main, []).append(i)
    out = []
    for subject, members in by_subject.items():
        members = [i for i in members if not _other_fact(said[i].facts, subject)]
        if len(members) < min_requests or len({said[i].session for i in members}) < min_sessions:
            continue
        taken = tuple(j for j, i in acks.items() if i in members) if signals.ack else ()
        linked = frozenset().union(*(why[i] for i in members)) | ({"ack"} if taken else frozenset())
        out.append(Group(subject, tuple(members), tuple(sorted(taken)), linked))
    out.sort(key=lambda g: (-len(g.members), g.subject))
    return out


def _keys(
    said: Sequence[Said],
    requests: Sequence[int],
    acks: dict[int, int],
    vectors: Vector | None,
    signals: Signals,
) -> tuple[dict[int, set[str]], dict[int, set[str]]]:
    """Per request, the subjects it names (by its words, its facts, its acknowledgement, a close request),
    and which signals named them."""
    keys: dict[int, set[str]] = {i: set() for i in requests}
    why: dict[int, set[str]] = {i: set() for i in requests}
    for i in requests:
        if signals.subject and (found := subjects(said[i].content)):
            keys[i] |= found
            why[i].add("subject")
        if signals.fact and (mapped := _fact_subjects(said[i].facts)):
            keys[i] |= mapped
            why[i].add("fact")
    if signals.ack:
        for j, i in acks.items():
            if found := subjects(said[j].content) - keys[i]:
                keys[i] |= found
                why[i].add("ack")
    if signals.terms:
        _adopt_by_terms(said, requests, keys, why)
    if signals.cosine is not None and vectors is not None:
        _adopt_by_cosine(requests, keys, why, vectors, signals.cosine)
    return keys, why


def fact_subject(attribute: str) -> str | None:
    """The subject a user fact attribute names: a request subject ("answer_style" -> answer_length,
    "allergy:peanuts" -> allergy), "fact:<attribute>" for any other fact (where they live, their budget), and
    None for a like or dislike ("preference:tea"), which names no subject of its own."""
    base = attribute.partition(":")[0]
    if base in FACT_SUBJECTS:
        return FACT_SUBJECTS[base]
    return None if base == "preference" else f"fact:{base}"


def _fact_subjects(facts: frozenset[str]) -> set[str]:
    """The request subjects of the user's facts a turn states ("user/answer_style" -> answer_length)."""
    out = set()
    for a in facts:
        entity, _, attribute = a.rpartition("/")
        subject = fact_subject(attribute) if entity == "user" else None
        if subject is not None and not subject.startswith("fact:"):
            out.add(subject)
    return out


def _other_fact(facts: frozenset[str], subject: str) -> bool:
    """The turn states a fact of another subject (a memory must not mix them)."""
    for a in facts:
        entity, _, attribute = a.rpartition("/")
        found = fact_subject(attribute) if entity == "user" else f"fact:{entity}"
        if found is not None and found != subject:
            return True
    return False


def _acks(said: Sequence[Said], order: Sequence[int], requests: set[int]) -> dict[int, int]:
    """ack index -> the request it acknowledges: the assistant's next turn in the request's session."""
    out: dict[int, int] = {}
    last: dict[str, int] = {}  # session -> the latest turn so far
    for i in order:
        s = said[i]
        previous = last.get(s.session)
        if previous is not None and previous in requests and is_ack(s.role, s.content):
            out[i] = previous
        last[s.session] = i
    return out


def _followed_by_ack(said: Sequence[Said], order: Sequence[int]) -> set[int]:
    """The user's turns the assistant's next turn in their session acknowledges by a subject they both
    name: "Sure, here are three options" after a diet update confirms no wish, it answers a task."""
    out: set[int] = set()
    last: dict[str, int] = {}
    for i in order:
        s = said[i]
        previous = last.get(s.session)
        if (
            previous is not None
            and said[previous].role == "user"
            and is_ack(s.role, s.content)
            and subjects(s.content) & subjects(said[previous].content)
        ):
            out.add(previous)
        last[s.session] = i
    return out


def _adopt_by_terms(
    said: Sequence[Said], requests: Sequence[int], keys: dict[int, set[str]], why: dict[int, set[str]]
) -> None:
    """A request that names no subject ("别放花生", "no more of those dinner essays") takes the subject of
    the same user's requests that share a word of its object (`terms`: English stems, Chinese character
    pairs), when those requests name one subject only: the object is what the wish is about, whatever the
    verb. Several subjects sharing its words: it stays without one."""
    keyed = {i: object_terms(said[i].content) for i in requests if keys[i]}
    for i in requests:
        if keys[i]:
            continue
        mine = object_terms(said[i].content)
        found = {k for j, own in keyed.items() if mine & own for k in keys[j]}
        if len(found) == 1:
            keys[i] = set(found)
            why[i].add("terms")


def _adopt_by_cosine(
    requests: Sequence[int],
    keys: dict[int, set[str]],
    why: dict[int, set[str]],
    vectors: Vector,
    threshold: float,
) -> None:
    keyed = [i for i in requests if keys[i]]
    if not keyed:
        return
    for i in requests:
        if keys[i]:
            continue
        sims = vectors[keyed] @ vectors[i]
        best = int(np.argmax(sims))
        if float(sims[best]) >= threshold:
            keys[i] = set(keys[keyed[best]])
            why[i].add("cosine")


# -- the memory's text --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Statement:
    text: str
    stated: frozenset[int]  # the members (indices into the turns) whose words the text states


def statement(said: Sequence[Said], g: Group) -> Statement:
    """The latest wording nothing superseded leads, in its own language; then the earlier wordings, quoted
    (short ones only, at most QUOTES, newest first): 'Just the gist, please. Earlier: "Too wordy" and "Can
    you be shorter".' A wording a newer one of the user's superseded (`_no_longer`) is quoted as what holds
    no longer: '... (no longer: "Keep it short please")'; in Chinese "此前也说过：…" and "（已不再：…）". The members it states (`covers`) are
    the ones recall lets it stand in for."""
    newest_first = sorted(g.requests, key=lambda i: (said[i].ts, i), reverse=True)
    old = _no_longer(said, newest_first)
    lead_i = next((i for i in newest_first if i not in old), newest_first[0])
    lead = _wording(said[lead_i].content)
    zh = mostly_cjk(lead)
    seen = {fold(lead).rstrip(".!?。！？")}
    current: list[tuple[int, str]] = []
    before: list[tuple[int, str]] = []
    for i in newest_first:
        if i == lead_i:
            continue
        w = _wording(said[i].content).rstrip(".!?。！？")
        if fold(w) in seen or words(w) > QUOTE_MAX_WORDS or len(current) + len(before) >= QUOTES:
            continue
        seen.add(fold(w))
        (before if i in old else current).append((i, w))
    text = lead
    if current:
        quoted = [f"“{w}”" if zh else f'"{w}"' for _, w in current]
        text += "此前也说过：" + "、".join(quoted) + "。" if zh else " Earlier: " + _and(quoted) + "."
    if before:
        quoted = [f"“{w}”" if zh else f'"{w}"' for _, w in before]
        text += "（已不再：" + "、".join(quoted) + "）" if zh else " (no longer: " + _and(quoted) + ")"
    stated = frozenset(i for i in g.members if covers(text, said[i].content))
    return Statement(text, stated | {lead_i} | {i for i, _ in current + before})


def _no_longer(said: Sequence[Said], newest_first: Sequence[int]) -> frozenset[int]:
    """The requests that hold no longer: superseded, and followed by a newer request of the group that still
    holds. The user changes their own wish by a newer wording of theirs; a flag no such wording explains came
    from words outside the group (someone else's, issue 44: "my manager always says: give long answers"),
    and a memory of the user's requests does not say "no longer" on their account."""
    out: set[int] = set()
    holding_since = False  # a newer request of the group holds
    for i in newest_first:
        if said[i].superseded and holding_since:
            out.add(i)
        holding_since = holding_since or not said[i].superseded
    return frozenset(out)


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _wording(content: str) -> str:
    """The sentence of a request that names its subject (else its first), ending in punctuation."""
    found = sentences(content) or [content.strip()]
    pick = next((s for s in found if subjects(s)), found[0])
    pick = pick.strip()
    if pick and pick[-1] not in ".!?。！？":
        pick += "。" if mostly_cjk(pick) else "."
    return pick[:1].upper() + pick[1:] if pick[:1].isascii() else pick


def asked_subjects(question: str) -> frozenset[str]:
    """The subjects a question asks about: the words of a subject (SUBJECTS) or the words a question about
    it uses (ASKED: "how long", "which language", "什么语言"). Recall favours the memory of restated requests
    on one of these."""
    t = fold(question)
    return subjects(question) | frozenset(name for name, pattern in ASKED.items() if pattern.search(t))
