import torch
m = torch.nn.Linear(4, 4)
opt = torch.optim.Adam(m.parameters(), lr=0.01)
m(torch.randn(2, 4)).sum().backward()
@torch.compile
def step():
    opt.step()
step()
