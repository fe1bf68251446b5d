"""torch.cond and torch.while_loop, compiled inside a model and called eagerly (eager calls compile
their branches themselves): Inductor generates kernels for the true/false graphs and the loop body
(the true branch's Linear an extern addmm),
and the eager calls' compiles are of code the user never passed to torch.compile."""

import torch


def true_fn(x):
    return torch.sin(x) * 2


def false_fn(x):
    return torch.cos(x) + 1


def cond_fn(i, x):
    return i < 3


def body_fn(i, x):
    return i + 1, torch.tanh(x) * 1.5


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = torch.cond(x.sum() > 0, lambda t: self.lin(t).sin(), false_fn, (x,))
        _, z = torch.while_loop(cond_fn, body_fn, (torch.tensor(0), y))
        return z.relu()


if __name__ == "__main__":
    model = torch.compile(Model())
    with torch.no_grad():  # inference: the true branch's Linear lowers to one extern addmm
        for size in (4, 4):
            model(torch.randn(size, 8))
    torch.cond(torch.tensor(True), true_fn, false_fn, (torch.randn(4, 8),))
    torch.while_loop(cond_fn, body_fn, (torch.tensor(0), torch.randn(4, 8)))
    torch.cond(torch.tensor(True), true_fn, false_fn, (torch.randn(6, 8),))
