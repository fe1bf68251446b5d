"""Python values that change between calls. The depth of the call stack, `len(inspect.stack())`, read
inside a compiled method reached from three call sites of different depth: it breaks the graph (Dynamo
cannot trace the frame walk), and the resumed code guards on the length of the list it got back. And a
Python int argument, which automatic dynamic makes symbolic after its first change."""

import inspect
import sys

import torch


class Scaler(torch.nn.Module):
    def forward(self, x):
        depth = len(inspect.stack())
        return x * depth


def repeat(x, times):
    return x * times


def call_at_depth(model, x, extra):
    if extra:
        return call_at_depth(model, x, extra - 1)
    return model(x)


if __name__ == "__main__":
    model = torch.compile(Scaler(), backend="eager")
    depths = [int(call_at_depth(model, torch.ones(1), extra)) for extra in (0, 1, 2)]
    print("depths seen by the compiled code:", *depths, file=sys.stderr)  # what each compile specialised on
    repeated = torch.compile(repeat, backend="eager")
    for times in (2, 3, 4):
        repeated(torch.ones(1), times)
