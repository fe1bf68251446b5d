"""Op families shared by torch.compile and XLA, so the two compilers' fusion can be compared op kind by
op kind: an ATen op (``torch.ops.aten.addmm.default``) and an HLO opcode (``dot``) both map to
"matmul", ``aten.amax`` and ``reduce`` to "reduction", and so on."""

from __future__ import annotations

FAMILIES = ("matmul", "elementwise", "reduction", "data movement", "indexing", "collective", "other")

_HLO = {
    "matmul": {"dot", "convolution", "ragged-dot", "scaled-dot"},
    "reduction": {"reduce", "reduce-window", "reduce-precision", "select-and-scatter"},
    "data movement": {"broadcast", "reshape", "transpose", "copy", "slice", "concatenate", "pad", "reverse",
                      "dynamic-reshape", "copy-start", "copy-done"},
    "indexing": {"gather", "scatter", "dynamic-slice", "dynamic-update-slice"},
    "collective": {"all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
                   "all-reduce-start", "all-reduce-done", "all-gather-start", "all-gather-done",
                   "collective-permute-start", "collective-permute-done", "send", "recv", "send-done", "recv-done"},
    "elementwise": {"add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "power", "atan2",
                    "negate", "abs", "sign", "exponential", "exponential-minus-one", "log", "log-plus-one",
                    "logistic", "tanh", "sqrt", "rsqrt", "cbrt", "sine", "cosine", "tan", "erf", "floor", "ceil",
                    "round-nearest-afz", "round-nearest-even", "is-finite", "compare", "select", "clamp",
                    "convert", "bitcast-convert", "and", "or", "xor", "not", "shift-left",
                    "shift-right-arithmetic", "shift-right-logical", "popcnt", "count-leading-zeros", "real",
                    "imag", "complex", "map", "stochastic-convert"},
}
_ATEN = {
    "matmul": {"mm", "bmm", "addmm", "baddbmm", "addbmm", "matmul", "linear", "convolution", "_convolution",
               "conv1d", "conv2d", "conv3d", "einsum", "_scaled_dot_product_flash_attention",
               "_scaled_dot_product_efficient_attention", "_scaled_dot_product_flash_attention_for_cpu",
               "scaled_dot_product_attention", "_int_mm", "_weight_int8pack_mm", "addmv", "mv", "dot"},
    "reduction": {"sum", "mean", "amax", "amin", "max", "min", "prod", "var", "var_mean", "std", "std_mean",
                  "argmax", "argmin", "logsumexp", "norm", "linalg_vector_norm", "_softmax", "softmax",
                  "_log_softmax", "log_softmax", "native_layer_norm", "layer_norm", "native_batch_norm",
                  "_native_batch_norm_legit_no_training", "_native_batch_norm_legit_functional", "any", "all",
                  "avg_pool2d", "max_pool2d_with_indices", "_adaptive_avg_pool2d", "adaptive_avg_pool2d"},
    "data movement": {"view", "reshape", "_unsafe_view", "permute", "transpose", "t", "expand", "clone",
                      "contiguous", "squeeze", "unsqueeze", "slice", "cat", "stack", "split", "split_with_sizes",
                      "as_strided", "constant_pad_nd", "copy", "copy_", "flip", "repeat", "alias", "unbind",
                      "narrow", "chunk", "flatten", "unflatten", "view_as", "expand_as", "select", "squeeze_",
                      "broadcast_to", "roll", "tile", "pad"},
    "indexing": {"index", "index_put", "index_put_", "gather", "scatter", "scatter_add", "scatter_reduce",
                 "embedding", "index_select", "masked_scatter", "_unsafe_index", "index_add", "take"},
    "collective": {"all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor", "all_to_all_single",
                   "wait_tensor", "broadcast_"},
}
_ATEN_BY_NAME = {name: family for family, names in _ATEN.items() for name in names}
_HLO_BY_NAME = {name: family for family, names in _HLO.items() for name in names}
_ELEMENTWISE_HINTS = ("add", "sub", "mul", "div", "relu", "sigmoid", "tanh", "exp", "log", "gelu", "silu", "erf",
                      "pow", "sqrt", "rsqrt", "neg", "where", "gt", "lt", "ge", "le", "eq", "ne", "maximum",
                      "minimum", "clamp", "abs", "sin", "cos", "to_copy", "reciprocal", "sign", "floor", "ceil",
                      "round", "logical", "bitwise", "hardtanh", "leaky_relu", "elu", "softplus", "mish",
                      "fill", "lerp", "addcmul", "addcdiv", "fmod", "remainder", "trunc", "isnan", "isinf",
                      "masked_fill", "threshold", "square", "frac", "hardswish", "hardsigmoid", "sgn", "type_as",
                      "float", "half", "to", "full_like", "zeros_like", "ones_like")


def hlo_family(opcode: str, custom_call_target: str | None = None) -> str:
    if opcode == "custom-call" and custom_call_target:
        target = custom_call_target.lower()
        if any(word in target for word in ("gemm", "matmul", "conv", "dot", "mm")):
            return "matmul"
    return _HLO_BY_NAME.get(opcode, "other")


def torch_family(target: str) -> str:
    """Family of an FX node target or a kernel's op: `torch.ops.aten.addmm.default`, `aten.mm`,
    `extern_kernels.addmm`, `torch.relu`, `torch._C._nn.linear`, `operator.add`."""
    name = op_name(target)
    if name in _ATEN_BY_NAME:
        return _ATEN_BY_NAME[name]
    base = name.lstrip("_").rstrip("_")
    if base in _ATEN_BY_NAME:
        return _ATEN_BY_NAME[base]
    if base in _ELEMENTWISE_HINTS or any(base == hint or base.startswith(hint + "_") for hint in _ELEMENTWISE_HINTS):
        return "elementwise"
    if target.startswith("operator.") and base in ("add", "sub", "mul", "truediv", "floordiv", "pow", "neg"):
        return "elementwise"
    return "other"


def op_name(target: str) -> str:
    """The op inside a qualified target: `torch.ops.aten.addmm.default` → `addmm`."""
    parts = target.split(".")
    if "aten" in parts and parts.index("aten") + 1 < len(parts):
        return parts[parts.index("aten") + 1]
    if parts[0] == "extern_kernels" and len(parts) > 1:
        return parts[1]
    return parts[-1]
