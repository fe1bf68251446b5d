import torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 1))
opt = torch.optim.SGD(m.parameters(), lr=0.1)
c = torch.compile(m)
for _ in range(2):
    loss = c(torch.randn(4, 8)).pow(2).mean()
    loss.backward(); opt.step(); opt.zero_grad()
