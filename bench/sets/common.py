"""What the set generators share: LoCoMo's date format, a session builder, and a deterministic writer."""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

SETS_DIR = Path(__file__).resolve().parents[1] / "data" / "sets"


def session_time(ts: datetime) -> str:
    """LoCoMo's "1:56 pm on 8 May, 2023" (what bench.locomo_data.parse_session_time reads)."""
    hour = ts.strftime("%I").lstrip("0") or "12"
    return (
        f"{hour}:{ts.strftime('%M')} {ts.strftime('%p').lower()} on {ts.day} {ts.strftime('%B')}, {ts.year}"
    )


@dataclass
class Conversation:
    """One sample being written: sessions of turns, and the questions about them."""

    sample_id: str
    split: str  # "dev" | "test"
    speaker_a: str
    speaker_b: str
    sessions: list[tuple[datetime, list[dict[str, str]]]] = field(default_factory=list)
    qa: list[dict[str, Any]] = field(default_factory=list)

    def new_session(self, ts: datetime) -> None:
        self.sessions.append((ts, []))

    def say(self, speaker: str, text: str, role: str = "user") -> str:
        """Append a turn to the current session; returns its dia_id ("D3:7") for evidence."""
        n = len(self.sessions)
        turns = self.sessions[-1][1]
        dia = f"D{n}:{len(turns) + 1}"
        turns.append({"speaker": speaker, "dia_id": dia, "text": text, "role": role})
        return dia

    def ask(self, question: str, answer: str, evidence: list[str], category: str) -> None:
        if not evidence:
            raise ValueError(f"{self.sample_id}: question without evidence: {question!r}")
        self.qa.append({"question": question, "answer": answer, "evidence": evidence, "category": category})

    def to_json(self) -> dict[str, Any]:
        conv: dict[str, Any] = {"speaker_a": self.speaker_a, "speaker_b": self.speaker_b}
        for i, (ts, turns) in enumerate(self.sessions, start=1):
            conv[f"session_{i}_date_time"] = session_time(ts)
            conv[f"session_{i}"] = turns
        return {"sample_id": self.sample_id, "split": self.split, "conversation": conv, "qa": self.qa}


def write_set(path: Path, samples: list[Conversation]) -> None:
    """Gzipped JSON, byte-identical for the same samples (mtime 0), so a regenerated set diffs clean."""
    write_json_set(path, [s.to_json() for s in samples])


def write_json_set(path: Path, samples: list[dict[str, Any]]) -> None:
    """`write_set` of samples already in the LoCoMo layout."""
    data = json.dumps(samples, ensure_ascii=False, indent=None, sort_keys=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
        gz.write(data.encode("utf-8"))


def read_set(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        data: list[dict[str, Any]] = json.load(fh)
    return data
