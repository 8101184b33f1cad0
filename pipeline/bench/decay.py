"""`hindsight bench decay`: what the hourly decay pass costs over a million memory rows.

The data set (`rows` memory rows: ~95% episodes, ~5% semantic memories, 1,000 scopes) is generated
set-based in PostgreSQL from hashes of the row id, so it is the same on every run and a rerun can check
it is still there instead of refilling. Every row is stamped as if filled at FILLED_AT; the passes run at
FILLED_AT + 60 days (every hot, non-core memory has then been idle for at least 60 days: the worst
case, all of them go cold) and one hour after that (the hourly beat job's next tick).

Next to the decay pass, a reference: `UPDATE ... SET weight = weight` over the same rows, in the same id
chunks, rolled back. It is the floor of "touch every row": the decay pass's ratio to it is the figure
that says how much the pass's own logic (curve, RETURNING, outbox) costs on top.

Each measurement starts from the same physical state: the pristine data set, compacted by VACUUM FULL
(a rolled-back or committed rewrite of every row leaves dead versions and split index pages that would
make the next pass cheaper or dearer), a fresh CHECKPOINT and an empty index_outbox.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from rich.console import Console
from rich.table import Table
from sqlalchemy import Connection, Engine, text
from sqlalchemy.engine import make_url

from pipeline.adapters.postgres.decay_sql import DecayReport, run_decay
from pipeline.bench.report import write_section
from pipeline.config import Settings
from pipeline.decay import SECONDS_PER_DAY, DecayParams
from pipeline.errors import ConfigError

BENCH_DATABASE_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench_decay"
TARGET_S = 30.0  # pass (a) over 1,000,000 rows
SCOPES = 1000
SEMANTIC_SHARE = 0.05
FILLED_AT = datetime(2026, 1, 1, tzinfo=UTC)  # the data set's "now": ages count back from here
FIRST_PASS_AT = FILLED_AT + timedelta(days=60)
SECOND_PASS_AT = FIRST_PASS_AT + timedelta(hours=1)
DEFAULT_CHUNKS = (50_000, 200_000)
# The curve the data set's weights were computed with (as if the hourly job had kept them current).
RATE = DecayParams().rate_per_day


def _u(seed: int, of: str = "g") -> str:
    """A uniform [0, 1) drawn from the row id: deterministic, so reruns regenerate the same data set."""
    return f"((hashint8extended({of}, {seed}) & 2147483647)::float8 / 2147483648.0)"


# weight as the hourly job would have left it at FILLED_AT: written from the row's own columns, so the
# restore after a measured pass can recompute it in place, bit for bit.
_WEIGHT_AT_FILL = (
    "CASE WHEN {core} THEN {base} ELSE {base} * exp(-:rate * greatest(extract(epoch FROM "
    "(:filled - coalesce({accessed}, {born}))), 0) / " + str(SECONDS_PER_DAY) + ") END"
)

_CONTENTS = (
    "I moved to Lisbon last March.",
    "Can you suggest a vegetarian place near Alfama?",
    "My sister's birthday is on the 14th.",
    "Remind me to renew the passport before June.",
    "I prefer aisle seats on long flights.",
    "The cat is called Miso.",
    "Sure, here are three options close to the river.",
    "I'm allergic to peanuts.",
)
_CONTENT_ARRAY = "ARRAY[" + ", ".join("'" + c.replace("'", "''") + "'" for c in _CONTENTS) + "]"

# ~90% kept (2% of those core, 15% consolidated into a semantic memory: base weight 0.5), ~8% cold by
# quality, ~2% still pending review; ids grow with received_at over 180 days; 40% never recalled, the
# rest last recalled at some point of the last 120 days (never before they were stored).
_EPISODE_COLUMNS = (
    "id, turn_id, agent_id, user_id, session_id, role, content, ts, source, priority, status, core, "
    "consolidated, weight, base_weight, cold_reason, cold_since, last_accessed, access_count, received_at, "
    "reviewed_at, full_batch_id"
)
_EPISODE_ROWS = f"""
SELECT g AS id, md5('bench-decay-' || g) AS turn_id, 'agent-' || (k % 10) AS agent_id, 'user-' || k AS user_id,
       'session-' || k || '-' || (j / 40) AS session_id,
       CASE WHEN user_turn THEN 'user' ELSE 'assistant' END AS role,
       ({_CONTENT_ARRAY})[1 + g % {len(_CONTENTS)}] AS content,
       received_at - interval '1 second' AS ts,
       CASE WHEN user_turn THEN 'user' ELSE 'agent' END AS source,
       CASE WHEN user_turn THEN 1 ELSE 2 END AS priority,
       status, core, consolidated,
       {_WEIGHT_AT_FILL.format(core="core", base="base", accessed="last_accessed", born="received_at")} AS weight,
       base AS base_weight,
       CASE WHEN status = 'cold' THEN 'quality' END AS cold_reason,
       CASE WHEN status = 'cold' THEN received_at + interval '1 hour' END AS cold_since,
       last_accessed,
       CASE WHEN last_accessed IS NULL THEN 0 ELSE 1 + g % 5 END AS access_count,
       received_at,
       CASE WHEN status <> 'pending' THEN received_at + interval '10 minutes' END AS reviewed_at,
       CASE WHEN status <> 'pending' THEN (j / 30) * {SCOPES} + k + 1 END AS full_batch_id
