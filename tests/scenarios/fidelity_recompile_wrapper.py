"""Inputs reached through decorator wrappers that take *args, so Dynamo names them "args[0]" in its
guards: a Hugging Face model nobody here wrote (GPT-2 from a 1-layer config, no weights) called with
three sequence lengths, and a plain function behind a logging-style decorator called with three batch
sizes. Traced with the eager backend (real guards and recompiles, no Inductor)."""

import functools

import torch
from transformers import GPT2Config, GPT2Model


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@logged
def pair(batch):
    # the graph's first use of `batch` (a list argument of stack) does not show its name
    return torch.stack([batch, batch])


if __name__ == "__main__":
    torch.manual_seed(0)
    config = GPT2Config(n_layer=1, n_head=2, n_embd=32, vocab_size=64, n_positions=64)
    model = torch.compile(GPT2Model(config).eval(), backend="eager")
    with torch.no_grad():
        for length in (8, 16, 24):
            model(torch.randint(0, 64, (1, length)))
    paired = torch.compile(pair, backend="eager")
    for rows in (4, 6, 8):
        paired(torch.ones(rows, 3))
