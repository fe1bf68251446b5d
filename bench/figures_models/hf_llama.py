"""A 2-layer Llama-style decoder (RMSNorm, rotary positions, grouped-query attention, SwiGLU) built
from a config with tiny dimensions (no weights are downloaded), for bench/bench_figures.py:
`inspector_model()` is the entry point `compile-inspector capture` measures."""

import torch
from transformers import LlamaConfig, LlamaModel


def inspector_model():
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32, use_cache=False)
    return LlamaModel(config).eval(), (torch.randint(0, 128, (1, 16)),)
