"""A batch size that changes: the second compile makes dim 0 symbolic (automatic dynamic) and the
third size reuses that graph, so torch records one recompile and a `create_symbol` for that dim."""

import torch


def normalise(x):
    return (x - x.mean(0)) / (x.std(0) + 1e-5)


if __name__ == "__main__":
    compiled = torch.compile(normalise, backend="eager")
    for batch in (8, 16, 32):
        compiled(torch.randn(batch, 4))
