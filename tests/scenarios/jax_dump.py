"""Two tiny jitted functions compiled by JAX on CPU under the XLA_FLAGS the caller sets (a dump folder,
HLO as text). Beside the dump it writes what JAX itself reports for each function — the HLO before
optimisation (`lowered.as_text("hlo")`) and after (`compiled.as_text()`) — as the tests' ground truth."""

import json
import sys

import jax
import jax.numpy as jnp
import numpy as np


def mlp(x, w1, w2):
    return jax.nn.softmax(jax.nn.gelu(x @ w1) @ w2, axis=-1).sum()


def norm(x):
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5) * 2.0 + 1.0


rng = np.random.default_rng(0)
x, w1, w2 = (jax.device_put(rng.standard_normal(shape).astype(np.float32)) for shape in ((4, 8), (8, 16), (16, 8)))
truth = {}
for function, args in ((mlp, (x, w1, w2)), (norm, (x,))):
    lowered = jax.jit(function).lower(*args)
    compiled = lowered.compile()
    compiled(*args)
    truth[f"jit_{function.__name__}"] = {"before": lowered.as_text(dialect="hlo"), "after": compiled.as_text()}
with open(sys.argv[1], "w") as handle:
    json.dump(truth, handle)
