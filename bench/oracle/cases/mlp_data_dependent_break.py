import torch
torch.manual_seed(0)
def f(x):
    y = x.relu()
    if y.sum() > 0:
        y = y * 2
    return y + 1
c = torch.compile(f)
c(torch.randn(4, 8)); c(torch.randn(4, 8))
