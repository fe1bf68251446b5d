import torch
from torch.nn.attention.flex_attention import flex_attention
def causal(score, b, h, q, kv):
    return torch.where(q >= kv, score, -float("inf"))
q = k = v = torch.randn(1, 2, 16, 8)
print(torch.compile(flex_attention)(q, k, v, score_mod=causal).shape)
