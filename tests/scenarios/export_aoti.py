"""The deployment path: torch.export with a dynamic batch dim, then AOTInductor compiles the exported
program to a C++ package. Everything it logs carries no Dynamo compile id ([-/-] in tlparse). Writes
torch's own account beside it (aoti_facts.json): the exported graph's ops and the kernels the package's
C++ defines, for the reader tests to compare with."""

import json
import re
import zipfile

import torch
from torch import nn


class TwoLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(16, 32)
        self.b = nn.Linear(32, 8)

    def forward(self, x):
        return torch.relu(self.b(torch.relu(self.a(x)))).sum(dim=-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TwoLayer().eval()
    batch = torch.export.Dim("batch", min=2, max=64)
    exported = torch.export.export(model, (torch.randn(4, 16),), dynamic_shapes={"x": {0: batch}})
    package = torch._inductor.aoti_compile_and_package(exported, package_path="model.pt2")
    with zipfile.ZipFile(package) as archive:
        sources = [archive.read(name).decode() for name in archive.namelist() if name.endswith(".cpp")]
    defined = sorted({match for text in sources
                      for match in re.findall(r'^extern "C"\s+void\s+(\w+)\([^;]*?\)\s*\{', text, re.M | re.S)})
    ops = [node for node in exported.graph.nodes if node.op == "call_function"]
    with open("aoti_facts.json", "w") as handle:
        json.dump({"exported_ops": len(ops), "kernels": defined}, handle)
