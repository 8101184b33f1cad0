"""`hindsight bench longmemeval`: LongMemEval S through the real pipeline, beside BM25, dense and hybrid floors.

LongMemEval (Wu et al., ICLR 2025, MIT) gives each question its own haystack of ~50 user↔assistant sessions
(~490 turns, long assistant replies) with turn-level evidence (`has_answer`). The shared development file
(../shared/bench/longmemeval/, 468 of S's 500 questions) is read in place, never copied into the repository.
Each sampled question becomes one user scope, and its haystack goes through the same path as `bench quality`
(stream, scheduler, Celery worker, rules-only review, indexer, `GET /v1/recall`), scored with the same strict
turn-level recall@5 / @10, plus LongMemEval's lenient measures: recall_any@5 / @10 (any evidence turn among
the first k) and session-level recall_any@5 (an evidence session among the first 5 distinct sessions), which
published figures use (BM25 0.862, BM25 + all-MiniLM-L6-v2 hybrid 0.952 on all of S, their own scorers).

The sample is stratified by question type with a fixed seed; within each type, alternate questions are the
`dev` half (may be read and tuned on) and the `test` half (never read: reported apart). Questions without
turn-level evidence (abstention questions, "_abs") cannot be scored turn by turn and are left out.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import re
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from bench.locomo import print_lines
from bench.locomo_data import Table
from bench.report import write_section
from bench.review import CACHE_DIR
from bench.sets.common import session_time, write_json_set
from pipeline.core.config import Settings
from pipeline.core.errors import ConfigError

DEFAULT_DATA = (
    Path(__file__).resolve().parents[2] / "shared" / "bench" / "longmemeval" / "longmemeval_s_dev.json.gz"
)
REDIS_URL = "redis://127.0.0.1:6379/7"
SEED = 45
PER_TYPE = 5  # 30 questions, ~14k turns: the sample `bench all` runs (≤ 30 min on 2 cores)
TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "knowledge-update",
    "temporal-reasoning",
)
_DATE = re.compile(r"(\d{4})/(\d{2})/(\d{2}) \(\w+\) (\d{2}):(\d{2})")
__all__ = ["load_questions", "run_longmemeval_bench", "sample", "to_locomo"]


def load_questions(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        raise ConfigError(
            f"LongMemEval data not found at {path}: pass --data PATH to longmemeval_s_dev.json.gz"
        )
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path} is not LongMemEval JSON: {exc}") from None
    if not isinstance(data, list) or not all(isinstance(q, dict) and "haystack_sessions" in q for q in data):
        raise ConfigError(f"{path} is not a list of LongMemEval questions")
    return data


def has_evidence(q: dict[str, Any]) -> bool:
    return any(t.get("has_answer") for s in q["haystack_sessions"] for t in s)


def sample(
    questions: Sequence[dict[str, Any]], per_type: int | None, seed: int = SEED
) -> list[tuple[str, dict[str, Any]]]:
    """(split, question) pairs: per type, `per_type` questions with turn-level evidence in a seeded order
    (None: all of them); alternate ones are "dev" and "test"."""
    out: list[tuple[str, dict[str, Any]]] = []
    for qtype in sorted({str(q["question_type"]) for q in questions}):
        pool = sorted(
            (q for q in questions if q["question_type"] == qtype and has_evidence(q)),
            key=lambda q: q["question_id"],
        )
        random.Random(f"{seed}:{qtype}").shuffle(pool)
        chosen = pool if per_type is None else pool[:per_type]
        out += [("dev" if i % 2 == 0 else "test", q) for i, q in enumerate(chosen)]
    return out


def parse_date(value: str) -> datetime:
    """LongMemEval's "2023/05/20 (Sat) 00:31" (UTC: the data set states no zone)."""
    from datetime import UTC

    m = _DATE.fullmatch(value.strip())
    if not m:
        raise ConfigError(f"LongMemEval date {value!r} is not like '2023/05/20 (Sat) 00:31'")
    y, mo, d, h, mi = (int(g) for g in m.groups())
    return datetime(y, mo, d, h, mi, tzinfo=UTC)


def to_locomo(split: str, q: dict[str, Any]) -> dict[str, Any]:
    """One question as a LoCoMo-format sample (what `bench quality` reads): its haystack in date order, one
    session per haystack session, roles kept, evidence = the `has_answer` turns."""
    sessions = sorted(
        zip(q["haystack_dates"], q["haystack_sessions"], strict=True), key=lambda pair: parse_date(pair[0])
    )
    conv: dict[str, Any] = {"speaker_a": "user", "speaker_b": "assistant"}
    evidence: list[str] = []
    for n, (date, turns) in enumerate(sessions, start=1):
        conv[f"session_{n}_date_time"] = session_time(parse_date(date))
        rows = []
        for i, t in enumerate(turns, start=1):
            dia = f"D{n}:{i}"
            rows.append({"speaker": t["role"], "dia_id": dia, "text": t["content"], "role": t["role"]})
            if t.get("has_answer"):
                evidence.append(dia)
        conv[f"session_{n}"] = rows
    qa = {
        "question": q["question"],
        "answer": str(q["answer"]),
        "evidence": evidence,
        "category": q["question_type"],
    }
    return {"sample_id": q["question_id"], "split": split, "conversation": conv, "qa": [qa]}


