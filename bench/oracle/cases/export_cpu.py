import torch
m = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
ep = torch.export.export(m, (torch.randn(2, 4),))
print(len(ep.graph.nodes))
