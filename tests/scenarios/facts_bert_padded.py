"""A tiny BERT (a transformers config, random weights) run on padded batches of three sequence lengths,
its attention mask marking the padding: the sequence dim changes between calls."""

import torch
from transformers import BertConfig, BertModel

if __name__ == "__main__":
    torch.manual_seed(0)
    config = BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64)
    model = torch.compile(BertModel(config).eval())
    with torch.no_grad():
        for length in (8, 12, 16):
            ids = torch.randint(1, 64, (2, length))
            mask = torch.ones(2, length, dtype=torch.long)
            mask[1, length // 2:] = 0  # the second sequence is padded
            ids[1, length // 2:] = 0
            model(input_ids=ids, attention_mask=mask)
