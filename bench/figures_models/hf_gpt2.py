"""A 2-layer GPT-2 built from a config with tiny dimensions (no weights are downloaded), for
bench/bench_figures.py: `inspector_model()` is the entry point `compile-inspector capture` measures."""

import torch
from transformers import GPT2Config, GPT2Model


def inspector_model():
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=128, n_positions=32, n_embd=32, n_layer=2, n_head=2, use_cache=False)
    return GPT2Model(config).eval(), (torch.randint(0, 128, (1, 16)),)
