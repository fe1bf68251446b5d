import torch
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.use_relu = True
    def forward(self, x):
        return x.relu() if self.use_relu else x.tanh()
m = M(); c = torch.compile(m)
x = torch.randn(6)
c(x); m.use_relu = False; c(x)
