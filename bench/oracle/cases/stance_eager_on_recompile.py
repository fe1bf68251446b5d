import torch
c = torch.compile(lambda x: x * 3, dynamic=False)
c(torch.randn(4))
with torch.compiler.set_stance("eager_on_recompile"):
    c(torch.randn(5))
