import torch
c = torch.compile(lambda x: (x @ x.T).relu(), dynamic=True)
for n in (2, 3, 6):
    c(torch.randn(n, 4))
