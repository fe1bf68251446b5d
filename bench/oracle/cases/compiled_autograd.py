import torch
torch._dynamo.config.compiled_autograd = True
m = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
c = torch.compile(m)
for _ in range(2):
    c(torch.randn(3, 4)).sum().backward()
