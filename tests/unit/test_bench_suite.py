"""`hindsight bench all`: the registry, the selection, isolation of a failing bench, the summary it writes."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from bench import charts, suite
from bench.report import write_section
from bench.suite import Benchmark, Context, Figures, Headline
from pipeline.cli.main import app
from pipeline.core.config import Settings
from pipeline.core.errors import ConfigError


def _quiet() -> Console:
    return Console(file=open("/dev/null", "w"), width=200)


def _ctx(write: bool = False) -> Context:
    return Context(settings=Settings(), console=_quiet(), write=write)


def _headline(f: Figures) -> list[Headline]:
    return [Headline("speed", f"{f['speed']:.1f}", "≥ 2", f["speed"] >= 2)]


def _bench(name: str, run: suite.Runner, **kw: object) -> Benchmark:
    kw.setdefault("locomo", False)  # these fakes read no data: the tests need no LoCoMo file
    return Benchmark(name, run, {"size": 1}, {"size": 100}, _headline, **kw)  # type: ignore[arg-type]


# -- the registry --------------------------------------------------------------------------------------------


def test_the_registry_names_every_bench_once_cheap_first_and_locomo_before_recall() -> None:
    names = [b.name for b in suite.REGISTRY]
    assert len(names) == len(set(names))
    assert {"ingest", "review", "decay", "locomo", "recall", "embed", "poisoning", "month"} <= set(names)
    assert names[0] == "ingest"
    assert names.index("locomo") < names.index("recall")  # recall reuses the LoCoMo ingest's vectors


@pytest.mark.parametrize("bench", suite.REGISTRY, ids=lambda b: b.name)
def test_each_bench_takes_its_quick_and_full_sizes(bench: Benchmark) -> None:
    signature = inspect.signature(bench.run)
    signature.bind(_ctx(), **bench.quick)  # raises TypeError on an unknown or missing size
    signature.bind(_ctx(), **bench.full)
    if bench.chart:
        assert bench.name in charts.CHARTS


def test_every_bench_command_is_in_the_suite() -> None:
    from pipeline.cli.bench import bench_app

    commands = {c.name for c in bench_app.registered_commands} - {"all"}
    assert commands == {b.command or b.name for b in suite.REGISTRY}
    assert {b.name for b in suite.REGISTRY if b.command} == {"updates-long", "updates-agents"}


# -- selection -----------------------------------------------------------------------------------------------

REG = (
    _bench("a", lambda ctx, size: {"speed": 1.0}),
    _bench("b", lambda ctx, size: {"speed": 1.0}),
    _bench("c", lambda ctx, size: {"speed": 1.0}),
)


def test_select_keeps_registry_order_whatever_the_order_asked() -> None:
    assert [b.name for b in suite.select(REG)] == ["a", "b", "c"]
    assert [b.name for b in suite.select(REG, only=["c", "a"])] == ["a", "c"]
    assert [b.name for b in suite.select(REG, skip=["b"])] == ["a", "c"]
    assert [b.name for b in suite.select(REG, only=["a", "b"], skip=["a"])] == ["b"]


def test_an_unknown_name_is_an_error_naming_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"no such benchmark\(s\): nope; choose from a, b, c"):
        suite.select(REG, only=["nope"])
    with pytest.raises(ConfigError, match="nope"):
        suite.select(REG, skip=["nope"])


def test_a_selection_of_nothing_is_an_error() -> None:
    with pytest.raises(ConfigError, match="no benchmark to run"):
        suite.select(REG, only=["a"], skip=["a"])


# -- running -------------------------------------------------------------------------------------------------


def test_quick_and_full_pass_their_own_sizes() -> None:
    seen: list[int] = []

    def run(ctx: Context, size: int) -> Figures:
        seen.append(size)
        return {"speed": 3.0}

    bench = _bench("a", run)
    assert suite.run_one(bench, _ctx(), quick=True).headlines == [Headline("speed", "3.0", "≥ 2", True)]
    suite.run_one(bench, _ctx(), quick=False)
    assert seen == [1, 100]


def test_a_failing_bench_is_reported_and_the_rest_still_run(tmp_path: Path) -> None:
    ran: list[str] = []

    def ok(name: str, speed: float) -> suite.Runner:
        def run(ctx: Context, size: int) -> Figures:
            ran.append(name)
            return {"speed": speed}

        return run

    def boom(ctx: Context, size: int) -> Figures:
        ran.append("boom")
        raise RuntimeError("the database went away")

    registry = (_bench("first", ok("first", 2.5)), _bench("boom", boom), _bench("last", ok("last", 1.5)))
    result = suite.run_suite(_ctx(), quick=True, registry=registry, benchmarks_md=tmp_path / "B.md")

    assert ran == ["first", "boom", "last"]
    assert result.failed == ["boom"]
    by_name = {o.name: o for o in result.outcomes}
    assert by_name["boom"].error == "RuntimeError: the database went away"
    assert by_name["first"].figures == {"speed": 2.5}
    assert [h.met for h in by_name["last"].headlines] == [False]
    assert not (tmp_path / "B.md").exists()  # write=False: nothing written


def test_a_bench_whose_figures_lack_its_headline_counts_as_failed(tmp_path: Path) -> None:
    bench = _bench("a", lambda ctx, size: {"other": 1.0})
    outcome = suite.run_one(bench, _ctx(), quick=True)
    assert outcome.error is not None
    assert "KeyError" in outcome.error


def test_the_summary_goes_on_top_with_the_machine_and_the_charts_are_linked(tmp_path: Path) -> None:
    md = tmp_path / "BENCHMARKS.md"
    write_section("older", "## Older\n\nkept as it was", md)
    recall_figures = {
        "memories": 1000.0,
        "floor_p50_ms": 10.0,
        "floor_p95_ms": 20.0,
        "recall_p50_ms": 15.0,
        "recall_p95_ms": 25.0,
        "ratio_p95": 1.25,
    }

    def recall(ctx: Context, size: int) -> Figures:
        write_section("recall", "## Recall latency\n\nsome text", md)  # as the real bench writes its section
        return {**recall_figures, "speed": 2.0}

    registry = (_bench("recall", recall, chart=True), _bench("other", lambda ctx, size: {"speed": 0.5}))
    result = suite.run_suite(_ctx(write=True), quick=False, registry=registry, benchmarks_md=md)

    text = md.read_text()
    assert text.index("<!-- bench:summary -->") < text.index("<!-- bench:older -->")
    summary = text.split("<!-- bench:summary -->")[1].split("<!-- /bench:summary -->")[0]
    assert "| recall |" in summary
    assert "| speed: 2.0 | ≥ 2 | yes |" in summary
    assert "| other |" in summary
    assert "| speed: 0.5 | ≥ 2 | no |" in summary
    assert f"commit `{result.machine['commit']}`" in summary
    assert "ran every benchmark" in summary
    for key in ("CPU", "RAM", "torch", "onnxruntime"):
        assert result.machine[key]
        assert result.machine[key] in summary
    assert re.search(
        r"Load average \(1/5/15 min\) [\d.]+/[\d.]+/[\d.]+ before, [\d.]+/[\d.]+/[\d.]+ after", summary
    )
    png = tmp_path / "docs" / "bench" / "recall.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    recall_section = text.split("<!-- bench:recall -->")[1]
    assert recall_section.startswith("\n## Recall latency\n\n![")
    assert "](docs/bench/recall.png) <!-- chart -->" in recall_section


def test_quick_sizes_leave_the_summary_section_alone(tmp_path: Path) -> None:
    md = tmp_path / "BENCHMARKS.md"
    suite.run_suite(_ctx(write=True), quick=True, only=["a"], registry=REG, benchmarks_md=md)
    assert not md.exists() or "bench:summary" not in md.read_text()
    assert not (tmp_path / suite.SUMMARY_STORE).exists()


def _summary(md: Path) -> str:
    return md.read_text().split("<!-- bench:summary -->")[1].split("<!-- /bench:summary -->")[0]


def test_a_full_size_subset_refreshes_its_rows_and_keeps_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    md = tmp_path / "BENCHMARKS.md"
    speeds = {"a": 3.0, "b": 1.0}
    registry = tuple(_bench(n, lambda ctx, size, n=n: {"speed": speeds[n]}) for n in ("a", "b", "c"))

    monkeypatch.setattr(suite, "git_commit", lambda root=suite.REPO_ROOT: "first")
    suite.run_suite(_ctx(write=True), quick=False, only=["a", "b"], registry=registry, benchmarks_md=md)
    first = _summary(md)
    assert re.search(r"\| a \| .*\(`first`\) \| .* \| speed: 3.0 \| ≥ 2 \| yes \|", first)
    assert "| c | not yet run by `bench all` at full size (see its own section) |" in first
    assert "ran a, b (the other rows are from earlier runs)" in first

    speeds["b"] = 2.5
    monkeypatch.setattr(suite, "git_commit", lambda root=suite.REPO_ROOT: "second")
    suite.run_suite(_ctx(write=True), quick=False, only=["b"], registry=registry, benchmarks_md=md)
    second = _summary(md)
    assert re.search(r"\| a \| .*\(`first`\) \| .* \| speed: 3.0 \|", second)  # kept as measured then
    assert re.search(r"\| b \| .*\(`second`\) \| .* \| speed: 2.5 \| ≥ 2 \| yes \|", second)
    assert second.index("| a |") < second.index("| b |") < second.index("| c |")  # registry order


def test_an_unreadable_summary_store_is_rebuilt(tmp_path: Path) -> None:
    md = tmp_path / "BENCHMARKS.md"
    store = tmp_path / suite.SUMMARY_STORE
    store.parent.mkdir(parents=True)
    store.write_text("{not json")
    suite.run_suite(_ctx(write=True), quick=False, only=["a"], registry=REG, benchmarks_md=md)
    assert set(suite.read_rows(store)) == {"a"}


def test_the_command_exits_1_and_names_what_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(ctx: Context, size: int) -> Figures:
        raise ValueError("bad figures")

    registry = (_bench("fine", lambda ctx, size: {"speed": 9.0}), _bench("broken", boom))
    monkeypatch.setattr(suite, "REGISTRY", registry)
    result = CliRunner().invoke(app, ["bench", "all", "--quick", "--no-write"], env={"COLUMNS": "200"})
    assert result.exit_code == 1
    assert "failed: broken" in result.output
    assert re.search(r"fine\s+│\s+[\d.]+ s\s+│ speed: 9.0", result.output)


def test_the_command_rejects_an_unknown_bench_by_name() -> None:
    result = CliRunner().invoke(app, ["bench", "all", "--only", "nope", "--no-write"], env={"COLUMNS": "200"})
    # A ConfigError, which `hindsight`'s main() prints as one line and exits 1 with, before any bench runs.
    assert isinstance(result.exception, ConfigError)
    assert "no such benchmark(s): nope; choose from ingest," in str(result.exception)
    assert "bench all: ingest" not in result.output  # the rule each bench starts with


def test_headlines_of_the_real_benches_read_their_figures() -> None:
    by_name = {b.name: b for b in suite.REGISTRY}
    ingest = by_name["ingest"].headlines({"ratio_p50": 1.48})
    assert ingest == [Headline("write_memory ÷ raw XADD, p50", "1.48", "≤ 2.0", True)]
    decay = by_name["decay"].headlines(
        {"rows": 1e6, "target_s": 30.0, "full_s_50000": 20.6, "full_s_200000": 65.2, "ratio_50000": 0.87}
    )
    assert decay[0].value == "20.6"
    assert decay[0].met is True
    review = by_name["review"].headlines(
        {"full_total_ms": 3237, "batch_ratio_stored": 0.097, "e2e_ratio": 0.733}
    )
    assert [h.met for h in review] == [True, True, False]
    locomo = by_name["locomo"].headlines({"all_r10": 0.81, "all_r5": 0.69})
    assert [h.met for h in locomo] == [True, False]
    embed = by_name["embed"].headlines(
        {"onnx-int8_t1_cpu_ratio": 2.4, "onnx-int8_t2_cpu_ratio": 1.9, "onnx-int8_agreement": 0.995}
    )
    assert (embed[0].value, embed[0].met, embed[1].met) == ("1.90", False, True)  # the worse thread count
    embed = by_name["embed"].headlines(
        {
            "onnx_t1_cpu_ratio": 2.1,
            "onnx_agreement": 1.0,
            "onnx_recall10": 0.70,
            "onnx-int8_t1_cpu_ratio": 4.0,
            "onnx-int8_agreement": 0.88,
            "onnx-int8_recall10": 0.68,
            "torch_recall10": 0.695,
        }
    )
    recall = [h for h in embed if "recall@10" in h.label]
    assert [(h.label, h.value, h.met) for h in recall] == [
        ("onnx-int8 LoCoMo recall@10 − torch", "-0.0150", False),
        ("onnx LoCoMo recall@10 − torch", "+0.0050", True),
    ]


def test_the_commit_is_dirty_for_changed_code_but_not_for_the_suites_own_output(tmp_path: Path) -> None:
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    assert suite.git_commit(tmp_path) == "unknown (not a git checkout)"
    git("init", "-q")
    (tmp_path / "BENCHMARKS.md").write_text("# Benchmarks\n")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    clean = suite.git_commit(tmp_path)
    assert re.fullmatch(r"[0-9a-f]{12}", clean)
    (tmp_path / "BENCHMARKS.md").write_text("# Benchmarks\n\nnew figures\n")
    assert suite.git_commit(tmp_path) == clean
    (tmp_path / "code.py").write_text("x = 2\n")
    assert suite.git_commit(tmp_path) == clean + "+dirty"


def test_locomo_figures_per_category_and_all_are_what_the_table_scores() -> None:
    from bench.locomo import category_figures
    from bench.locomo_data import Table

    table = Table("hybrid")
    table.add("tuned", "multi-hop", [("a",), ("b",)], ["a"])  # found
    table.add("held-out", "temporal", [("c",)], ["a", "b"])  # missed
    assert category_figures("pipeline", table) == {
        "pipeline_r5_multi-hop": 1.0,
        "pipeline_r10_multi-hop": 1.0,
        "pipeline_r5_temporal": 0.0,
        "pipeline_r10_temporal": 0.0,
        "pipeline_r5_all": 0.5,
        "pipeline_r10_all": 0.5,
    }  # categories without questions are left out, not drawn as zeros


def test_missing_locomo_data_is_one_clear_error_before_anything_runs(tmp_path: Path) -> None:
    ran: list[str] = []

    def run(ctx: Context, size: int) -> Figures:
        ran.append("x")
        return {"speed": 1.0}

    registry = (_bench("reads", run, locomo=True), _bench("own", run))
    ctx = Context(settings=Settings(), console=_quiet(), write=False, data=tmp_path / "missing.json")
    with pytest.raises(ConfigError, match=r"LoCoMo data not found at .*missing.json \(needed by reads\)"):
        suite.run_suite(ctx, quick=True, registry=registry)
    assert ran == []
    suite.run_suite(ctx, quick=True, only=["own"], registry=registry)  # a bench of its own data runs
    assert ran == ["x"]


def test_the_registry_names_the_databases_each_bench_module_uses() -> None:
    from bench import decay, locomo, recall_latency, review

    by_name = {b.name: b for b in suite.REGISTRY}
    assert by_name["decay"].database == decay.BENCH_DATABASE_URL
    assert (by_name["review"].database, by_name["review"].redis) == (
        review.BENCH_DATABASE_URL,
        review.BENCH_REDIS_URL,
    )
    assert (by_name["locomo"].database, by_name["locomo"].redis) == (
        locomo.BENCH_DATABASE_URL,
        locomo.BENCH_REDIS_URL,
    )
    assert by_name["recall"].database == recall_latency.BENCH_DATABASE_URL  # the LoCoMo ingest's, reused


def test_list_shows_each_bench_and_what_it_writes_to_and_runs_nothing() -> None:
    result = CliRunner().invoke(
        app, ["bench", "all", "--list", "--redis-url", "redis://127.0.0.1:6379/10"], env={"COLUMNS": "250"}
    )
    assert result.exit_code == 0, result.output
    assert re.search(
        r"decay .*rows=20000.*rows=1000000.*postgresql 127.0.0.1:5432/hindsight_bench_decay", result.output
    )
    assert re.search(r"review .*redis://127.0.0.1:6379/10", result.output)  # the override replaces db 12
    assert "bench all: ingest" not in result.output  # the rule each bench starts with


def test_rows_from_another_machine_name_their_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    md = tmp_path / "BENCHMARKS.md"
    registry = tuple(_bench(n, lambda ctx, size: {"speed": 3.0}) for n in ("a", "b"))
    monkeypatch.setattr(suite, "_cpu_model", lambda: "Old CPU")
    suite.run_suite(_ctx(write=True), quick=False, registry=registry, benchmarks_md=md)
    one_machine = _summary(md)
    assert "Machine: Old CPU," in one_machine
    assert "Old CPU, " not in one_machine.split("|---|")[1]  # one machine: the rows need not say it

    monkeypatch.setattr(suite, "_cpu_model", lambda: "New CPU")
    suite.run_suite(_ctx(write=True), quick=False, only=["b"], registry=registry, benchmarks_md=md)
    mixed = _summary(md)
    assert "This run: New CPU," in mixed
    assert re.search(r"\| a \| [^|]*, Old CPU, \d+ cores \|", mixed)
    assert re.search(r"\| b \| [^|]*, New CPU, \d+ cores \|", mixed)


@pytest.mark.parametrize(("sets", "expected"), [(None, "ablations"), (("friends_chat",), "none")])
def test_quality_at_full_size_scores_the_ablations_that_decide_the_defaults(
    monkeypatch: pytest.MonkeyPatch, sets: tuple[str, ...] | None, expected: str
) -> None:
    """The section `bench all` writes replaces `bench quality`'s: at full size it must carry the ablation table."""
    from bench import quality
    from bench.locomo_eval import check_variants

    check_variants(quality.ABLATIONS)  # every name is a known variant
    asked: list[object] = []

    def fake(settings: Settings, **kw: object) -> list[object]:
        asked.append(kw["variants"])
        return []

    monkeypatch.setattr(quality, "run_quality_bench", fake)
    suite._quality(_ctx(), reuse=True, sets=sets)
    assert asked == [quality.ABLATIONS if expected == "ablations" else ()]


def test_locomo_targets_missed_are_named_so_the_command_can_fail() -> None:
    from bench.locomo import missed_targets
    from bench.locomo_data import Table

    met = Table("hybrid")
    met.add("tuned", "multi-hop", [("a",)], ["a"])
    met.add("held-out", "temporal", [("b",)], ["b"])
    assert missed_targets(met) == []
    missed = Table("hybrid")
    missed.add("tuned", "multi-hop", [("a",)], ["a"])
    missed.add("held-out", "temporal", [("c",)], ["b"])
    assert [m.split()[0] for m in missed_targets(missed)] == ["R@10", "R@5", "held-out"]
