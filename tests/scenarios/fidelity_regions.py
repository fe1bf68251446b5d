"""A model whose eager work runs inside the compiled region of its caller: a function excluded with
torch.compiler.disable does real tensor work between two compiled graphs, so the resumed frame's
region nests inside the first frame's region. The truthful Amdahl ceiling is small (most of a call
is eager), while the union of the regions covers nearly the whole call."""

import torch
from torch import nn


@torch.compiler.disable
def eager_mix(h, weights):
    for weight in weights:  # eager matmuls Dynamo never sees
        h = torch.tanh(h @ weight)
    return h


class HalfEager(nn.Module):
    def __init__(self, width: int = 96):
        super().__init__()
        self.inp = nn.Linear(width, width)
        self.out = nn.Linear(width, width)
        self.weights = [torch.randn(width, width) / width ** 0.5 for _ in range(24)]

    def forward(self, x):
        h = torch.relu(self.inp(x))
        h = eager_mix(h, self.weights)
        return self.out(h).sum(dim=-1)


def inspector_model():
    torch.manual_seed(0)
    return HalfEager().eval(), (torch.randn(32, 96),)


if __name__ == "__main__":
    model, example = inspector_model()
    with torch.no_grad():
        compiled = torch.compile(model)
        for _ in range(3):
            compiled(*example)
