"""Two compiled functions profiled on CPU after each compiled twice, for shapes the profile does not
all run: a TORCH_TRACE log (provenance on) and a torch.profiler Chrome trace of the same run
(profile.pt.trace.json in the working folder). `mlp` is compiled for 8 rows ([0/0]) and for 16 rows
([0/1], static shapes: the same kernel names), and only the 16-row code runs in the profile; its
three Linear layers are three call sites of `extern_kernels.addmm`. `branch` holds a `torch.cond`
whose branches Inductor compiles as subgraphs of the unit's code; it too is compiled twice ([1/0],
[1/1]) and only [1/1] is profiled."""

import torch
import torch._inductor.config as inductor_config


class Mlp(torch.nn.Module):
    def __init__(self, width=64):
        super().__init__()
        self.up = torch.nn.Linear(width, 2 * width)
        self.mid = torch.nn.Linear(2 * width, 2 * width)
        self.down = torch.nn.Linear(2 * width, width)

    def forward(self, x):
        return self.down(torch.relu(self.mid(torch.relu(self.up(x)))))


def branch(x, weight):
    def grow(x, weight):
        return torch.relu(x @ weight) + 1

    def shrink(x, weight):
        return torch.sigmoid(x @ weight) - 1

    return torch.cond(x.sum() > 0, grow, shrink, (x, weight))


if __name__ == "__main__":
    torch.set_num_threads(1)
    inductor_config.trace.provenance_tracking_level = 1
    inductor_config.cpp.enable_kernel_profile = True
    torch.manual_seed(0)
    model = Mlp().eval()
    mlp = torch.compile(model, dynamic=False)
    cond = torch.compile(branch, dynamic=False)
    weight = torch.randn(64, 64)
    small, large = torch.randn(8, 64), torch.randn(16, 64)
    with torch.no_grad():
        mlp(small), cond(small, weight)  # [0/0] and [1/0]: compiled, never profiled
        mlp(large), cond(large, weight)  # [0/1] and [1/1]
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profiler:
            for _ in range(5):
                mlp(large)
                cond(large, weight)
    profiler.export_chrome_trace("profile.pt.trace.json")
