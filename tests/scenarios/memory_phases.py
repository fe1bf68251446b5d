"""An entry point whose eager run needs far more memory than its compiled run: eager makes two
temporaries as big as the input (x * 2, then + 1) before it sums; Inductor fuses the three ops into
one reduction that makes none. Each tensor is 64 MB, past glibc's largest mmap threshold, so a
temporary's memory is given back to the system when it is freed and the RSS follows the allocations."""

import torch

ELEMENTS = 16 * 2**20  # 64 MB of float32


class Temporaries(torch.nn.Module):
    def forward(self, x):
        return (x * 2 + 1).sum()


def inspector_model():
    return Temporaries(), (torch.ones(ELEMENTS),)
