"""The BERT encoder of all-MiniLM-L6-v2 as an ONNX graph, built from its published weights.

Inputs `input_ids` and `attention_mask` (int64, [batch, tokens]); output `embedding` ([batch, 384]): the
encoder's last hidden states mean-pooled over the attention mask and L2-normalized — sentence-transformers'
pipeline for this model. Token type ids are all 0 for single sentences, so their embedding row 0 is a
constant. GELU is the exact (erf) form BERT uses; LayerNormalization is opset 17's.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


class _Builder:
    """Collects nodes and initializers with unique names."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self._n = 0

    def const(self, name: str, value: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(value, name))
        return name

    def op(self, kind: str, inputs: list[str], **attrs: object) -> str:
        self._n += 1
        out = f"{kind.lower()}_{self._n}"
        self.nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def linear(self, x: str, weights: dict[str, np.ndarray], prefix: str) -> str:
        """x @ W^T + b for a torch Linear layer's weight [out, in] and bias [out]."""
        w = self.const(f"{prefix}.wt", np.ascontiguousarray(weights[f"{prefix}.weight"].T))
        b = self.const(f"{prefix}.b", weights[f"{prefix}.bias"])
        return self.op("Add", [self.op("MatMul", [x, w]), b])

    def layer_norm(self, x: str, weights: dict[str, np.ndarray], prefix: str, eps: float) -> str:
        g = self.const(f"{prefix}.g", weights[f"{prefix}.weight"])
        b = self.const(f"{prefix}.beta", weights[f"{prefix}.bias"])
        return self.op("LayerNormalization", [x, g, b], axis=-1, epsilon=eps)


def build(weights: dict[str, np.ndarray], config: dict[str, object]) -> bytes:
    """The serialized ONNX model for a BERT config and its weights (keys as in the HF checkpoint)."""
    hidden = int(config["hidden_size"])  # type: ignore[call-overload]
    heads = int(config["num_attention_heads"])  # type: ignore[call-overload]
    layers = int(config["num_hidden_layers"])  # type: ignore[call-overload]
    eps = float(config.get("layer_norm_eps", 1e-12))  # type: ignore[arg-type]
    head_size = hidden // heads
    g = _Builder()
    i64 = np.int64

    word = g.const("word_emb", weights["embeddings.word_embeddings.weight"])
    pos = g.const("pos_emb", weights["embeddings.position_embeddings.weight"])
    typ = g.const("type_emb0", weights["embeddings.token_type_embeddings.weight"][0])
    zero, one = g.const("zero", np.array(0, i64)), g.const("one", np.array(1, i64))
    seq_len = g.op("Gather", [g.op("Shape", ["input_ids"]), one], axis=0)
    positions = g.op("Range", [zero, seq_len, one])
    x = g.op("Add", [g.op("Gather", [word, "input_ids"]), g.op("Gather", [pos, positions])])
    x = g.layer_norm(g.op("Add", [x, typ]), weights, "embeddings.LayerNorm", eps)

    mask = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)  # [B, T]
    big = g.const("neg_big", np.array(-1e9, np.float32))
    fone = g.const("fone", np.array(1.0, np.float32))
    additive = g.op("Mul", [g.op("Sub", [fone, mask]), big])
    additive = g.op("Unsqueeze", [additive, g.const("axes_1_2", np.array([1, 2], i64))])  # [B,1,1,T]
    split_heads = g.const("split_heads", np.array([0, 0, heads, head_size], i64))
    merge_heads = g.const("merge_heads", np.array([0, 0, hidden], i64))
    scale = g.const("scale", np.array(1.0 / math.sqrt(head_size), np.float32))
    half = g.const("half", np.array(0.5, np.float32))
    inv_sqrt2 = g.const("inv_sqrt2", np.array(1.0 / math.sqrt(2.0), np.float32))

    for n in range(layers):
        p = f"encoder.layer.{n}"

        def heads_of(name: str, perm: list[int], src: str = x, p: str = p) -> str:
            projected = g.linear(src, weights, f"{p}.attention.self.{name}")
            return g.op("Transpose", [g.op("Reshape", [projected, split_heads])], perm=perm)

        q = heads_of("query", [0, 2, 1, 3])
        k = heads_of("key", [0, 2, 3, 1])
        v = heads_of("value", [0, 2, 1, 3])
        scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), additive])
        context = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
        context = g.op("Reshape", [g.op("Transpose", [context], perm=[0, 2, 1, 3]), merge_heads])
        attended = g.linear(context, weights, f"{p}.attention.output.dense")
        x = g.layer_norm(g.op("Add", [attended, x]), weights, f"{p}.attention.output.LayerNorm", eps)
        inner = g.linear(x, weights, f"{p}.intermediate.dense")
        erf = g.op("Erf", [g.op("Mul", [inner, inv_sqrt2])])
        gelu = g.op("Mul", [g.op("Mul", [inner, half]), g.op("Add", [erf, fone])])
        out = g.linear(gelu, weights, f"{p}.output.dense")
        x = g.layer_norm(g.op("Add", [out, x]), weights, f"{p}.output.LayerNorm", eps)

    mask3 = g.op("Unsqueeze", [mask, g.const("axis_2", np.array([2], i64))])  # [B, T, 1]
    axis1 = g.const("axis_1", np.array([1], i64))
    summed = g.op("ReduceSum", [g.op("Mul", [x, mask3]), axis1], keepdims=0)
    count = g.op(
        "Max", [g.op("ReduceSum", [mask3, axis1], keepdims=0), g.const("tiny", np.array(1e-9, np.float32))]
    )
    mean = g.op("Div", [summed, count])
    norm = g.op("ReduceL2", [mean], axes=[-1], keepdims=1)  # axes an attribute until opset 18
    norm = g.op("Max", [norm, g.const("eps12", np.array(1e-12, np.float32))])
    g.nodes.append(helper.make_node("Div", [mean, norm], ["embedding"]))

    graph = helper.make_graph(
        g.nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", hidden])],
        g.inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="mrpvm")
    model.ir_version = 8
    return model.SerializeToString()
