import torch
log = []
def f(x):
    log.append(1)
    return x + len(log)
c = torch.compile(f)
c(torch.randn(3)); c(torch.randn(3))
