import torch
from torch._higher_order_ops.scan import scan
def combine(carry, x):
    nxt = carry + x
    return nxt, nxt.clone()
@torch.compile
def f(xs):
    return scan(combine, torch.zeros(3), xs)
f(torch.randn(5, 3))
