"""Three CPU ranks (gloo, on this machine) run a compiled model with an all-reduce after each step,
under torch.profiler, each writing its own Chrome trace (profile_rank<N>.pt.trace.json in the working
folder). Rank 2 is the straggler: before each step it computes for ~30 ms outside the compiled model,
so ranks 0 and 1 wait for it in the all-reduce; and its last step gets a longer input, so it alone
recompiles and runs compile unit 0/1.

    python profiled_ranks.py
"""

import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from local_ranks import free_port

WORLD = 3
STEPS = 4
SLOW_RANK = 2


class Model(torch.nn.Module):
    def __init__(self, width=64):
        super().__init__()
        self.fc = torch.nn.Linear(width, width)
        self.head = torch.nn.Linear(width, 8)

    def forward(self, x):
        return self.head(torch.relu(self.fc(x)) + x).softmax(dim=-1)


def run(rank: int, port: int) -> None:
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    torch._inductor.config.fx_graph_cache = False  # every rank compiles on its own
    model = torch.compile(Model().eval())
    with torch.no_grad():
        model(torch.randn(16, 64))  # the compile, before the profile
        dist.barrier()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profiler:
            for step in range(STEPS):
                if rank == SLOW_RANK:
                    deadline = time.perf_counter() + 0.03
                    while time.perf_counter() < deadline:  # busy, like a rank with more data to load
                        pass
                rows = 24 if rank == SLOW_RANK and step == STEPS - 1 else 16
                out = model(torch.randn(rows, 64))
                total = out.sum().reshape(1)
                dist.all_reduce(total)
        profiler.export_chrome_trace(f"profile_rank{rank}.pt.trace.json")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(free_port(),), nprocs=WORLD, join=True)
