import torch
m = torch.nn.Linear(8, 4)
c = torch.compile(m)
with torch.no_grad():
    for b in (3, 5, 7):
        x = torch.randn(b, 8)
        torch._dynamo.mark_dynamic(x, 0)
        c(x)
