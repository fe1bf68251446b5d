import torch
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(3)])
        self.scale = 1.0
    def forward(self, x, which):
        return self.layers[which](x) * self.scale
m = M(); c = torch.compile(m)
x = torch.randn(2, 4)
with torch.no_grad():
    c(x, 0); m.scale = 0.5; c(x, 1); c(x, 2)
