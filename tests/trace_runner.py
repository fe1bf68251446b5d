"""Runs a script as __main__ under TORCH_TRACE (set by the caller) and then writes torch's own
counters of the same run to a JSON file: the ground truth the reader tests compare against."""

import json
import runpy
import sys

import torch

script, counters_path = sys.argv[1], sys.argv[2]
torch.set_num_threads(1)
sys.argv = [script]
try:
    runpy.run_path(script, run_name="__main__")
finally:
    from torch._dynamo.utils import counters

    with open(counters_path, "w") as handle:
        json.dump({group: dict(values) for group, values in counters.items()}, handle)
