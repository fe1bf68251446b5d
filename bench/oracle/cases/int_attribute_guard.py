import torch
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.repeat = 1
    def forward(self, x):
        for _ in range(self.repeat):
            x = x.sin()
        return x
m = M(); c = torch.compile(m)
x = torch.randn(4)
c(x); m.repeat = 2; c(x); m.repeat = 3; c(x)
