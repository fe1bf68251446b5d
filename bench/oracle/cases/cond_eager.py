import torch
def t(x): return x.sin()
def f_(x): return x.cos()
x = torch.arange(4.0)
print(torch.cond(x.sum() > 0, t, f_, (x,)))
