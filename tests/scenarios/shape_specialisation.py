"""A dynamic compile whose code makes one dim static again: `if x.shape[0] == 4` specialises x's
batch dim to 4 (torch logs set_replacement … range_refined_to_singleton), so a new batch size
recompiles although the compile was dynamic; y's dim only gains a guard."""

import torch

def f(x, y):
    if x.shape[0] == 4:      # specialises the first dim
        x = x + 1
    if y.shape[0] > 2:        # a guard on y's dim
        y = y * 2
    return x.sum() + y.sum()

if __name__ == "__main__":
    torch.set_num_threads(1)
    c = torch.compile(f, backend="eager", dynamic=True)
    c(torch.randn(4, 3), torch.randn(5))
    c(torch.randn(6, 3), torch.randn(7))
