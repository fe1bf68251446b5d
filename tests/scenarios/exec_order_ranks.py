"""Three CPU ranks (gloo, on this machine) compile two functions and run them under torch's
record_and_log_graph_execution_order(), so each rank's TORCH_TRACE log holds the order its compiled
graphs ran in. `reordered`: rank 2 runs the two in the other order (its compile ids then name other
functions than the other ranks'). `recompiled`: rank 2's last call of the second function gets a longer
input, so it alone recompiles and runs that graph. Only the first function holds a collective
(all_reduce), so no rank waits for another at a collective it never issues: the job always ends.

    TORCH_TRACE=DIR python exec_order_ranks.py reordered|recompiled
"""

import sys

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch.multiprocessing as mp
from local_ranks import free_port

WORLD = 3


def reduce_then_scale(x):
    return funcol.all_reduce(x.sin(), "sum", dist.group.WORLD) * 2


def plain(x):
    return x.cos() + 1


def run(rank: int, port: int, mode: str) -> None:
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD)
    torch.set_num_threads(1)
    # every rank compiles: a cached graph keeps the compile id it was made under
    torch._inductor.config.fx_graph_cache = False
    torch._functorch.config.enable_autograd_cache = False
    f, g = torch.compile(reduce_then_scale), torch.compile(plain)
    x = torch.randn(16)
    with torch._inductor.debug.record_and_log_graph_execution_order():
        for step in range(2):
            if mode == "reordered" and rank == 2:
                g(x)
                f(x)
            else:
                f(x)
                g(torch.randn(24) if mode == "recompiled" and rank == 2 and step == 1 else x)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(free_port(), sys.argv[1]), nprocs=WORLD, join=True)
