"""A data-dependent size: `torch.nonzero` breaks the graph, and the code after it sees a different
number of rows on each call, so the resume function recompiles on Dynamo's stack slot `___stack0`."""

import torch


def pick_positive(x):
    rows = torch.nonzero(x > 0)
    return rows.float().sum(0) * 2


if __name__ == "__main__":
    compiled = torch.compile(pick_positive, backend="eager")
    for positives in (3, 5, 7):
        x = -torch.ones(16)
        x[:positives] = 1
        compiled(x)
