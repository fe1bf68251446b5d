import torch
def f(x):
    x = x + 1
    torch._dynamo.graph_break()
    return x
try:
    torch.compile(f, fullgraph=True)(torch.randn(3))
except Exception as error:
    print("raised", type(error).__name__)
