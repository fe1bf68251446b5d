import torch
@torch.compiler.disable
def helper(x):
    return x.numpy().sum()
def f(x):
    y = x.sin()
    s = helper(y)
    return y * 2 + float(s)
torch.compile(f)(torch.randn(4))
