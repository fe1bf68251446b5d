"""Breaks whose traced line is in the standard library: `copy.deepcopy` of a tensor breaks in
copy.py and `inspect.stack()` in inspect.py, and the user's own line is the call into them.
`inspect.stack()` also makes Dynamo skip two generator frames of inspect.py: frame skips that torch
counts in counters["unimplemented"] beside the breaks, though they cut no graph."""

import copy
import inspect

import torch
from torch import nn


class Snapshotting(nn.Module):
    def forward(self, x):
        kept = copy.deepcopy(x)
        called = min(len(inspect.stack()), 1)  # 1, eager or compiled: the outputs stay comparable
        return kept * 2 + called


def inspector_model():
    return Snapshotting(), (torch.randn(4),)


if __name__ == "__main__":
    model, example = inspector_model()
    torch.compile(model, backend="eager")(*example)
