import torch
m = torch.nn.Linear(4, 4)
seen = []
m.register_forward_hook(lambda mod, inp, out: seen.append(out.shape))
c = torch.compile(m)
c(torch.randn(2, 4)).sum().backward()
