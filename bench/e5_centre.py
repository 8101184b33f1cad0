"""Write pipeline/adapters/e5_centre.npy: the mean of multilingual-e5-small's uncentred passage vectors over a
seeded sample of the project's own generated conversations (English and Chinese; no evaluation set)."""

from __future__ import annotations

import random

import numpy as np

from bench.sets.common import SETS_DIR, read_set
from pipeline.adapters.e5_centre import CENTRE_PATH
from pipeline.adapters.embedder import make_embedder
from pipeline.core.config import Settings

SETS = ("assistant_help", "friends_chat", "restated", "bilingual_zh", "bilingual_en")
SAMPLE = 3000
SEED = 45


def texts() -> list[str]:
    out: list[str] = []
    for name in SETS:
        for sample in read_set(SETS_DIR / f"{name}.json.gz"):
            conv = sample["conversation"]
            for key, turns in conv.items():
                if key.startswith("session_") and isinstance(turns, list):
                    out += [str(t["text"]) for t in turns if str(t.get("text", "")).strip()]
    random.Random(SEED).shuffle(out)
    return out[:SAMPLE]


def main() -> None:
    from pipeline.adapters.onnx_embedder import OnnxEmbedder

    embedder = make_embedder(Settings(embedding={"model": "multilingual-e5-small", "backend": "onnx"}))
    assert isinstance(embedder, OnnxEmbedder)
    vectors = np.asarray(embedder.embed_uncentred(texts()), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    np.save(CENTRE_PATH, vectors.mean(axis=0).astype(np.float32))
    print(f"wrote {CENTRE_PATH} from {len(vectors)} texts")


if __name__ == "__main__":
    main()
