import torch
def f(x):
    x = x * 2
    print("inside")
    return x + 1
torch.compile(f)(torch.randn(8))
