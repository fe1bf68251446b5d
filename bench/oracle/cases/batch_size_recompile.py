import torch
m = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
c = torch.compile(m)
with torch.no_grad():
    for b in (2, 3, 4, 5):
        c(torch.randn(b, 8))
