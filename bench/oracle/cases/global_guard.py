import torch
FACTOR = 2
def f(x):
    return x * FACTOR
c = torch.compile(f)
x = torch.randn(4)
c(x)
FACTOR = 3
c(x)
