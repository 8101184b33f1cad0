"""The centre of multilingual-e5-small's vectors, taken off every vector it makes.

e5's vectors share one large common direction: two unrelated turns sit at cosine ~0.84 (MiniLM: ~0.18), and
a turn's nearest other turn at ~0.91. Review's cosine rules were written for a spread-out space (near
duplicates at 0.95, novelty, coherent clusters), and read that way every turn is a near-duplicate of every
other. Taking off the mean of many texts' vectors and normalising again (Mu & Viswanath, "All-but-the-top",
ICLR 2018) spreads them out (pairs ~0.04, as MiniLM's) and keeps what tells texts apart; on two LoCoMo
conversations the dense R@10 rose 0.260 -> 0.302 with it.

The mean is fixed, shipped with the code (`e5_centre.npy`, 384 float32), and taken over the project's own
generated conversations in English and Chinese (`python -m bench.e5_centre` writes it), never over an
evaluation set. It is part of the vectors: changing it is a model change (its hash is in the model's
identity).
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

import numpy as np

from pipeline.core.ports import Vector

CENTRE_PATH = Path(__file__).with_name("e5_centre.npy")


@cache
def load_centre(path: Path = CENTRE_PATH) -> Vector | None:
    """The shipped centre, or None when it has not been written (vectors are then left as they are)."""
    if not path.exists():
        return None
    return np.load(path).astype(np.float32)


def centre_hash(path: Path = CENTRE_PATH) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.exists() else "none"


def centred(vectors: Vector, centre: Vector | None) -> Vector:
    """Each row minus the centre, normalised to unit length (rows already unit length in, unit out)."""
    if centre is None or len(vectors) == 0:
        return vectors
    out = vectors - centre
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return (out / np.where(norms > 0, norms, 1.0)).astype(np.float32)
