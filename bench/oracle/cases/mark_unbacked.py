import torch
def f(x):
    return x.cos() + 1
c = torch.compile(f)
for b in (1, 4, 9):
    x = torch.randn(b, 3)
    torch._dynamo.decorators.mark_unbacked(x, 0)
    c(x)