FROM (
    SELECT *, CASE WHEN u_access < 0.4 THEN NULL
                   ELSE greatest(received_at, :filled - interval '120 days' * ((u_access - 0.4) / 0.6)) END
              AS last_accessed
    FROM (
        SELECT g, g % {SCOPES} AS k, g / {SCOPES} AS j, g % 2 = 1 AS user_turn,
               :filled - interval '180 days' * (1 - g::float8 / :n) AS received_at,
               CASE WHEN {_u(1)} < 0.90 THEN 'kept' WHEN {_u(1)} < 0.98 THEN 'cold' ELSE 'pending' END AS status,
               {_u(1)} < 0.90 AND {_u(2)} < 0.02 AS core,
               {_u(3)} < 0.15 AS consolidated,
               CASE WHEN {_u(3)} < 0.15 THEN 0.5 ELSE 1.0 END::float8 AS base,
               {_u(4)} AS u_access
        FROM generate_series(1, :n) g
    ) drawn
) timed
"""

# One full-review batch per scope and 30 of its turns, for the reviewed episodes' full_batch_id.
_BATCH_ROWS = f"""
SELECT b AS id, 'agent-' || (((b - 1) % {SCOPES}) % 10) AS agent_id, 'user-' || ((b - 1) % {SCOPES}) AS user_id,
       'full' AS kind, 'batch_size' AS trigger, 'done' AS status, 30 AS episode_count,
       :filled AS created_at, :filled AS finished_at
FROM generate_series(1, (:n / {SCOPES} / 30 + 1) * {SCOPES}) b
"""

# ~3% core, ~10% cold, ~15% closed versions (valid_to set: decay skips them), the rest open and kept.
_SEMANTIC_COLUMNS = (
    "id, agent_id, user_id, text, importance, weight, base_weight, core, status, cold_since, valid_from, "
    "valid_to, version, method, created_at, last_accessed, access_count"
)
_SEMANTIC_ROWS = f"""
SELECT h AS id, 'agent-' || (k % 10) AS agent_id, 'user-' || k AS user_id,
       'The user ' || ({_CONTENT_ARRAY})[1 + h % {len(_CONTENTS)}] AS text,
       0.5::float8 AS importance,
       {_WEIGHT_AT_FILL.format(core="core", base="1.0", accessed="last_accessed", born="created_at")} AS weight,
       1.0::float8 AS base_weight, core, status,
       CASE WHEN status = 'cold' THEN least(created_at + interval '1 hour', :filled) END AS cold_since,
       created_at AS valid_from,
       CASE WHEN closed THEN created_at + interval '1 day' END AS valid_to,
       1 AS version, 'extractive' AS method, created_at, last_accessed,
       CASE WHEN last_accessed IS NULL THEN 0 ELSE 1 + h % 5 END AS access_count
