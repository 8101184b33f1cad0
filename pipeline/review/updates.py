"""Knowledge updates for any attribute (issue 39): which earlier statement a newer one supersedes. Pure.

Two statements are an update when the newer one is said by the same person (or restates what an assistant
echoed back), both state something about the present, they are about the same subject and whose it is,
and the newer one changes exactly one thing: a value of one kind (a number, a time, a day, a name), the
polarity ("no longer", "不再"), or one short slot of an otherwise shared sentence ("通知发到飞书" /
"以后通知发钉钉"). A false link costs more than a missed one (the superseded statement is demoted), so
every rule below is a reason *not* to link, and a pair is linked only when none applies:

- a question, a plan or wish, an aside about the past: none of them states the present;
- the assistant never supersedes: its suggestion ("you could raise it to 60k") is not the user's word, and
  its echo ("Noted: 80,000") follows the user's turn, which is what supersedes;
- another holder ("my sister lives in Paris" / "I live in Lyon", "my sister's not allergic anymore"), another
  speaker in a group chat, reported speech, a quotation or an example (`He said: "I live in Paris now"`);
- a health or allergy statement that the speaker does not make of themself ("nobody here is allergic");
- "also", "too", "也" add a value beside the old one; liking, having and speaking hold many values at once
  (tea and coffee) unless the newer statement says it changed;
- two kinds of value differ at once ("Atlas: 50k" / "Borealis: 80k"): another subject, not a new value.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from difflib import SequenceMatcher
from typing import Any

from pipeline.core.review_records import Statement as Said
from pipeline.core.review_records import SupersessionWrite as Supersession
from pipeline.review.claims import (
    SPEAKER_PREFIX,
    TOKEN,
    Claim,
    all_values,
    claim,
    is_content,
    keys,
    masked_units,
)

USER_ROLES = frozenset({"user"})


@dataclass(frozen=True, slots=True)
class UpdateParams:
    min_shared: int = 2  # subject words (or CJK bigrams) both statements must share
    min_overlap: float = 0.5  # shared subject / the smaller subject
    slot_frame: float = 0.6  # a one-slot substitution: the shared frame's share of the shorter text
    slot_max: int = 6  # the longest slot (words, or CJK characters) a substitution may change
    candidates: int = 1000  # most recent statements of the scope a review compares its new ones with
    # Recall's ordering of a query's candidates (never stored): one shared word is enough, and a name may
    # change without a word of change. Review keeps the strict rules: its links demote for every query.
    loose: bool = False


def verdict(old: Said, new: Said, params: UpdateParams | None = None) -> dict[str, Any] | None:
    """Why `new` supersedes `old` (rule, shared subject, values), or None. Order matters: `new` is later."""
    params = params or UpdateParams()
    if new.ts <= old.ts or not _speakers_fit(old, new):
        return None
    o, n = claim(old.text), claim(new.text)
    if _never(o, n):
        return None
    # What both are about: shared subject words, and names both mention ("the Atlas budget", "Northwind's
    # contact"): a name in both is the thing the value belongs to, not the value.
    anchors = (o.subject & n.subject) | _shared_names(o, n)
    smaller = min(len(o.subject), len(n.subject))
    overlap = len(o.subject & n.subject) / smaller if smaller else 0.0
    if not anchors or (overlap < params.min_overlap and len(anchors) < 2 and not params.loose):
        return None
    shared = frozenset(anchors)
    # A long turn tells a story: two of them share words by chance, so they must share more.
    need = params.min_shared + (1 if max(len(old.text), len(new.text)) > LONG_CHARS else 0)
    if len(shared) < need and not (params.loose or _short_numeric(o, n, shared)):
        return None
    base = {"shared": sorted(w[2:] if w[1:2] == ":" else w for w in shared)[:8]}
    o_values, n_values = _near(o, shared), _near(n, shared)
    differ = _differing_kinds(o_values, n_values)
    if len(shared) < need and differ not in (["n"], ["d"], ["t"], ["d", "t"], ["p"]):
        return None
    if len(differ) > 1 and set(differ) != {"d", "t"}:
        return None  # two slots changed: another subject (another project's budget), not a new value
    may_replace = n.change or not (o.multi or n.multi)
    # A name is the value that most often differs between two true statements ("a runbook for Redis" /
    # "for Postgres"): it replaces another only when the newer one says so, or both state one value.
    if differ == ["p"] and not (n.change or (o.copula and n.copula) or params.loose):
        return None
    if differ and (_qualifier_conflict(old.text, new.text) or _other_names(o, n, differ)):
        return None  # "coverage for the notifications worker" / "for the mobile backend": another subject
    if differ and may_replace:
        return base | {
            "rule": "value",
            "kind": _KINDS[differ[0]],
            "old": sorted(v[2:] for v in o_values if v[0] in differ),
            "new": sorted(v[2:] for v in n_values if v[0] in differ and v not in o_values),
        }
    if not o.negated_change and not differ and _negates(n, shared, params.min_shared):
        return base | {"rule": "negation"}
    # A one-slot edit without a word of change is as often a typo fixed or a like event ("made ramen" /
    # "made a burrito"): only the newer statement saying it changed makes it an update.
    if not differ and n.change and (slot := _one_slot(old.text, new.text, params)) is not None:
        return base | {"rule": "slot", "old": slot[0], "new": slot[1]}
    return None


_KINDS = {"n": "number", "t": "time", "d": "date", "p": "name", "q": "quoted"}
_KIND_OF = {name: kind for kind, name in _KINDS.items()} | {"": ""}


LONG_CHARS = 200  # a turn longer than this is a story, not one statement
ECHO_CHARS = 300  # an assistant turn longer than this is an answer of its own, not an echo of a value


def _speakers_fit(old: Said, new: Said) -> bool:
    if new.role not in USER_ROLES:
        return False  # see the module docstring: the assistant never supersedes
    if old.role == "assistant":
        return len(old.text) <= ECHO_CHARS  # its echo of the older value goes with that value
    if old.role not in USER_ROLES:
        return False
    a, b = _speaker(old), _speaker(new)
    return a is None or b is None or a == b


def _speaker(s: Said) -> str | None:
    """Who said it: the service's name for them, else a chat export's "Name: " prefix ("Update: " and
    "Noted: " look the same, so a prefix only tells two speakers apart when both turns have one)."""
    if s.speaker:
        return s.speaker
    prefix = SPEAKER_PREFIX.match(s.text)
    return prefix.group(1) if prefix else None


def says_it_changed(old: Said, new: Said) -> bool:
    """Recall's last reading of two hits the same question found: the same person, both stating the present,
    and the newer one saying that something changed ("I commute on an e-scooter now" after "I get to work
    on foot"). Too loose to link by (nothing says they share a subject but the question that found both):
    recall only orders such a pair, and only for a question about the present."""
    if new.ts <= old.ts or not _speakers_fit(old, new):
        return False
    o, n = claim(old.text), claim(new.text)
    return not _never(o, n) and (n.change or (n.negated_change and not o.negated_change))


def same_voice(old: Said, new: Said) -> bool:
    """The newer one is said later by the same person (or restates an echo), both state the present, and
    nothing marks them as both true (another holder, "also", a suggestion): what recall needs besides a
    shared question to read two answers as an older and a newer one."""
    if new.ts <= old.ts or not _speakers_fit(old, new):
        return False
    return not _never(claim(old.text), claim(new.text))


def _never(o: Claim, n: Claim) -> bool:
    """Pairs no rule links: a question, plan or aside about the past on either side, another holder, a
    suggestion, or a value added beside the old one ("also")."""
    if not (o.asserts and n.asserts) or o.holders != n.holders:
        return True
    # Health, allergies, medication: only the speaker's own word changes them ("I'm no longer allergic to
    # peanuts"), never a statement about nobody in particular ("nobody here is allergic anymore").
    if (o.health or n.health) and not n.first_person:
        return True
    return n.suggestion or (n.additive and not n.change)


def _other_names(o: Claim, n: Claim, differ: list[str]) -> bool:
    """Every name changed at once ("MySQL on Mosaic" / "Mongo on Atlas"): another thing, not a new value."""
    old_names = {v for v in o.values if v[0] == "p"}
    return differ == ["p"] and len(old_names) >= 2 and not old_names & n.values


def _shared_names(o: Claim, n: Claim) -> frozenset[str]:
    return frozenset(v for v in o.values & n.values if v[0] == "p")


def _short_numeric(o: Claim, n: Claim, shared: frozenset[str]) -> bool:
    """One shared word is enough for two short statements of a number, time or date ("The Atlas budget is
    50k" / "We bumped the Atlas budget to 80k"): the value kind is the rest of the evidence."""
    if len(shared) != 1 or len(o.subject) > 2 or len(n.subject) > 2:
        return False
    kinds = {v[0] for v in o.values} & {v[0] for v in n.values}
    return bool(kinds & {"n", "t", "d"})


def _negates(n: Claim, shared: frozenset[str], min_shared: int) -> bool:
    """The newer statement turns the shared subject off in the clause that speaks of it ("I no longer run in
    the mornings"), not in an aside ("...; last week I dropped off that stuff")."""
    if len(n.clauses) <= 1:
        return n.negated_change and len(shared) >= min_shared
    return any(negated and len(subject & shared) >= min_shared for subject, _, negated in n.clauses)


def _near(c: Claim, shared: frozenset[str]) -> frozenset[str]:
    """The values of the clauses that speak of the shared subject (all of them for a one-clause turn)."""
    if len(c.clauses) <= 1:
        return c.values
    return frozenset(v for subject, values, _ in c.clauses if subject & shared for v in values)


def _differing_kinds(o: frozenset[str], n: frozenset[str]) -> list[str]:
    """Kinds of value both state, where the newer names one the older did not (a kind only the newer states
    is a detail it adds, not a change)."""
    out = []
    for kind in _KINDS:
        ov = {v for v in o if v[0] == kind}
        nv = {v for v in n if v[0] == kind}
        if ov and nv and nv - ov:
            out.append(kind)
    return out


def _units(text: str) -> list[str]:
    """Words, each CJK character a unit of its own, for the slot diff."""
    out: list[str] = []
    for token in TOKEN.findall(text.casefold()):
        out.extend(token if _is_cjk(token[0]) else [token])
    return [u for u in out if u not in _FILLER]


def _is_cjk(ch: str) -> bool:
    return "\u3400" <= ch <= "\u9fff"


def _qualifier_conflict(old: str, new: str) -> bool:
    """Whether the two sentences share a frame in which words of the subject were swapped for others
    ("For the notifications worker, CI fails below 80%" / "For the mobile backend, CI fails below 65%",
    "网关的覆盖率要求" / "推荐服务覆盖率要求"): a substitution flanked by at least two shared units,
    with content on both sides. Values are masked, so swapping the value itself is not one."""
    a, b = masked_units(old), masked_units(new)
    matcher = SequenceMatcher(a=a, b=b, autojunk=False)
    ops = matcher.get_opcodes()
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag != "replace":
            continue
        if not (any(map(is_content, a[i1:i2])) and any(map(is_content, b[j1:j2]))):
            continue
        flanks = [ops[x] for x in (k - 1, k + 1) if 0 <= x < len(ops) and ops[x][0] == "equal"]
        if any(f[2] - f[1] >= 2 and any(map(is_content, a[f[1] : f[2]])) for f in flanks):
            return True
    return False


def _one_slot(old: str, new: str, params: UpdateParams) -> tuple[str, str] | None:
    """The one short slot in which two otherwise equal sentences differ, or None."""
    a, b = _units(old[:300]), _units(new[:300])
    if not a or not b:
        return None
    matcher = SequenceMatcher(a=a, b=b, autojunk=False)
    changed = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    replaced = [op for op in changed if op[0] == "replace"]
    if len(replaced) != 1 or len(changed) > 2:
        return None
    _, i1, i2, j1, j2 = replaced[0]
    if i2 - i1 > params.slot_max or j2 - j1 > params.slot_max:
        return None
    frame = sum(size for *_, size in matcher.get_matching_blocks())
    if frame < params.slot_frame * min(len(a), len(b)):
        return None
    join = "" if all(_is_cjk(u[0]) for u in a[i1:i2] + b[j1:j2]) else " "
    return join.join(a[i1:i2]), join.join(b[j1:j2])


# Words a change adds around the same sentence ("now", "以后", "actually") are not the slot.
_FILLER = frozenset(
    [
        "now",
        "actually",
        "currently",
        "anymore",
        "instead",
        "from",
        "on",
        "going",
        "forward",
        "these",
        "days",
        "so",
        "ok",
        "okay",
        "oh",
        "well",
        "btw",
        "update",
        "just",
        "still",
        "现",
        "在",
        "以",
        "后",
        "其",
        "实",
        "了",
        "啦",
        "吧",
        "呢",
        "哦",
        "嗯",
    ]
)


def detect(
    new: Sequence[Said],
    earlier: Sequence[Said],
    *,
    refused: Iterable[tuple[int, int]] = (),
    params: UpdateParams | None = None,
) -> list[Supersession]:
    """Supersessions among `new` (this review's statements) and between them and `earlier` (the scope's
    statements reviewed before), in both directions: a batch reviewed late may hold the older statement.
    `refused`: (old, new) pairs an operator undid, and those already linked; never linked again.

    A chain, not a clique (issue 44): a statement supersedes only the current value, the statements of its
    subject that nothing superseded yet (the user's, the assistant's echo of it, its restatements). A daily
    "my weight this morning is 81.2 kg" links each day to the day before, not to every earlier day: the
    links grow with the statements, not with their square, and the history stays reachable through them.
    """
    params = params or UpdateParams()
    skip = set(refused)
    # Parsing a statement is what costs (~0.4 ms); most of the scope shares no word with this batch.
    wanted = frozenset().union(*(keys(s.text) for s in new))
    fresh = {s.id for s in new}
    pool = {s.id: s for s in [*(s for s in earlier if keys(s.text) & wanted), *new]}
    chain = _Chain(pool, fresh)
    out: dict[tuple[int, int], Supersession] = {}
    # Walk the statements in time order, keeping what holds at each point: a statement is compared with
    # the current statements before it, and what it supersedes stops being current.
    for s in sorted(pool.values(), key=lambda x: (x.ts, x.id)):
        for old in chain.partners(s):
            key = (old.id, s.id)
            if key in skip:
                continue
            why = verdict(old, s, params)
            if why is None:
                continue
            out[key] = Supersession(old.id, s.id, s.ts, why)
            chain.close(old.id)
            # The user's own statement of a value the assistant echoed goes with the echo (issue 46): a long
            # request said it in passing, where the rules above cannot read it, and the echo matched.
            for original in chain.originals(old, s, why):
                original_key = (original.id, s.id)
                if original_key not in skip:
                    out[original_key] = Supersession(original.id, s.id, s.ts, {**why, "rule": "original"})
                    chain.close(original.id)
            for echo in chain.echoes(old, why):
                echo_key = (echo.id, s.id)
                if echo_key not in skip and echo.ts < s.ts:
                    out[echo_key] = Supersession(echo.id, s.id, s.ts, {**why, "rule": "echo"})
                    chain.close(echo.id)
        chain.open(s)
    return sorted(out.values(), key=lambda x: (x.valid_from, x.old, x.new))


class _Chain:
    """The statements that hold at the current point of `detect`'s walk, by subject word and by time."""

    def __init__(self, pool: dict[int, Said], fresh: set[int]) -> None:
        self._pool = pool
        self._fresh = fresh
        self._by_word: dict[str, set[int]] = {}
        self._current: set[int] = set()
        self._assistant = sorted((s.ts, s.id) for s in pool.values() if s.role == "assistant")

    def partners(self, s: Said) -> list[Said]:
        """Current statements sharing a subject word with `s`; a link needs one side from this review
        (a pair of two earlier statements was decided by the review that saw the later one)."""
        ids = {i for w in claim(s.text).subject for i in self._by_word.get(w, ())}
        if s.id not in self._fresh:
            ids &= self._fresh
        return [self._pool[i] for i in sorted(ids)]

    def open(self, s: Said) -> None:
        # An earlier statement already superseded (by a link that was not undone) holds no more.
        if s.superseded:
            return
        self._current.add(s.id)
        for w in claim(s.text).subject:
            self._by_word.setdefault(w, set()).add(s.id)

    def close(self, statement_id: int) -> None:
        if statement_id not in self._current:
            return
        self._current.discard(statement_id)
        for w in claim(self._pool[statement_id].text).subject:
            self._by_word.get(w, set()).discard(statement_id)

    def originals(self, echo: Said, new: Said, reason: dict[str, Any]) -> list[Said]:
        """When `echo` is the assistant's echo of a value, the current user statements it echoed: said by the
        newer statement's speaker within `ECHO_WINDOW` before it, stating the replaced value anywhere in
        their text."""
        if echo.role != "assistant":
            return []
        old_values = _old_values(reason)
        if not old_values:
            return []
        return [
            s
            for s in self._pool.values()
            if s.id in self._current
            and s.role in USER_ROLES
            and echo.ts - ECHO_WINDOW <= s.ts <= echo.ts
            and s.id != new.id
            and _speakers_fit(s, new)
            and old_values & all_values(s.text)
        ]

    def echoes(self, said: Said, reason: dict[str, Any]) -> list[Said]:
        """The current assistant echoes of `said`'s value (see `_echoes`), looked up by time."""
        lo = bisect_left(self._assistant, (said.ts, -1))
        hi = bisect_right(self._assistant, (said.ts + ECHO_WINDOW, 1 << 62))
        return _echoes(said, [self._pool[i] for _, i in self._assistant[lo:hi] if i in self._current], reason)


ECHO_WINDOW = timedelta(minutes=15)


def _old_values(reason: dict[str, Any]) -> set[str]:
    """The typed values a link's reason says were replaced ("n:50000")."""
    if "kind" not in reason:
        return set()
    return {f"{_KIND_OF[reason.get('kind', '')]}:{v}" for v in reason.get("old", ())}


def _echoes(said: Said, pool: Iterable[Said], reason: dict[str, Any]) -> list[Said]:
    """The assistant's acknowledgements of a statement ("Noted: 50,000"): short assistant turns soon after
    it that repeat the value it replaced. They go with it: left alone they would keep the old value current."""
    return _acknowledging(said, _old_values(reason), pool)


def chain_echoes(said: Said, old_value: str, new_value: str, pool: Iterable[Said]) -> list[Said]:
    """The assistant's acknowledgements of a value a fact chain replaced (`said` stated `old_value`;
    `new_value` replaced it): as `_echoes`, for the rule table's links. An echo that also states the new
    value ("from 4,000 to 2,500") is a statement of the change, not a copy of the old value."""
    # A value as a sentence would state it: a capitalised name counts as a name only after the first word.
    old, new = all_values(f"is {old_value}"), all_values(f"is {new_value}")
    return [s for s in _acknowledging(said, old - new, pool) if not new & claim(s.text).values]


def _acknowledging(said: Said, old_values: Iterable[str], pool: Iterable[Said]) -> list[Said]:
    wanted = frozenset(old_values)
    if not wanted or said.role not in USER_ROLES:
        return []
    return [
        s
        for s in pool
        if s.role == "assistant"
        and len(s.text) <= ECHO_CHARS
        and said.ts <= s.ts <= said.ts + ECHO_WINDOW
        and wanted & claim(s.text).values
    ]
