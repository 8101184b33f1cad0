"""LoCoMo as the recall bench reads it: turns, questions, evidence ids and recall@k. Pure, but for `load`.

LoCoMo (Maharana et al., ACL 2024, CC BY-NC 4.0) is read where it lies and never copied into the repo.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipeline.core.errors import ConfigError

# The workplace's shared LoCoMo copy, read in place (CC BY-NC 4.0: never copied into the repository).
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo" / "locomo10.json"

AGENT = "locomo"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_SESSION = re.compile(r"session_(\d+)")
_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)")


@dataclass(frozen=True, slots=True)
class LocomoTurn:
    conversation: str  # sample_id, e.g. "conv-26": one scope (user) per conversation
    dia_id: str  # "D1:3"
    session: int
    speaker: str
    text: str
    caption: str | None  # BLIP caption of a shared photo
    ts: datetime  # the session's date-time
    role: str = "user"  # LoCoMo's speakers are both people; other sets mark the assistant's turns

    @property
    def turn_id(self) -> str:
        return f"{self.conversation}:{self.dia_id}"

    @property
    def session_id(self) -> str:
        return f"{self.conversation}:session_{self.session}"

    @property
    def content(self) -> str:
        """What the agent service stores: what was said and what the shared photo shows. Who said it goes
        in metadata.speaker: in the content, the name made every turn of a speaker alike to MiniLM, and
        review clustered whole conversations into a handful of 300-turn "memories" (measured)."""
        photo = f" [shares a photo: {self.caption}]" if self.caption else ""
        return f"{self.text}{photo}".strip()


@dataclass(frozen=True, slots=True)
class Question:
    conversation: str
    index: int  # position in the conversation's qa list
    text: str
    category: str  # LoCoMo's numbers named by CATEGORIES; other sets name theirs
    evidence: tuple[str, ...]  # normalised turn ids, "conv-26:D1:3"


def parse_session_time(value: str) -> datetime:
    """LoCoMo's "1:56 pm on 8 May, 2023" (UTC: the data set states no zone)."""
    try:
        return datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        raise ConfigError(f"LoCoMo session date {value!r} is not like '1:56 pm on 8 May, 2023'") from None


def normalise_evidence(raw: Iterable[str]) -> tuple[str, ...]:
    """Dialogue ids from LoCoMo's evidence lists, which hold a few malformed entries: `D30:05`
    (zero padding), `D:11:26` (an extra colon), several ids in one string joined by `;` or spaces,
    and a bare `D` (dropped). Order kept, duplicates dropped."""
    out: list[str] = []
    for item in raw:
        for m in _EVIDENCE.finditer(str(item)):
            dia = f"D{int(m.group(1))}:{int(m.group(2))}"
            if dia not in out:
                out.append(dia)
    return tuple(out)


def category_name(value: object) -> str:
    """LoCoMo numbers its categories (CATEGORIES); the other sets name theirs."""
    if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
        return CATEGORIES.get(int(value), f"category {value}")
    return str(value)


def parse(data: Sequence[dict[str, Any]]) -> tuple[list[LocomoTurn], list[Question]]:
    """Every turn and every question whose evidence names at least one turn of its conversation.
    A turn's `role` (user | assistant) is read when the set has one; LoCoMo's have none (both people)."""
    turns: list[LocomoTurn] = []
    questions: list[Question] = []
    for sample in data:
        conv, sid = sample["conversation"], str(sample["sample_id"])
        sessions = sorted(
            int(m.group(1)) for key in conv if (m := _SESSION.fullmatch(key)) and isinstance(conv[key], list)
        )
        known: set[str] = set()
        for n in sessions:
            ts = parse_session_time(str(conv[f"session_{n}_date_time"]))
            for t in conv[f"session_{n}"]:
                text = str(t.get("text", "")).strip()
                dia = str(t["dia_id"]).strip()
                if not text and not t.get("blip_caption"):
                    continue
                caption = str(t["blip_caption"]).strip() if t.get("blip_caption") else None
                role = str(t.get("role") or "user")
                turns.append(LocomoTurn(sid, dia, n, str(t["speaker"]), text, caption, ts, role))
                known.add(dia)
        for i, qa in enumerate(sample.get("qa") or []):
            evidence = tuple(f"{sid}:{d}" for d in normalise_evidence(qa.get("evidence") or []) if d in known)
            if evidence:
                category = category_name(qa.get("category", "uncategorised"))
                questions.append(Question(sid, i, str(qa["question"]), category, evidence))
    return turns, questions


