"""`hindsight bench consolidation` (issue 27): are the semantic memories a full review builds the ones a
person would have written?

The labelled set (bench/data/consolidation.json.gz, written by bench.sets.consolidation) gives every
turn its topic, or none for a distractor. Each user's turns go in time order through real full reviews
(`review_batch` in-process, rules only: no LLM), one per `batch` turns as the scheduler's batch trigger
dispatches them, against a disposable database. The open semantic memories (`valid_to IS NULL`) and their
members are then scored against the labels:

- pairwise purity: of all pairs of turns that share a memory, the share with the same topic (a distractor
  pairs impurely with anything);
- completeness: of all pairs of turns with the same topic, the share that share a memory (a turn in no
  memory is with nobody);
- memories that mix two fact attributes (members labelled with different attributes);
- keyword-list texts: a memory text with "(also:" / "（还有：", or one that is no sentence (see
  `sentence_like`).

Beside them, the same figures for two plain references on the same turns: each turn its own memory, and
average-linkage agglomerative clustering of the turns' stored MiniLM vectors cut at a fixed cosine. Last,
an optimistic bound per representation (`bench.consolidation_frontier`): the best any single similarity
cut could reach when the cut is chosen by reading the labels.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.markup import escape
from sqlalchemy import Engine, text

from bench.consolidation_frontier import Bound, ScopeTurns, bounds
from bench.consolidation_frontier import report_lines as frontier_lines
from bench.consolidation_scoring import (
    TARGET_COMPLETENESS,
    TARGET_PURITY,
    Ratio,
    completeness,
    distinct_members,
    pairwise_purity,
)
from bench.report import write_section
from bench.review import TABLES, Bench, open_bench, print_table, torch_threads, verdict
from bench.sets.common import SETS_DIR, read_set
from pipeline.core.config import Settings
from pipeline.core.errors import ConfigError
from pipeline.core.logging import configure_logging
from pipeline.core.models import DEFAULT_SOURCE, Dispatch, Scope, Turn
from pipeline.core.vectors import from_blob
from pipeline.ingest.validation import utcnow
from pipeline.review.review_batch import review_batch

SET_PATH = SETS_DIR.parent / "consolidation.json.gz"  # beside, not among, the LoCoMo-shaped sets
# Issue 40's set of restated preferences and instructions (bench.sets.restated), in this bench's format.
RESTATED_PATH = SETS_DIR.parent / "restated_consolidation.json.gz"
BENCH_DATABASE_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench_consolidation"
# open_bench wants a Redis db it may flush; this bench never touches it (the reviews run in-process).
BENCH_REDIS_URL = "redis://127.0.0.1:6379/12"
BATCH = 30  # turns per full review: the scheduler's batch trigger (Settings.scheduler batch_size)
MAX_BATCH = 500  # most episodes a claim takes (the scheduler's max_batch)

TARGET_MIXED = 0
TARGET_KEYWORD_TEXTS = 0
# The agglomerative reference: average linkage on cosine, cut here. Fixed, not tuned on the labels.
AGGLOMERATIVE_COSINE = 0.5
WORST_SHOWN = 8  # memories listed in BENCHMARKS.md (the console shows every flagged one)


# -- the labelled set ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LabelledTurn:
    turn_id: str
    agent_id: str
    user_id: str
    session: str
    role: str
    content: str
    ts: datetime
    topic: str | None  # None: a distractor
    attribute: str | None  # the fact attribute of its topic, if the topic is one
    near: str | None = None  # a near miss: the topic it borrows words from


@dataclass(frozen=True)
class LabelledSet:
    turns: tuple[LabelledTurn, ...]  # user by user, each in time order
    topics: dict[str, dict[str, Any]]  # label -> the set's record (attribute, lang, memory, turns)
    split_of: dict[str, str] = field(default_factory=dict)  # user -> dev | test, where the set has halves

    @property
    def users(self) -> list[str]:
        return list(dict.fromkeys(t.user_id for t in self.turns))

    def by_user(self) -> dict[str, list[LabelledTurn]]:
        out: dict[str, list[LabelledTurn]] = {}
        for t in self.turns:
            out.setdefault(t.user_id, []).append(t)
        return out


def parse_set(data: Sequence[Mapping[str, Any]]) -> LabelledSet:
    turns: list[LabelledTurn] = []
    topics: dict[str, dict[str, Any]] = {}
    split_of: dict[str, str] = {}
    for user in data:
        if "split" in user:
            split_of[str(user["user_id"])] = str(user["split"])
        for topic in user["topics"]:
            topics[str(topic["topic"])] = dict(topic)
        turns.extend(
            LabelledTurn(
                str(t["turn_id"]),
                str(user["agent_id"]),
                str(user["user_id"]),
                str(t["session"]),
                str(t["role"]),
                str(t["content"]),
                datetime.fromisoformat(str(t["ts"])),
                t.get("topic"),
                t.get("attribute"),
                t.get("near"),
            )
            for t in sorted(user["turns"], key=lambda t: str(t["ts"]))
        )
    return LabelledSet(tuple(turns), topics, split_of)


def load_set(path: Path = SET_PATH) -> LabelledSet:
    if not path.exists():
        raise ConfigError(f"consolidation set not found at {path}: run `python -m bench.sets.consolidation`")
    labelled = parse_set(read_set(path))
    if not labelled.turns:
        raise ConfigError(f"{path} holds no turns")
    return labelled


def subset(labelled: LabelledSet, users: Sequence[str] = (), topics: int | None = None) -> LabelledSet:
    """The chosen users (all by default) and, with `topics`, each one's first `topics` topics (set order)
    with the near misses of those topics and as many of its unrelated distractors (the first ones)."""
    known = labelled.users
    unknown = sorted(set(users) - set(known))
    if unknown:
        raise ConfigError(f"no such user(s) in the set: {', '.join(unknown)}; choose from {', '.join(known)}")
    chosen = [u for u in known if not users or u in users]
    keep_topics = {
        label
        for u in chosen
        for label in [k for k in labelled.topics if k.startswith(f"{u}/")][: topics if topics else None]
    }
    out: list[LabelledTurn] = []
    for u in chosen:
        unrelated = 0
        for t in labelled.by_user()[u]:
            if t.topic is not None:
                keep = t.topic in keep_topics
            elif t.near is not None:
                keep = topics is None or t.near in keep_topics
            else:
                unrelated += 1
                keep = topics is None or unrelated <= topics
            if keep:
                out.append(t)
    return LabelledSet(
        tuple(out),
        {k: v for k, v in labelled.topics.items() if k in keep_topics},
        {u: h for u, h in labelled.split_of.items() if u in chosen},
    )


# -- scoring (pure) ------------------------------------------------------------------------------------


def mixed_attributes(groups: Sequence[Iterable[str]], attribute_of: Mapping[str, str | None]) -> list[int]:
    """Indices of the groups whose members carry two or more different (non-None) attributes."""
    return [
        i
        for i, group in enumerate(groups)
        if len({a for t in distinct_members(group) if (a := attribute_of.get(t)) is not None}) > 1
    ]


KEYWORD_MARKERS = ("(also:", "（还有：", "（还有:", "(还有：")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7af]")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’.\-/$%]*")
_PIECES = re.compile(r"[;，、；]|,(?!\d)|(?<!\d),")  # a comma inside a number ("80,000") cuts nothing
_END = re.compile(r"[\s….。!?！？]+$")


def _units(text: str) -> int:
    """Words: a Latin word or number counts one, so does each CJK character."""
    return len(_WORD.findall(text)) + len(_CJK.findall(text))


def sentence_like(text: str) -> bool:
    """A statement rather than a fragment or a list of terms: at least 3 words (a CJK character counts one,
    and a Chinese text needs 4), and not three or more comma-separated pieces of at most two words each
    ("budget, offsite, team, update")."""
    body = _END.sub("", text.strip())
    if not body:
        return False
    cjk = len(_CJK.findall(body))
    needed = 4 if cjk and cjk >= len(_WORD.findall(body)) else 3
    if _units(body) < needed:
        return False
    pieces = [p for p in _PIECES.split(body) if p.strip()]
    return not (len(pieces) >= 3 and all(_units(p) <= 2 for p in pieces))


def keyword_list(text: str) -> bool:
    """A memory text that lists terms instead of stating something (issue 27's "(also: ...)")."""
    return any(m in text for m in KEYWORD_MARKERS) or not sentence_like(text)


def is_question(text: str) -> bool:
    return text.rstrip().endswith(("?", "？"))


@dataclass(frozen=True)
class Score:
    purity: Ratio
    completeness: Ratio
    mixed: list[int]  # indices of groups mixing two attributes
    groups: int
    grouped_turns: int  # distinct turns in some group
    turns: int
    keyword_texts: list[int] = field(default_factory=list)  # indices of keyword-list texts (None: no texts)
    questions: list[int] = field(default_factory=list)
    has_texts: bool = False


def score(
    groups: Sequence[Sequence[str]],
    labelled: LabelledSet,
    texts: Sequence[str] | None = None,
) -> Score:
    topic_of = {t.turn_id: t.topic for t in labelled.turns}
    attribute_of = {t.turn_id: t.attribute for t in labelled.turns}
    return Score(
        purity=pairwise_purity(groups, topic_of),
        completeness=completeness(groups, topic_of),
        mixed=mixed_attributes(groups, attribute_of),
        groups=len(groups),
        grouped_turns=len({t for g in groups for t in g}),
        turns=len(labelled.turns),
        keyword_texts=[i for i, t in enumerate(texts or ()) if keyword_list(t)],
        questions=[i for i, t in enumerate(texts or ()) if is_question(t)],
        has_texts=texts is not None,
    )


def met_figures(f: Mapping[str, float]) -> bool:
    """The issue's targets, on `Result.figures()`: purity, completeness, no memory mixing attributes."""
    return (
        f["purity"] >= TARGET_PURITY
        and f["completeness"] >= TARGET_COMPLETENESS
        and f["mixed"] <= TARGET_MIXED
    )


# -- the references ------------------------------------------------------------------------------------


def singletons(labelled: LabelledSet) -> list[list[str]]:
    return [[t.turn_id] for t in labelled.turns]


def agglomerative(
    turn_ids: Sequence[str], vectors: np.ndarray[Any, Any], cosine: float, min_size: int
) -> list[list[str]]:
    """Average-linkage clusters of unit vectors whose mean pairwise cosine is at least `cosine`; clusters of
    fewer than `min_size` turns make no memory (as the review's min_cluster_size)."""
    if len(turn_ids) < 2:
        return []
    from sklearn.cluster import AgglomerativeClustering

    labels = AgglomerativeClustering(
        n_clusters=None, metric="cosine", linkage="average", distance_threshold=1.0 - cosine
    ).fit_predict(np.asarray(vectors, dtype=np.float64))
    groups: dict[int, list[str]] = {}
    for turn_id, label in zip(turn_ids, labels, strict=True):
        groups.setdefault(int(label), []).append(turn_id)
    return [g for _, g in sorted(groups.items()) if len(g) >= min_size]


# -- the product: full reviews, then the memories they left open ---------------------------------------


@dataclass(frozen=True, slots=True)
class Memory:
    id: int
    user_id: str
    text: str
    version: int
    members: tuple[str, ...]  # turn ids, in time order
    stated: tuple[str, ...] = ()  # the members whose words review found its text to state


def to_turn(t: LabelledTurn) -> Turn:
    return Turn(t.turn_id, t.agent_id, t.user_id, t.session, t.role, t.content, t.ts, DEFAULT_SOURCE[t.role])


def review_user(b: Bench, turns: Sequence[LabelledTurn], batch: int) -> tuple[Counter[str], int]:
    """Store the user's turns `batch` at a time (all at once with 0) in time order, each lot followed by a
    full review of what is pending, as the scheduler dispatches one per `batch` new turns. Returns the
    reviews' summed counts and how many reviews ran."""
    counts: Counter[str] = Counter()
    size = batch or len(turns)
    reviews = 0
    for start in range(0, len(turns), size):
        lot = turns[start : start + size]
        b.repo.ingest([to_turn(t) for t in lot], [])
        scope = Scope(lot[0].agent_id, lot[0].user_id)
        batch_id = b.repo.claim(Dispatch(scope, "full", "batch_size"), min_count=1, limit=MAX_BATCH)
        if batch_id is None:
            raise RuntimeError(f"nothing to claim in {scope}")
        report = review_batch(
            batch_id, repo=b.repo, embedder=b.embedder, clock=utcnow, config=b.config, worker="bench"
        )
        if report is None or not report.applied:
            raise RuntimeError(f"batch {batch_id} was not reviewed")
        counts.update({k: v for k, v in report.counts.items() if isinstance(v, int)})
        reviews += 1
    return counts, reviews


_MEMORIES = text(
    """
    SELECT m.id, m.user_id, m.text, m.version, e.turn_id, s.stated
    FROM semantic_memories m
    LEFT JOIN semantic_members s ON s.memory_id = m.id
    LEFT JOIN episodes e ON e.id = s.episode_id
    WHERE m.agent_id = :a AND m.valid_to IS NULL
    ORDER BY m.user_id, m.id, e.ts, e.id
    """
)


def read_memories(engine: Engine, agent_id: str) -> list[Memory]:
    """The open versions of the agent's semantic memories (every user of it) and their members' turn ids."""
    rows: dict[int, tuple[str, str, int, list[str], list[str]]] = {}
    with engine.connect() as conn:
        for r in conn.execute(_MEMORIES, {"a": agent_id}):
            entry = rows.setdefault(int(r.id), (str(r.user_id), str(r.text), int(r.version), [], []))
            if r.turn_id is not None:
                entry[3].append(str(r.turn_id))
                if r.stated:
                    entry[4].append(str(r.turn_id))
    return [Memory(i, u, t, v, tuple(m), tuple(st)) for i, (u, t, v, m, st) in rows.items()]


def read_episodes(engine: Engine, agent_id: str) -> dict[str, tuple[str, np.ndarray[Any, Any] | None]]:
    """turn id -> (review status, stored vector)."""
    with engine.connect() as conn:
        rows = conn.execute(
            text("SELECT turn_id, status, embedding FROM episodes WHERE agent_id = :a"), {"a": agent_id}
        ).all()
    return {
        str(r.turn_id): (str(r.status), None if r.embedding is None else from_blob(r.embedding)) for r in rows
    }


# -- the run -------------------------------------------------------------------------------------------


@dataclass
class Result:
    labelled: LabelledSet
    batch: int
    reviews: int
    seconds: float
    counts: Counter[str]
    statuses: Counter[str]
    memories: list[Memory]
    product: Score
    alone: Score
    agglo: Score
    agglo_cosine: float
    min_size: int
    per_user: dict[str, Score] = field(default_factory=dict)  # the product's figures, scope by scope
    # what any similarity cut could reach (bench.consolidation_frontier)
    bounds: list[Bound] = field(default_factory=list)
    agglo_groups: list[list[str]] = field(default_factory=list)  # the agglomerative reference's groups

    def figures(self) -> dict[str, float]:
        out: dict[str, float] = {
            "turns": float(len(self.labelled.turns)),
            "topics": float(len(self.labelled.topics)),
            "reviews": float(self.reviews),
            "seconds": self.seconds,
            "memories": float(len(self.memories)),
        }
        for name, s in (("", self.product), ("alone_", self.alone), ("agglo_", self.agglo)):
            out |= {
                f"{name}purity": s.purity.value,
                f"{name}completeness": s.completeness.value,
                f"{name}mixed": float(len(s.mixed)),
                f"{name}grouped_share": s.grouped_turns / s.turns if s.turns else 0.0,
            }
        out["keyword_texts"] = float(len(self.product.keyword_texts))
        out["questions"] = float(len(self.product.questions))
        return out


def run(
    b: Bench,
    labelled: LabelledSet,
    *,
    batch: int = BATCH,
    agglo_cosine: float = AGGLOMERATIVE_COSINE,
    frontier: bool = True,
) -> Result:
    with b.engine.begin() as conn:
        conn.execute(text(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE"))
    agents = sorted({t.agent_id for t in labelled.turns})
    t0 = time.perf_counter()
    counts: Counter[str] = Counter()
    reviews = 0
    with torch_threads(1):
        for turns in labelled.by_user().values():
            c, n = review_user(b, turns, batch)
            counts.update(c)
            reviews += n
    seconds = time.perf_counter() - t0
    memories = [m for agent in agents for m in read_memories(b.engine, agent)]
    episodes: dict[str, tuple[str, np.ndarray[Any, Any] | None]] = {}
    for agent in agents:
        episodes |= read_episodes(b.engine, agent)
    missing = [t.content for t in labelled.turns if episodes.get(t.turn_id, ("", None))[1] is None]
    extra = iter(b.embedder.embed(missing)) if missing else iter(())
    min_size = b.config.cluster.min_cluster_size
    agglo_groups: list[list[str]] = []
    scopes: list[ScopeTurns] = []
    for turns in labelled.by_user().values():
        vectors = np.stack(
            [v if (v := episodes.get(t.turn_id, ("", None))[1]) is not None else next(extra) for t in turns]
        )
        agglo_groups += agglomerative([t.turn_id for t in turns], vectors, agglo_cosine, min_size)
        scopes.append(ScopeTurns(tuple(t.turn_id for t in turns), tuple(t.content for t in turns), vectors))
    groups = [list(m.members) for m in memories]
    per_user = {
        user: score(
            [list(m.members) for m in memories if m.user_id == user],
            LabelledSet(tuple(turns), {}),
            [m.text for m in memories if m.user_id == user],
        )
        for user, turns in labelled.by_user().items()
    }
    return Result(
        labelled,
        batch,
        reviews,
        seconds,
        counts,
        Counter(status for status, _ in episodes.values()),
        memories,
        score(groups, labelled, [m.text for m in memories]),
        score(singletons(labelled), labelled),
        score(agglo_groups, labelled),
        agglo_cosine,
        min_size,
        per_user,
        bounds(scopes, {t.turn_id: t.topic for t in labelled.turns}) if frontier else [],
        agglo_groups,
    )


# -- reporting -----------------------------------------------------------------------------------------


def _short(label: str | None) -> str:
    return "—" if label is None else label.split("/", 1)[1]


def _label(t: LabelledTurn | None) -> str:
    """A member's topic; a distractor is "—", a near miss "— ~topic" (the topic it borrows words from)."""
    if t is None or t.topic is None:
        return "—" if t is None or t.near is None else f"— ~{_short(t.near)}"
    return _short(t.topic)


def member_labels(memory: Memory, labelled: LabelledSet) -> str:
    """ "residence ×3, offsite_budget ×2, — ×1": its members' topics, most first ("—": a distractor)."""
    topic_of = {t.turn_id: t.topic for t in labelled.turns}
    counted = Counter(_short(topic_of.get(t)) for t in memory.members)
    return ", ".join(f"{k} ×{n}" for k, n in counted.most_common())


def impure_pairs(memory: Memory, labelled: LabelledSet) -> int:
    topic_of = {t.turn_id: t.topic for t in labelled.turns}
    r = pairwise_purity([memory.members], topic_of)
    return r.total - r.hits


def worst(r: Result) -> list[tuple[Memory, list[str]]]:
    """The flagged memories, worst first: what is wrong with each (mixed attributes, impure pairs, a
    keyword list, a question)."""
    out: list[tuple[int, int, Memory, list[str]]] = []
    mixed, keywords, questions = set(r.product.mixed), set(r.product.keyword_texts), set(r.product.questions)
    for i, m in enumerate(r.memories):
        why = []
        if i in mixed:
            why.append("mixes attributes")
        bad = impure_pairs(m, r.labelled)
        if bad:
            why.append(f"{bad} impure pair{'s' if bad > 1 else ''}")
        if i in keywords:
            why.append("keyword list" if any(k in m.text for k in KEYWORD_MARKERS) else "not a sentence")
        if i in questions:
            why.append("a question")
        if why:
            out.append((i in mixed, bad, m, why))
    out.sort(key=lambda x: (-x[0], -x[1], x[2].id))
    return [(m, why) for _, _, m, why in out]


def _cell(text_: str) -> str:
    return " ".join(text_.split()).replace("|", "\\|")


def _ratio(r: Ratio, target: float | None = None) -> str:
    if not r.total:
        return "1.000 (no pairs)"
    cell = f"{r.value:.3f} ({r.hits:,}/{r.total:,})"
    return cell if target is None else f"**{cell}** {verdict(r.value >= target)}"


def report_lines(r: Result) -> list[str]:
    s, alone, agglo = r.product, r.alone, r.agglo
    turns = r.labelled.turns
    topics = r.labelled.topics
    facts = sum(1 for t in topics.values() if t.get("attribute"))
    langs = Counter(str(t.get("lang")) for t in topics.values())
    distractors = sum(t.topic is None for t in turns)
    nears = sum(t.near is not None for t in turns)
    users = r.labelled.users
    how = (
        f"one per {r.batch} turns as the scheduler's batch trigger dispatches them"
        if r.batch
        else "one per user"
    )
    kept = ", ".join(f"{k} {v}" for k, v in sorted(r.statuses.items()))
    sizes = [len(m.members) for m in r.memories]
    whole = sum(
        1
        for label in topics
        if any({t.turn_id for t in turns if t.topic == label} <= set(m.members) for m in r.memories)
    )
    lines = [
        "## Consolidation: `hindsight bench consolidation`",
        "",
        f"Set: `bench/data/consolidation.json.gz` (`bench.sets.consolidation`), {len(users)} users "
        f"({', '.join(users)}; each a scope of agent `{turns[0].agent_id}`), {len(topics)} topics of 3–6 turns "
        f"({facts} of them fact attributes, some whose value changes over time; {langs['en']} English, "
        f"{langs['zh']} Chinese, {langs['mixed']} mixed), {len(turns) - distractors} topic turns and "
        f"{distractors} distractors ({nears} near misses). Each user's turns went in time order through "
        f"{r.reviews} real full reviews, {how} (`review_batch` in-process, rules only, no LLM), in "
        f"{r.seconds:.1f} s; scored are the open semantic memories (`valid_to IS NULL`) and their members.",
        "",
        f"| measure | full review (rules only) | each turn its own memory | agglomerative, MiniLM cosine ≥ "
        f"{r.agglo_cosine:g} (clusters ≥ {r.min_size}) | target |",
        "|---|---:|---:|---:|---:|",
        f"| pairwise purity (pairs sharing a memory that share a topic) | {_ratio(s.purity, TARGET_PURITY)} | "
        f"{_ratio(alone.purity)} | {_ratio(agglo.purity)} | ≥ {TARGET_PURITY:.2f} |",
        f"| completeness (same-topic pairs that share a memory) | "
        f"{_ratio(s.completeness, TARGET_COMPLETENESS)} | {_ratio(alone.completeness)} | "
        f"{_ratio(agglo.completeness)} | ≥ {TARGET_COMPLETENESS:.2f} |",
        f"| memories mixing two fact attributes | **{len(s.mixed)}** {verdict(len(s.mixed) <= TARGET_MIXED)} | "
        f"{len(alone.mixed)} | {len(agglo.mixed)} | {TARGET_MIXED} |",
        f"| keyword-list or fragment texts | **{len(s.keyword_texts)}** "
        f"{verdict(len(s.keyword_texts) <= TARGET_KEYWORD_TEXTS)} | — | — | {TARGET_KEYWORD_TEXTS} |",
        f"| texts that are a question | {len(s.questions)} | — | — | |",
        f"| memories | {s.groups} | {alone.groups} | {agglo.groups} | |",
        f"| turns in some memory | {s.grouped_turns}/{s.turns} | {alone.grouped_turns}/{alone.turns} | "
        f"{agglo.grouped_turns}/{agglo.turns} | |",
        f"| topics whose every turn is in one memory | {whole}/{len(topics)} | | | |",
        "",
        f"Memories hold {min(sizes, default=0)}–{max(sizes, default=0)} members (mean "
        f"{np.mean(sizes) if sizes else 0:.1f}). The review left the turns {kept}. A distractor pairs "
        "impurely with anything; a turn in no memory is with nobody. Keyword-list texts hold "
        '"(also:" / "（还有：", or are no sentence (fewer than 3 words, 4 CJK characters, or a list of '
        "short comma-separated pieces). Purity counts pairs, so a large mixed memory weighs most: the "
        "figures scope by scope:",
        "",
        "| user (scope) | topics, language | turns | memories | purity | completeness | mixing attributes |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for user, us in r.per_user.items():
        mine = [t for label, t in topics.items() if label.startswith(f"{user}/")]
        lang = ", ".join(f"{n} {k}" for k, n in Counter(str(t.get("lang")) for t in mine).most_common())
        lines.append(
            f"| {user} | {len(mine)}: {lang} | {us.turns} | {us.groups} | {_ratio(us.purity)} | "
            f"{_ratio(us.completeness)} | {len(us.mixed)} |"
        )
    flagged = worst(r)
    if flagged:
        lines += [
            "",
            f"### Worst memories ({len(flagged)} flagged, the first {min(len(flagged), WORST_SHOWN)})",
            "",
            "| user | memory text | members' topics | what is wrong |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| {m.user_id} | {_cell(m.text)} | {member_labels(m, r.labelled)} | {', '.join(why)} |"
            for m, why in flagged[:WORST_SHOWN]
        ]
    return lines + frontier_lines(r.bounds)


def print_memories(console: Console, r: Result, *, every: bool) -> None:
    """Every memory (verbose) or the flagged ones: its text, then each member with its topic."""
    by_id = {t.turn_id: t for t in r.labelled.turns}
    flagged = worst(r)
    shown = [(m, []) for m in r.memories] if every else flagged
    why_of = {m.id: why for m, why in flagged}
    if not shown:
        return
    console.rule("memories" if every else f"flagged memories ({len(flagged)})")
    for m, _ in shown:
        why = why_of.get(m.id, [])
        note = f"  [red]{escape(', '.join(why))}[/red]" if why else ""
        console.print(
            f"[bold]#{m.id}[/bold] {escape(m.user_id)} v{m.version}: {escape(m.text)}{note}", highlight=False
        )
        for turn_id in m.members:
            t = by_id.get(turn_id)
            content = t.content if t else "?"
            console.print(f"    {escape(_label(t)):<20} {escape(content[:110])}", highlight=False)


def run_consolidation_bench(
    settings: Settings,
    *,
    database_url: str,
    redis_url: str,
    users: Sequence[str] = (),
    topics: int | None = None,
    batch: int = BATCH,
    path: Path = SET_PATH,
    verbose: bool = False,
    write: bool,
    console: Console,
    also: Callable[[Bench, int], tuple[list[str], dict[str, float], Result]] | None = None,
) -> dict[str, float]:
    """`also`: another part run on the same bench after the whole set (issue 40's restated set,
    bench.consolidation_restated.also): its report lines, figures and the result whose memories to print."""
    configure_logging("WARNING", settings.log_json)
    labelled = subset(load_set(path), users, topics)
    whole = not users and topics is None
    b = open_bench(settings, database_url, redis_url, console)
    extra = None
    try:
        console.rule("[bold]bench consolidation")
        result = run(b, labelled, batch=batch)
        if also is not None and whole and path == SET_PATH:
            console.rule("[bold]bench consolidation: restated preferences")
            extra = also(b, batch)
    finally:
        b.engine.dispose()
        b.redis.close()
    lines = report_lines(result)
    print_table(console, lines)
    print_memories(console, result, every=verbose)
    figures = result.figures()
    if extra is not None:
        extra_lines, extra_figures, extra_result = extra
        print_table(console, extra_lines)
        print_memories(console, extra_result, every=verbose)
        lines += ["", *extra_lines]
        figures |= extra_figures
    if write and whole:
        write_section("consolidation", "\n".join(lines))
    elif write:
        console.print("[yellow]a subset of the set: BENCHMARKS.md left as it was[/yellow]")
    return figures
