"""Recompiles of two causes, traced with Dynamo's eager backend (real guards and recompiles, no
Inductor compile time): a length that goes 8 → 1 → 9 (size 1 is always specialised, so the dim
recompiles twice) and a dtype that keeps changing until the recompile limit (3) is hit and the
frame silently runs eagerly."""

import torch


def decode_step(ids):
    return ids.float().cumsum(-1)


def scale(x):
    return x * 2


if __name__ == "__main__":
    torch.set_num_threads(1)
    torch._dynamo.config.recompile_limit = 3
    step = torch.compile(decode_step, backend="eager")
    for length in (8, 1, 9, 10):
        step(torch.ones(2, length, dtype=torch.long))
    scaled = torch.compile(scale, backend="eager")
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.float32):
        scaled(torch.ones(4, dtype=dtype))