def load(path: Path) -> tuple[list[LocomoTurn], list[Question]]:
    """`parse` of the file at `path`, with an error that says what to pass when it is not there."""
    if not path.exists():
        raise ConfigError(f"LoCoMo data not found at {path}: pass --data PATH to locomo10.json")
    turns, questions = parse(json.loads(path.read_bytes()))
    if not turns:
        raise ConfigError(f"{path} holds no LoCoMo conversation turns")
    return turns, questions


def recall_at_k(ranked_turns: Sequence[Sequence[str]], gold: Iterable[str], k: int) -> float:
    """Fraction of `gold` turn ids among the first k distinct turns taken from the ranked results'
    `source_turn_ids` in order: one large semantic memory cannot claim many gold turns with one slot."""
    gold_set = set(gold)
    if not gold_set:
        raise ValueError("recall@k of a question without evidence")
    taken: set[str] = set()
    for turn_ids in ranked_turns:
        for turn_id in turn_ids:
            if len(taken) == k:
                break
            taken.add(turn_id)
        if len(taken) == k:
            break
    return len(gold_set & taken) / len(gold_set)


def first_distinct(
    ranked_turns: Sequence[Sequence[str]], k: int, key: Callable[[str], str] = str
) -> list[str]:
    """The first k distinct keys (`key` of each turn id) taken from the ranked results in order."""
    out: list[str] = []
    for turn_ids in ranked_turns:
        for turn_id in turn_ids:
            v = key(turn_id)
            if v not in out:
                if len(out) == k:
                    return out
                out.append(v)
    return out


def session_of(turn_id: str) -> str:
    """A turn id "conversation:D3:7" -> its session "conversation:D3" (the sets' dia_id layout)."""
    return turn_id.rsplit(":", 1)[0]


def any_at_k(
    ranked_turns: Sequence[Sequence[str]], gold: Iterable[str], k: int, key: Callable[[str], str] = str
) -> bool:
    """recall_any@k: at least one gold key among the first k distinct keys (turns, or sessions with
    `key=session_of`): LongMemEval's lenient measure, beside the strict `recall_at_k`."""
    wanted = {key(g) for g in gold}
    return bool(wanted & set(first_distinct(ranked_turns, k, key)))


BUDGETS = (256, 512, 1024)  # whitespace tokens of recalled text an agent puts in its context (issue 40)


class Recalled(tuple[str, ...]):
    """One result: its source turn ids (the tuple), with its text and the turns whose evidence that text
    carries. A plain tuple of turn ids is a raw turn: its own text carries its own evidence."""

    text: str | None
    carries: tuple[str, ...]
    semantic: bool

    def __new__(
        cls,
        turn_ids: Sequence[str],
        text: str | None = None,
        carries: Sequence[str] | None = None,
        semantic: bool = False,
    ) -> Recalled:
        self = super().__new__(cls, tuple(turn_ids))
        self.text = text
        self.carries = tuple(turn_ids) if carries is None else tuple(carries)
        self.semantic = semantic
        return self


def budget_recall(
    ranked: Sequence[Sequence[str]], gold: Iterable[str], budget: int, text_of: Mapping[str, str]
) -> float:
    """Fraction of `gold` turns whose evidence is in the first `budget` whitespace tokens of the recalled
    texts, in rank order: a result counts only when its whole text fits, and carries only the turns its
    text states (a semantic memory: the members it speaks for; a turn: itself)."""
    gold_set = set(gold)
    used = 0
    got: set[str] = set()
    for item in ranked:
        text = getattr(item, "text", None)
        if text is None:
            text = " ".join(text_of.get(t, "") for t in item)
        size = len(text.split())
        if used + size > budget:
            break
        used += size
        got.update(getattr(item, "carries", item))
    return len(gold_set & got) / len(gold_set)


