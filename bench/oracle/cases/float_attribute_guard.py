import torch
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 1.0
        self.lin = torch.nn.Linear(4, 4)
    def forward(self, x):
        return self.lin(x) * self.scale
m = M(); c = torch.compile(m)
x = torch.randn(2, 4)
with torch.no_grad():
    c(x); m.scale = 0.5; c(x)