def write_sample(path: Path, per_type: int | None, seed: int) -> tuple[Path, list[tuple[str, str, str]]]:
    """The sample as a LoCoMo-format set in the bench cache (never in the repository), and its
    (split, type, question id) rows."""
    chosen = sample(load_questions(path), per_type, seed)
    key = hashlib.sha256(f"{path.stat().st_size}:{per_type}:{seed}".encode()).hexdigest()[:12]
    out = CACHE_DIR / f"longmemeval-{key}.json.gz"
    write_json_set(out, [to_locomo(split, q) for split, q in chosen])
    return out, [(split, str(q["question_type"]), str(q["question_id"])) for split, q in chosen]


def lenient_lines(tables: Sequence[Table]) -> list[str]:
    """Per ranker and question type: strict R@5 / R@10, recall_any@5 / @10, session-level recall_any@5."""
    types = sorted({c for t in tables for c in t.categories()})
    lines = [
        "| ranker | half | "
        + " | ".join(types)
        + " | **all: R@5 / R@10** | **any@5 / any@10** | **session any@5** | n |",
        "|---|---|" + "---|" * len(types) + "---:|---:|---:|---:|",
    ]
    for t in tables:
        for half in ("tuned", "held-out", None):
            cells = []
            for c in types:
                s = t.total(half, c)
                cells.append(
                    f"{s.at5:.2f} / {s.at10:.2f} · {s.any_at5:.2f} · {s.session_any_at5:.2f}" if s.n else "—"
                )
            s = t.total(half)
            lines.append(
                f"| {t.name} | {half or '**all**'} | "
                + " | ".join(cells)
                + f" | {s.at5:.3f} / {s.at10:.3f} | {s.any_at5:.3f} / {s.any_at10:.3f} | {s.session_any_at5:.3f} | {s.n} |"
            )
    return lines


def run_longmemeval_bench(
    settings: Settings,
    *,
    data: Path = DEFAULT_DATA,
    per_type: int | None = PER_TYPE,
    seed: int = SEED,
    reuse: bool = False,
    write: bool,
    console: Console,
    redis_url: str = REDIS_URL,
    timeout_s: float = 5400.0,
    variants: Sequence[str] = (),
) -> dict[str, float]:
    from bench import quality

    path, chosen = write_sample(data, per_type, seed)
    size = (
        "all questions with turn-level evidence" if per_type is None else f"{per_type} per type, seed {seed}"
    )
    eval_set = quality.EvalSet(
        "longmemeval",
        path,
        "none",
        f"LongMemEval S ({size}): one user scope per question, ~50 user↔assistant sessions each",
    )
    r = quality.run_set(
        settings,
        eval_set,
        reuse=reuse,
        variants=variants,
        console=console,
        timeout_s=timeout_s,
        e5=False,
        redis_url=redis_url,
    )
    lines = lenient_lines(r.tables)
    print_lines(console, lines)
    p, (best5, best10) = r.product.total(), r.best_floor()
    figures = {
        **r.figures,
        "longmemeval_questions": float(r.questions),
        "longmemeval_any5": p.any_at5,
        "longmemeval_any10": p.any_at10,
        "longmemeval_session_any5": p.session_any_at5,
        "longmemeval_test_r5": r.product.total("held-out").at5,
    }
    for i, t in enumerate(r.tables[:3]):
        name = ("bm25", "dense", "hybrid")[i]
        figures[f"longmemeval_{name}_r5"] = t.total().at5
        figures[f"longmemeval_{name}_r10"] = t.total().at10
        figures[f"longmemeval_{name}_session_any5"] = t.total().session_any_at5
    if write:
        ids = ", ".join(f"{qid} ({qtype}, {split})" for split, qtype, qid in chosen)
        section = [
            "## LongMemEval S: `hindsight bench longmemeval`",
            "",
            "Each sampled question's haystack through the real pipeline as one user scope (stream, scheduler, "
            "Celery worker, rules-only review, indexer), the question asked through `GET /v1/recall`; floors on "
            "the same turn texts. Strict R@k: the share of a question's evidence turns among the first k distinct "
            "turns; any@k: at least one; session any@5: an evidence session among the first 5 distinct sessions "
            "(the published anchors, on all of S with their own scorers: BM25 0.862, BM25 + MiniLM hybrid 0.952). "
            "`tuned` rows are the dev half of the sample (may be read); `held-out` rows were never read.",
            "",
            f"Product R@5 / R@10 {p.at5:.3f} / {p.at10:.3f} against the best floor {best5:.3f} / {best10:.3f}; "
            f"session any@5 {p.session_any_at5:.3f}.",
            "",
            *lenient_lines(r.tables),
            "",
            *quality.set_lines(r),
            f"Questions ({len(chosen)}): {ids}.",
        ]
        write_section("longmemeval", "\n".join(section))
    return figures
