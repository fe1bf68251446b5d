"""Two silent fallbacks to eager: a backend that raises while torch._dynamo.config.suppress_errors is
on (the root cause is in the second line of torch's failure text), and a frame that hits the
recompile limit (a unit torch writes without its code object's name)."""

import torch
import torch._dynamo


def broken_backend(gm, example_inputs):
    raise RuntimeError("broken_backend cannot lower aten.sin: no kernel for it")


def wave(x):
    return x.sin() + 1


def scaled(x, factor):
    return x * factor


if __name__ == "__main__":
    torch._dynamo.config.suppress_errors = True
    torch._dynamo.config.recompile_limit = 2
    x = torch.randn(4)
    torch.compile(wave, backend=broken_backend)(x)
    compiled = torch.compile(scaled, backend="eager", dynamic=False)
    for factor in range(4):  # a new int each call: one recompile each, the third hits the limit
        compiled(x, factor)
