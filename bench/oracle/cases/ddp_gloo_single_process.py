import tempfile
from pathlib import Path
import torch
import torch.distributed as dist
store = Path(tempfile.mkdtemp()) / "store"
dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
ddp = torch.nn.parallel.DistributedDataParallel(model)
compiled = torch.compile(ddp)
for _ in range(2):
    compiled(torch.randn(4, 8)).sum().backward()
dist.destroy_process_group()
