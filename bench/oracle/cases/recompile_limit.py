import torch
torch._dynamo.config.recompile_limit = 2
def f(x, k):
    return x * k
c = torch.compile(f)
for k in range(4):
    c(torch.randn(3), k)
