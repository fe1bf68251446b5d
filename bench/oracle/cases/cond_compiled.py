import torch
def t(x): return x.sin()
def f_(x): return x.cos()
class M(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, t, f_, (x,)) * 2
c = torch.compile(M())
c(torch.randn(5)); c(-torch.ones(5))
