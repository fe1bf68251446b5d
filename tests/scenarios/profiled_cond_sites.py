"""A model whose compiled graph holds a `torch.cond` between library calls of one name: a Linear in
`call()` before the cond and one inside the branch that runs (Inductor writes the branch as a
subgraph *above* `call()`, run from inside it), then two identical Linear + tanh blocks, whose
pointwise kernel Inductor generates once and launches twice. It runs once eagerly first, and an eager
`torch.cond` makes torch compile its branches itself (a unit of its own, not the model's). A
TORCH_TRACE log (provenance on) and the torch.profiler Chrome trace of the same run
(profile.pt.trace.json in the working folder)."""

import torch
import torch._inductor.config as inductor_config


class CondBetweenLinears(torch.nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.a, self.b, self.c, self.d = (torch.nn.Linear(width, width) for _ in range(4))

    def forward(self, x):
        y = torch.relu(self.a(x))
        z = torch.cond(y.sum() > 0, lambda t: torch.sigmoid(self.b(t)) * 2, lambda t: torch.tanh(t) - 1, (y,))
        h = torch.tanh(self.c(z)) * 3
        return torch.tanh(self.d(h)) * 3


if __name__ == "__main__":
    torch.set_num_threads(1)
    inductor_config.trace.provenance_tracking_level = 1
    inductor_config.cpp.enable_kernel_profile = True
    torch.manual_seed(0)
    eager = CondBetweenLinears().eval()
    model = torch.compile(eager)
    inputs = torch.rand(8, 32)  # relu(a(x)) sums above 0: the true branch runs
    with torch.no_grad():
        eager(inputs)  # torch compiles the eager cond's branches itself
        model(inputs)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profiler:
            for _ in range(5):
                model(inputs)
    profiler.export_chrome_trace("profile.pt.trace.json")
