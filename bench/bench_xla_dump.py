"""Reading an XLA dump of a big program: a 48-layer transformer stack jitted by JAX on CPU (unrolled,
so the HLO holds every layer), dumped as text, then opened and summarised the way `summary` does.

    python bench/bench_xla_dump.py [LAYERS]

Anchor, timed in the same run: reading the dump's HLO files as bytes and splitting them into lines
(what any text reader must do at least). Needs jax (a dev dependency); the reader itself does not.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from inspector.core.graphs.hlo_graph import hlo_graph  # noqa: E402
from inspector.core.outputs.xla_summary import summarize_dump  # noqa: E402
from inspector.core.readers.xla_dump import dump_files, open_xla_dump  # noqa: E402

MAKE_DUMP = """
import sys, jax, jax.numpy as jnp, numpy as np
layers, width = int(sys.argv[1]), 64
def block(x, w):
    h = (x - x.mean(-1, keepdims=True)) * jax.lax.rsqrt(x.var(-1, keepdims=True) + 1e-5)
    a = jax.nn.softmax((h @ w[0]) @ (h @ w[1]).T / 8.0, axis=-1) @ (h @ w[2])
    x = x + a @ w[3]
    return x + jax.nn.gelu(x @ w[4]) @ w[5]
def model(x, ws):
    for w in ws:
        x = block(x, w)
    return x
rng = np.random.default_rng(0)
ws = [[jax.device_put(rng.standard_normal((width, width)).astype(np.float32) * 0.1) for _ in range(6)]
      for _ in range(layers)]
jax.jit(model)(jax.device_put(rng.standard_normal((32, width)).astype(np.float32)), ws).block_until_ready()
"""


def best(runs: int, work) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    layers = int(sys.argv[1]) if len(sys.argv) > 1 else 48
    folder = Path(tempfile.mkdtemp(prefix="xla_bench_")) / "dump"
    env = dict(os.environ, XLA_FLAGS=f"--xla_dump_to={folder} --xla_dump_hlo_as_text", JAX_PLATFORMS="cpu")
    subprocess.run([sys.executable, "-c", MAKE_DUMP, str(layers)], env=env, check=True, timeout=1800)
    files = dump_files(folder)
    size = sum(file.stat().st_size for file in files)
    anchor = best(3, lambda: [file.read_bytes().decode("utf-8").split("\n") for file in files])
    opened = best(3, lambda: summarize_dump(open_xla_dump(folder)))
    dump = open_xla_dump(folder)
    main_module = dump.main_module
    graph_s = best(3, lambda: hlo_graph(main_module.after))
    print(f"{layers} layers: {len(files)} HLO files, {size / 1e6:.1f} MB; main module {main_module.label}: "
          f"{main_module.n_ops} ops before, {main_module.n_kernels} kernels after, K = {main_module.fusion_ratio:.2f}")
    print(f"read bytes + split lines (anchor): {anchor:.3f} s")
    print(f"open + summarise:                  {opened:.3f} s  ({opened / anchor:.1f}× anchor)")
    print(f"HLO graph of the optimised module: {graph_s:.3f} s  ({len(hlo_graph(main_module.after)[0].nodes)} nodes)")


if __name__ == "__main__":
    main()
