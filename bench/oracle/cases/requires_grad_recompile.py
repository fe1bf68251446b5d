import torch
c = torch.compile(lambda x: x.exp())
c(torch.randn(4)); c(torch.randn(4, requires_grad=True))
