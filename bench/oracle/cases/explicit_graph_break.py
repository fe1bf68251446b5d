import torch
def f(x):
    x = x.sin()
    torch._dynamo.graph_break()
    return x.cos()
torch.compile(f)(torch.randn(8))
