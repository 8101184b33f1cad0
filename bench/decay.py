"""`hindsight bench decay`: what the decay pass costs over a million memory rows.

The data set (`rows` memory rows: ~95% episodes, ~5% semantic memories, 1,000 scopes) is generated
set-based in PostgreSQL from hashes of the row id, so every run builds the same rows; a rerun finds them
by fingerprint and skips the fill. Rows are stamped as if filled at FILLED_AT.

Per `chunk` setting of `run_decay`, each scenario starts from a fresh fill (a pass, or even a rolled-back
UPDATE, leaves dead row versions and split index pages that would make the next measurement cheaper or
dearer), a CHECKPOINT and an empty index_outbox:

(a) the full pass at FILLED_AT + 60 days: every hot, non-core memory has been idle for 60 days or more,
    so every one goes cold (weight <= e^-3 < 0.1): the worst case, like the first pass after the
    forgetting migration or after the beat job was down for weeks;
(b) the next hourly pass: with nothing hot left, the cost of finding nothing to do;
(c) the reference: `UPDATE ... SET weight = weight` over exactly the rows (a) selects, same id chunks,
    one transaction, rolled back. It is what touching every row costs by itself: (a) ÷ (c) says what the
    pass's own work (curve, status change, RETURNING, outbox) adds on top;
(s) the steady state (what (b) cannot show on this data set): a catch-up pass at FILLED_AT + 1 h sends
    the memories already faded below 0.1 cold, then the measured pass an hour later moves every hot
    weight a little (x0.998), a few of them below 0.1 (outbox rows: their points leave the index).

Autovacuum would run in the hour between two passes (and is off on some servers): the bench VACUUMs
before (b) and (s).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from rich.console import Console
from rich.table import Table
from sqlalchemy import Connection, Engine, text
from sqlalchemy.engine import make_url

from bench.report import write_section
from pipeline.adapters.postgres.decay_sql import run_decay
from pipeline.core.config import Settings
from pipeline.core.errors import ConfigError
from pipeline.forgetting.decay import SECONDS_PER_DAY, DecayParams

REPO_ROOT = Path(__file__).resolve().parents[1]
CACHE_DIR = REPO_ROOT / ".hindsight" / "bench-cache"
BENCH_DATABASE_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench_decay"
TARGET_S = 30.0  # pass (a), per 1,000,000 rows
SCOPES = 1000
SEMANTIC_SHARE = 0.05
FILLED_AT = datetime(2026, 1, 1, tzinfo=UTC)  # the data set's "now": every age counts back from here
FULL_AT = FILLED_AT + timedelta(days=60)
HOUR = timedelta(hours=1)
DEFAULT_CHUNKS = (50_000, 100_000, 200_000)
RATE = DecayParams().rate_per_day  # the curve the stored weights were computed with
STAT_TABLES = "'episodes', 'semantic_memories'"
TABLES = "index_outbox, semantic_members, semantic_memories, episodes, batches"


def _u(seed: int, of: str = "g") -> str:
    """A uniform [0, 1) drawn from the row id: deterministic, so every fill builds the same rows."""
    return f"((hashint8extended({of}, {seed}) & 2147483647)::float8 / 2147483648.0)"


def _weight_at_fill(core: str, base: str, accessed: str, born: str) -> str:
    """The weight as the hourly job would have left it at FILLED_AT (the same curve as run_decay)."""
    idle = f"greatest(date_part('epoch', :filled - coalesce({accessed}, {born})), 0) / {SECONDS_PER_DAY}"
    return f"CASE WHEN {core} THEN {base} ELSE {base} * exp(-:rate * {idle}) END"


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

# ~90% kept (2% of those core; 15% of all folded into a semantic memory: base weight 0.5), ~8% cold by
# quality, ~2% pending review. Ids grow with received_at over 180 days; 40% never recalled, the others
# last recalled some time in the last 120 days (never before they were stored). turn_id is a random-
# looking 32-hex string like the client's uuid4().hex, so its unique index is written all over.
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
       {_weight_at_fill("core", "base", "last_accessed", "received_at")} AS weight,
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

# One full-review batch per scope and 30 of its turns: the reviewed episodes' full_batch_id.
_BATCH_COLUMNS = "id, agent_id, user_id, kind, trigger, status, episode_count, created_at, finished_at"
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
       'The user said: ' || ({_CONTENT_ARRAY})[1 + h % {len(_CONTENTS)}] AS text,
       0.5::float8 AS importance,
       {_weight_at_fill("core", "1.0::float8", "last_accessed", "created_at")} AS weight,
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

# The reference: the plainest statement that rewrites every row pass (a) rewrites, chunk by chunk.
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
    """The bench truncates and refills its database: never let it point at the pipeline's own."""
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