FROM (
    SELECT *, CASE WHEN u_access < 0.4 THEN NULL
                   ELSE greatest(created_at, :filled - interval '120 days' * ((u_access - 0.4) / 0.6)) END
              AS last_accessed
    FROM (
        SELECT h, h % {SCOPES} AS k,
               :filled - interval '180 days' * (1 - h::float8 / :n) AS created_at,
               CASE WHEN {_u(11, "h")} < 0.90 THEN 'kept' ELSE 'cold' END AS status,
               {_u(11, "h")} < 0.90 AND {_u(12, "h")} < 0.03 AS core,
               {_u(13, "h")} < 0.15 AS closed,
               {_u(14, "h")} AS u_access
        FROM generate_series(1, :n) h
    ) drawn
) timed
"""

# Order-independent fingerprints of a table and of the generator: equal iff the rows are.
_EPISODE_PRINT = "SELECT count(*), coalesce(sum(hashtext(r::text)::bigint), 0) FROM ({rows}) r"
_TABLES = "index_outbox, semantic_members, semantic_memories, episodes, batches"

# The reference: the cheapest statement that rewrites every row the decay pass rewrites.
_REFERENCE = {
    "episodes": "UPDATE episodes SET weight = weight WHERE id >= :lo AND id < :hi AND status = 'kept' AND NOT core",
    "semantic_memories": (
        "UPDATE semantic_memories SET weight = weight "
        "WHERE id >= :lo AND id < :hi AND status = 'kept' AND NOT core AND valid_to IS NULL"
    ),
}


def split(rows: int) -> tuple[int, int]:
    """(episodes, semantic memories) for `rows` memory rows in all."""
    semantic = round(rows * SEMANTIC_SHARE)
    return rows - semantic, semantic


def check_disposable(database_url: str, settings: Settings) -> None:
    """The bench truncates and rewrites its database: never let it point at the pipeline's own."""
    target = make_url(database_url)
    db = target.database or ""
    if "bench" not in db:
        raise ConfigError(
            f"the decay bench truncates its database; {db!r} does not look like a bench database"
        )
    configured = make_url(settings.db_url)
    if (target.host, target.port, db) == (configured.host, configured.port, configured.database):
        raise ConfigError(f"the decay bench truncates {db!r}, which is the configured pipeline's database")


# -- the data set ----------------------------------------------------------------------------------------


def _params(n: int) -> dict[str, object]:
    return {"n": n, "filled": FILLED_AT, "rate": RATE}


def _fingerprint(conn: Connection, rows_sql: str, n: int) -> tuple[int, int]:
    row = conn.execute(text(_EPISODE_PRINT.format(rows=rows_sql)), _params(n)).one()
    return int(row[0]), int(row[1])


