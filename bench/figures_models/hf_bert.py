"""A 2-layer BERT encoder built from a config with tiny dimensions (no weights are downloaded), for
bench/bench_figures.py: `inspector_model()` is the entry point `compile-inspector capture` measures."""

import torch
from transformers import BertConfig, BertModel


def inspector_model():
    torch.manual_seed(0)
    config = BertConfig(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=32)
    return BertModel(config).eval(), (torch.randint(0, 128, (1, 16)),)
