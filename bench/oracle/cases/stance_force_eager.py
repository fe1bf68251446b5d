import torch
c = torch.compile(lambda x: x.relu() + 1)
with torch.compiler.set_stance("force_eager"):
    c(torch.randn(4))
c(torch.randn(4))
