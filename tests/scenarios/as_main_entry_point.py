"""An entry-point script whose model stores a module global inside its compiled forward (Dynamo
imports the module by its __name__, so the module must be in sys.modules for the whole run), and
whose inspector_model() calls torch.cond eagerly and pickles a class defined here."""

import pickle

import torch

CALLS = 0


class Box:
    def __init__(self, value):
        self.value = value


def true_fn(x):
    return x.sin()


def false_fn(x):
    return x.cos()


class Gate(torch.nn.Module):
    def forward(self, x):
        global CALLS
        CALLS += 1
        return torch.cond(x.sum() > 0, true_fn, false_fn, (x,)) + 1


def inspector_model():
    x = torch.arange(4.0)
    torch.cond(x.sum() > 0, true_fn, false_fn, (x,))
    assert pickle.loads(pickle.dumps(Box(3))).value == 3
    return Gate(), (x,)


if __name__ == "__main__":
    raise SystemExit("the capture calls inspector_model(); this block must not run under it")
