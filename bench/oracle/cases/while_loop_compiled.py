import torch
from torch._higher_order_ops.while_loop import while_loop
def cond_fn(i, x): return i < 3
def body_fn(i, x): return i + 1, x * 2
@torch.compile
def f(x):
    return while_loop(cond_fn, body_fn, (torch.tensor(0), x))
f(torch.randn(4))
