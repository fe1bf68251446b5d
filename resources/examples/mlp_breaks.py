"""An MLP whose forward breaks the graph twice — a data-dependent `if` on a tensor and an explicit
`torch._dynamo.graph_break()` — and is called with two batch sizes, so every piece recompiles.

Entry points for `compile-inspector capture`: `inspector_model()` returns the model and its example
inputs, `inspector_inputs()` yields further input sets. Run directly, it compiles and calls the model.
"""

import torch


class BranchyMLP(torch.nn.Module):
    def __init__(self, width: int = 64):
        super().__init__()
        self.up = torch.nn.Linear(width, 2 * width)
        self.down = torch.nn.Linear(2 * width, width)

    def forward(self, x):
        h = torch.relu(self.up(x))
        if h.sum() > 0:  # data-dependent branch: Dynamo must break the graph here
            h = h - 1
        torch._dynamo.graph_break()  # an explicit break
        return torch.sigmoid(self.down(h))


def inspector_model():
    torch.manual_seed(0)
    return BranchyMLP().eval(), (torch.randn(8, 64),)


def inspector_inputs():
    yield (torch.randn(16, 64),)


if __name__ == "__main__":
    torch.set_num_threads(1)
    model, example = inspector_model()
    compiled = torch.compile(model)
    with torch.no_grad():
        compiled(*example)
        for inputs in inspector_inputs():
            compiled(*inputs)
