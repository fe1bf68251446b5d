"""One small transformer block (layer norm, single-head attention, GELU MLP, residuals) written twice —
in PyTorch and in JAX — with identical weights, to compare how torch.compile and XLA fuse the same
model. The weights come from one NumPy generator, so both sides compute the same numbers.

    compile-inspector capture attention_block.py -o torch_run     # torch.compile (Inductor), measured
    python attention_block.py --jax xla_dump                       # jax.jit on CPU, HLO dumped as text
    compile-inspector diff torch_run xla_dump                      # ops, kernels, K, fused families

Run without arguments it compiles and calls the torch version (what `capture` and the tests do).
"""

from __future__ import annotations

import os
import sys

import numpy as np

WIDTH, TOKENS = 32, 16


def weights() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    def matrix(rows: int, cols: int) -> np.ndarray:
        return (rng.standard_normal((rows, cols)) / np.sqrt(rows)).astype(np.float32)
    return {"wq": matrix(WIDTH, WIDTH), "wk": matrix(WIDTH, WIDTH), "wv": matrix(WIDTH, WIDTH),
            "wo": matrix(WIDTH, WIDTH), "w1": matrix(WIDTH, 4 * WIDTH), "b1": np.zeros(4 * WIDTH, np.float32),
            "w2": matrix(4 * WIDTH, WIDTH), "b2": np.zeros(WIDTH, np.float32)}


def example_input() -> np.ndarray:
    return np.random.default_rng(1).standard_normal((TOKENS, WIDTH)).astype(np.float32)


# --- PyTorch -------------------------------------------------------------------------------------
def inspector_model():
    import torch

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            for name, value in weights().items():
                self.register_buffer(name, torch.from_numpy(value))

        def forward(self, x):
            h = torch.nn.functional.layer_norm(x, (WIDTH,))
            q, k, v = h @ self.wq, h @ self.wk, h @ self.wv
            attention = torch.softmax(q @ k.T / WIDTH ** 0.5, dim=-1)
            x = x + (attention @ v) @ self.wo
            h = torch.nn.functional.layer_norm(x, (WIDTH,))
            h = torch.nn.functional.gelu(h @ self.w1 + self.b1, approximate="tanh")
            return x + h @ self.w2 + self.b2

    return Block().eval(), (torch.from_numpy(example_input()),)


# --- JAX -----------------------------------------------------------------------------------------
def jax_block(params, x):
    import jax
    import jax.numpy as jnp

    def layer_norm(value):
        mean = value.mean(-1, keepdims=True)
        return (value - mean) / jnp.sqrt(((value - mean) ** 2).mean(-1, keepdims=True) + 1e-5)

    h = layer_norm(x)
    q, k, v = h @ params["wq"], h @ params["wk"], h @ params["wv"]
    attention = jax.nn.softmax(q @ k.T / WIDTH ** 0.5, axis=-1)
    x = x + (attention @ v) @ params["wo"]
    h = layer_norm(x)
    h = jax.nn.gelu(h @ params["w1"] + params["b1"], approximate=True)
    return x + h @ params["w2"] + params["b2"]


def run_jax(dump_dir: str) -> np.ndarray:
    """jit the block on CPU with XLA writing its HLO (before and after optimisation) to `dump_dir`."""
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} --xla_dump_to={dump_dir} --xla_dump_hlo_as_text".strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax

    params = {name: jax.device_put(value) for name, value in weights().items()}
    return np.asarray(jax.jit(jax_block)(params, jax.device_put(example_input())))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--jax":
        print(run_jax(sys.argv[2])[:2, :4])
    else:
        import torch

        model, example = inspector_model()
        with torch.no_grad():
            print(torch.compile(model)(*example)[:2, :4])
