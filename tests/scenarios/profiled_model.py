"""A small model compiled with provenance tracking and profiled on CPU: a TORCH_TRACE log and a
torch.profiler Chrome trace of the same run, in the working folder (profile.pt.trace.json).
Inductor's C++ kernels are named in the profile only with `cpp.enable_kernel_profile`."""

import torch
import torch._inductor.config as inductor_config


class Block(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = torch.nn.Linear(width, width)
        self.norm = torch.nn.LayerNorm(width)

    def forward(self, x):
        return self.norm(torch.relu(self.fc(x)) + x)


class Model(torch.nn.Module):
    def __init__(self, width=64):
        super().__init__()
        self.first = Block(width)
        self.second = Block(width)
        self.head = torch.nn.Linear(width, 8)

    def forward(self, x):
        y = self.second(self.first(x))
        return torch.softmax(self.head(y) * 0.5, dim=-1)


if __name__ == "__main__":
    torch.set_num_threads(1)
    inductor_config.trace.provenance_tracking_level = 1
    inductor_config.cpp.enable_kernel_profile = True
    model, x = Model().eval(), torch.randn(32, 64)
    compiled = torch.compile(model)
    with torch.no_grad():
        compiled(x)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profiler:
            for _ in range(5):
                compiled(x)
    profiler.export_chrome_trace("profile.pt.trace.json")
