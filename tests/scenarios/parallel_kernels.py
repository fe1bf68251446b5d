"""A small model with many different kernels, for a cold compile with several compile threads
(TORCHINDUCTOR_COMPILE_THREADS): the C++ kernels are built on worker threads while the compiling
thread waits in async_compile.wait, and torch logs the workers' stages beside the compile's."""

import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(32, 32) for _ in range(4))
        self.norm = torch.nn.LayerNorm(32)

    def forward(self, x):
        x = self.norm(x)
        x = torch.nn.functional.gelu(self.layers[0](x)).softmax(-1)
        x = torch.tanh(self.layers[1](x)) * x.sigmoid()
        x = self.norm(self.layers[2](x) + x).cumsum(-1)
        return (self.layers[3](x).log_softmax(-1) - x.mean(-1, keepdim=True)).exp()


if __name__ == "__main__":
    compiled = torch.compile(Model())
    with torch.no_grad():
        compiled(torch.randn(4, 32))
