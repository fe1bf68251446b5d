import torch
def f(x):
    x = x.sin()
    if x.sum() > 0:
        x = x + 1
    return x.cos()
explanation = torch._dynamo.explain(f)(torch.randn(8))
print(explanation.graph_count, explanation.graph_break_count)
