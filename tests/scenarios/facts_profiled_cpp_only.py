"""A compiled function of pointwise ops only (Inductor makes one C++ kernel of them) profiled on CPU
without `cpp.enable_kernel_profile`: each profiled graph call (`## Call CompiledFxGraph <key> ##`, a key
the log holds) shows no launch inside it, as C++ kernels are named in a profile only with that option."""

import torch


def scaled(x):
    return torch.sigmoid(x) * 2 + 1


if __name__ == "__main__":
    torch.set_num_threads(1)
    compiled = torch.compile(scaled)
    x = torch.randn(16, 16)
    compiled(x)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profiler:
        for _ in range(3):
            compiled(x)
    profiler.export_chrome_trace("profile.pt.trace.json")
