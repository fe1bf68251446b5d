import torch
from torch.utils.checkpoint import checkpoint
lin = torch.nn.Linear(8, 8)
def block(x): return lin(x).relu()
@torch.compile
def f(x): return checkpoint(block, x, use_reentrant=False).sum()
x = torch.randn(2, 8, requires_grad=True)
f(x).backward()
