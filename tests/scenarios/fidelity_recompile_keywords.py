"""Names Dynamo builds from containers: a tensor passed by keyword through a wrapper's **kwargs, and a
module's buffer that grows between calls (a cache, say). With APPLY_FIX=1 it first does what the
inspector advises for each, so a test can ask torch whether the advice removes the recompiles.
Traced with the eager backend."""

import functools
import os

import torch

APPLY_FIX = os.environ.get("APPLY_FIX") == "1"


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@logged
def shift(batch):
    return torch.stack([batch, batch])


class Cache(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.store = torch.nn.Module()
        self.store.register_buffer("keys", torch.zeros(2, 4))

    def forward(self, x):
        return self.store.keys.sum(0) + x


if __name__ == "__main__":
    if APPLY_FIX:
        torch._dynamo.config.force_parameter_static_shapes = False
        torch._dynamo.config.force_nn_module_property_static_shapes = False
    shifted = torch.compile(shift, backend="eager")
    for rows in (4, 6, 8):
        batch = torch.ones(rows, 3)
        if APPLY_FIX:
            torch._dynamo.mark_dynamic(batch, 0)
        shifted(batch=batch)
    cache = Cache()
    compiled = torch.compile(cache, backend="eager")
    for length in (2, 3, 4):
        cache.store.keys = torch.zeros(length, 4)
        if APPLY_FIX:
            torch._dynamo.mark_dynamic(cache.store.keys, 0)
        compiled(torch.ones(4))
