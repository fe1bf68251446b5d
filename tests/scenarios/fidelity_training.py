"""A training step under torch.compile: forward and backward compile as separate graphs of one
compile unit (the backward one lazily, on the first backward call), and an explicit break splits
the step into two units, each with its own backward."""

import torch
from torch import nn


class TwoPart(nn.Module):
    def __init__(self, width: int = 32):
        super().__init__()
        self.first = nn.Linear(width, width)
        self.second = nn.Linear(width, 1)

    def forward(self, x):
        h = torch.relu(self.first(x))
        torch._dynamo.graph_break()
        return self.second(h).pow(2).mean()


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TwoPart()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    step = torch.compile(model)
    for _ in range(2):
        optimizer.zero_grad()
        loss = step(torch.randn(16, 32))
        loss.backward()
        optimizer.step()
