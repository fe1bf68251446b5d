"""`dynamic=True` under stances, and a custom op without a fake kernel: Dynamo cannot trace the op
(no fake impl registered for `facts::gate`), raises a TorchRuntimeError to the caller, which the script
catches; the rest of the run is compiled under `force_eager` and `eager_on_recompile` stances."""

import sys

import torch


@torch.library.custom_op("facts::gate", mutates_args=())
def gate(x: torch.Tensor) -> torch.Tensor:
    return x.clamp(min=0)


def gated(x):
    y = x * 2
    return gate(y) + 1


def plain(x):
    return torch.sin(x) + x


if __name__ == "__main__":
    compiled = torch.compile(gated, dynamic=True)
    try:
        compiled(torch.randn(4, 8))
    except Exception as error:  # torch raises this one to the caller
        print("raised:", type(error).__name__, file=sys.stderr)
    other = torch.compile(plain, dynamic=True)
    other(torch.randn(4, 8))
    with torch.compiler.set_stance("force_eager"):
        other(torch.randn(5, 8))
    with torch.compiler.set_stance("eager_on_recompile"):
        other(torch.randn(6, 8, 2))
