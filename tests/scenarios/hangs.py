"""Compiles once, then hangs: --timeout must stop it and keep the compiled part."""

import time

import torch

with torch.no_grad():
    torch.compile(lambda x: x.sin() + 1)(torch.randn(4))
print("compiled; now hanging", flush=True)
time.sleep(600)
