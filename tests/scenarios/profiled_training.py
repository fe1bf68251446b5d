"""A training step compiled for two batch sizes (static shapes: [0/0] and [0/1] hold the same kernel
names, forward and backward) and profiled on CPU for the second only: a TORCH_TRACE log (provenance
on) and a torch.profiler Chrome trace of the same run (profile.pt.trace.json in the working folder).
The backward graphs run under `CompiledFunctionBackward`, outside every compiled region."""

import torch
import torch._inductor.config as inductor_config


class Net(torch.nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.first = torch.nn.Linear(width, width)
        self.second = torch.nn.Linear(width, 1)

    def forward(self, x):
        return self.second(torch.relu(self.first(x))).pow(2).mean()


if __name__ == "__main__":
    torch.set_num_threads(1)
    inductor_config.trace.provenance_tracking_level = 1
    inductor_config.cpp.enable_kernel_profile = True
    torch.manual_seed(0)
    model = Net()
    step = torch.compile(model, dynamic=False)
    small, large = torch.randn(8, 32), torch.randn(16, 32)
    step(small).backward()  # [0/0]: forward and backward, never profiled
    step(large).backward()  # [0/1]
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profiler:
        for _ in range(5):
            step(large).backward()
    profiler.export_chrome_trace("profile.pt.trace.json")
