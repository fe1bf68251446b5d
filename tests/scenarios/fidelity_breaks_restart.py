"""An analysis restart that is no graph break: once the attention scale (a Python float) changes,
Dynamo recompiles with the float as an input, AOTAutograd cannot turn it into a tensor (sdpa takes a
Python float) and Dynamo restarts analysis with it specialised (TensorifyScalarRestartAnalysis).
Needs an AOTAutograd backend: the tensorify pass runs there."""

import torch
import torch.nn.functional as F


def attend(q, scale):
    return F.scaled_dot_product_attention(q, q, q, scale=scale)


if __name__ == "__main__":
    compiled = torch.compile(attend, backend="aot_eager")
    q = torch.randn(1, 2, 4, 8)
    for scale in (0.5, 0.25, 0.125):
        compiled(q, scale)