def top_memory(ranked: Sequence[Sequence[str]], gold: Iterable[str]) -> bool:
    """The first result is one semantic memory holding every evidence turn of the question."""
    return bool(ranked) and bool(getattr(ranked[0], "semantic", False)) and set(gold) <= set(ranked[0])


@dataclass
class Score:
    """Running recall@5 / @10 sums per category, evidence recall within each context budget (when the
    texts are known) and how often the first result was one memory holding all the evidence."""

    n: int = 0
    r5: float = 0.0
    r10: float = 0.0
    budget: dict[int, float] = field(default_factory=dict)
    budgeted: int = 0
    one_memory: int = 0
    any5: int = 0  # questions with at least one evidence turn among the first 5 turns
    any10: int = 0
    session_any5: int = 0  # ... with an evidence session among the first 5 distinct sessions

    def add(
        self,
        ranked_turns: Sequence[Sequence[str]],
        gold: Sequence[str],
        text_of: Mapping[str, str] | None = None,
    ) -> None:
        self.n += 1
        self.r5 += recall_at_k(ranked_turns, gold, 5)
        self.r10 += recall_at_k(ranked_turns, gold, 10)
        self.one_memory += top_memory(ranked_turns, gold)
        self.any5 += any_at_k(ranked_turns, gold, 5)
        self.any10 += any_at_k(ranked_turns, gold, 10)
        self.session_any5 += any_at_k(ranked_turns, gold, 5, session_of)
        if text_of is not None:
            self.budgeted += 1
            for b in BUDGETS:
                self.budget[b] = self.budget.get(b, 0.0) + budget_recall(ranked_turns, gold, b, text_of)

    def merge(self, other: Score) -> None:
        self.n += other.n
        self.r5 += other.r5
        self.r10 += other.r10
        self.budgeted += other.budgeted
        self.one_memory += other.one_memory
        self.any5 += other.any5
        self.any10 += other.any10
        self.session_any5 += other.session_any5
        for b, v in other.budget.items():
            self.budget[b] = self.budget.get(b, 0.0) + v

    @property
    def at5(self) -> float:
        return self.r5 / self.n if self.n else 0.0

    @property
    def at10(self) -> float:
        return self.r10 / self.n if self.n else 0.0

    @property
    def any_at5(self) -> float:
        return self.any5 / self.n if self.n else 0.0

    @property
    def any_at10(self) -> float:
        return self.any10 / self.n if self.n else 0.0

    @property
    def session_any_at5(self) -> float:
        return self.session_any5 / self.n if self.n else 0.0

    def within(self, budget: int) -> float | None:
        """Evidence recall within `budget` tokens; None when the texts were not known."""
        return self.budget.get(budget, 0.0) / self.budgeted if self.budgeted else None

    @property
    def top1_memory(self) -> float:
        return self.one_memory / self.n if self.n else 0.0


# -- scoring rankers --------------------------------------------------------------------------------

K = 10
Ranker = Callable[[Question], list[tuple[str, ...]]]


@dataclass
class Table:
    """Scores of one ranker: per (half, category)."""

    name: str
    cells: dict[tuple[str, str], Score] = field(default_factory=dict)

    def add(
        self,
        half: str,
        category: str,
        ranked: list[tuple[str, ...]],
        gold: Sequence[str],
        text_of: Mapping[str, str] | None = None,
    ) -> None:
        self.cells.setdefault((half, category), Score()).add(ranked, gold, text_of)

    def categories(self) -> list[str]:
        return sorted({c for _, c in self.cells})

    def total(self, half: str | None = None, category: str | None = None) -> Score:
        out = Score()
        for (h, c), s in self.cells.items():
            if (half is None or h == half) and (category is None or c == category):
                out.merge(s)
        return out


def score(
    name: str,
    questions: Sequence[Question],
    ranker: Ranker,
    half_of: dict[str, str],
    text_of: Mapping[str, str] | None = None,
) -> Table:
    """`text_of` (turn id -> text): also score evidence recall within each of BUDGETS."""
    table = Table(name)
    for q in questions:
        table.add(half_of[q.conversation], q.category, ranker(q), q.evidence, text_of)
    return table
