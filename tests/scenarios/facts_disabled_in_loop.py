"""A custom op with a fake kernel, a `torch.compiler.disable`d method called inside a loop, and a
nested compile. The disabled call inside the loop makes Dynamo skip the whole frame (GB7000 chained
to GB0099): the model's forward then runs eagerly, which torch counts as one event, not two."""

import torch


@torch.library.custom_op("facts::scale_add", mutates_args=())
def scale_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x * 2 + y


@scale_add.register_fake
def _(x, y):
    return torch.empty_like(x)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    @torch.compiler.disable
    def log_stats(self, x):
        return float(x.mean())

    def forward(self, x):
        for _ in range(2):
            x = scale_add(self.lin(x), x)
            self.log_stats(x)
        return x


def inner(x):
    return torch.relu(x) + 1


compiled_inner = torch.compile(inner)


def outer(x):
    return compiled_inner(x) * 2


if __name__ == "__main__":
    block = torch.compile(Block())
    for _ in range(3):
        block(torch.randn(4, 8))
    nested = torch.compile(outer)
    for _ in range(3):
        nested(torch.randn(4, 8))
