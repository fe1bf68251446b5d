import torch
c = torch.compile(lambda x: x.sin() * 2)
c(torch.randn(4)); c(torch.randn(4, dtype=torch.float64))
