"""An explicit break, a torch.cond (its graph cannot be cached: a cache bypass) and a data-dependent
branch, called at two batch sizes: restarts, resume functions with their bytecode, bypass reasons."""
import torch


def branchy(x):
    y = torch.relu(x) + 1
    torch._dynamo.graph_break()
    z = torch.cond(y.sum() > 0, lambda t: t * 2, lambda t: t - 1, (y,))
    if z.sum() > 0:
        return z * 3
    return z


f = torch.compile(branchy)
f(torch.randn(4, 8))
f(torch.randn(6, 8))
