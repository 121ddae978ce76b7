"""The BERT encoder of all-MiniLM-L6-v2 as an ONNX graph, built from its published weights.

Inputs `input_ids` and `attention_mask` (int64, [batch, tokens]); output `embedding` ([batch, 384]): the
encoder's last hidden states mean-pooled over the attention mask and L2-normalized — sentence-transformers'
pipeline for this model. Token type ids are all 0 for single sentences, so their embedding row 0 is a
constant; LayerNormalization is opset 17's.

Each layer is built from onnxruntime's fused transformer kernels (the `com.microsoft` contrib ops its own
BERT optimizer emits; onnxruntime's graph optimizer does not recognise this hand-built graph's unfused
pattern): `Attention` (Q, K and V as one packed MatMul, the masked softmax and the head merge in one
kernel), `BiasGelu` (the exact erf GELU BERT uses, not the tanh approximation) and
`SkipLayerNormalization` (bias, residual and LayerNorm in one pass). Same arithmetic as the unfused graph
(cosine 1.00000 to the reference), ~10% less CPU per unit; MatMuls are ~85% of what is left (session 9,
bench/embedding.py). int8 MatMul weights (per output channel, activations dynamic per tensor) were
measured and not used: cosine to the reference fell to 0.981 (0.987 keeping the FFN output in float) for
~20% less CPU.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
CONTRIB = "com.microsoft"


class _Builder:
    """Collects nodes and initializers with unique names."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self._n = 0

    def const(self, name: str, value: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(value, name))
        return name

    def op(self, kind: str, inputs: list[str], domain: str = "", **attrs: object) -> str:
        self._n += 1
        out = f"{kind.lower()}_{self._n}"
        self.nodes.append(helper.make_node(kind, inputs, [out], domain=domain or None, **attrs))
        return out

    def matmul(self, x: str, weights: dict[str, np.ndarray], prefix: str) -> str:
        """x @ W^T for a torch Linear layer's weight [out, in] (its bias goes into the fused op after it)."""
        return self.op(
            "MatMul", [x, self.const(f"{prefix}.wt", np.ascontiguousarray(weights[f"{prefix}.weight"].T))]
        )

    def skip_layer_norm(
        self, x: str, skip: str, bias: str, weights: dict[str, np.ndarray], prefix: str, eps: float
    ) -> str:
        """LayerNorm(x + skip + bias) with the LayerNorm weights under `prefix`."""
        g = self.const(f"{prefix}.g", weights[f"{prefix}.weight"])
        b = self.const(f"{prefix}.beta", weights[f"{prefix}.bias"])
        return self.op("SkipLayerNormalization", [x, skip, g, b, bias], domain=CONTRIB, epsilon=eps)


def _embeddings(g: _Builder, weights: dict[str, np.ndarray], eps: float) -> str:
    i64 = np.int64
    word = g.const("word_emb", weights["embeddings.word_embeddings.weight"])
    pos = g.const("pos_emb", weights["embeddings.position_embeddings.weight"])
    typ = g.const("type_emb0", weights["embeddings.token_type_embeddings.weight"][0])
    zero, one = g.const("zero", np.array(0, i64)), g.const("one", np.array(1, i64))
    seq_len = g.op("Gather", [g.op("Shape", ["input_ids"]), one], axis=0)
    positions = g.op("Range", [zero, seq_len, one])
    x = g.op("Add", [g.op("Gather", [word, "input_ids"]), g.op("Gather", [pos, positions])])
    gamma = g.const("embeddings.LayerNorm.g", weights["embeddings.LayerNorm.weight"])
    beta = g.const("embeddings.LayerNorm.beta", weights["embeddings.LayerNorm.bias"])
    return g.op("LayerNormalization", [g.op("Add", [x, typ]), gamma, beta], axis=-1, epsilon=eps)


def _mean_pooled_unit_vectors(g: _Builder, x: str) -> None:
    mask = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)  # [B, T]
    mask3 = g.op("Unsqueeze", [mask, g.const("axis_2", np.array([2], np.int64))])  # [B, T, 1]
    axis1 = g.const("axis_1", np.array([1], np.int64))
    summed = g.op("ReduceSum", [g.op("Mul", [x, mask3]), axis1], keepdims=0)
    count = g.op(
        "Max", [g.op("ReduceSum", [mask3, axis1], keepdims=0), g.const("tiny", np.array(1e-9, np.float32))]
    )
    mean = g.op("Div", [summed, count])
    norm = g.op("ReduceL2", [mean], axes=[-1], keepdims=1)  # axes an attribute until opset 18
    norm = g.op("Max", [norm, g.const("eps12", np.array(1e-12, np.float32))])
    g.nodes.append(helper.make_node("Div", [mean, norm], ["embedding"]))


def build(weights: dict[str, np.ndarray], config: dict[str, object]) -> bytes:
    """The serialized ONNX model for a BERT config and its weights (keys as in the HF checkpoint)."""
    hidden = int(config["hidden_size"])  # type: ignore[call-overload]
    heads = int(config["num_attention_heads"])  # type: ignore[call-overload]
    layers = int(config["num_hidden_layers"])  # type: ignore[call-overload]
    eps = float(config.get("layer_norm_eps", 1e-12))  # type: ignore[arg-type]
    g = _Builder()
    x = _embeddings(g, weights, eps)
    mask = g.op("Cast", ["attention_mask"], to=TensorProto.INT32)  # [B, T] 1/0: Attention's raw mask form

    for n in range(layers):
        p = f"encoder.layer.{n}"
        qkv = [f"{p}.attention.self.{name}" for name in ("query", "key", "value")]
        packed = np.concatenate([weights[f"{name}.weight"].T for name in qkv], axis=1)  # [hidden, 3 hidden]
        packed_bias = np.concatenate([weights[f"{name}.bias"] for name in qkv])
        attended = g.op(
            "Attention",
            [
                x,
                g.const(f"{p}.qkv.wt", np.ascontiguousarray(packed)),
                g.const(f"{p}.qkv.b", packed_bias),
                mask,
            ],
            domain=CONTRIB,
            num_heads=heads,
        )
        out = f"{p}.attention.output"
        projected = g.matmul(attended, weights, f"{out}.dense")
        bias = g.const(f"{out}.dense.b", weights[f"{out}.dense.bias"])
        x = g.skip_layer_norm(projected, x, bias, weights, f"{out}.LayerNorm", eps)
        inner = g.matmul(x, weights, f"{p}.intermediate.dense")
        gelu = g.op(
            "BiasGelu",
            [inner, g.const(f"{p}.intermediate.dense.b", weights[f"{p}.intermediate.dense.bias"])],
            domain=CONTRIB,
        )
        projected = g.matmul(gelu, weights, f"{p}.output.dense")
        bias = g.const(f"{p}.output.dense.b", weights[f"{p}.output.dense.bias"])
        x = g.skip_layer_norm(projected, x, bias, weights, f"{p}.output.LayerNorm", eps)

    _mean_pooled_unit_vectors(g, x)
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
    opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid(CONTRIB, 1)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="mrpvm")
    model.ir_version = 8
    return model.SerializeToString()
