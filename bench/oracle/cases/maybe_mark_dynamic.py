import torch
def f(x):
    return (x * 2).sum(0)
c = torch.compile(f)
for b in (3, 5):
    x = torch.randn(b, 4)
    torch._dynamo.maybe_mark_dynamic(x, 0)
    c(x)