def _maintain(engine: Engine, command: str) -> None:
    """VACUUM and CHECKPOINT refuse to run inside a transaction block."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text(command))


def _empty_outbox(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(text("TRUNCATE index_outbox"))


Fingerprint = dict[str, list[int]]


def _fingerprint(conn: Connection) -> Fingerprint:
    """Row count and an order-independent hash of every generated column, per table."""
    out: Fingerprint = {}
    for table, columns in (
        ("episodes", _EPISODE_COLUMNS),
        ("semantic_memories", _SEMANTIC_COLUMNS),
        ("batches", _BATCH_COLUMNS),
    ):
        row = conn.execute(
            text(
                f"SELECT count(*), coalesce(sum(hashtext(r::text)::bigint), 0) FROM (SELECT {columns} FROM {table}) r"
            )
        ).one()
        out[table] = [int(row[0]), int(row[1])]
    return out


def _cache_file(rows: int) -> Path:
    # Keyed by everything that shapes the rows: change the generator and the old fingerprint is moot.
    key = hashlib.sha256(
        "\n".join(
            [str(rows), FILLED_AT.isoformat(), str(RATE), _EPISODE_ROWS, _SEMANTIC_ROWS, _BATCH_ROWS]
        ).encode()
    ).hexdigest()[:16]
    return CACHE_DIR / f"decay-{key}.json"


def _holds(engine: Engine, rows: int) -> bool:
    """Whether the tables hold exactly the generated data set, as it was right after the fill.

    Compared against the fingerprint the fill recorded: fingerprinting the generator itself would cost
    three times as much as fingerprinting the tables.
    """
    cache = _cache_file(rows)
    if not cache.exists():
        return False
    with engine.connect() as conn:
        return bool(_fingerprint(conn) == json.loads(cache.read_text()))


def refill(engine: Engine, rows: int) -> float:
    """A fresh copy of the data set; returns seconds.

    Cheaper than undoing a pass in place (an UPDATE of every row, then VACUUM FULL), and every
    measurement gets the same physical start: heap and indexes as plain INSERTs build them.
    """
    t0 = time.perf_counter()
    episodes, semantic = split(rows)
    with engine.begin() as conn:
        conn.execute(text(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE"))
        conn.execute(text(f"INSERT INTO batches ({_BATCH_COLUMNS}) {_BATCH_ROWS}"), _params(episodes))
        conn.execute(text(f"INSERT INTO episodes ({_EPISODE_COLUMNS}) {_EPISODE_ROWS}"), _params(episodes))
        conn.execute(
            text(f"INSERT INTO semantic_memories ({_SEMANTIC_COLUMNS}) {_SEMANTIC_ROWS}"), _params(semantic)
        )
        # Explicit ids: move the sequences past them, as if the rows had come in one by one.
        for table in ("batches", "episodes", "semantic_memories"):
            conn.execute(
                text(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                    f"(SELECT coalesce(max(id), 0) + 1 FROM {table}), false)"
                )
            )
    # Hint bits and the visibility map set now, so the first pass does not pay for them; fresh statistics.
    _maintain(engine, "VACUUM ANALYZE episodes, semantic_memories, batches, index_outbox")
    return time.perf_counter() - t0


def ensure_data(engine: Engine, rows: int) -> tuple[bool, float]:
    """The pristine data set: (whether it was already there, seconds spent)."""
    t0 = time.perf_counter()
    if _holds(engine, rows):
        _maintain(engine, "VACUUM ANALYZE episodes, semantic_memories, batches, index_outbox")
        _empty_outbox(engine)
        return True, time.perf_counter() - t0
    refill(engine, rows)
    with engine.connect() as conn:
        fingerprint = _fingerprint(conn)
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    _cache_file(rows).write_text(json.dumps(fingerprint))
    return False, time.perf_counter() - t0


# -- the measurements ----------------------------------------------------------------------------------------


@dataclass
class Pass:
    label: str
    seconds: float
    updated: int
    went_cold: int | None = None  # None: not a decay pass
    queued: int | None = None
    hot: int = 0  # heap updates done as HOT (no new index entries), from pg_stat_user_tables
    load: float = 0.0  # 1-minute load average when it started: other work sharing the machine

    @property
    def rows_per_s(self) -> float:
        return self.updated / self.seconds if self.seconds else 0.0

    @property
    def hot_share(self) -> float | None:
        return self.hot / self.updated if self.updated else None


def _counters(engine: Engine) -> tuple[int, int]:
    with engine.connect() as conn:
        # Statistics reads are snapshotted per transaction: this connection may be a pooled one.
        conn.execute(text("SELECT pg_stat_clear_snapshot()"))
        row = conn.execute(
            text(
                "SELECT coalesce(sum(n_tup_upd), 0), coalesce(sum(n_tup_hot_upd), 0) "
                f"FROM pg_stat_user_tables WHERE relname IN ({STAT_TABLES})"
            )
        ).one()
    return int(row[0]), int(row[1])


def _hot_updates(engine: Engine, before: tuple[int, int], updated: int) -> int:
    # Backends report table counters when idle, at most once a second: wait for this pass's to land.
    deadline = time.monotonic() + 5.0
    after = _counters(engine)
    while after[0] - before[0] < updated and time.monotonic() < deadline:
        time.sleep(0.25)
        after = _counters(engine)
    return after[1] - before[1]


def _ready(engine: Engine) -> tuple[tuple[int, int], float]:
    """An empty outbox and a fresh CHECKPOINT (so no pass pays for its predecessor's dirty pages)."""
    _empty_outbox(engine)
    _maintain(engine, "CHECKPOINT")
    return _counters(engine), os.getloadavg()[0]


def measure_decay(engine: Engine, label: str, now: datetime, chunk: int, parallel: int) -> Pass:
    before, load = _ready(engine)
    t0 = time.perf_counter()
    report = run_decay(engine, now, DecayParams(), chunk=chunk, parallel=parallel)
    seconds = time.perf_counter() - t0
    hot = _hot_updates(engine, before, report.updated)
    return Pass(label, seconds, report.updated, report.went_cold, report.queued, hot, load)


def measure_reference(engine: Engine, chunk: int) -> Pass:
    """`SET weight = weight` over the rows pass (a) selects, in its chunks, in one transaction, rolled back."""
    before, load = _ready(engine)
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
    return Pass("c", seconds, updated, hot=_hot_updates(engine, before, updated), load=load)


@dataclass
class Round:
    chunk: int
    parallel: int
    full: Pass  # (a)
    next_hour: Pass  # (b)
    reference: Pass  # (c)
    catch_up: Pass  # the unreported first half of (s)
    steady: Pass  # (s)

    @property
    def ratio(self) -> float:
        return self.full.seconds / self.reference.seconds


def measure_round(engine: Engine, rows: int, chunk: int, parallel: int, console: Console) -> Round:
    """Starts and ends with the pristine data set."""
    full = measure_decay(engine, "a", FULL_AT, chunk, parallel)
    _maintain(engine, "VACUUM ANALYZE episodes, semantic_memories")
    next_hour = measure_decay(engine, "b", FULL_AT + HOUR, chunk, parallel)
    refill_s = refill(engine, rows)
    reference = measure_reference(engine, chunk)
    refill_s += refill(engine, rows)
    # At FILLED_AT itself no weight has moved, so nothing would be written: the catch-up runs an hour on.
    catch_up = measure_decay(engine, "s0", FILLED_AT + HOUR, chunk, parallel)
    _maintain(engine, "VACUUM ANALYZE episodes, semantic_memories")
    steady = measure_decay(engine, "s", FILLED_AT + 2 * HOUR, chunk, parallel)
    refill_s += refill(engine, rows)
    console.print(
        f"chunk {chunk:,}: (a) {full.seconds:.1f} s, (b) {next_hour.seconds:.2f} s, (c) {reference.seconds:.1f} s, "
        f"catch-up {catch_up.seconds:.1f} s ({catch_up.went_cold:,} cold), (s) {steady.seconds:.1f} s; "
        f"3 refills {refill_s:.0f} s; load {min(p.load for p in (full, reference, steady)):.1f}"
        f"–{max(p.load for p in (full, reference, steady)):.1f}",
        highlight=False,
    )
    return Round(chunk, parallel, full, next_hour, reference, catch_up, steady)


# -- the report ----------------------------------------------------------------------------------------

HEADERS = ("pass", "chunk", "rows updated", "went cold", "outbox rows", "HOT", "seconds", "rows/s")
LABELS = {
    "a": "(a) full pass, fill + 60 d",
    "b": "(b) next hour, nothing hot",
    "c": "(c) reference SET weight = weight",
    "s": "(s) steady hourly pass",
}


def _cells(p: Pass) -> list[str]:
    share = p.hot_share
    return [
        f"{p.updated:,}",
        "—" if p.went_cold is None else f"{p.went_cold:,}",
        "—" if p.queued is None else f"{p.queued:,}",
        "—" if share is None else f"{share:.0%}",
        f"{p.seconds:.2f}",
        f"{p.rows_per_s:,.0f}" if p.updated else "—",
    ]


def table_rows(rounds: Sequence[Round]) -> list[list[str]]:
    out: list[list[str]] = []
    for r in rounds:
        chunk = f"{r.chunk:,}"
        for p in (r.full, r.next_hour, r.reference, r.steady):
            out.append([LABELS[p.label], chunk, *_cells(p)])
        out.append(["(a) ÷ (c)", chunk, "", "", "", "", f"{r.ratio:.2f}×", ""])
    return out


def _server(engine: Engine) -> str:
    with engine.connect() as conn:
        version = conn.execute(text("SHOW server_version")).scalar_one()
        settings = {
            name: conn.execute(text(f"SHOW {name}")).scalar_one()
            for name in ("shared_buffers", "max_wal_size", "wal_compression", "autovacuum")
        }
        options = conn.execute(
            text("SELECT reloptions FROM pg_class WHERE relname = 'episodes'")
        ).scalar_one()
        indexes = conn.execute(
            text("SELECT count(*) FROM pg_indexes WHERE tablename = 'episodes'")
        ).scalar_one()
    shown = ", ".join(f"{k} {v}" for k, v in settings.items())
    return (
        f"PostgreSQL {version.split()[0]} ({shown}); episodes: {indexes} indexes, "
        f"storage options {', '.join(options) if options else 'default (fillfactor 100)'}"
    )


def _verdict(r: Round, rows: int) -> tuple[float, bool]:
    target = TARGET_S * rows / 1_000_000
    return target, r.full.seconds <= target


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
    engine = make_engine(database_url, pool_size=max(2, settings.decay.parallel))
    try:
        kept, seconds = ensure_data(engine, rows)
        episodes, semantic = split(rows)
        console.print(
            f"data set: {episodes:,} episodes + {semantic:,} semantic memories over {SCOPES:,} scopes "
            f"({'already there' if kept else 'filled'}, {seconds:.1f} s)",
            highlight=False,
        )
        parallel = settings.decay.parallel
        rounds = [measure_round(engine, rows, chunk, parallel, console) for chunk in chunks]
        server = _server(engine)
    finally:
        engine.dispose()

    table = Table(*HEADERS, title=f"decay pass over {rows:,} memory rows")
    for cells in table_rows(rounds):
        table.add_row(*cells)
    console.print(table)
    for verdict in verdict_lines(rounds, rows):
        console.print(verdict.replace("**", ""), highlight=False)
    console.print(server, highlight=False)
    if write:
        write_section("decay", "\n".join(section_lines(rows, rounds, server)))
    return rounds


def figures(rounds: Sequence[Round], rows: int) -> dict[str, float]:
    """Seconds of pass (a), the reference UPDATE (c) and the steady pass (s) per chunk, and the target."""
    out: dict[str, float] = {"rows": float(rows), "target_s": TARGET_S * rows / 1_000_000}
    for r in rounds:
        out[f"full_s_{r.chunk}"] = r.full.seconds
        out[f"reference_s_{r.chunk}"] = r.reference.seconds
        out[f"steady_s_{r.chunk}"] = r.steady.seconds
        out[f"ratio_{r.chunk}"] = r.ratio
    return out


def verdict_lines(rounds: Sequence[Round], rows: int) -> list[str]:
    out = []
    for r in rounds:
        target, ok = _verdict(r, rows)
        out.append(
            f"Target (a) ≤ {target:g} s: chunk {r.chunk:,} **{r.full.seconds:.1f} s, {'pass' if ok else 'fail'}**."
        )
    return out


def section_lines(rows: int, rounds: Sequence[Round], server: str) -> list[str]:
    episodes, semantic = split(rows)
    lines = [
        "## Decay: `hindsight bench decay`",
        "",
        f"{rows:,} memory rows ({episodes:,} episodes, {semantic:,} semantic memories, {SCOPES:,} scopes, "
        f"no embeddings) in PostgreSQL. (a) `run_decay` at fill + 60 days, its chunks over "
        f"{rounds[0].parallel if rounds else 1} connections at once (`decay.parallel`): every hot, non-core "
        "memory goes cold, the worst case; (b) an hour later, nothing hot is left; (c) `UPDATE … SET weight = "
        "weight` on one connection "
        "over the rows (a) updates, same chunks, rolled back; (s) the steady hourly pass: after a catch-up "
        "pass at fill + 1 h, the pass at fill + 2 h. Each scenario starts from a fresh fill, a CHECKPOINT and "
        "an empty outbox; VACUUM stands in for autovacuum before (b) and (s). HOT: share of the row updates "
        "that wrote no index entry.",
        "",
        "| " + " | ".join(HEADERS) + " |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += ["| " + " | ".join(line) + " |" for line in table_rows(rounds)]
    loads = [p.load for r in rounds for p in (r.full, r.reference, r.steady)]
    lines += [
        "",
        *verdict_lines(rounds, rows),
        "",
        server + ".",
        f"1-minute load average when the measured passes started: {min(loads):.1f}–{max(loads):.1f} "
        "(on 2 cores; above 2, other work was competing for the CPU).",
    ]
    return lines
