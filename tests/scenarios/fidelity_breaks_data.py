"""Data-dependent breaks of two registry types side by side: a boolean mask (`aten.nonzero`, GB0036
"Dynamic shape operator") and `.tolist()` of an integer tensor (GB0033 "Data dependent operator")."""

import torch


def positives(x):
    kept = x[x > 0]
    return kept.sum()


def signs(x):
    values = (x > 0).int().tolist()
    return torch.tensor(values).sum()


if __name__ == "__main__":
    x = torch.randn(8)
    torch.compile(positives, backend="eager")(x)
    torch.compile(signs, backend="eager")(x)
