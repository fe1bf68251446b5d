"""Three functions behind one decorator, each compiled through its wrapper: the wrapper's frame is
one code object, so Dynamo compiles it again for each wrapped function (a guard on `fn.__code__`)
and they all share its recompile limit. Traced with the eager backend."""

import functools

import torch


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@logged
def double(x):
    return x * 2


@logged
def shift(x):
    return x + 1


@logged
def halve(x):
    return x / 2


if __name__ == "__main__":
    for function in (double, shift, halve):
        torch.compile(function, backend="eager")(torch.ones(4))
