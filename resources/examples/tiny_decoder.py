"""A small decoder-only transformer fed several sequence lengths: the second length recompiles the
graph with a symbolic sequence dimension ("automatic dynamic"), later lengths reuse it. A guard against
blown-up activations before the head is data-dependent, so the graph breaks there.

Entry points for `compile-inspector capture`: `inspector_model()` and `inspector_inputs()`.
"""

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x, mask):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class TinyDecoder(nn.Module):
    def __init__(self, vocab: int = 256, width: int = 64, heads: int = 4, layers: int = 4, max_len: int = 128):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.position = nn.Embedding(max_len, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens):
        length = tokens.shape[1]
        positions = torch.arange(length, device=tokens.device)
        x = self.embed(tokens) + self.position(positions)
        mask = torch.triu(torch.full((length, length), float("-inf"), device=tokens.device), diagonal=1)
        for block in self.blocks:
            x = block(x, mask)
        if x.abs().amax() > 1e4:  # data-dependent: Dynamo breaks the graph here
            x = x.clamp(-1e4, 1e4)
        return self.head(x)


def inspector_model():
    torch.manual_seed(0)
    return TinyDecoder().eval(), (torch.randint(0, 256, (2, 16)),)


def inspector_inputs():
    for length in (24, 32, 48):
        yield (torch.randint(0, 256, (2, length)),)


if __name__ == "__main__":
    model, example = inspector_model()
    compiled = torch.compile(model)
    with torch.no_grad():
        compiled(*example)
        for inputs in inspector_inputs():
            compiled(*inputs)
