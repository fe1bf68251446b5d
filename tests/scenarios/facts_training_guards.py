"""A training step with a forward hook, activation checkpointing, a ModuleList indexed by an int that
varies between steps, and float and bool attributes changed between steps: each change fails a guard
on its own value, and some steps fail several guards at once. And a local of a resume function (`logits`, made before a
break) whose size follows an int argument."""

import torch
from torch.utils.checkpoint import checkpoint


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = torch.nn.ModuleList(torch.nn.Linear(8, 8) for _ in range(3))
        self.body = torch.nn.Linear(8, 8)
        self.scale = 1.0
        self.use_relu = True

    def forward(self, x, which):
        x = checkpoint(self.body, x, use_reentrant=False)
        x = self.heads[which](x) * self.scale
        return torch.relu(x) if self.use_relu else x


def score(x, n):
    logits = x.repeat(1, n)
    torch._dynamo.graph_break()
    return logits.softmax(-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    net = Net()
    seen = []
    net.body.register_forward_hook(lambda module, args, out: seen.append(out.shape))
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    step = torch.compile(net, backend="aot_eager")
    settings = [(0, 1.0, True), (1, 1.0, True), (1, 0.5, True), (2, 0.5, False)]
    for which, scale, use_relu in settings:
        net.scale, net.use_relu = scale, use_relu
        loss = step(torch.randn(4, 8), which).sum()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    scored = torch.compile(score, backend="eager")
    for n in (1, 2, 3):
        scored(torch.randn(4, 8), n)
