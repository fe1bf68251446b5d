"""A model whose Python breaks the graph: a print() in forward, and a loop whose trip count comes
from a tensor value (.item()) — the everyday ways code falls out of the compiled graph."""

import torch
from torch import nn


class ChattyModel(nn.Module):
    def __init__(self, width: int = 32):
        super().__init__()
        self.inp = nn.Linear(width, width)
        self.step = nn.Linear(width, width)

    def forward(self, x):
        h = torch.tanh(self.inp(x))
        print("hidden norm computed")  # print is a side effect Dynamo cannot put in a graph
        steps = int(h.abs().mean().item() * 4) + 1  # a Python int from a tensor value
        for _ in range(steps):
            h = torch.tanh(self.step(h)) + h
        return h.sum(dim=-1)


def inspector_model():
    torch.manual_seed(0)
    return ChattyModel().eval(), (torch.randn(8, 32),)


if __name__ == "__main__":
    model, example = inspector_model()
    with torch.no_grad():
        torch.compile(model)(*example)
