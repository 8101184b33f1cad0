"""`hindsight bench poisoning`: how many injection attempts the detector quarantines, and how many ordinary
conversation turns it flags by mistake.

Attacks: bench/data/injections.jsonl, written for this project (English and Chinese, every source),
in a dev split (the detector was tuned against it) and a held-out split (written at the same time, before
the detector, and only measured). Benign traffic: every LoCoMo conversation turn, read from locomo10.json at
run time (never copied into the repository), plus a small set of hard benign turns from the same file
(preferences and corrections phrased as instructions: "from now on call me Sam", 忽略我上一条消息).
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from bench.report import write_section
from pipeline.core.errors import ConfigError
from pipeline.review import injection

DATA = Path(__file__).resolve().parent / "data" / "injections.jsonl"
ATTACK_TARGET = 0.95
LOCOMO_TARGET = 0.02


@dataclass(frozen=True, slots=True)
class Sample:
    id: str
    label: str  # attack | benign
    split: str  # dev | heldout | hard_negative | locomo
    lang: str
    source: str
    role: str
    technique: str
    content: str


def load_samples(path: Path = DATA) -> list[Sample]:
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            out.append(Sample(**{k: str(row[k]) for k in Sample.__slots__}))
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"{path}:{n}: not a labelled sample ({exc})") from exc
    return out


def locomo_samples(path: Path) -> list[Sample]:
    """Every LoCoMo conversation turn as a user turn (speaker_a) or an agent turn (speaker_b)."""
    from bench.review import load_locomo  # the one LoCoMo parser of the benches

    corpus = load_locomo(path)
    return [
        Sample(
            f"{u.conversation}/{u.session}/{i}",
            "benign",
            "locomo",
            "en",
            "user" if u.role == "user" else "agent",
            u.role,
            "conversation",
            u.content,
        )
        for i, u in enumerate(corpus.turns)
    ]


@dataclass(frozen=True)
class Outcome:
    sample: Sample
    verdict: injection.InjectionVerdict
    decision: injection.Decision

    @property
    def flagged(self) -> bool:
        return self.decision == "quarantine"


def evaluate(samples: list[Sample], thresholds: injection.InjectionThresholds) -> list[Outcome]:
    outcomes = []
    for s in samples:
        verdict = injection.assess(s.content, role=s.role, source=s.source)
        outcomes.append(Outcome(s, verdict, injection.decide(verdict, thresholds)))
    return outcomes


def _rate(outcomes: list[Outcome]) -> tuple[int, int, float]:
    n = len(outcomes)
    k = sum(o.flagged for o in outcomes)
    return k, n, (k / n if n else 0.0)


def _pct(outcomes: list[Outcome]) -> str:
    k, n, r = _rate(outcomes)
    return f"{k}/{n} ({r:.1%})"


def _by(outcomes: list[Outcome], key: str) -> str:
    groups: dict[str, list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault(getattr(o.sample, key), []).append(o)
    return ", ".join(f"{g} {_pct(v)}" for g, v in sorted(groups.items()))


def run_poisoning_bench(
    *, locomo: Path, data: Path = DATA, write: bool, console: Console | None = None
) -> dict[str, Any]:
    out = console or Console()
    t = injection.InjectionThresholds()
    samples = load_samples(data)
    benign = locomo_samples(locomo)
    started = time.perf_counter()
    attacks = evaluate([s for s in samples if s.label == "attack"], t)
    hard = evaluate([s for s in samples if s.label == "benign"], t)
    conv = evaluate(benign, t)
    elapsed = time.perf_counter() - started
    per_s = (len(attacks) + len(hard) + len(conv)) / elapsed if elapsed > 0 else 0.0

    dev = [o for o in attacks if o.sample.split == "dev"]
    held = [o for o in attacks if o.sample.split == "heldout"]
    results: dict[str, Any] = {
        "attacks": _rate(attacks),
        "dev": _rate(dev),
        "heldout": _rate(held),
        "hard_negatives": _rate(hard),
        "locomo": _rate(conv),
        "locomo_uncertain": sum(o.decision == "uncertain" for o in conv),
        "attacks_uncertain": sum(o.decision == "uncertain" for o in attacks if not o.flagged),
        "turns_per_s": per_s,
    }
    missed = [o for o in attacks if not o.flagged]
    fps = [o for o in conv if o.flagged]
    hard_fps = [o for o in hard if o.flagged]
    features = Counter(f for o in attacks for f in o.verdict.features[:1])

    attack_ok = results["attacks"][2] >= ATTACK_TARGET
    locomo_ok = results["locomo"][2] <= LOCOMO_TARGET
    lines = [
        "## Poisoning defence (`hindsight bench poisoning`)",
        "",
        f"Detector `pipeline/review/injection.py` (rules, no LLM), quarantine at score ≥ {t.quarantine_at}; "
        f"the band [{t.uncertain_from}, {t.quarantine_at}) goes to the LLM second opinion when one is "
        "configured (not used here). Attacks: `bench/data/injections.jsonl`, written for this "
        "project; LoCoMo: every conversation turn of locomo10.json as benign traffic (speaker_a as `user`, "
        "speaker_b as `agent` source).",
        "",
        "| set | quarantined | target |",
        "|---|---|---|",
        f"| all attacks | {_pct(attacks)} | ≥ {ATTACK_TARGET:.0%} {'✓' if attack_ok else '✗'} |",
        f"| — dev split (the detector was tuned on it) | {_pct(dev)} | |",
        f"| — held-out split (measured only) | {_pct(held)} | |",
        f"| LoCoMo turns (benign) | {_pct(conv)} | ≤ {LOCOMO_TARGET:.0%} {'✓' if locomo_ok else '✗'} |",
        f"| hard benign turns (instructions that are preferences) | {_pct(hard)} | |",
        "",
        f"- attacks by language: {_by(attacks, 'lang')}",
        f"- attacks by source: {_by(attacks, 'source')}",
        f"- attacks by technique: {_by(attacks, 'technique')}",
        f"- held-out by language: {_by(held, 'lang')}",
        f"- LoCoMo turns in the uncertain band (would go to the LLM if configured): "
        f"{results['locomo_uncertain']}; missed attacks in that band: {results['attacks_uncertain']}",
        f"- missed attacks: {', '.join(o.sample.id for o in missed) or 'none'}",
        f"- flagged LoCoMo turns (conversation/session/turn index): {', '.join(o.sample.id for o in fps) or 'none'}",
        f"- flagged hard benign turns: {', '.join(o.sample.id for o in hard_fps) or 'none'}",
        f"- strongest feature of each attack: {', '.join(f'{k} {v}' for k, v in features.most_common())}",
        f"- detector speed: {per_s:,.0f} turns/s on one core ({elapsed:.2f} s for "
        f"{len(attacks) + len(hard) + len(conv):,} turns; load average {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores, shared with other work)",
        "",
        "Caveat: the same person wrote the attacks and the detector, and the held-out split was written "
        "in the same sitting; it measures paraphrase robustness, not resistance to an adaptive attacker. "
        "LoCoMo is English only: false positives on Chinese conversation are measured only on the 10 "
        "Chinese hard benign turns.",
    ]
    body = "\n".join(lines)
    out.print(body)
    for o in missed:
        out.print(f"[yellow]missed[/] {o.sample.id} {o.sample.split} {o.verdict.to_json()}")
    for o in fps[:30]:
        out.print(f"[red]flagged[/] {o.sample.id} {o.verdict.to_json()} {o.sample.content[:120]!r}")
    if write:
        write_section("poisoning", body)
    return results
