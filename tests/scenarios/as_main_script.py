"""A script that only works when run as `python script.py` runs it: eager torch.cond (which compiles
its branches), a compiled function storing a module global (Dynamo imports the function's module by
its __name__), and pickling a class defined here (pickle looks it up in sys.modules['__main__'])."""

import json
import os
import pickle
import sys

import torch

CALLS = 0


class Box:
    def __init__(self, value):
        self.value = value


def true_fn(x):
    return x.sin()


def false_fn(x):
    return x.cos()


@torch.compile(backend="eager")
def counted(x):
    global CALLS
    CALLS += 1
    return x * 2


x = torch.arange(4.0) - 1
eager_cond = torch.cond(x.sum() > 0, true_fn, false_fn, (x,))
doubled = counted(x)
print(json.dumps({
    "eager_cond": eager_cond.tolist(), "doubled": doubled.tolist(), "calls": CALLS,
    "box": pickle.loads(pickle.dumps(Box(3))).value, "name": __name__, "argv": sys.argv[1:],
    "file": os.path.basename(__file__), "folder_first": sys.path[0] == os.path.dirname(os.path.realpath(__file__)),
    "runner_on_path": any(entry.rstrip("/").endswith(os.path.join("inspector", "capture")) for entry in sys.path),
}))
