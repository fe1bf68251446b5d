"""What kind of op an FX node is (matmul, attention, normalisation, view …), for colouring graphs by
it: the first kind that matches, each with a fixed colour, so a kind looks the same in every graph."""

from __future__ import annotations

import re
from functools import lru_cache

# Op kinds, first match wins, each with a fixed colour: the same kind looks the same in every graph and fold state.
OP_KINDS = (
    ("input / weight", "#9fc5e8", re.compile(r"^$")),  # placeholders and get_attr, by op (see op_kind)
    ("output", "#cc4125", re.compile(r"^$")),
    ("matmul / linear", "#3d78d8",
     re.compile(r"(^|\.)(_?(add)?b?mm|linear|matmul|conv\w*|baddbmm|einsum|addmm)(\.|$)")),
    ("attention", "#8e5bb6", re.compile(r"scaled_dot_product|attention")),
    ("normalisation", "#16a085", re.compile(r"norm|var_mean|rsqrt")),
    ("reduction / softmax", "#d9822b",
     re.compile(r"(^|\.)_?(sum|mean|amax|amin|max|min|softmax|log_softmax|argmax|cumsum|any|all)(\.|$)")),
    ("view / layout", "#c9ccd1",
     re.compile(r"(^|\.)_?(view|reshape|permute|transpose|expand|unsqueeze|squeeze|slice|select|getitem|"
                r"split\w*|cat|stack|clone|contiguous|t|unsafe_view|flatten|narrow|chunk|alias|as_strided|"
                r"to|copy_?|size|dim|float|type_as)(\.|$)")),
    ("creation", "#e0c341",
     re.compile(r"(^|\.)_?(arange|zeros|ones|full|empty\w*|new_\w+|scalar_tensor|randn?|iota)(\.|$)")),
    ("elementwise", "#6aa84f", re.compile(r".")),
)


def op_kind(node) -> str:
    """What a node does, in the words of OP_KINDS (matmul, attention, normalisation, view …)."""
    if node.op in ("placeholder", "get_attr"):
        return "input / weight"
    if node.op == "output":
        return "output"
    return _target_kind(node.target)


@lru_cache(maxsize=4096)
def _target_kind(target: str) -> str:
    target = target.lower()
    return next(kind for kind, _fill, pattern in OP_KINDS[2:] if pattern.search(target))
