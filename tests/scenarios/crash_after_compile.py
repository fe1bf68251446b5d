"""Compiles and runs one graph, then raises: the capture must keep what was compiled before."""

import torch

compiled = torch.compile(lambda x: torch.relu(x) * 2)
with torch.no_grad():
    compiled(torch.randn(8))
raise RuntimeError("the model script failed after its first compile")
