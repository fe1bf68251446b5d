import tempfile
from pathlib import Path
import torch
m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)).eval()
exported = torch.export.export(m, (torch.randn(2, 8),))
package = torch._inductor.aoti_compile_and_package(exported, package_path=str(Path(tempfile.mkdtemp()) / "m.pt2"))
print(torch._inductor.aoti_load_package(package)(torch.randn(2, 8)).shape)