def _holds(conn: Connection, episodes: int, semantic: int) -> bool:
    """Whether the tables hold exactly the generated data set (and nothing else)."""
    for table, columns, rows_sql, n in (
        ("episodes", _EPISODE_COLUMNS, _EPISODE_ROWS, episodes),
        ("semantic_memories", _SEMANTIC_COLUMNS, _SEMANTIC_ROWS, semantic),
    ):
        # Cheap first: a count that differs settles it without two full fingerprints.
        if conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one() != n:
            return False
        if _fingerprint(conn, f"SELECT {columns} FROM {table}", n) != _fingerprint(conn, rows_sql, n):
            return False
    return (
        conn.execute(text("SELECT count(*) FROM batches")).scalar_one()
        == (episodes // SCOPES // 30 + 1) * SCOPES
    )


def _fill(engine: Engine, episodes: int, semantic: int) -> None:
    with engine.begin() as conn:
        conn.execute(text(f"TRUNCATE {_TABLES} RESTART IDENTITY CASCADE"))
        conn.execute(
            text(
                "INSERT INTO batches (id, agent_id, user_id, kind, trigger, status, episode_count, "
                f"created_at, finished_at) {_BATCH_ROWS}"
            ),
            _params(episodes),
        )
        conn.execute(text(f"INSERT INTO episodes ({_EPISODE_COLUMNS}) {_EPISODE_ROWS}"), _params(episodes))
        conn.execute(
            text(f"INSERT INTO semantic_memories ({_SEMANTIC_COLUMNS}) {_SEMANTIC_ROWS}"), _params(semantic)
        )
        # Explicit ids: move the sequences past them, as if the rows had been inserted one by one.
        for table in ("batches", "episodes", "semantic_memories"):
            conn.execute(
                text(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                    f"(SELECT coalesce(max(id), 0) + 1 FROM {table}), false)"
                )
            )


def _maintain(engine: Engine, command: str) -> None:
    """VACUUM / CHECKPOINT: outside a transaction."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text(command))


def refill(engine: Engine, rows: int) -> float:
    """A fresh copy of the data set; returns seconds.

    Cheaper than undoing a pass in place (an UPDATE of every row, then VACUUM FULL), and it leaves every
    measurement the same physical start: heap and indexes as a plain INSERT builds them.
    """
    t0 = time.perf_counter()
    _fill(engine, *split(rows))
    # Sets hint bits and the visibility map, so the first pass does not pay for them; fresh statistics.
    _maintain(engine, "VACUUM ANALYZE episodes, semantic_memories, batches, index_outbox")
    return time.perf_counter() - t0


@dataclass
class Prepared:
    how: str  # "filled" | "kept"
    seconds: float


def ensure_data(engine: Engine, rows: int) -> Prepared:
    """The generated data set, pristine: kept if the tables already hold exactly it, else refilled."""
    t0 = time.perf_counter()
    with engine.connect() as conn:
        holds = _holds(conn, *split(rows))
    if holds:
        _maintain(engine, "VACUUM ANALYZE episodes, semantic_memories, batches, index_outbox")
        _empty_outbox(engine)
    else:
        refill(engine, rows)
    return Prepared("kept" if holds else "filled", time.perf_counter() - t0)


# -- the measurements ----------------------------------------------------------------------------------------


@dataclass
class Pass:
    label: str
    seconds: float
    updated: int
    went_cold: int = 0
    queued: int = 0
    hot_updates: int = 0  # pg_stat n_tup_hot_upd during the pass, both tables
    heap_updates: int = 0  # n_tup_upd during the pass, both tables

    @property
    def rows_per_s(self) -> float:
        return self.updated / self.seconds if self.seconds else 0.0


def _upd_stats(engine: Engine) -> tuple[int, int]:
    # The cumulative statistics system is per-backend snapshotted: clear the snapshot before reading.
    with engine.connect() as conn:
        conn.execute(text("SELECT pg_stat_clear_snapshot()"))
        row = conn.execute(
            text(
                "SELECT coalesce(sum(n_tup_upd), 0), coalesce(sum(n_tup_hot_upd), 0) FROM pg_stat_user_tables "
                "WHERE relname IN ('episodes', 'semantic_memories')"
            )
        ).one()
    return int(row[0]), int(row[1])


def _empty_outbox(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(text("TRUNCATE index_outbox"))


def _wait_stats(engine: Engine, before: tuple[int, int], expect: int) -> tuple[int, int]:
    # Backends flush their table counters at most once a second (PG 15): wait for them to land.
    after = _upd_stats(engine)
    deadline = time.monotonic() + 3.0
    while after[0] - before[0] < expect and time.monotonic() < deadline:
        time.sleep(0.2)
        after = _upd_stats(engine)
    return after[0] - before[0], after[1] - before[1]


def measure_decay(engine: Engine, label: str, now: datetime, chunk: int) -> Pass:
    _empty_outbox(engine)
    _maintain(engine, "CHECKPOINT")
    before = _upd_stats(engine)
    t0 = time.perf_counter()
    report: DecayReport = run_decay(engine, now, DecayParams(), chunk=chunk)
    seconds = time.perf_counter() - t0
    upd, hot = _wait_stats(engine, before, report.updated)
    return Pass(label, seconds, report.updated, report.went_cold, report.queued, hot, upd)


def measure_reference(engine: Engine, chunk: int) -> Pass:
    """`SET weight = weight` over the rows the decay pass selects, same chunks, one transaction, rolled back."""
    _empty_outbox(engine)
    _maintain(engine, "CHECKPOINT")
    before = _upd_stats(engine)
    updated = 0
    t0 = time.perf_counter()
    with engine.connect() as conn:
        for table, sql in _REFERENCE.items():
            lo, hi = conn.execute(
                text(f"SELECT coalesce(min(id), 0), coalesce(max(id), -1) FROM {table}")
            ).one()
            for start in range(int(lo), int(hi) + 1, chunk):
                updated += conn.execute(text(sql), {"lo": start, "hi": start + chunk}).rowcount
        conn.rollback()
    seconds = time.perf_counter() - t0
    upd, hot = _wait_stats(engine, before, updated)
    return Pass("reference", seconds, updated, hot_updates=hot, heap_updates=upd)


@dataclass
class Round:
    chunk: int
    reference: Pass
    first: Pass
    second: Pass

    @property
    def ratio(self) -> float:
        return self.first.seconds / self.reference.seconds


def measure_round(engine: Engine, rows: int, chunk: int, console: Console) -> Round:
    """From the pristine data set: passes (a) and (b), refill, the reference, refill (pristine again)."""
    first = measure_decay(engine, "a", FIRST_PASS_AT, chunk)
    second = measure_decay(engine, "b", SECOND_PASS_AT, chunk)
    refill_s = refill(engine, rows)
    reference = measure_reference(engine, chunk)
    # Rolled back, but its new row versions and index entries stay behind until a refill.
    refill_s += refill(engine, rows)
    console.print(
        f"chunk {chunk:,}: pass (a) {first.seconds:.1f} s, pass (b) {second.seconds:.2f} s, "
        f"reference {reference.seconds:.1f} s (refills {refill_s:.0f} s)",
        highlight=False,
    )
    return Round(chunk, reference, first, second)


# -- the report ----------------------------------------------------------------------------------------


def _fmt_pass(p: Pass) -> list[str]:
    return [
        f"{p.updated:,}",
        f"{p.went_cold:,}" if p.label != "reference" else "—",
        f"{p.queued:,}" if p.label != "reference" else "—",
        f"{p.hot_updates / p.heap_updates:.0%}" if p.heap_updates else "—",
        f"{p.seconds:.2f}",
        f"{p.rows_per_s:,.0f}",
    ]


HEADERS = ("pass", "chunk", "rows updated", "went cold", "outbox rows", "HOT", "seconds", "rows/s")


def table_rows(rounds: Sequence[Round]) -> list[list[str]]:
    out: list[list[str]] = []
    for r in rounds:
        chunk = f"{r.chunk:,}"
        out.append(["(a) full pass at fill + 60 d", chunk, *_fmt_pass(r.first)])
        out.append(["(b) next hourly pass, + 1 h", chunk, *_fmt_pass(r.second)])
        out.append(["(c) reference `SET weight = weight`", chunk, *_fmt_pass(r.reference)])
        out.append(["(a) ÷ (c)", chunk, "", "", "", "", f"{r.ratio:.2f}", ""])
    return out


def run_decay_bench(
    settings: Settings,
    *,
    rows: int,
    database_url: str,
    chunks: Sequence[int],
    write: bool,
    console: Console,
) -> list[Round]:
    from pipeline.adapters.postgres.engine import make_engine
    from pipeline.adapters.postgres.migrate import upgrade

    check_disposable(database_url, settings)
    upgrade(database_url)
    engine = make_engine(database_url, pool_size=2)
    try:
        prepared = ensure_data(engine, rows)
        episodes, semantic = split(rows)
        console.print(
            f"data set: {episodes:,} episodes + {semantic:,} semantic memories over {SCOPES:,} scopes "
            f"({prepared.how}, {prepared.seconds:.1f} s)",
            highlight=False,
        )
        rounds = [measure_round(engine, rows, chunk, console) for chunk in chunks]
    finally:
        engine.dispose()

    table = Table(*HEADERS, title=f"decay pass over {rows:,} memory rows")
    for line in table_rows(rounds):
        table.add_row(*line)
    console.print(table)
    best = min(rounds, key=lambda r: r.first.seconds)
    ok = best.first.seconds <= TARGET_S * rows / 1_000_000
    console.print(
        f"target: pass (a) ≤ {TARGET_S:.0f} s per 1,000,000 rows — best {best.first.seconds:.1f} s "
        f"(chunk {best.chunk:,}): {'PASS' if ok else 'FAIL'}",
        highlight=False,
    )
    if write:
        write_section("decay", "\n".join(section_lines(rows, episodes, semantic, rounds, best, ok)))
    return rounds


def section_lines(
    rows: int, episodes: int, semantic: int, rounds: Sequence[Round], best: Round, ok: bool
) -> list[str]:
    lines = [
        "## Decay: `hindsight bench decay`",
        "",
        f"{rows:,} memory rows ({episodes:,} episodes + {semantic:,} semantic memories, {SCOPES:,} scopes) "
        "in PostgreSQL; `run_decay` at fill + 60 days (every hot, non-core memory goes cold: the worst "
        "case), then one hour later (the next hourly tick), next to a reference `UPDATE … SET weight = "
        "weight` over the same rows in the same chunks (rolled back). Each measurement starts from the "
        "same compacted data set, after a CHECKPOINT, with an empty outbox.",
        "",
        "| pass | chunk | rows updated | went cold | outbox rows | HOT | seconds | rows/s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += ["| " + " | ".join(line) + " |" for line in table_rows(rounds)]
    lines += [
        "",
        f"Target: pass (a) ≤ {TARGET_S:.0f} s for 1,000,000 rows — best **{best.first.seconds:.1f} s** "
        f"(chunk {best.chunk:,}): **{'pass' if ok else 'fail'}**.",
    ]
    return lines
