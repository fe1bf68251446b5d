import torch
inner = torch.compile(lambda x: x.cos() + 1)
def outer(x):
    return inner(x.sin()) * 2
torch.compile(outer)(torch.randn(4))
inner(torch.randn(4))
